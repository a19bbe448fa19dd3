"""Safety first in the command path: an emergency stop reaches the firmware at once, whatever
else is arriving; a flood is refused (busy, rate_limited), never queued without bound; hostile
payloads get a ``malformed`` reply and the daemon keeps running."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_protocol.messages import FirmwareState
from robot.commands import VERBS
from robot.daemon.events import ErrorCode, EventName, JobState
from robot.daemon.intake import QUEUE_LIMIT
from tests.robot.daemon_fakes import FakeFirmware, Rig, running, scrambled
from tests.robot.helpers import run

pytestmark = pytest.mark.usefixtures("solver_tables")

#: the issue's bound: from arriving at the daemon to the firmware being told
ESTOP_BOUND_S = 0.050


async def _estop_latency(rig: Rig) -> float:
    """Seconds from the estop command arriving to the firmware being stopped."""
    started = time.perf_counter()
    await rig.daemon.intake.accept("estop", b'{"source": "test"}', lambda r: None)
    while rig.firmware.state is not FirmwareState.STOPPED:
        await asyncio.sleep(0)
    return time.perf_counter() - started


async def _flood(rig: Rig, count: int) -> dict[str, int]:
    """``count`` status commands with fresh ids, as fast as they come; the replies' codes."""
    codes: dict[str, int] = {}
    for k in range(count):
        reply = await rig.daemon.intake.accept("status", f'{{"id": "flood-{k}"}}', lambda r: None)
        code = "queued" if reply is None else reply["error"]["code"]
        codes[code] = codes.get(code, 0) + 1
    return codes


def test_estop_overtakes_a_10000_command_flood(fast_tmp: Path) -> None:
    latencies: list[float] = []

    async def scenario() -> dict[str, int]:
        fw = FakeFirmware(scrambled(), pause_after=2)
        async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
            await rig.daemon.submit("start")
            await fw.paused.wait()
            codes = await _flood(rig, 10_000)
            assert rig.daemon.intake._queue.qsize() <= QUEUE_LIMIT  # memory stays bounded
            latencies.append(await _estop_latency(rig))
            await rig.daemon.job_done.wait()
            assert rig.state() is JobState.ABORTED
            assert [e["code"] for e in rig.sink.of(EventName.ABORTED)] == [ErrorCode.ESTOP]
            return codes

    codes = run(scenario(), 60)
    assert codes.get(ErrorCode.RATE_LIMITED, 0) > 9_000, codes
    assert codes.get("queued", 0) <= QUEUE_LIMIT, codes
    assert latencies[0] < ESTOP_BOUND_S, latencies


def test_estop_latency_idle_and_flooded(fast_tmp: Path) -> None:
    """Median and worst latency over repeated stops, idle and with a flood queued before each
    (figures for the closing note; the bound is the issue's 50 ms)."""
    idle: list[float] = []
    flooded: list[float] = []

    async def scenario() -> None:
        async with running(fast_tmp / "j.sqlite") as rig:
            for k in range(20):
                await rig.daemon.submit("home")
                target = flooded if k % 2 else idle
                if target is flooded:
                    rig.daemon.intake._buckets.clear()
                    await _flood(rig, 500)
                target.append(await _estop_latency(rig))

    run(scenario(), 120)
    for name, values in (("idle", idle), ("flooded", flooded)):
        print(
            f"estop latency {name}: median {statistics.median(values) * 1e3:.2f} ms, "
            f"max {max(values) * 1e3:.2f} ms"
        )
        assert max(values) < ESTOP_BOUND_S, (name, values)


def test_malformed_estop_still_stops(fast_tmp: Path) -> None:
    async def scenario() -> dict[str, Any] | None:
        async with running(fast_tmp / "j.sqlite") as rig:
            reply = await rig.daemon.intake.accept("estop", b"[[[[ not json", lambda r: None)
            for _ in range(100):
                if rig.firmware.state is FirmwareState.STOPPED:
                    break
                await asyncio.sleep(0)
            assert rig.firmware.state is FirmwareState.STOPPED
            return reply

    reply = run(scenario(), 30)
    assert reply is not None and reply["error"]["code"] == ErrorCode.MALFORMED
    assert "stopped anyway" in reply["error"]["message"]


