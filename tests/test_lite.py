"""The lite track's split: seeded by instance id (shared ids keep the same rows), stratified, deterministic, written
by the build into every config and accepted by ``dialshift validate`` and ``dialshift score --split lite``."""

import json
from collections import Counter

import numpy as np

from dialshift.lite import LITE_SIZE, _quotas, lite_positions
from tests.conftest import toy_build


def ids(n, prefix="dd"):
    return [f"{prefix}-{k:05d}" for k in range(n)]


def test_lite_positions_keep_the_same_ids_whatever_the_row_order():
    base = ids(1000)
    rng = np.random.default_rng(0)
    shuffled = [base[k] for k in rng.permutation(len(base))]
    chosen = {base[p] for p in lite_positions(base)}
    assert len(chosen) == LITE_SIZE
    assert {shuffled[p] for p in lite_positions(shuffled)} == chosen
    assert lite_positions(base).tolist() == lite_positions(list(base)).tolist()  # deterministic
    assert {base[p] for p in lite_positions(base, seed=1)} != chosen  # the seed matters


def test_a_subset_config_keeps_every_lite_id_of_the_whole_it_holds():
    """sr_K / ic_KofN hold a subset of the unshifted instances: their lite ids include every lite id of the unshifted
    config they contain, so the paired difference from it uses as many shared ids as a cap of LITE_SIZE allows."""
    whole = ids(6740)
    subset = whole[::7]
    whole_lite = {whole[p] for p in lite_positions(whole)}
    subset_lite = {subset[p] for p in lite_positions(subset)}
    assert whole_lite & set(subset) <= subset_lite and len(subset_lite) == LITE_SIZE


def test_lite_positions_take_every_row_of_a_small_split_and_cap_a_large_one():
    assert lite_positions(ids(40)).tolist() == list(range(40))
    assert len(lite_positions(ids(5000), size=500)) == 500


def test_lite_positions_are_stratified_in_proportion():
    n = 2220
    types = ["a"] * 400 + ["b"] * 1400 + ["c"] * 400 + ["d"] * 20
    positions = lite_positions(ids(n), types, size=111)
    counts = Counter(types[p] for p in positions)
    assert counts == {"a": 20, "b": 70, "c": 20, "d": 1}
    # within a stratum: the smallest hashes, the same as an unstratified draw of that stratum alone
    only_b = [i for i, t in zip(ids(n), types, strict=True) if t == "b"]
    assert {ids(n)[p] for p in positions if types[p] == "b"} == {only_b[p] for p in lite_positions(only_b, size=70)}


def test_quotas_give_every_stratum_a_row_while_the_size_allows():
    assert _quotas({"big": 1000, "rare": 1}, 10) == {"big": 9, "rare": 1}
    assert sum(_quotas({str(k): 3 for k in range(20)}, 10).values()) == 10
    assert _quotas({"a": 3, "b": 2}, 10) == {"a": 3, "b": 2}


def test_every_test_split_gets_its_lite_counterpart():
    """``cov_test`` (the covariate family's covariate-shifted test split) gets ``cov_lite`` by the same rule as
    ``test`` gets ``lite``: stratified by label, the shared out-of-scope ids kept in both."""
    import datasets

    from dialshift.lite import lite_name, with_lite

    assert [lite_name(s) for s in ("test", "cov_test", "train", "validation_hold", "_test")] == \
        ["lite", "cov_lite", None, None, None]
    oos = [{"id": f"oos-{k:04d}", "label": 2} for k in range(300)]
    test = datasets.Dataset.from_list([{"id": f"iid-{k:04d}", "label": k % 2} for k in range(100)] + oos)
    cov = datasets.Dataset.from_list([{"id": f"cov-{k:04d}", "label": k % 2} for k in range(300)] + oos)
    splits = with_lite(datasets.DatasetDict({"train": test, "test": test, "cov_test": cov}), "open_world_intent")
    assert sorted(splits) == ["cov_lite", "cov_test", "lite", "test", "train"]
    assert Counter(splits["cov_lite"]["label"]) == {0: 32, 1: 32, 2: 64}
    assert Counter(splits["lite"]["label"]) == {0: 16, 1: 16, 2: 96}
    shared = [{i for i, label in zip(splits[s]["id"], splits[s]["label"], strict=True) if label == 2}
              for s in ("cov_lite", "lite")]
    assert shared[0] <= shared[1]
    assert with_lite(splits, "open_world_intent") is splits  # nothing to add


def test_build_writes_a_lite_split_shared_across_configs(toy_plugin, tmp_path, capsys):
    from dialshift.cli import main
    from dialshift.ranking.data import read_columns

    out = tmp_path / "build"
    assert toy_build("--toy-cases", "300", "--out", str(out)) == 0
    lite = {name: read_columns(out, name, "lite", ["id", "type"], None, 0) for name in ("toy", "toy_swap_0.5",
                                                                                        "toy_swap_1.0")}
    first = lite["toy"].column("id").to_pylist()
    assert len(first) == LITE_SIZE
    for table in lite.values():
        assert table.column("id").to_pylist() == first  # paired: the same ids in every config
    assert Counter(lite["toy"].column("type").to_pylist()) == {"even": 64, "odd": 64}
    assert main(["validate", str(out)]) == 0
    card = (out / "README.md").read_text()
    assert "split: lite" in card and f"lite {LITE_SIZE}" in card

    predictions = tmp_path / "predictions"
    predictions.mkdir()
    with open(predictions / "toy.jsonl", "w") as handle:
        for uid in first:
            handle.write(json.dumps({"id": uid, "scores": [1.0, 0.0]}) + "\n")
    capsys.readouterr()
    assert main(["score", str(predictions), "--dataset", str(out), "--split", "lite", "--bootstrap", "50",
                 "--no-plots", "--no-progress", "--out", str(tmp_path / "results")]) == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    assert results["results"]["toy"]["instances"] == LITE_SIZE


