"""The teaching page in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``), driven by Selenium, against ``fxverify serve`` on the loopback interface.

It opens the proved lesson ``kv-offload-ordered``, clicks Check and reads the verdict "proved";
breaks the policy as a learner would (deletes `after attn` in the editor), clicks Check again and
finds the refutation: the verdict "refuted", the FX-ORD-002 finding, its swimlane picture and the
replayed trace's violating step ``>>`` on `offload`, the verified hint, and the movement and
happens-before graphs with the finding highlighted; then clicks the code and reads its
explanation. Screenshots of each state are saved in ``test-artifacts/serve/`` (git
ignores it) for a person to look at.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from fxverify.serve.api import Api, ServeConfig
from fxverify.serve.http import make_server

from tests.conftest import ROOT

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
ARTIFACTS = ROOT / "test-artifacts" / "serve"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1500,1100"]

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                                 reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")]


@pytest.fixture
def page_url():
    server = make_server(Api(ServeConfig(ROOT)), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d/" % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="fxverify-chromium-")
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts, service=Service(DRIVER))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_break_a_lesson_and_find_the_refutation_and_its_swimlane(page_url: str, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    wait = WebDriverWait(browser, 120)

    def shot(name: str) -> None:
        assert browser.save_screenshot(str(ARTIFACTS / name))

    def checked() -> str:
        browser.find_element(By.ID, "check").click()
        wait.until(lambda d: "running" not in d.find_element(By.ID, "verdict").get_attribute("class"))
        return browser.find_element(By.ID, "verdict").text

    browser.get(page_url + "#lesson=corpus%2Fordering%2Fok%2Fkv-offload-ordered.fx")
    wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    wait.until(lambda d: "after attn" in d.find_element(By.ID, "editor").get_property("value"))
    assert browser.find_element(By.ID, "title").text == "kv offload ordered"
    assert "Fixed twin of fail/kv-offload-unordered.fx" in browser.find_element(By.ID, "lesson-text").text
    active = browser.find_element(By.CSS_SELECTOR, "nav a.lesson.active")
    assert active.get_attribute("data-path") == "corpus/ordering/ok/kv-offload-ordered.fx"
    lessons = [a.get_attribute("data-path") for a in browser.find_elements(By.CSS_SELECTOR, "nav a.lesson")]
    assert len(lessons) > 100 and lessons.index("corpus/ordering/ok/kv-offload-ordered.fx") == \
        lessons.index("corpus/ordering/fail/kv-offload-unordered.fx") + 1  # twins side by side
    shot("1-lesson.png")

    assert checked().startswith("proved:")
    assert browser.find_elements(By.CSS_SELECTOR, "#findings .finding") == []
    shot("2-proved.png")

    # break the policy: the offload no longer waits for the kernel that writes the block
    editor = browser.find_element(By.ID, "editor")
    broken = editor.get_property("value").replace(" after attn\n", "\n")
    browser.execute_script("arguments[0].value = arguments[1];", editor, broken)
    verdict = checked()
    assert verdict.startswith("refuted:") and "1 refuted" in verdict

    (finding,) = browser.find_elements(By.CSS_SELECTOR, "#findings .finding")
    assert finding.get_attribute("data-code") == "FX-ORD-002"
    assert "data race (write-read) on `kv_blk`: `attn` and `offload` may overlap in time" in finding.text
    lane = finding.find_element(By.CSS_SELECTOR, ".swimlane[data-slot=swimlane]")
    picture = lane.find_element(By.CSS_SELECTOR, "figure.lanes svg")  # the swimlane renderer's picture
    assert picture.size["width"] > 300 and picture.size["height"] > 100
    assert {"gpu0.launch", "gpu0.copy_done"} <= set(picture.text.split()) or "gpu0" in picture.text
    rows = lane.find_elements(By.CSS_SELECTOR, "table.trace tr.violation")
    assert len(rows) == 1 and rows[0].text.split()[:6] == [">>", "2", "0", "gpu0.copy_done", "offload", "start"]
    assert "help: add `after attn` to `offload` (verified:" in finding.find_element(By.CSS_SELECTOR, ".help").text
    browser.execute_script("arguments[0].scrollIntoView();", finding)
    shot("3-refuted.png")
    graphs = browser.find_elements(By.CSS_SELECTOR, "#graph figure.graph")
    assert [g.find_element(By.TAG_NAME, "figcaption").text for g in graphs] == ["Movement graph", "Happens-before graph"]
    assert all(g.find_element(By.TAG_NAME, "svg").size["height"] > 50 for g in graphs)
    assert browser.find_element(By.CSS_SELECTOR, "#graph .pending").text.startswith("highlighted: FX-ORD-002")
    browser.execute_script("arguments[0].scrollIntoView();", graphs[0])
    shot("3b-graphs.png")

    finding.find_element(By.CSS_SELECTOR, "a.code").click()
    wait.until(lambda d: d.find_element(By.ID, "explain-title").text == "FX-ORD-002: data race")
    assert "rule: two conflicting accesses" in browser.find_element(By.ID, "explain-text").text
    shot("4-explain.png")
    assert all((ARTIFACTS / n).stat().st_size > 10_000 for n in ("1-lesson.png", "2-proved.png", "3-refuted.png", "4-explain.png"))
