"""Fault specs, the serial line model, and the motor timing model."""

from __future__ import annotations

import asyncio
import random

import pytest

from firmware_protocol.sim.faults import FaultSpec, SerialLine, parse_fault_spec
from firmware_protocol.sim.motors import MotorProfile, group_time_s, turn_time_s

from ..helpers import run


def test_parse_full_spec() -> None:
    spec = parse_fault_spec(
        "flip=1e-3, drop=2e-4,dup=0.01,delay=0.02:30,reset@40,reset@90,stall=U@7,stall=4@9,"
        "vanish@20:400,wipe@12"
    )
    assert spec == FaultSpec(
        flip=1e-3,
        drop=2e-4,
        dup=0.01,
        delay=0.02,
        delay_ms=30.0,
        resets=frozenset({40, 90}),
        wipes=frozenset({12}),
        stalls=frozenset({(0, 7), (4, 9)}),
        vanish=frozenset({(20, 400.0)}),
    )
    assert parse_fault_spec(str(spec)) == spec
    assert parse_fault_spec("") == FaultSpec() == parse_fault_spec("none")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("flip=2", "within 0..1", id="probability-above-one"),
        pytest.param("flip=x", "not a number", id="probability-not-number"),
        pytest.param("reset@0", "start at 1", id="reset-index-zero"),
        pytest.param("reset@k", "not an integer", id="reset-index-text"),
        pytest.param("wipe@0", "start at 1", id="wipe-index-zero"),
        pytest.param("stall=X@3", "motor", id="stall-unknown-motor"),
        pytest.param("stall=U", "stall=MOTOR@INDEX", id="stall-no-index"),
        pytest.param("vanish@3:-5", "≥ 0", id="vanish-negative"),
        pytest.param("vanish@3:inf", "finite", id="vanish-infinite"),
        pytest.param("delay=0.1:nan", "finite", id="delay-nan"),  # the firmware went silent
        pytest.param("delay=0.1:inf", "finite", id="delay-infinite"),
        pytest.param("delay=0.1:1e9", "at most", id="delay-eleven-days"),
        pytest.param("warp=0.1", "unknown fault", id="unknown-name"),
        pytest.param("chaos", "not understood", id="no-equals"),
    ],
)
def test_parse_rejects(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment) as info:
        parse_fault_spec(text)
    assert text.split(",")[0] in str(info.value)


def test_line_paces_at_baud_rate_and_keeps_order() -> None:
    async def scenario() -> tuple[list[bytes], float]:
        got: list[bytes] = []
        loop = asyncio.get_running_loop()
        line = SerialLine(got.append, baud=9600, faults=FaultSpec(), rng=random.Random(1), name="t")
        start = loop.time()
        for k in range(10):
            line.send(bytes([k + 1]) * 48)  # 480 bytes = 0.5 s at 9600 baud
        while len(got) < 10:
            await asyncio.sleep(0.01)
        return got, loop.time() - start

    got, elapsed = run(scenario())
    assert got == [bytes([k + 1]) * 48 for k in range(10)]
    assert 0.48 <= elapsed < 0.8


def test_line_faults_are_seeded_and_counted() -> None:
    async def scenario(seed: int) -> tuple[bytes, dict[str, int]]:
        got: list[bytes] = []
        spec = FaultSpec(flip=0.05, drop=0.05, dup=0.2)
        line = SerialLine(got.append, baud=0, faults=spec, rng=random.Random(seed), name="t")
        data = (b"\x11\x22\x33\x44\x00") * 200
        line.send(data)
        await asyncio.sleep(0.01)
        stats = {"flipped": line.flipped, "dropped": line.dropped, "dup": line.duplicated}
        return b"".join(got), stats

    a = run(scenario(5))
    b = run(scenario(5))
    c = run(scenario(6))
    assert a == b
    assert a != c
    data, stats = a
    assert stats["flipped"] > 10 and stats["dropped"] > 10 and stats["dup"] > 10
    assert len(data) > 1000 - stats["dropped"]  # duplicated frames add bytes back


def test_motor_timing() -> None:
    profile = MotorProfile(max_speed_dps=1500, accel_dps2=40000, settle_s=0.005)
    assert turn_time_s(profile, 1) == pytest.approx(0.0975)
    assert turn_time_s(profile, -2) == pytest.approx(0.1575)
    slow_accel = MotorProfile(max_speed_dps=1500, accel_dps2=10000)
    assert turn_time_s(slow_accel, 1) == pytest.approx(2 * (90 / 10000) ** 0.5)  # triangular
    motors = [profile] * 6
    assert group_time_s(motors, [(0, 1), (3, 2)]) == pytest.approx(0.1575 + 0.005)
    assert group_time_s(motors, []) == 0.0
    fast = profile.scaled(10)
    assert turn_time_s(fast, 1) == pytest.approx(0.00975)
    with pytest.raises(ValueError):
        MotorProfile(max_speed_dps=0)
