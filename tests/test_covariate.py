"""The covariate-shift intent family (Khosla & Gangadharaiah 2022): cluster table, split rules, real-data counts."""

import shutil

import pytest
from dialshift_families.covariate import CovariateFamily, CovariateOptions, label_names
from dialshift_families.covariate.clusters import ABSENT, BENCHMARKS, CLUSTERS, CORPORA, check_clusters, split_member
from dialshift_families.covariate.pipeline import BuildSettings, Sources, build_benchmark, few_shot, normalise

from dialshift.errors import DialshiftError
from dialshift.sources.base import IntentExample

# ----------------------------------------------------------------------------------------------- the cluster table


def test_cluster_table_integrity():
    assert [number for number, _, _ in CLUSTERS] == list(range(1, 17))
    members = [member for _, _, group in CLUSTERS for member in group]
    assert len(members) == len(set(members)) == 49
    for member in members:
        corpus, intent = split_member(member)
        assert corpus in CORPORA and intent
    clinc, hwu = BENCHMARKS["clinc14_cov"], BENCHMARKS["hwu12_cov"]
    assert len(clinc.clusters()) == 14 and len(hwu.clusters()) == 12
    assert [c[0] for c in hwu.clusters()] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13]
    for bench in (clinc, hwu):
        names = label_names(bench)
        assert len(names) == len(set(names)) and names[-1] == "oos"
        for cluster in bench.clusters():  # cov_test members never come from an i.i.d. corpus of the benchmark
            assert all(split_member(m)[0] not in bench.iid_corpora for m in bench.cov_members(cluster))
    assert clinc.intent(CLUSTERS[6]) == "date" and "clinc:time" not in clinc.cov_members(CLUSTERS[6])
    assert set(BENCHMARKS["hwu12_cov"].cov_members(CLUSTERS[6])) == {"clinc:time", "clinc:date"}


def corpus_intents():
    intents = {corpus: set() for corpus in CORPORA}
    for _, _, members in CLUSTERS:
        for member in members:
            if member not in ABSENT:
                corpus, intent = split_member(member)
                intents[corpus].add(intent)
    return intents


def test_check_clusters_names_the_missing_member():
    intents = corpus_intents()
    check_clusters(intents)
    intents["snips"].discard("GetWeather")
    intents["snips"].add("Get_Weather")  # renamed
    with pytest.raises(DialshiftError, match=r"^cluster 4 member snips:GetWeather: SNIPS \(snips\) has no intent"):
        check_clusters(intents, {"snips": "snips"})


def test_check_clusters_notices_an_absent_member_appearing():
    intents = corpus_intents()
    intents["massive"].add("general_repeat")
    with pytest.raises(DialshiftError, match="remove it from ABSENT"):
        check_clusters(intents)


# ----------------------------------------------------------------------------------------------- rules on toy data


def example(corpus, split, index, text, label):
    return IntentExample(id=f"{corpus}-{split}-{index:05d}", text=text, label=label, is_ood=label == "oos")


def toy_sources(extra_massive=()):
    """HWU64/MASSIVE utterances for two clusters, other corpora for cov_test, CLINC OOS."""
    loaded = {corpus: {split: [] for split in info.splits} for corpus, info in CORPORA.items()}
    for split, count in (("train", 20), ("validation", 6), ("test", 6)):
        for label in ("alarm_set", "weather_query"):
            start = len(loaded["hwu64"][split])
            loaded["hwu64"][split] += [example("hwu64", split, start + i, f"{label} {split} {i}", label)
                                       for i in range(count)]
    # MASSIVE repeats a HWU64 test utterance in train (with other punctuation/case) and one of its own
    loaded["massive"]["train"] = [example("massive", "train", 0, "Alarm_set, TEST 0!", "alarm_set"),
                                  example("massive", "train", 1, "massive only", "alarm_set"), *extra_massive]
    loaded["rostd"]["train"] = [example("rostd", "train", i, f"rostd alarm {i % 40}", "alarm/set_alarm")
                                for i in range(60)]  # 40 distinct
    loaded["rostd"]["train"].append(example("rostd", "train", 60, "alarm_set train 3", "alarm/set_alarm"))  # i.i.d.
    loaded["clinc"]["train"] = [example("clinc", "train", i, f"clinc weather {i}", "weather") for i in range(100)]
    oos = {"validation": [example("clinc150-oos", "validation", i, f"oos val {i}", "oos") for i in range(10)],
           "test": [example("clinc150-oos", "test", i, f"oos test {i}", "oos") for i in range(30)]}
    return Sources(loaded=loaded, oos=oos)


def toy_build(**settings):
    return build_benchmark(BENCHMARKS["hwu12_cov"], toy_sources(), BuildSettings(**settings))


def test_global_dedup_keeps_the_test_copy_and_rules_hold():
    rows, facts = toy_build()
    texts = {split: [normalise(r["text"]) for r in part] for split, part in rows.items()}
    assert "alarm set test 0" in texts["test"] and "alarm set test 0" not in texts["train"]
    assert facts["dedup_dropped"] == {"test": 0, "validation": 0, "train": 1}
    assert len(rows["train"]) == 41  # 40 HWU64 + "massive only"
    assert sum(r["label"] == "oos" for r in rows["test"]) == 30
    assert [r["id"] for r in rows["test"] if r["label"] == "oos"] == [r["id"] for r in rows["cov_test"]
                                                                      if r["label"] == "oos"]
    assert not any(r["label"] == "oos" for r in rows["train"])
    # cov_test: only other corpora, distinct, never an i.i.d. utterance, at most 90 per class
    cov = [r for r in rows["cov_test"] if r["label"] != "oos"]
    assert {r["source"] for r in cov} == {"rostd", "clinc"}
    assert not {normalise(r["text"]) for r in cov} & (set(texts["train"]) | set(texts["validation"])
                                                      | set(texts["test"]))
    assert sum(r["label"] == "alarm_set" for r in cov) == 40 and sum(r["label"] == "weather_query" for r in cov) == 90
    assert facts["cov_pool"]["alarm_set"]["available"] == 40
    assert facts["cov_excluded_repeats"]["alarm_set"] == 21  # 20 in-pool repeats + the i.i.d. one


