"""Table 1 of Khosla & Gangadharaiah (2022) as data: the 16 equivalence clusters and the two benchmarks built on them.

A member is ``"<corpus>:<intent>"`` with the paper's corpus names; :data:`CORPORA` maps each to the dialshift source
reader and the splits whose in-scope utterances it contributes. :func:`check_clusters` verifies that every member
intent exists in its corpus (a renamed intent or a different release is a one-line error naming the member).
"""

from dataclasses import dataclass

from dialshift.errors import DialshiftError


@dataclass(frozen=True)
class Corpus:
    """A corpus of Table 1: its dialshift source, the splits read, and how the card names it."""

    source: str
    splits: tuple[str, ...]
    title: str


CORPORA = {
    "clinc": Corpus("clinc150_full", ("train", "validation", "test"), "CLINC150 (data_full)"),
    "hwu64": Corpus("hwu64", ("train", "validation", "test"), "HWU64 (DNNC split)"),
    "massive": Corpus("massive_en_us", ("train", "validation", "test"), "MASSIVE en-US"),
    "rostd": Corpus("rostd", ("train", "validation", "test"), "ROSTD / FB task-oriented English"),
    "snips": Corpus("snips", ("train", "validation", "test"), "SNIPS"),
    "banking": Corpus("banking77", ("train", "test"), "BANKING77 (PolyAI release)"),
}

#: (cluster id, short name, members), exactly as Table 1 lists them (cluster 10's doubled comma dropped).
CLUSTERS = (
    (1, "alarm_set", ("rostd:alarm/set_alarm", "hwu64:alarm_set", "massive:alarm_set", "clinc:alarm")),
    (2, "alarm_remove", ("rostd:alarm/cancel_alarm", "hwu64:alarm_remove", "massive:alarm_remove")),
    (3, "alarm_query", ("rostd:alarm/show_alarms", "hwu64:alarm_query", "massive:alarm_query")),
    (4, "weather", ("rostd:weather/find", "hwu64:weather_query", "snips:GetWeather", "massive:weather_query",
                    "clinc:weather")),
    (5, "calendar", ("hwu64:calendar_query", "massive:calendar_query", "clinc:calendar")),
    (6, "recipe", ("hwu64:cooking_recipe", "massive:cooking_recipe", "clinc:recipe")),
    (7, "datetime", ("hwu64:datetime_query", "massive:datetime_query", "clinc:time", "clinc:date")),
    (8, "repeat", ("hwu64:general_repeat", "massive:general_repeat", "clinc:repeat")),
    (9, "definition", ("hwu64:qa_definition", "massive:qa_definition", "clinc:definition")),
    (10, "order", ("hwu64:takeaway_order", "massive:takeaway_order", "clinc:order")),
    (11, "traffic", ("hwu64:transport_traffic", "massive:transport_traffic", "clinc:traffic")),
    (12, "reminder", ("rostd:reminder/show_reminders", "clinc:reminder")),
    (13, "play_music", ("snips:PlayMusic", "hwu64:play_music", "massive:play_music", "clinc:play_music")),
    (14, "restaurant", ("snips:BookRestaurant", "clinc:restaurant_reservation")),
    (15, "playlist", ("snips:AddToPlaylist", "clinc:update_playlist")),
    (16, "card_declined", ("banking:declined_card_payment", "clinc:card_declined")),
)

#: Members of Table 1 that the public release does not have, with the reason; they contribute no utterance (the card
#: lists them) and the check expects them absent, so a release that gains the intent is noticed.
ABSENT = {
    "massive:general_repeat": "MASSIVE's 60 intents have no general_repeat (it is one of the 8 HWU64 general_* "
                              "intents MASSIVE dropped); the paper's general_repeat counts (157 / 18 / 19) are "
                              "HWU64's alone",
}


@dataclass(frozen=True)
class Benchmark:
    """One of the paper's datasets: which corpora are i.i.d. (train/validation/test), the cov-test size per intent,
    and, where a cluster has two intents of an i.i.d. corpus, which one is the class (``iid_override``)."""

    name: str
    title: str
    iid_corpora: tuple[str, ...]
    cov_per_intent: int
    iid_override: dict

    def clusters(self) -> list[tuple[int, str, tuple[str, ...]]]:
        """The clusters with an i.i.d. member, in Table 1 order."""
        return [c for c in CLUSTERS if any(m.split(":", 1)[0] in self.iid_corpora for m in c[2])]

    def iid_members(self, cluster) -> tuple[str, ...]:
        number, _, members = cluster
        if number in self.iid_override:
            return (self.iid_override[number],)
        return tuple(m for m in members if m.split(":", 1)[0] in self.iid_corpora)

    def cov_members(self, cluster) -> tuple[str, ...]:
        """Members of other corpora: never the i.i.d. corpus of the intent (so clinc:time is in no CLINC14 split)."""
        return tuple(m for m in cluster[2] if m.split(":", 1)[0] not in self.iid_corpora)

    def intent(self, cluster) -> str:
        """The class name: the intent of the first i.i.d. member (CLINC's or HWU64's name)."""
        return self.iid_members(cluster)[0].split(":", 1)[1]


BENCHMARKS = {
    # Table A1 lists `date` (not `time`) among the 14 CLINC14-COV classes: cluster 7's CLINC class is clinc:date.
    "clinc14_cov": Benchmark("clinc14_cov", "CLINC14-COV", ("clinc",), 30, {7: "clinc:date"}),
    "hwu12_cov": Benchmark("hwu12_cov", "HWU12-COV", ("hwu64", "massive"), 90, {}),
}


def split_member(member: str) -> tuple[str, str]:
    corpus, _, intent = member.partition(":")
    if corpus not in CORPORA or not intent:
        raise DialshiftError(f"cluster member {member!r}: expected <corpus>:<intent> with a corpus of "
                             f"{', '.join(CORPORA)}")
    return corpus, intent


def check_clusters(intents: dict[str, set[str]], paths: dict[str, str] | None = None) -> None:
    """Raise a one-line error for the first member whose intent is absent from its corpus (``intents``:
    ``{corpus: in-scope intent names found}``; corpora not given are not checked)."""
    for number, _, members in CLUSTERS:
        for member in members:
            corpus, intent = split_member(member)
            if corpus not in intents:
                continue
            if member in ABSENT:
                if intent in intents[corpus]:
                    raise DialshiftError(f"cluster {number} member {member}: {CORPORA[corpus].title} now has intent "
                                         f"{intent!r}, which clusters.ABSENT says it lacks; remove it from ABSENT")
                continue
            if intent not in intents[corpus]:
                where = f" ({paths[corpus]})" if paths and corpus in paths else ""
                raise DialshiftError(f"cluster {number} member {member}: {CORPORA[corpus].title}{where} has no intent "
                                     f"{intent!r} (renamed or a different release?); restore the corpus or fix "
                                     "dataset_scripts/covariate/clusters.py")
