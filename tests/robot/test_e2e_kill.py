"""The daemon is SIGKILLed mid-job and restarted: it resumes from the journal.

Everything is a separate process, as in production: the simulated firmware
(``cuberobot firmware-sim --pty --state-file``), the daemon (``cuberobot run``), Mosquitto.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from robot.journal import Journal
from solver.cube.facelets import Cube
from tests.conftest import Broker
from tests.robot.helpers import Recorder, run
from tests.robot.test_e2e import scrambled

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("solver_tables")]

TOPIC = "cuberobot/killme"


def _profile(
    tmp_path: Path, port: str, state_file: Path, broker: Broker, anytime: bool = False
) -> Path:
    cameras = "".join(
        f"""
[[cameras]]
name = "{name}"
source = "simulated:{state_file}"
width = 960
height = 720
view = "corner"
faces = {faces}
"""
        for name, faces in (("upper", '["U", "F", "R"]'), ("lower", '["D", "B", "L"]'))
    )
    text = f"""
[robot]
id = "killme"

[serial]
url = "{port}"
{cameras}
[solver]
engine = "twophase"
budget_s = 0.3
anytime = {"true" if anytime else "false"}

[solver.cost]
quarter_turn_s = 0.0975
half_turn_s = 0.1575
pair_extra_s = 0.0
settle_s = 0.005

[mqtt]
host = "{broker.host}"
port = {broker.port}

[journal]
path = "journal.sqlite"
"""
    path = tmp_path / "killme.toml"
    path.write_text(text)
    return path


def _start_daemon(profile: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "robot.cli", "run", "--config", str(profile)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "running" in line, f"daemon did not start: {line!r}"
    return proc


def _close(proc: subprocess.Popen[str]) -> None:
    if proc.stdout is not None:
        proc.stdout.close()


@pytest.mark.parametrize("anytime", [False, True], ids=["fixed", "anytime"])
def test_sigkill_mid_job_then_resume(
    mqtt_broker: Broker, firmware_process: object, tmp_path: Path, anytime: bool
) -> None:
    """Also with anytime solving: the daemon dies while it searches and commits moves ahead of
    the motors; the restart resumes the plan as it stood (journaled) to a solved cube."""
    start = scrambled(21)
    fw = firmware_process(start=start.to_facelets("scheme"))  # type: ignore[operator]
    profile = _profile(tmp_path, fw.port, fw.state_file, mqtt_broker, anytime)

    async def scenario() -> tuple[Recorder, int, int]:
        async with Recorder(mqtt_broker.host, mqtt_broker.port, f"{TOPIC}/#") as rec:
            daemon = _start_daemon(profile)
            try:
                await rec.wait(lambda: "online" in rec.on(f"{TOPIC}/availability"), 20)
                await rec.publish(f"{TOPIC}/cmd/start", json.dumps({"id": "first"}))
                await rec.wait(lambda: len(rec.events("move_executed")) >= 4, 30)
            finally:
                daemon.send_signal(signal.SIGKILL)
                daemon.wait(10)
                _close(daemon)
            seen_before = len(rec.events("move_executed"))
            # the broker publishes the last will for the dead daemon
            await rec.wait(lambda: rec.on(f"{TOPIC}/availability")[-1] == "offline", 10)
            await asyncio.sleep(1.5)  # the firmware's watchdog stops it after the group in progress
            daemon = _start_daemon(profile)
            try:
                await rec.wait(lambda: bool(rec.events("recovered")), 20)
                await rec.publish(f"{TOPIC}/cmd/resume", json.dumps({"id": "again"}))
                await rec.wait(lambda: bool(rec.events("done") or rec.events("error")), 60)
            finally:
                daemon.send_signal(signal.SIGTERM)
                daemon.wait(20)
                _close(daemon)
            return rec, seen_before, daemon.returncode

    rec, seen_before, code = run(scenario(), 150)
    assert code == 0
    assert rec.events("error") == []
    recovered = rec.events("recovered")[0]
    assert recovered["resumable"] is True
    assert recovered["moves_done"] >= seen_before
    total = recovered["moves_total"]
    done = recovered["moves_done"]
    events = rec.events("move_executed")
    assert {e["index"] for e in events} == set(range(1, total + 1))  # nothing lost
    first = [e["index"] for e in events if not e.get("replayed")]
    assert len(first) == len(set(first))  # each announced once, apart from the replays
    # moves the firmware finished while the daemon was dead were recovered from its counter
    late = {e["index"] for e in events if e.get("recovered")}
    assert late, "the firmware kept running its queue after the daemon died"
    if anytime:  # the job ran the anytime way
        assert rec.events("solution")[0]["anytime"] is True
    # replayed at the restart: journaled before the kill, the broker's ack not yet seen
    replayed = {e["index"] for e in events if e.get("replayed")}
    assert max(replayed | {0}) < min(late)
    plain = {e["index"] for e in events if not e.get("replayed") and not e.get("recovered")}
    assert plain.isdisjoint(late)
    assert {i for i in plain if i > done} == set(range(done + 1, total + 1))  # after resume
    assert Cube.from_facelets(fw.facelets()).is_solved()
    journal = Journal(tmp_path / "journal.sqlite")
    record = journal.job(recovered["job_id"])
    assert record is not None and record.state == "DONE"
    assert record.executed == record.total_moves == total
    assert [m.idx for m in journal.moves(record.id) if m.executed_at] == list(range(total))
    journal.close()
    stderr = fw.stop()
    match = re.search(r"(\d+) moves executed", stderr)
    assert match is not None and int(match.group(1)) == total  # the motors ran each move once
