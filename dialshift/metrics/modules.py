"""Input checking for the evaluate modules in ``metrics/<name>/`` (imports nothing from ``evaluate``).

evaluate casts every batch to the module's Arrow features before the metric sees it, so without a check first a
label of 1.5 becomes 1 (``int64`` features truncate) and NaN, strings or ``None`` end in a generic "don't match the
expected format" error. :class:`CoreChecked` runs the core's own input check on each batch first, so the modules
refuse bad input with exactly the one-line ``ValueError`` of ``dialshift.metrics`` (naming the argument and the first
bad row, counted within the batch passed to ``add_batch``; ``compute(predictions=..., references=...)`` passes all
rows as one batch).
"""


class CoreChecked:
    """Mixin for an ``evaluate.Metric`` subclass, listed before it: ``class ECE(CoreChecked, evaluate.Metric)``.

    The subclass sets ``check_inputs = staticmethod(f)``, where ``f`` takes the module's input columns as keyword
    arguments (``predictions``/``references`` or the module's own feature names) and raises ``ValueError``.
    """

    check_inputs = None

    def _check_batch(self, columns: dict):
        names = list(self._feature_names())
        if any(columns.get(name) is not None for name in names):  # evaluate's own error for an all-None call
            self.check_inputs(**{name: columns.get(name) for name in names})

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of predictions and references, after checking them as ``dialshift.metrics`` does."""
        self._check_batch({"predictions": predictions, "references": references, **kwargs})
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction and reference, after checking them as ``dialshift.metrics`` does (as row 0)."""
        example = {"predictions": prediction, "references": reference, **kwargs}
        self._check_batch({name: None if value is None else [value] for name, value in example.items()})
        return super().add(prediction=prediction, reference=reference, **kwargs)
