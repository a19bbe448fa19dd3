"""A lost link: the status follows the link at once, and ``resume`` right after ``link_lost``
waits for the cable to come back (bounded) instead of losing the job."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from robot.daemon.events import ErrorCode, EventName, JobState
from tests.robot.daemon_fakes import FakeFirmware, Fault, fast_config, running, scrambled
from tests.robot.helpers import run

pytestmark = pytest.mark.usefixtures("solver_tables")


def _config(resume_wait_s: float) -> object:
    config = fast_config()
    serial = config.serial.model_copy(update={"resume_wait_s": resume_wait_s})
    return config.model_copy(update={"serial": serial})


def test_resume_waits_for_the_link_then_finishes(fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)])
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config(10)) as rig:
            await rig.job("start")
            assert rig.sink.of(EventName.ERROR)[-1]["code"] == ErrorCode.LINK_LOST
            fw.unplugged = True
            await rig.sink.wait(lambda: rig.sink.statuses[-1]["firmware"]["connected"] is False)
            resume = asyncio.create_task(rig.daemon.submit("resume", {}))
            await asyncio.sleep(0.3)
            assert not resume.done()  # waiting for the cable, not failing
            fw.unplugged = False
            reply = await asyncio.wait_for(resume, 10)
            assert reply["ok"], reply
            await rig.daemon.job_done.wait()
            assert rig.state() is JobState.DONE and fw.cube.is_solved()
            assert any(s["firmware"]["connected"] for s in rig.sink.statuses[-3:])

    run(scenario(), 60)


def test_resume_gives_up_after_the_wait_and_the_job_stays_resumable(fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)])
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config(0.3)) as rig:
            await rig.job("start")
            fw.unplugged = True
            reply = await rig.daemon.submit("resume", {})
            assert reply["error"]["code"] == ErrorCode.FIRMWARE_UNAVAILABLE
            assert "send resume again" in reply["error"]["message"]
            assert rig.daemon.resumable is not None
            fw.unplugged = False
            await rig.job("resume", {})  # following the advice works
            assert rig.state() is JobState.DONE and fw.cube.is_solved()

    run(scenario(), 60)


def test_the_link_dropping_during_resume_keeps_the_job_resumable(fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = FakeFirmware(scrambled(), faults=[Fault("link_lost", 3)])
        async with running(fast_tmp / "j.sqlite", firmware=fw, config=_config(5)) as rig:
            await rig.job("start")
            executed = len(fw.executed)
            rig.daemon.link._connected = True  # type: ignore[attr-defined]
            real_status = rig.daemon.link.status

            async def dropping_status() -> object:
                fw.unplugged = True
                return await real_status()

            rig.daemon.link.status = dropping_status  # type: ignore[method-assign]
            await rig.job("resume", {})
            error = rig.sink.of(EventName.ERROR)[-1]
            assert error["code"] == ErrorCode.LINK_LOST and error.get("resumable") is True
            assert rig.daemon.resumable is not None and len(fw.executed) == executed
            rig.daemon.link.status = real_status  # type: ignore[method-assign]
            fw.unplugged = False
            await rig.job("resume", {})
            assert rig.state() is JobState.DONE and fw.cube.is_solved()

    run(scenario(), 60)


def test_status_follows_the_link(fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = FakeFirmware(scrambled())
        async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
            fw.unplugged = True
            await rig.sink.wait(lambda: not rig.sink.statuses[-1]["firmware"]["connected"], 2)
            fw.unplugged = False
            await rig.sink.wait(lambda: rig.sink.statuses[-1]["firmware"]["connected"], 2)

    run(scenario(), 30)
