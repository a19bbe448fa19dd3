"""A 4x4 job (wide and inner-slice turns run by grippers holding several layers) survives a
SIGKILL of the daemon: the restarted daemon resumes from the journal with each move's depth, and
the virtual cube (in another process, the simulated firmware) ends solved."""

from __future__ import annotations

import asyncio
import json
import re
import signal
from pathlib import Path

import pytest

from robot.journal import Journal
from solver.cube.facelets import Cube
from solver.scramble import random_moves
from tests.conftest import Broker
from tests.robot.helpers import Recorder, run
from tests.robot.test_e2e_kill import TOPIC, _close, _profile, _start_daemon

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.usefixtures("solver_tables")]

N = 4
MOTORS = "".join(
    f"[motors.{face}]\nmotor = {k}\nmax_depth = 3\n\n" for k, face in enumerate("URFDLB")
)


def test_sigkill_mid_4x4_job_then_resume(
    mqtt_broker: Broker, firmware_process: object, tmp_path: Path
) -> None:
    start = Cube.solved(N).apply(random_moves(N, 40, 17))
    fw = firmware_process(  # type: ignore[operator]
        start=start.to_facelets("scheme"), speed=2.0, extra=("--size", "4", "--max-depth", "3")
    )
    profile = _profile(tmp_path, fw.port, fw.state_file, mqtt_broker)
    text = profile.read_text()
    text = text.replace('id = "killme"\n', f'id = "killme"\ncube_size = {N}\n\n{MOTORS}', 1)
    profile.write_text(text.replace('engine = "twophase"', 'engine = "auto"'))

    async def scenario() -> Recorder:
        async with Recorder(mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/#") as rec:
            daemon = _start_daemon(profile)
            try:
                await rec.wait(lambda: "online" in rec.on(f"{TOPIC}/availability"), 20)
                await rec.publish(f"{TOPIC}/cmd/start", json.dumps({"id": "first"}))
                await rec.wait(lambda: len(rec.events("move_executed")) >= 6, 90)
            finally:
                daemon.send_signal(signal.SIGKILL)
                daemon.wait(10)
                _close(daemon)
            await rec.wait(lambda: rec.on(f"{TOPIC}/availability")[-1] == "offline", 10)
            await asyncio.sleep(1.5)  # the firmware's watchdog stops it after the group
            daemon = _start_daemon(profile)
            try:
                await rec.wait(lambda: bool(rec.events("recovered")), 20)
                await rec.publish(f"{TOPIC}/cmd/resume", json.dumps({"id": "again"}))
                await rec.wait(lambda: bool(rec.events("done") or rec.events("error")), 120)
            finally:
                daemon.send_signal(signal.SIGTERM)
                daemon.wait(20)
                _close(daemon)
            return rec

    rec = run(scenario(), 300)
    assert rec.events("error") == []
    recovered = rec.events("recovered")[0]
    assert recovered["resumable"] is True
    total, done = recovered["moves_total"], recovered["moves_done"]
    assert {e["index"] for e in rec.events("move_executed")} == set(range(1, total + 1))
    assert Cube.from_facelets(fw.facelets(), N).is_solved()
    journal = Journal(tmp_path / "journal.sqlite")
    record = journal.job(recovered["job_id"])
    assert record is not None and record.state == "DONE" and record.executed == total
    depths = [m.depth for m in journal.moves(record.id)]
    journal.close()
    assert max(depths[done:]) > 1, "the resumed part of the job turned no deep block"
    stderr = fw.stop()
    match = re.search(r"(\d+) moves executed", stderr)
    assert match is not None and int(match.group(1)) == total  # each move ran once
