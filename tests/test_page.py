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


def read_table(driver, family="dailydialog"):
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
    assert browser.find_element(By.ID, "tab-dailydialog").get_attribute("aria-selected") == "true"
    table, rows = read_table(browser)
    assert len(rows) == 3 and {row["method"][1] for row in rows} == {"vanilla", "dropout", "ensemble"}
    assert "<b>org/tiny</b>" in {row["model"][1] for row in rows}  # escaped, shown as text
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
