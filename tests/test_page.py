"""The static results page in a real headless Chromium (Debian's chromium and chromium-driver, with selenium): the
table is read from the DOM, sorted by clicking a column, checked, and a screenshot saved."""

import json
import shutil
from pathlib import Path

import pytest
from test_leaderboard import make_dataset, score, write_predictions

from dialshift.cli import main

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("page")
    dataset = make_dataset(root / "dialshift")
    store = root / "results"
    for seed, method in enumerate(("vanilla", "dropout", "ensemble")):
        folder = write_predictions(root / method, dataset, seed=seed)
        meta = json.loads((folder / "submission.json").read_text())
        (folder / "submission.json").write_text(json.dumps({**meta, "method": method,
                                                            "model": "<b>org/tiny</b>" if seed == 2 else "org/tiny"}))
        assert score(folder, dataset, store) == 0
    assert main(["leaderboard", "render", str(store), "--out", str(root / "site")]) == 0
    return root / "site"


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000", "--allow-file-access-from-files"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER))
    yield driver
    driver.quit()


def read_table(driver, family="dailydialog-response_ranking"):
    from selenium.webdriver.common.by import By

    table = driver.find_element(By.ID, f"table-{family}")
    keys = [th.get_attribute("data-key") for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    rows = []
    for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr"):
        cells = {td.get_attribute("data-key"): td for td in tr.find_elements(By.TAG_NAME, "td")}
        rows.append({key: (cells[key].get_attribute("data-value"), cells[key].text) for key in keys if key in cells})
    return table, rows


def test_the_page_shows_sorts_and_links_the_results(site, browser, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get((site / "index.html").as_uri())
    assert browser.find_element(By.ID, "tab-dailydialog-response_ranking").get_attribute("aria-selected") == "true"
    table, rows = read_table(browser)
    assert len(rows) == 3 and {row["method"][1] for row in rows} == {"vanilla", "dropout", "ensemble"}
    assert "<b>org/tiny</b>" in {row["model"][1] for row in rows}  # escaped, shown as text
    ranks = [int(row["rank"][1]) for row in rows]  # the page opens sorted by rank (ties share one)
    assert ranks[0] == 1 and ranks == sorted(ranks) and {row["coverage"][1] for row in rows} == {"3 of 3"}
    headers = {th.get_attribute("data-key"): th for th in table.find_elements(By.CSS_SELECTOR, "thead th")}
    assert "↓" in headers["ece|clean"].text and headers["ece|clean"].get_attribute("title") == "lower is better"
    assert "↑" in headers["recall@1|clean"].text

    headers["ece|clean"].click()  # first click: best first, i.e. ascending for a lower-is-better metric
    _, rows = read_table(browser)
    values = [float(row["ece|clean"][0]) for row in rows]
    assert values == sorted(values) and headers["ece|clean"].get_attribute("aria-sort") == "ascending"
    headers["ece|clean"].click()
    _, rows = read_table(browser)
    assert [float(row["ece|clean"][0]) for row in rows] == sorted(values, reverse=True)
    headers["mrr|shifted"].click()  # higher is better: descending first
    _, rows = read_table(browser)
    mrr = [float(row["mrr|shifted"][0]) for row in rows]
    assert mrr == sorted(mrr, reverse=True)

    links = table.find_elements(By.CSS_SELECTOR, "tbody a")
    targets = {link.get_attribute("href") for link in links}
    assert "https://example.org/tiny" in targets
    results = [t for t in targets if "/results/dailydialog/" in t]
    assert len(results) == 3 and all(Path(t.removeprefix("file://")).is_file() for t in results)
    images = browser.find_elements(By.CSS_SELECTOR, ".curves img")
    assert len(images) == 6 and all(browser.execute_script("return arguments[0].naturalWidth", i) > 0 for i in images)
    assert sum("(paired differences)" in image.get_attribute("alt") for image in images) == 3  # one per submission
    browser.execute_script("window.scrollTo(0, 0)")
    shot = tmp_path / "leaderboard.png"
    assert browser.save_screenshot(str(shot)) and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ----------------------------------------------------------------------------------------------- tables per task


def _families_dataset(path):
    """A tiny dataset folder holding korean (pairwise + ranking) and distracting configs, registered names."""
    import datasets

    from dialshift.hub import write_hub_folder
    from dialshift.registry import all_configs

    registered = all_configs()
    rows, built = 24, {}
    for name in ("kor_adv", "kor_adv_tense", "kor_chitchat"):
        ids = [f"{name}-{k:03d}" for k in range(rows)] if name != "kor_adv_tense" else [f"kor_adv-{k:03d}"
                                                                                        for k in range(8)]
        width = 10 if name == "kor_chitchat" else 2
        columns = {"id": ids, "candidates": [[f"c{j}" for j in range(width)] for _ in ids],
                   "label": [k % width for k in range(len(ids))]}
        if name != "kor_chitchat":
            columns["type"] = ["tense" if name == "kor_adv_tense" or k % 2 else "negation" for k in range(len(ids))]
        built[name] = datasets.DatasetDict({"test": datasets.Dataset.from_dict(columns)})
    for name in ("ubuntu", "ubuntu_distract_random_0.5", "ubuntu_distract_rare_end"):
        masks = [[0, 0] if name == "ubuntu" else [0, 1, 0] for _ in range(rows)]
        built[name] = datasets.DatasetDict({"test": datasets.Dataset.from_dict(
            {"id": [f"u-{k:03d}" for k in range(rows)], "distractor_mask": masks})})
    metadata = {name: {"config": registered[name].to_dict(), "facts": {}} for name in built}
    return write_hub_folder(path, built, [], metadata=metadata, progress=False), built


def _submit(folder, dataset, built, names, seed, method):
    import numpy as np

    from dialshift.scoring.gold import config_fingerprints

    rng = np.random.default_rng(seed)
    (folder / "predictions").mkdir(parents=True)
    for name in names:
        test = built[name]["test"]
        lines = []
        for row in test:
            if "candidates" in row:
                scores = rng.normal(size=len(row["candidates"]))
                scores[row["label"]] += 1.0
                probabilities = np.exp(scores) / np.exp(scores).sum()
                lines.append({"id": row["id"], "scores": scores.tolist(), "probabilities": probabilities.tolist()})
            else:
                extra = 1  # ubuntu's configs: the Query's AS last
                lines.append({"id": row["id"], "attention_scores": (rng.random(len(row["distractor_mask"]) + extra)
                                                                    + 0.1).tolist(),
                              "log_likelihood": float(-rng.random() * 50), "tokens": 20})
        (folder / "predictions" / f"{name}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / "submission.json").write_text(json.dumps({
        "model": f"org/{method}", "method": method, "link": "https://example.org", "licence": "mit",
        "dataset_revision": config_fingerprints(dataset, names), "seeds": [seed], "configs": list(names)}))
    return folder