def test_abort_is_not_queued_behind_a_flood(fast_tmp: Path) -> None:
    async def scenario() -> None:
        fw = FakeFirmware(scrambled(), pause_after=2)
        async with running(fast_tmp / "j.sqlite", firmware=fw) as rig:
            await rig.daemon.submit("start")
            await fw.paused.wait()
            await _flood(rig, 2_000)
            started = time.perf_counter()
            reply = await asyncio.wait_for(rig.daemon.submit("abort", b'{"id": "a-1"}'), 10)
            assert reply["ok"], reply
            assert rig.state() is JobState.ABORTED
            assert time.perf_counter() - started < 5.0

    run(scenario(), 60)


NASTY: list[bytes] = [
    b"[" * 1024,
    b'{"id": ' + b"1" * 5000 + b"}",
    b'{"id": "x", "rescan": "yes"}',
    b'{"rescan": 1}',
    b'{"facelets": ' + b'"U"' * 3 + b"}",
    b'{"id": ""}',
    b'{"id": "' + b"a" * 65 + b'"}',
    b'{"source": ' + b"[" * 50 + b"]" * 50 + b"}",
    b"\x00" * 64,
    b"\xff\xfe\xfd",
    b'{"a": 1e99999}',
    b'{"id": NaN}',
    b" " * 20_000,
    b'{"verb": "start"}',
    b'{"id": {"$gt": ""}}',
]


def test_nasty_payloads_on_every_verb_are_refused_and_the_daemon_lives(fast_tmp: Path) -> None:
    async def scenario() -> int:
        async with running(fast_tmp / "j.sqlite") as rig:
            tried = 0
            for verb in [*VERBS, "no-such-verb", "x" * 300]:
                if verb == "estop":
                    continue  # stops the robot on purpose, tested above
                for payload in NASTY:
                    rig.daemon.intake._buckets.clear()
                    reply = await rig.daemon.intake.accept(verb, payload, lambda r: None)
                    tried += 1
                    assert reply is not None and reply["ok"] is False, (verb, payload[:40])
                    assert reply["error"]["code"] in (
                        ErrorCode.MALFORMED,
                        ErrorCode.UNKNOWN_COMMAND,
                    ), reply
                    assert len(reply["error"]["message"]) < 400
            status = await rig.daemon.submit("status", {})
            assert status["ok"] and rig.daemon.intake.group is not None
            return tried

    assert run(scenario(), 60) >= 9 * 15


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    verb=st.sampled_from([v for v in VERBS if v not in ("estop", "start", "solve", "scan")]),
    payload=st.binary(max_size=200)
    | st.text(max_size=200).map(str.encode)
    | st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
        max_leaves=12,
    ).map(lambda v: __import__("json").dumps(v).encode()),
)
def test_fuzzed_payloads_never_crash_the_intake(verb: str, payload: bytes, fast_tmp: Path) -> None:
    async def scenario() -> None:
        async with running(fast_tmp / f"fuzz-{time.monotonic_ns()}.sqlite") as rig:
            reply = await rig.daemon.intake.accept(verb, payload, lambda r: None)
            if reply is not None:
                assert reply["error"]["code"] in {c.value for c in ErrorCode}
            assert rig.daemon.intake.group is not None

    run(scenario(), 30)


def test_a_flood_of_refused_commands_is_answered_within_a_rate(fast_tmp: Path) -> None:
    """Every refused MQTT command got a reply (two messages): 30,000 garbage commands in 6 s
    filled the bridge's 10,000-message queue, which dropped ~50,000 messages, a running job's
    events among them. Past the refusal rate a refusal is counted, not answered."""
    from robot.daemon.intake import REFUSAL_RATE, UNANSWERED

    async def body() -> None:
        async with running(fast_tmp / "j.sqlite") as rig:
            intake = rig.daemon.intake
            for _ in range(1000):
                await intake.on_mqtt_command("start", b"garbage")
                await intake.on_mqtt_command("no-such-verb", b"{}")
            answered = [r for _, r in rig.sink.replies if r.get("ok") is False]
            assert len(answered) <= REFUSAL_RATE[1] + 5  # the burst, and what refilled since
            assert intake.refused[UNANSWERED] >= 2000 - len(answered)
            assert intake.refused["malformed"] + intake.refused["unknown_command"] == 2000
            await intake.on_mqtt_command("status", b"{}")  # a good command is still answered
            while not any(r.get("ok") for _, r in rig.sink.replies):
                await asyncio.sleep(0.01)

    run(body(), 30)
