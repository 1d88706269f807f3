"""The DailyDialog family's shift grid, shared by the config declarations (``__init__``) and the card (:mod:`.card`)."""

#: The UW/KW word replacement ratios, 0.05 to 0.50.
UW_RATIOS = tuple(round(0.05 * step, 2) for step in range(1, 11))
#: The context window (turns) of the IC/SR configs.
IC_WINDOW = 6
#: The UW ratio of the word-importance configs, and their number of importance buckets.
IMPORTANCE_RATIO = 0.20
NUM_BUCKETS = 5
