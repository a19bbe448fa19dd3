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
    """A link that takes a moment to open its session, and counts the links open at once."""

    open_links: ClassVar[set[SlowLink]] = set()
    most_open: ClassVar[int] = 0

    async def connect(self) -> FirmwareInfo:
        await asyncio.sleep(0.02)
        info = await super().connect()
        if not self._closed:
            SlowLink.open_links.add(self)
            SlowLink.most_open = max(SlowLink.most_open, len(SlowLink.open_links))
        return info

    async def close(self) -> None:
        SlowLink.open_links.discard(self)
        await super().close()


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