def test_dedup_none_keeps_the_released_concatenation():
    rows, facts = toy_build(dedup="none")
    assert len(rows["train"]) == 42 and facts["dedup_dropped"]["train"] == 0


def test_validation_hold_is_a_seeded_stratified_share():
    rows, _ = toy_build(hold_fraction=0.5)
    for label, total in (("alarm_set", 6), ("weather_query", 6), ("oos", 10)):
        held = sum(r["label"] == label for r in rows["validation_hold"])
        kept = sum(r["label"] == label for r in rows["validation"])
        assert (held, kept) == (total // 2, total - total // 2)
    assert not {r["id"] for r in rows["validation"]} & {r["id"] for r in rows["validation_hold"]}
    other, _ = toy_build(hold_fraction=0.5, seed=1)
    assert {r["id"] for r in other["validation_hold"]} != {r["id"] for r in rows["validation_hold"]}
    with pytest.raises(DialshiftError, match="cov-hold-fraction"):
        toy_build(hold_fraction=1.0)


def test_build_is_deterministic_and_order_independent():
    first, _ = toy_build()
    again, _ = toy_build()
    assert first == again
    reordered = toy_sources()
    reordered.loaded["rostd"]["train"].reverse()
    rows, _ = build_benchmark(BENCHMARKS["hwu12_cov"], reordered, BuildSettings())
    assert [r["id"] for r in rows["cov_test"]] == [r["id"] for r in first["cov_test"]]


def test_exclude_rostd_empties_its_clusters():
    rows, facts = toy_build(exclude_rostd=True)
    assert not any(r["source"] == "rostd" for r in rows["cov_test"])
    assert facts["cov_pool"]["alarm_set"]["available"] == 0


def test_few_shot_is_nested():
    rows, _ = toy_build()
    five, ten = few_shot(rows, 5, 0), few_shot(rows, 10, 0)
    assert len(five["train"]) == 10 and len(ten["train"]) == 20
    assert {r["id"] for r in five["train"]} <= {r["id"] for r in ten["train"]}
    assert five["test"] is rows["test"]


# ----------------------------------------------------------------------------------------------- real corpora


@pytest.fixture(scope="module")
def built(raw_data_dir):
    from dialshift.registry import BuildContext

    family = CovariateFamily()
    context = BuildContext(data_dir=raw_data_dir, progress=False, options=CovariateOptions())
    return family.build([family.config("clinc14_cov"), family.config("hwu12_cov")], context)


@pytest.mark.data
def test_real_counts_match_table2_where_the_paper_is_reproducible(built):
    clinc, hwu = built.datasets["clinc14_cov"], built.datasets["hwu12_cov"]
    oos = len(clinc["test"].features["label"].names) - 1
    for data, per_intent, test_oos in ((clinc, 30, 1000), (hwu, 90, 1000)):
        names = data["test"].features["label"].names
        cov = [label for label in data["cov_test"]["label"] if label != len(names) - 1]
        assert all(cov.count(k) == per_intent for k in range(len(names) - 1))
        for split, count in (("test", test_oos), ("cov_test", test_oos)):
            assert data[split]["label"].count(len(names) - 1) == count
        assert data["validation"]["label"].count(len(names) - 1) + \
            data["validation_hold"]["label"].count(len(names) - 1) == 100
        assert data["train"]["label"].count(len(names) - 1) == 0
        train = {normalise(t) for t in data["train"]["text"]}
        assert not train & {normalise(t) for t in data["cov_test"]["text"]}
    assert [clinc["test"]["label"].count(k) for k in range(oos)] == [30] * 14
    assert len(clinc["train"]) == 1398  # 2 CLINC `repeat` training utterances repeat validation/test ones
    assert set(clinc["cov_test"]["source"]) - {"clinc"} == {"hwu64", "massive", "rostd", "snips", "banking"}
    assert not set(zip(clinc["cov_test"]["source"], clinc["cov_test"]["label"], strict=True)) & {
        ("clinc", k) for k in range(oos)}
    assert set(hwu["train"]["source"]) == {"hwu64", "massive"}
    assert set(hwu["cov_test"]["source"]) == {"clinc", "rostd", "snips"}
    assert len(hwu["test"]) - 1000 == 1002  # the paper's 1,028 minus 26 repeated test utterances
    facts = built.facts["hwu12_cov"]
    assert facts["splits"]["cov_test"]["rows"] == 2080


@pytest.mark.data
def test_real_missing_corpus_file_is_one_line(tmp_path, raw_data_dir):
    from dialshift.registry import BuildContext

    source = raw_data_dir
    for name in ("clinc150", "hwu64", "massive", "rostd", "banking77"):
        (tmp_path / name).symlink_to(source / name)
    shutil.copytree(source / "snips", tmp_path / "snips")
    (tmp_path / "snips" / "test" / "label").unlink()
    family = CovariateFamily()
    with pytest.raises(DialshiftError) as error:
        family.build([family.config("clinc14_cov")], BuildContext(data_dir=tmp_path, progress=False,
                                                                   options=CovariateOptions()))
    assert "snips/test/label" in str(error.value) and "\n" not in str(error.value)
