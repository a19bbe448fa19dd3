"""State PREPARING at start: the solver's tables are made ready before any job, with progress
in the status; a job command sent meanwhile waits and starts when they are ready."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from robot.daemon.events import JobState
from tests.robot.daemon_fakes import FakeFirmware, MemorySink, running, scrambled
from tests.robot.helpers import run

pytestmark = pytest.mark.usefixtures("solver_tables")


def test_jobs_wait_for_the_tables(fast_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def prepare(progress: Callable[[str, int, int], None]) -> None:
        progress("phase1", 0, 100)
        progress("phase1", 40, 100)
        assert release.wait(20)
        progress("phase1", 100, 100)

    import robot.daemon.core as core

    original = core.Daemon.__init__

    def with_prepare(self: core.Daemon, *args: object, **kwargs: object) -> None:
        kwargs["prepare"] = prepare
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(core.Daemon, "__init__", with_prepare)

    async def scenario() -> MemorySink:
        sink = MemorySink()
        fw = FakeFirmware(scrambled())
        async with running(fast_tmp / "j.sqlite", firmware=fw, sink=sink) as rig:
            assert rig.state() is JobState.PREPARING
            await sink.wait(lambda: (sink.statuses[-1].get("preparing") or {}).get("done") == 40)
            early = asyncio.create_task(rig.daemon.submit("start", {}))
            status = await rig.daemon.submit("status", {})
            assert status["ok"] and status["status"]["state"] == "PREPARING"
            await asyncio.sleep(0.2)
            assert not early.done() and rig.daemon.job is None  # waiting, not refused
            release.set()
            reply = await asyncio.wait_for(early, 10)
            assert reply["ok"], reply
            await rig.daemon.job_done.wait()
            assert rig.state() is JobState.DONE
            states = [s["state"] for s in sink.statuses]
            assert states.index("IDLE") < states.index("SCANNING")
            assert all(s["preparing"] is None for s in sink.statuses[states.index("IDLE") :])
        return sink

    run(scenario(), 60)


def test_a_failed_preparation_does_not_block_the_daemon(fast_tmp: Path) -> None:
    from robot.daemon import Daemon
    from robot.journal_async import AsyncJournal
    from tests.robot.daemon_fakes import FakeLink, fast_config

    def broken(progress: Callable[[str, int, int], None]) -> None:
        raise OSError("disk full")

    async def scenario() -> None:
        journal = AsyncJournal.open(fast_tmp / "j.sqlite")
        sink = MemorySink()
        fw = FakeFirmware(scrambled())
        daemon = Daemon(
            fast_config(), link=FakeLink(fw), cameras=None, journal=journal, sink=sink,
            prepare=broken,
        )  # fmt: skip
        task = asyncio.create_task(daemon.run())
        await sink.wait(lambda: bool(sink.statuses) and sink.statuses[-1]["state"] == "IDLE")
        assert "disk full" in sink.statuses[-1]["error"]["message"]
        daemon.stop()
        await task
        await journal.close()

    run(scenario(), 30)
