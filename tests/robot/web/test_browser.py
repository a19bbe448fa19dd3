"""The robot's page in a real browser (Debian's headless Chromium, driven by selenium) against
the simulated robot: Start until solved, the scanned net and camera frames shown, Abort during a
second job, a command without the token refused. ``CUBEROBOT_SCREENSHOT=PATH`` writes a
screenshot of the page at the end of the first job (``make screenshot``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from robot.assemble import assemble
from robot.broker import free_port
from robot.web import WebServer
from solver.cube.facelets import Cube
from solver.scramble import random_moves
from tests.robot.helpers import sim_config

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.usefixtures("solver_tables")]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
TOKEN = "browser-test-token"

try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # pragma: no cover - the test extra installs it
    webdriver = None


def _why_not() -> str | None:
    if webdriver is None:
        return "selenium is not installed (pip install -e '.[test]')"
    if CHROMIUM is None or CHROMEDRIVER is None:
        return (
            "no chromium/chromedriver: `make test` installs Debian's chromium and "
            "chromium-driver (apt-get) when it runs as root"
        )
    return None


class _Robot:
    """The simulated robot with its web page, on an event loop in a thread of its own."""

    def __init__(self, tmp: Path) -> None:
        config = sim_config(speed_factor=1.0)
        web = config.web.model_copy(update={"enabled": True, "token": TOKEN})
        self.config = config.model_copy(update={"web": web})
        self.port = free_port()
        self.tmp = tmp
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self._stop: asyncio.Event | None = None
        self.sim: Any = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main())
        except BaseException as exc:  # reported by the test
            self.error = exc
            self.ready.set()
        finally:
            self.loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        async with contextlib.AsyncExitStack() as stack:
            parts = await assemble(
                self.config,
                stack,
                journal_path=self.tmp / "j.sqlite",
                web_port=self.port,
                sim_start=_scrambled(1),
            )
            self.sim = parts.sim
            task = asyncio.create_task(parts.daemon.run())
            await parts.daemon.firmware_ready.wait()
            self.ready.set()
            await self._stop.wait()
            parts.daemon.stop()
            await task

    def scramble(self, seed: int) -> None:
        """Someone scrambles the cube in the robot by hand (between jobs)."""
        cube = _scrambled(seed)
        done = threading.Event()

        def put() -> None:
            self.sim.cube.cube = cube
            done.set()

        self.loop.call_soon_threadsafe(put)
        assert done.wait(10)

    def __enter__(self) -> _Robot:
        self.thread.start()
        assert self.ready.wait(120), "the simulated robot did not start"
        if self.error is not None:
            raise self.error
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(60)


def _scrambled(seed: int) -> Cube:
    return Cube.solved(3).apply(random_moves(3, length=25, seed=seed))


@pytest.fixture
def browser() -> Iterator[Any]:
    reason = _why_not()
    if reason is not None:
        pytest.skip(f"BROWSER TEST SKIPPED: {reason}")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument("--window-size=1280,1600")
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    except WebDriverException as exc:
        pytest.skip(f"BROWSER TEST SKIPPED: chromium would not start: {exc.msg}")
    try:
        yield driver
    finally:
        driver.quit()


def _text(driver: Any, element_id: str) -> str:
    return str(driver.find_element(By.ID, element_id).text)


def _wait_state(driver: Any, *states: str, timeout: float = 120) -> str:
    WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: _text(d, "state") in states)
    return _text(driver, "state")


def test_the_page_runs_a_job_shows_the_cube_and_aborts(browser: Any, tmp_path: Path) -> None:
    with _Robot(tmp_path) as robot:
        browser.get(f"http://127.0.0.1:{robot.port}/")
        WebDriverWait(browser, 30).until(lambda d: _text(d, "connection") == "live")
        assert _wait_state(browser, "IDLE") == "IDLE"

        # without the token a command is refused, and the page says so
        browser.find_element(By.ID, "btn-home").click()
        WebDriverWait(browser, 10).until(lambda d: "unauthorised" in _text(d, "reply"))

        token = browser.find_element(By.ID, "token")
        token.send_keys(TOKEN)
        browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", token)
        browser.find_element(By.ID, "btn-start").click()
        WebDriverWait(browser, 10).until(lambda d: "start: ok" in _text(d, "reply"))
        assert _wait_state(browser, "DONE", "ERROR") == "DONE"

        # the net shows the scanned colours, the camera frames loaded
        stickers = browser.find_elements(By.CSS_SELECTOR, "#net .sticker")
        assert len(stickers) == 54
        colours = {s.value_of_css_property("background-color") for s in stickers}
        assert len(colours) == 6, colours
        WebDriverWait(browser, 20).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "#frames img")) >= 2
        )
        WebDriverWait(browser, 20).until(
            lambda d: all(
                d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", i)
                for i in d.find_elements(By.CSS_SELECTOR, "#frames img")
            )
        )
        done = browser.find_elements(By.CSS_SELECTOR, "#solution .move.done")
        assert done and len(done) == len(browser.find_elements(By.CSS_SELECTOR, "#solution .move"))
        shot = os.environ.get("CUBEROBOT_SCREENSHOT")
        if shot:
            Path(shot).parent.mkdir(parents=True, exist_ok=True)
            browser.save_screenshot(shot)

        # the calibration view: live frames with the grid; the simulated cameras are not saved
        browser.find_element(By.ID, "btn-live").click()
        WebDriverWait(browser, 30).until(
            lambda d: (
                len(d.find_elements(By.CSS_SELECTOR, "#live img")) == 2
                and all(
                    d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", i)
                    for i in d.find_elements(By.CSS_SELECTOR, "#live img")
                )
            )
        )
        browser.find_element(By.ID, "btn-calibrate").click()
        WebDriverWait(browser, 30).until(
            lambda d: "geometry from the renderer" in _text(d, "calibration-reply")
        )

        # a second job, aborted while the motors run
        robot.scramble(2)
        browser.find_element(By.ID, "btn-start").click()
        _wait_state(browser, "EXECUTING", timeout=60)
        browser.find_element(By.ID, "btn-abort").click()
        assert _wait_state(browser, "ABORTED", timeout=30) == "ABORTED"
        WebDriverWait(browser, 20).until(
            lambda d: "ABORTED" in d.find_element(By.ID, "history").text
        )


class _Page:
    """The page on an in-memory backend (no robot), to show what the daemon would publish."""

    def __init__(self) -> None:
        from tests.robot.web.test_server import Backend

        self.server = WebServer(Backend(), port=0, token=TOKEN)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> _Page:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        return self

    def publish(self, name: str, payload: dict[str, Any]) -> None:
        self.loop.call_soon_threadsafe(self.server.publish, name, payload)

    def __exit__(self, *exc: Any) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.mark.parametrize("n", [2, 4, 7])
def test_the_net_scales_with_n_and_fits_a_phone(browser: Any, n: int) -> None:
    cube = Cube.solved(n).apply(random_moves(n, length=30, seed=n))
    with _Page() as page:
        browser.set_window_size(390, 844)  # a phone
        browser.get(f"http://127.0.0.1:{page.server.port}/")
        WebDriverWait(browser, 30).until(lambda d: _text(d, "connection") == "live")
        doubt = {"sticker": "F[0,0]", "confidence": 0.42}
        page.publish(
            "scan_complete",
            {"facelets": cube.to_facelets("scheme"), "valid": True, "low_confidence": [doubt],
             "min_confidence": 0.42},
        )  # fmt: skip
        WebDriverWait(browser, 10).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "#net .sticker")) == 6 * n * n
        )
        doubtful = browser.find_elements(By.CSS_SELECTOR, "#net .sticker.doubtful")
        assert len(doubtful) == 1 and "0.42" in doubtful[0].get_attribute("title")
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the page is {overflow} px wider than a phone"


def _shown(driver: Any) -> set[str]:
    ids = ("btn-resume", "btn-resume-rescan", "btn-start-pose")
    return {i for i in ids if driver.find_element(By.ID, i).is_displayed()}


def test_the_recovery_buttons_follow_the_status_and_send_their_commands(browser: Any) -> None:
    """Resume (with or without a fresh scan) shows for a resumable job, only with a rescan
    when the firmware does not match the journal; after a ``parts_unknown`` refusal a button
    starts again with ``start_pose``; none while a job runs."""
    with _Page() as page:
        browser.get(f"http://127.0.0.1:{page.server.port}/")
        WebDriverWait(browser, 30).until(lambda d: _text(d, "connection") == "live")
        token = browser.find_element(By.ID, "token")
        token.send_keys(TOKEN)
        browser.execute_script("arguments[0].dispatchEvent(new Event('change'))", token)
        assert _shown(browser) == set()
        resumable = {"job_id": "j1", "moves_done": 4, "moves_total": 20, "needs_rescan": False}
        page.publish("status", {"state": "IDLE", "resumable": resumable})
        WebDriverWait(browser, 10).until(lambda d: _shown(d) == {"btn-resume", "btn-resume-rescan"})
        browser.find_element(By.ID, "btn-resume-rescan").click()
        WebDriverWait(browser, 10).until(lambda d: "resume: ok" in _text(d, "reply"))
        page.publish("status", {"state": "EXECUTING", "resumable": resumable})
        WebDriverWait(browser, 10).until(lambda d: _shown(d) == set())
        page.publish("status", {"state": "IDLE", "resumable": {**resumable, "needs_rescan": True}})
        WebDriverWait(browser, 10).until(lambda d: _shown(d) == {"btn-resume-rescan"})
        error = {"code": "parts_unknown", "message": "where the turntable's parts are is unknown"}
        page.publish("status", {"state": "ERROR", "error": error, "resumable": None})
        WebDriverWait(browser, 10).until(lambda d: _shown(d) == {"btn-start-pose"})
        browser.find_element(By.ID, "btn-start-pose").click()
        WebDriverWait(browser, 10).until(lambda d: "start: ok" in _text(d, "reply"))
    backend = page.server.backend
    sent = [(verb, json.loads(body)) for verb, body in backend.commands]
    assert sent == [
        ("resume", {"rescan": True, "source": "web"}),
        ("start", {"start_pose": True, "source": "web"}),
    ]