@pytest.fixture(scope="module")
def task_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("tasks")
    dataset, built = _families_dataset(root / "dialshift")
    store = root / "results"
    korean = ["kor_adv", "kor_adv_tense", "kor_chitchat"]
    distracting = ["ubuntu", "ubuntu_distract_random_0.5", "ubuntu_distract_rare_end"]
    for seed, (method, names) in enumerate([("full", korean), ("full", distracting), ("other", distracting),
                                            ("partial", distracting[:2]), ("partial", korean[:2])]):
        folder = _submit(root / f"{method}-{seed}", dataset, built, names, seed, method)
        assert score(folder, dataset, store) == 0
    assert main(["leaderboard", "render", str(store), "--out", str(root / "site"), "--no-plots"]) == 0
    return root / "site"


def test_tables_per_task_rank_complete_rows_only_in_the_tasks_direction(task_site, browser):
    from selenium.webdriver.common.by import By

    browser.get((task_site / "index.html").as_uri())
    tabs = [b.get_attribute("data-family") for b in browser.find_elements(By.CSS_SELECTOR, ".tabs button")]
    assert tabs == ["distracting-attention_distribution", "korean-pairwise_selection", "korean-response_ranking"]

    browser.find_element(By.ID, "tab-korean-pairwise_selection").click()
    table, rows = read_table(browser, "korean-pairwise_selection")
    headers = {th.get_attribute("data-key"): th for th in table.find_elements(By.CSS_SELECTOR, "thead th")}
    assert {"accuracy|clean", "accuracy/tense|clean", "accuracy/negation|clean"} <= set(headers)
    assert not any(key.startswith(("recall@", "mrr", "brier")) for key in headers)  # pairwise columns, not ranking
    assert all(row["accuracy|clean"][0] != "" for row in rows)  # no empty column
    assert {row["coverage"][1] for row in rows} == {"2 of 2"}  # kor_chitchat is the other table's
    browser.find_element(By.ID, "tab-korean-response_ranking").click()
    _, ranking = read_table(browser, "korean-response_ranking")
    assert [(row["method"][1], row["coverage"][1], row["rank"][1]) for row in ranking] == [("full", "1 of 1", "1")]

    browser.find_element(By.ID, "tab-distracting-attention_distribution").click()
    table, rows = read_table(browser, "distracting-attention_distribution")
    headers = {th.get_attribute("data-key"): th for th in table.find_elements(By.CSS_SELECTOR, "thead th")}
    assert {"das_ratio|shifted", "das_ratio_of_means|shifted", "perplexity|clean"} <= set(headers)
    for key in ("das_ratio_of_means|shifted", "perplexity|clean", "das_ratio|shifted"):
        assert headers[key].get_attribute("title") == "lower is better" and "↓" in headers[key].text
    assert headers["mean_as_history|clean"].get_attribute("data-lower-is-better") == ""  # descriptive: not ranked
    by_method = {row["method"][1]: row for row in rows}
    partial = by_method["partial"]
    assert partial["coverage"][1] == "2 of 3 (incomplete)" and partial["rank"][0] == ""
    assert partial["das_ratio|shifted"][0] == ""  # a mean over fewer configs is not shown
    ranked = sorted((float(by_method[m]["das_ratio|shifted"][0]), int(by_method[m]["rank"][1]))
                    for m in ("full", "other"))
    assert [rank for _, rank in ranked] == [1, 2]  # the lower DAS ratio ranks first
    for key in ("das_ratio_of_means|shifted", "perplexity|clean"):
        headers[key].click()  # first click: best first, i.e. ascending for these lower-is-better metrics
        _, rows = read_table(browser, "distracting-attention_distribution")
        values = [float(row[key][0]) for row in rows if row[key][0] != ""]
        assert values == sorted(values) and headers[key].get_attribute("aria-sort") == "ascending"

    cell = table.find_element(By.CSS_SELECTOR, 'td[data-key="perplexity|clean"] .interval')
    assert not cell.is_displayed()
    browser.find_element(By.ID, "show-intervals").click()
    assert cell.is_displayed() and cell.text.startswith("[")
