"""The daemon replaces its firmware link (a fresh session after a stop: ``home``, the homing
that ends an ``abort``, ``resume`` after a contradiction, a new job discarding a held queue)
one command at a time: found by ``bench/chaos.py``, a ``home`` sent the moment an aborted job
ended ran beside the abort's own fresh session and homing, and the daemon was left with two
links open on the one serial port (one of them no longer its own, never closed), a HOME
never acknowledged and the next job failing ``firmware``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

import pytest

from firmware_protocol.link import FirmwareInfo
from firmware_protocol.messages import FirmwareState
from robot.daemon import JobState
from tests.robot.daemon_fakes import FakeFirmware, FakeLink, running, scrambled
from tests.robot.helpers import run

pytestmark = pytest.mark.usefixtures("solver_tables")


class SlowLink(FakeLink):
    """A link that takes a moment to open its session, and counts the links open at once
    (from ``connect()`` to ``close()``)."""

    open_links: ClassVar[set[SlowLink]] = set()
    most_open: ClassVar[int] = 0

    async def connect(self) -> FirmwareInfo:
        # as FirmwareLink: the port opens at once (in its own task, which a caller that stops
        # waiting does not stop), the session a moment later
        if not self._closed:
            SlowLink.open_links.add(self)
            SlowLink.most_open = max(SlowLink.most_open, len(SlowLink.open_links))
        await asyncio.sleep(0.02)
        return await super().connect()

    async def close(self) -> None:
        await super().close()
        await asyncio.sleep(0.005)  # as FirmwareLink: its tasks and the port take a moment
        SlowLink.open_links.discard(self)


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    SlowLink.open_links = set()
    SlowLink.most_open = 0


def test_a_home_right_after_an_abort_waits_for_the_aborts_homing(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled(), pause_after=3)

    async def body() -> None:
        async with running(fast_tmp / "j.sqlite", firmware=fw, link_type=SlowLink) as rig:
            await rig.daemon.submit("start")
            await fw.paused.wait()
            abort = asyncio.ensure_future(rig.daemon.submit("abort"))
            await rig.daemon.job_done.wait()  # the job ended; the abort still homes
            home = await rig.daemon.submit("home")
            assert home["ok"], home
            assert (await abort)["ok"]
            assert SlowLink.most_open == 1, SlowLink.most_open
            assert SlowLink.open_links == {rig.daemon.link}
            await rig.job("start")
            assert rig.state() is JobState.DONE
            assert fw.cube.is_solved()

    run(body(), 30)


def test_two_starts_at_once_make_one_job(fast_tmp: Path) -> None:
    fw = FakeFirmware(scrambled())

    async def body() -> None:
        async with running(fast_tmp / "j.sqlite", firmware=fw, link_type=SlowLink) as rig:
            first, second = await asyncio.gather(
                rig.daemon.submit("start"), rig.daemon.submit("start")
            )
            replies = sorted([first, second], key=lambda r: bool(r["ok"]))
            assert replies[1]["ok"], replies
            assert not replies[0]["ok"] and replies[0]["error"]["code"] == "busy", replies
            await rig.daemon.job_done.wait()
            assert rig.state() is JobState.DONE
            assert len(rig.journal.sync.jobs()) == 1
            assert fw.cube.is_solved()

    run(body(), 30)


@pytest.mark.parametrize("after_s", [0.0, 0.005, 0.012])
def test_an_estop_during_a_homes_fresh_session_stops_and_stays(
    after_s: float, fast_tmp: Path
) -> None:
    """Found by bench/chaos.py: an estop that came while ``home`` had closed the old link and
    was connecting the new one was refused (``link ... is closed``) and never reached the
    firmware; one that came just before the HOME went out was cleared by it."""
    fw = FakeFirmware(scrambled())

    async def body() -> None:
        async with running(fast_tmp / "j.sqlite", firmware=fw, link_type=SlowLink) as rig:
            home = asyncio.ensure_future(rig.daemon.submit("home"))
            await asyncio.sleep(after_s)
            stop = await rig.daemon.submit("estop")
            assert stop["ok"], stop
            reply = await home
            assert not reply["ok"] and "emergency stop" in reply["error"]["message"], reply
            assert fw.state is FirmwareState.STOPPED  # the stop stays until a later home
            assert fw.homes == 0
            assert (await rig.daemon.submit("home"))["ok"]
            assert fw.state is FirmwareState.IDLE and fw.homes == 1

    run(body(), 30)


def test_a_fresh_session_that_cannot_connect_keeps_trying(fast_tmp: Path) -> None:
    """A ``home`` whose new link cannot open the port (unplugged just then) fails, but the
    daemon's link does not stay dead: it keeps connecting, and the next job runs once the
    port is back (it failed ``firmware`` for ever, until someone sent ``home`` again)."""
    fw = FakeFirmware(scrambled())

    async def body() -> None:
        async with running(fast_tmp / "j.sqlite", firmware=fw, link_type=SlowLink) as rig:
            fw.connect_failures = 3
            reply = await rig.daemon.submit("home")
            assert not reply["ok"] and reply["error"]["code"] == "firmware", reply
            async with asyncio.timeout(5):
                while not rig.daemon.link.connected:
                    await asyncio.sleep(0.01)
            await rig.job("start")
            assert rig.state() is JobState.DONE and fw.cube.is_solved()

    run(body(), 30)


@pytest.mark.parametrize("verb", ["home", "abort"])
@pytest.mark.parametrize("after_s", [0.0, 0.002, 0.01, 0.025])
def test_a_daemon_stopped_during_a_fresh_session_leaves_no_link_open(
    verb: str, after_s: float, fast_tmp: Path
) -> None:
    """Found by bench/chaos.py: an abort still homing when the daemon stopped opened its new
    link after the shutdown had closed the old one; that link kept the port and reconnected
    for ever (its failure logged as a never-retrieved exception once the port went)."""
    fw = FakeFirmware(scrambled(), pause_after=3)

    async def body() -> None:
        async with running(fast_tmp / "j.sqlite", firmware=fw, link_type=SlowLink) as rig:
            if verb == "abort":
                await rig.daemon.submit("start")
                await fw.paused.wait()
            command = asyncio.ensure_future(rig.daemon.submit(verb))
            await asyncio.sleep(after_s)
            rig.daemon.stop()
        command.cancel()
        await asyncio.sleep(0.05)  # a link opened late would be in the set by now
        assert SlowLink.open_links == set()

    run(body(), 30)