def test_a_rebuild_writes_the_same_lite_bytes(toy_plugin, tmp_path):
    for name in ("a", "b"):
        assert toy_build("--toy-cases", "300", "--config", "toy", "--out", str(tmp_path / name)) == 0
    lite = "toy/lite-00000-of-00001.parquet"
    assert (tmp_path / "a" / lite).read_bytes() == (tmp_path / "b" / lite).read_bytes()


# ----------------------------------------------------------------------------------------------- the lite track


PAIRWISE = ("toy", "toy_swap_0.5", "toy_swap_1.0")


def _submission(folder, dataset, split, track=None, model="org/toy-model", bonus=1.0):
    """A submission of seeded pairwise scores for the toy family's pairwise configs on ``split``."""
    from dialshift.ranking.data import read_columns
    from dialshift.scoring.gold import config_fingerprints

    rng = np.random.default_rng(int(bonus * 10))
    (folder / "predictions").mkdir(parents=True)
    for name in PAIRWISE:
        table = read_columns(dataset, name, split, ["id", "label"], None, 0)
        with open(folder / "predictions" / f"{name}.jsonl", "w") as handle:
            for uid, label in zip(table.column("id").to_pylist(), table.column("label").to_pylist(), strict=True):
                scores = rng.normal(size=2)
                scores[label] += bonus
                handle.write(json.dumps({"id": uid, "scores": scores.tolist()}) + "\n")
    metadata = {"model": model, "method": "vanilla", "link": "https://example.org/toy", "licence": "mit",
                "dataset_revision": config_fingerprints(dataset, PAIRWISE), "configs": list(PAIRWISE)}
    if track:
        metadata["track"] = track
    (folder / "submission.json").write_text(json.dumps(metadata))
    return folder


def _score(path, dataset, store):
    from dialshift.cli import main

    return main(["leaderboard", "score", str(path), "--dataset", str(dataset), "--results", str(store),
                 "--bootstrap", "50", "--no-progress"])


def test_each_track_is_ranked_in_its_own_table_with_an_interval_on_the_rank_column(toy_plugin, tmp_path, capsys):
    from dialshift.leaderboard import family_tables, read_store, render_site

    dataset, store = tmp_path / "build", tmp_path / "store"
    assert toy_build("--toy-cases", "300", "--out", str(dataset)) == 0
    assert _score(_submission(tmp_path / "full", dataset, "test"), dataset, store) == 0
    assert _score(_submission(tmp_path / "lite", dataset, "lite", "lite"), dataset, store) == 0
    better = _submission(tmp_path / "lite2", dataset, "lite", "lite", model="org/other", bonus=3.0)
    assert _score(better, dataset, store) == 0
    records = read_store(store)
    assert sorted(record["config"].get("track") for record in records) == ["full", "lite", "lite"]  # none replaced
    lite = next(r for r in records if r["config"]["track"] == "lite")
    assert lite["scoring"]["split"] == "lite" and lite["results"]["toy"]["instances"] == LITE_SIZE

    tables = {table.key: table for table in family_tables(records)}
    assert sorted(tables) == ["toyfam-lite-pairwise_selection", "toyfam-pairwise_selection"]
    full, lite_table = tables["toyfam-pairwise_selection"], tables["toyfam-lite-pairwise_selection"]
    assert [row["record"]["config"]["track"] for row in full.rows] == ["full"]
    assert {row["cells"]["model"]: row["cells"]["rank"] for row in lite_table.rows} == {"org/other": 1,
                                                                                        "org/toy-model": 2}
    assert full.rows[0]["cells"]["rank"] == 1
    for table in (full, lite_table):
        assert table.ranked_by == "accuracy|shifted"
        for row in table.rows:
            low, high = row["intervals"][table.ranked_by]
            assert low < row["cells"][table.ranked_by] < high

    page = render_site(store, tmp_path / "site", plots=False).read_text()
    assert "lite track" in page and 'id="table-toyfam-lite-pairwise_selection"' in page
    assert page.count('class="interval-rank"') == 3  # the rank column's interval, one per row, always shown


def test_a_lite_submission_must_hold_the_lite_ids_and_an_unknown_track_is_refused(toy_plugin, tmp_path, capsys):
    from tests.conftest import one_line_error

    dataset = tmp_path / "build"
    assert toy_build("--toy-cases", "300", "--out", str(dataset)) == 0
    capsys.readouterr()
    assert _score(_submission(tmp_path / "wrong", dataset, "test", "lite"), dataset, tmp_path / "store") == 2
    assert "lite" in one_line_error(capsys, "leaderboard")
    assert _score(_submission(tmp_path / "odd", dataset, "lite", "tiny"), dataset, tmp_path / "store") == 2
    assert "field 'track' must be one of full, lite" in one_line_error(capsys, "leaderboard")
    assert not (tmp_path / "store").exists() or not list((tmp_path / "store").rglob("*.json"))
