"""The link over a real pseudo-terminal against the simulated firmware, with fault injection."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import random
import tty
from dataclasses import replace
from pathlib import Path

import pytest

from firmware_protocol import (
    EmergencyStopError,
    ExecutionEndedError,
    ExecutionLinkError,
    FaultSpec,
    FirmwareConfig,
    FirmwareLink,
    FirmwareResetError,
    FirmwareState,
    FirmwareStoppedError,
    InvalidMoveError,
    LinkBusyError,
    LinkClosedError,
    LinkConfig,
    LinkTimeoutError,
    MotorFaultError,
    Move,
    MoveExecuted,
    PortError,
    PortLostError,
    PortOpenError,
    ProtocolVersionError,
    PtyEndpoint,
    ResetNotAcknowledgedError,
    SimulatedFirmware,
    TcpEndpoint,
    parse_moves,
)
from firmware_protocol.messages import Ident, StatusFlags
from firmware_protocol.sim import MoveRecord
from firmware_protocol.sim.harness import check_execution, random_moves, simulated_link

from .helpers import RecordingCube, run

FAST = FirmwareConfig(boot_time_s=0.01).with_speed(20)  # ~5 ms a quarter turn
SOLVE = parse_moves("R U R' U' F2 B2 U+D' L R2 F' B U2 D2 R L' F B' U D R2 L2")


def turns_of(moves: list[Move]) -> list[tuple[str, int]]:
    return [("URFDLB"[m.motor], m.quarter_turns) for m in moves]


def test_execute_reports_every_move_once_in_order() -> None:
    async def scenario() -> None:
        cube = RecordingCube()
        async with simulated_link(config=FAST, cube=cube) as (firmware, _, link):
            assert link.info is not None and link.info.queue_depth == 16
            events = [event async for event in link.execute(SOLVE)]
            assert [e.position for e in events] == list(range(len(SOLVE)))
            assert [e.index for e in events] == list(range(1, len(SOLVE) + 1))
            assert [e.move for e in events] == SOLVE
            assert cube.turns == turns_of(SOLVE)
            assert link.stats.retransmissions == 0
            # a second execution continues the firmware's move indices
            more = await link.execute(parse_moves("F B'")).wait()
            assert [e.index for e in more] == [len(SOLVE) + 1, len(SOLVE) + 2]
            assert check_execution(SOLVE, events, firmware.records[: len(SOLVE)], 1)[:3] == (
                0,
                0,
                0,
            )

    run(scenario())


NOISY = [
    pytest.param(FaultSpec(flip=5e-3), id="bit-flips"),
    pytest.param(FaultSpec(drop=5e-3), id="dropped-bytes"),
    pytest.param(FaultSpec(dup=0.1), id="duplicated-frames"),
    pytest.param(FaultSpec(delay=0.1, delay_ms=150), id="delays-beyond-ack-timeout"),
    pytest.param(
        FaultSpec(flip=3e-3, drop=1e-3, dup=0.05, delay=0.05, delay_ms=60), id="everything"
    ),
]


@pytest.mark.parametrize("faults", NOISY)
@pytest.mark.parametrize("seed", [1, 2])
def test_noisy_line_executes_exactly_once(faults: FaultSpec, seed: int) -> None:
    async def scenario() -> None:
        cube = RecordingCube()
        moves = random_moves(random.Random(seed), 40)
        async with simulated_link(config=FAST, cube=cube, faults=faults, seed=seed) as (
            firmware,
            _,
            link,
        ):
            events = await link.execute(moves).wait()
            lost, duplicated, wrong, problems = check_execution(moves, events, firmware.records, 1)
            assert (lost, duplicated, wrong) == (0, 0, 0), problems
            assert cube.turns == turns_of(moves)
            line = firmware.line_stats
            assert sum(line.values()) > 0  # the faults really happened

    run(scenario())


def test_reset_reports_exact_prefix_and_refuses_until_acknowledged() -> None:
    async def scenario() -> None:
        cube = RecordingCube()
        faults = FaultSpec(resets=frozenset({9}))
        async with simulated_link(config=FAST, cube=cube, faults=faults) as (firmware, _, link):
            execution = link.execute(SOLVE)
            seen = []
            with pytest.raises(FirmwareResetError) as info:
                async for event in execution:
                    seen.append(event)
            report = info.value.report
            assert [e.index for e in report.executed] == list(range(1, 9))
            assert report.executed == tuple(seen)
            assert [p.index for p in report.interrupted] == [9]
            assert [p.position for p in report.not_executed] == list(range(9, len(SOLVE)))
            assert report.unknown == ()
            assert cube.turns == turns_of(SOLVE[:8])
            assert link.port in str(info.value) and "acknowledge" in str(info.value)
            with pytest.raises(ResetNotAcknowledgedError):
                link.execute(SOLVE[9:])
            link.acknowledge_reset()
            rest = await link.execute(SOLVE[8:]).wait()
            assert [e.index for e in rest] == list(range(10, 10 + len(SOLVE) - 8))
            assert cube.turns == turns_of(SOLVE[:8] + SOLVE[8:])
            assert link.stats.resets_detected == 1
            assert firmware.resets[0][1:] == (8, 9)

    run(scenario())


def test_reset_that_loses_the_counters_leaves_the_moves_in_flight_unknown() -> None:
    """A reset that loses the non-volatile memory (counters back at zero behind the reports):
    nothing says which of the moves sent since the last report ran, so they are unknown, not
    "not started" (sent again, one that ran would turn twice); the indices start at 1 again."""

    async def scenario() -> None:
        cube = RecordingCube()
        faults = FaultSpec(wipes=frozenset({9}))
        async with simulated_link(config=FAST, cube=cube, faults=faults) as (firmware, _, link):
            with pytest.raises(FirmwareResetError) as info:
                await link.execute(SOLVE).wait()
            report = info.value.report
            assert [e.index for e in report.executed] == list(range(1, 9))
            assert report.interrupted == ()
            assert report.unknown and report.unknown[0].index == 9
            positions = [p.position for p in report.unknown + report.not_executed]
            assert positions == list(range(8, len(SOLVE)))
            assert "unconfirmed from index 9" in str(info.value)
            assert firmware.nv.last_executed == 0 and firmware.resets[0][1:] == (8, 9)
            link.acknowledge_reset()
            rest = await link.execute(SOLVE[8:]).wait()
            assert [e.index for e in rest] == list(range(1, len(SOLVE) - 8 + 1))
            assert cube.turns == turns_of(SOLVE)

    run(scenario())


def test_a_wipe_before_the_first_report_makes_the_sent_moves_unknown() -> None:
    """Counters at zero on a firmware that had reported nothing yet are what an intact memory
    says too; a v2 firmware's IDENT says its memory held no counters (``boot_flags``), so the
    moves sent are unknown (one may have run, its EXECUTED lost with the power), not "not
    started" (sent again, it would turn its face twice)."""

    async def scenario() -> None:
        faults = FaultSpec(wipes=frozenset({1}))
        async with simulated_link(config=FAST, faults=faults) as (firmware, _, link):
            with pytest.raises(FirmwareResetError) as info:
                await link.execute(SOLVE).wait()
            report = info.value.report
            assert report.executed == ()
            assert report.unknown and report.unknown[0].index == 1
            assert firmware.nv.last_executed == 0

    run(scenario())


def test_a_v1_firmware_cannot_tell_a_wipe_before_the_first_report() -> None:
    """A v1 firmware (31-byte IDENT, no ``boot_flags``) is still accepted; its counters at
    zero before any report read as intact, the moves as not started (the old limit)."""

    async def scenario() -> None:
        faults = FaultSpec(wipes=frozenset({1}))
        v1 = replace(FAST, protocol_version=1)
        async with simulated_link(config=v1, faults=faults) as (_firmware, _, link):
            assert link.info is not None and link.info.protocol_version == 1
            with pytest.raises(FirmwareResetError) as info:
                await link.execute(SOLVE).wait()
            assert info.value.report.unknown == ()
            assert info.value.report.executed == ()

    run(scenario())


def test_reset_detected_even_when_the_boot_announcement_is_lost() -> None:
    """With the announcement gone, a heartbeat draws NAK NO_SESSION, and the IDENT tells."""

    async def scenario() -> None:
        faults = FaultSpec(resets=frozenset({3}))
        async with simulated_link(config=FAST, faults=faults) as (firmware, _endpoint, link):
            original = firmware._send

            def drop_announcement(message: object) -> None:
                if isinstance(message, Ident) and message.nonce == 0:
                    return
                original(message)  # type: ignore[arg-type]

            firmware._send = drop_announcement  # type: ignore[method-assign]
            with pytest.raises(FirmwareResetError) as info:
                await link.execute(SOLVE).wait()
            assert [e.index for e in info.value.report.executed] == [1, 2]
            assert [p.index for p in info.value.report.interrupted] == [3]

    run(scenario())


def test_stall_raises_motor_fault_and_home_recovers() -> None:
    async def scenario() -> None:
        faults = FaultSpec(stalls=frozenset({(0, 2)}))
        async with simulated_link(config=FAST, faults=faults) as (_firmware, _, link):
            with pytest.raises(MotorFaultError) as info:
                await link.execute(SOLVE).wait()
            report = info.value.report
            assert [e.index for e in report.executed] == [1]
            assert [p.move for p in report.interrupted] == [SOLVE[1]]
            assert "motor U" in str(info.value) and "cuberobot home" in str(info.value)
            with pytest.raises(FirmwareStoppedError):
                link.execute(SOLVE[1:])
            status = await link.home()
            assert status.state is FirmwareState.IDLE and status.flags & StatusFlags.HOMED
            events = await link.execute(SOLVE[1:]).wait()
            assert len(events) == len(SOLVE) - 1

    run(scenario())


def test_estop_stops_mid_sequence() -> None:
    async def scenario() -> None:
        config = FirmwareConfig(boot_time_s=0.01).with_speed(4)  # ~25 ms a turn
        async with simulated_link(config=config) as (firmware, _, link):
            execution = link.execute(SOLVE)
            async for event in execution:
                if event.position == 3:
                    status = await link.estop()
                    assert status.state is FirmwareState.STOPPED
                    break
            with pytest.raises(EmergencyStopError) as info:
                await execution.wait()
            report = info.value.report
            executed = [r.index for r in firmware.records if r.outcome == "executed"]
            interrupted = [r.index for r in firmware.records if r.outcome == "interrupted"]
            assert [e.index for e in report.executed] == executed
            assert [p.index for p in report.interrupted] == interrupted
            assert len(report.executed) + len(report.interrupted) + len(report.not_executed) == len(
                SOLVE
            )

    run(scenario())


def test_port_vanishes_and_comes_back() -> None:
    async def scenario() -> None:
        cube = RecordingCube()
        faults = FaultSpec(vanish=frozenset({(6, 300.0)}))
        async with simulated_link(config=FAST, cube=cube, faults=faults) as (_firmware, ep, link):
            events = await link.execute(SOLVE).wait()
            assert [e.move for e in events] == SOLVE
            assert cube.turns == turns_of(SOLVE)
            assert ep.vanishings == 1 and link.stats.reconnects == 1

    run(scenario())


def test_port_gone_longer_than_the_watchdog_stops_and_resumes() -> None:
    """Away longer than the watchdog: the firmware finishes the group in progress, flushes its
    queue and stops; after the reconnect the link clears the stop and resends the rest."""

    async def scenario() -> None:
        cube = RecordingCube()
        faults = FaultSpec(vanish=frozenset({(3, 700.0)}))
        link_config = LinkConfig(watchdog_ms=250)
        config = FirmwareConfig(boot_time_s=0.01).with_speed(2)  # ~50 ms a turn: queue outlasts
        async with simulated_link(
            config=config, cube=cube, faults=faults, link_config=link_config
        ) as (firmware, _, link):
            events = await link.execute(SOLVE).wait()
            assert [e.move for e in events] == SOLVE
            assert cube.turns == turns_of(SOLVE)
            assert any(r.outcome == "discarded" for r in firmware.records)
            executed = [r.index for r in firmware.records if r.outcome == "executed"]
            assert executed == list(range(1, len(SOLVE) + 1))

    run(scenario())


@pytest.mark.parametrize("watchdog_ms", [250, 5000], ids=["watchdog-stops-it", "queue-runs-on"])
def test_a_stop_asked_for_while_the_port_is_gone_goes_first_when_it_is_back(
    watchdog_ms: int,
) -> None:
    """The emergency stop cannot reach the firmware with the port gone: the caller hears so at
    once, and the stop is owed: it is the first thing sent when the session opens again,
    before any move, so the execution ends in an emergency stop instead of carrying on (found
    by bench/chaos.py: the job finished once the port came back)."""

    async def scenario() -> None:
        cube = RecordingCube()
        faults = FaultSpec(vanish=frozenset({(3, 700.0)}))
        link_config = LinkConfig(watchdog_ms=watchdog_ms)
        config = FirmwareConfig(boot_time_s=0.01).with_speed(2)
        async with simulated_link(
            config=config, cube=cube, faults=faults, link_config=link_config
        ) as (firmware, ep, link):
            execution = link.execute(SOLVE)
            while ep.vanishings == 0:
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.05)
            assert not link.connected
            with pytest.raises(PortError) as refused:
                await link.estop()
            assert "not connected" in str(refused.value)
            assert "the moment the port is back" in str(refused.value)
            turned = len(cube.turns)
            with pytest.raises(EmergencyStopError):
                await execution.wait()
            assert firmware.state is FirmwareState.STOPPED
            status = await link.status()
            assert status.state is FirmwareState.STOPPED
            # the rest never ran (the firmware's queue may have run on while the port was gone)
            assert turned <= len(cube.turns) < len(SOLVE)
            with pytest.raises(FirmwareStoppedError):
                link.execute(SOLVE[:1])

    run(scenario())


def test_port_gone_too_long_fails_the_execution_then_recovers() -> None:
    async def scenario() -> None:
        faults = FaultSpec(vanish=frozenset({(5, 1500.0)}))
        link_config = LinkConfig(reconnect_timeout_s=0.4, reconnect_backoff_max_s=0.2)
        async with simulated_link(config=FAST, faults=faults, link_config=link_config) as (
            firmware,
            _,
            link,
        ):
            with pytest.raises(ExecutionLinkError) as info:
                await link.execute(SOLVE).wait()
            assert isinstance(info.value.__cause__, PortLostError)
            assert "check the USB cable" in str(info.value)
            report = info.value.report
            truly = [r.index for r in firmware.records if r.outcome == "executed"]
            confirmed = [e.index for e in report.executed]
            assert confirmed == truly[: len(confirmed)]
            unknown = {p.index for p in report.unknown}
            assert set(truly) - set(confirmed) <= unknown  # nothing executed silently
            with pytest.raises(PortLostError):
                link.execute(SOLVE)
            for _ in range(100):  # the port comes back after 1.5 s; the link by itself too
                await asyncio.sleep(0.05)
                if link.connected:
                    break
            assert link.connected and link.info is not None
            # reconcile the unknowns with the firmware's counters, then carry on
            executed_unknowns = [i for i in sorted(unknown) if i <= link.info.last_executed]
            assert executed_unknowns == [i for i in truly if i in unknown]
            done = len(confirmed) + len(executed_unknowns)
            rest = await link.execute(SOLVE[done:]).wait()
            assert len(rest) == len(SOLVE) - done

    run(scenario(), timeout=30)


def test_connect_to_a_missing_port(tmp_path: Path) -> None:
    async def scenario() -> None:
        port = str(tmp_path / "ttyNOPE")
        link = FirmwareLink(port, config=LinkConfig(connect_timeout_s=0.3))
        with pytest.raises(PortOpenError) as info:
            await link.connect()
        assert port in str(info.value) and "firmware-sim" in str(info.value)
        await link.close()

    run(scenario())


@pytest.mark.parametrize(
    "port",
    [
        pytest.param("nope://x", id="unknown-protocol"),
        pytest.param("socket://host:notaport", id="socket-without-a-port-number"),
    ],
)
def test_connect_to_a_url_pyserial_cannot_parse_fails_at_once(port: str) -> None:
    async def scenario() -> None:
        link = FirmwareLink(port, config=LinkConfig(connect_timeout_s=20))
        async with asyncio.timeout(5):  # no retrying a URL that no retry mends
            with pytest.raises(PortOpenError) as info:
                await link.connect()
        assert port in str(info.value) and "is not a port" in str(info.value)
        assert isinstance(info.value.__cause__, ValueError)
        await link.close()

    run(scenario())


def test_connect_to_a_silent_port() -> None:
    async def scenario() -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        try:
            link = FirmwareLink(
                os.ttyname(slave),
                config=LinkConfig(connect_timeout_s=0.5, hello_timeout_s=0.05, hello_retries=2),
            )
            with pytest.raises(LinkTimeoutError) as info:
                await link.connect()
            assert "powered" in str(info.value)
            await link.close()
        finally:
            os.close(master)
            os.close(slave)

    run(scenario())


def test_protocol_version_mismatch() -> None:
    class FutureFirmware(SimulatedFirmware):
        def _ident(self, nonce: int) -> Ident:
            return dataclasses.replace(super()._ident(nonce), protocol_version=3)

    async def scenario() -> None:
        firmware = FutureFirmware(config=FAST)
        await firmware.start()
        endpoint = PtyEndpoint(firmware)
        link = FirmwareLink(await endpoint.start())
        try:
            await asyncio.sleep(0.02)
            with pytest.raises(ProtocolVersionError, match=r"speaks protocol v3.*v1, v2"):
                await link.connect()
        finally:
            await link.close()
            await endpoint.close()
            await firmware.stop()

    run(scenario())


def test_usage_errors() -> None:
    async def scenario() -> None:
        async with simulated_link(config=FAST) as (_, _, link):
            with pytest.raises(InvalidMoveError):
                link.execute([Move(0, 1, simultaneous_with_next=True)])
            execution = link.execute(SOLVE[:3])
            with pytest.raises(LinkBusyError):
                link.execute(SOLVE)
            with pytest.raises(LinkBusyError):
                await link.home()
            assert len(await execution.wait()) == 3
            assert await link.execute([]).wait() == []
        with pytest.raises(LinkClosedError):
            link.execute(SOLVE)
        with pytest.raises(LinkClosedError):
            await link.connect()

    run(scenario())


def test_close_during_execution_fails_it_with_unknowns() -> None:
    async def scenario() -> None:
        config = FirmwareConfig(boot_time_s=0.01)  # ~100 ms a turn
        async with simulated_link(config=config) as (_, _, link):
            execution = link.execute(SOLVE)
            await asyncio.sleep(0.15)
            await link.close()
            with pytest.raises(ExecutionLinkError) as info:
                await execution.wait()
            assert isinstance(info.value.__cause__, LinkClosedError)
            assert info.value.report.unknown

    run(scenario())


def test_status_hold_resume_enable() -> None:
    async def scenario() -> None:
        config = FirmwareConfig(boot_time_s=0.01).with_speed(4)
        async with simulated_link(config=config) as (firmware, _, link):
            status = await link.status()
            assert status.boot_id == firmware.boot_id and status.flags & StatusFlags.SESSION
            await link.enable_motors(0x3F)
            execution = link.execute(SOLVE)
            await asyncio.sleep(0.03)
            held = await link.hold()
            assert held.flags & StatusFlags.HOLD_REQUESTED
            await asyncio.sleep(0.15)
            paused_at = len(execution.events)
            assert paused_at < len(SOLVE)
            assert (await link.status()).state is FirmwareState.HOLD
            await asyncio.sleep(0.1)
            assert len(execution.events) == paused_at
            await link.resume()
            assert len(await execution.wait()) == len(SOLVE)

    run(scenario())


def test_tcp_endpoint_and_reconnect() -> None:
    async def scenario() -> None:
        cube = RecordingCube()
        faults = FaultSpec(vanish=frozenset({(5, 200.0)}))
        firmware = SimulatedFirmware(cube=cube, config=FAST, faults=faults)
        await firmware.start()
        endpoint = TcpEndpoint(firmware, 0)
        url = await endpoint.start()
        assert url.startswith("socket://127.0.0.1:")
        try:
            await asyncio.sleep(0.02)
            async with FirmwareLink(url) as link:
                events = await link.execute(SOLVE).wait()
                assert [e.move for e in events] == SOLVE
                assert link.stats.reconnects == 1
            assert cube.turns == turns_of(SOLVE)
        finally:
            await endpoint.close()
            await firmware.stop()

    run(scenario())


def test_first_group_goes_alone_then_batches() -> None:
    async def scenario() -> list[int]:
        sizes: list[int] = []
        async with simulated_link(config=FAST) as (firmware, _, link):
            original = firmware._on_moves

            def spy(message):  # type: ignore[no-untyped-def]
                sizes.append(len(message.moves))
                return original(message)

            firmware._on_moves = spy  # type: ignore[method-assign]
            await link.execute(SOLVE).wait()
        return sizes

    sizes = run(scenario())
    assert sizes[0] == 1
    assert max(sizes) == 8 and sum(sizes) == len(SOLVE)


def test_link_never_blocks_the_loop() -> None:
    """While the link works (open, HELLO, moves, reconnect), a ticker keeps ticking."""

    async def scenario() -> float:
        worst = 0.0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal worst
            loop = asyncio.get_running_loop()
            last = loop.time()
            while not stop.is_set():
                await asyncio.sleep(0.005)
                now = loop.time()
                worst = max(worst, now - last)
                last = now

        task = asyncio.create_task(ticker())
        faults = FaultSpec(vanish=frozenset({(4, 200.0)}))
        async with simulated_link(config=FAST, faults=faults) as (_, _, link):
            await link.execute(SOLVE).wait()
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return worst

    assert run(scenario()) < 0.25  # a blocking open or sleep would stall it for longer


def test_moves_appended_while_executing_run_without_a_pause() -> None:
    """extend(): moves committed while the motors turn join the queue; the firmware's record
    shows each group starting the moment the one before it stopped."""
    # ~100 ms a quarter turn: the append must arrive while U turns, also on a loaded machine
    config = FirmwareConfig(boot_time_s=0.01)

    async def scenario() -> tuple[list[MoveExecuted], list[MoveRecord], float]:
        async with simulated_link(config=config) as (firmware, _, link):
            execution = link.execute(parse_moves("R U"))
            events: list[MoveExecuted] = []
            async for event in execution:
                events.append(event)
                if len(events) == 1:  # U is turning: append while it does
                    link.extend(parse_moves("F2 D+U' L"))
            with pytest.raises(ExecutionEndedError):
                link.extend(parse_moves("B"))
            return events, list(firmware.records), link.latency_s

    events, records, latency = run(scenario())
    assert [str(e.move) for e in events] == ["R", "U", "F2", "D+", "U'", "L"]
    assert [e.index for e in events] == list(range(1, 7))
    starts = sorted({r.started_at for r in records if r.started_at is not None})
    stops = sorted({r.finished_at for r in records if r.finished_at is not None})
    assert len(starts) == len(stops) == 5  # R, U, F2, D+U', L
    assert all(abs(b - a) < 1e-9 for a, b in zip(stops, starts[1:], strict=False))
    assert 0 < latency < 0.5


def test_the_round_trip_is_the_smoothed_ack_time_and_the_latency_its_bound() -> None:
    """``round_trip_s`` (what the daemon sizes the head start by) is the smoothed ACK round
    trip, under ``latency_s`` (that plus four deviations, what the commits are timed by); with
    no ACK timed yet both are the wire's bound for a full frame."""

    async def scenario() -> tuple[float, float, float | None, float, float]:
        async with simulated_link(config=FirmwareConfig(boot_time_s=0.01)) as (_, _, link):
            await link.execute(parse_moves("R U")).wait()
            measured = (link.round_trip_s, link.latency_s, link.stats.ack_rtt_s)
            link.stats.ack_rtt_s = None
            return (*measured, link.round_trip_s, link.latency_s)

    round_trip, latency, smoothed, unmeasured, bound = run(scenario())
    assert smoothed is not None and round_trip == smoothed
    assert 0 < round_trip <= latency < 0.5
    assert unmeasured == bound > 0


def test_a_storm_of_stops_shares_one_stop_in_flight() -> None:
    """Hundreds of stop calls at once (an MQTT flood) keep one ESTOP on the wire, and each
    caller gets the STATUS confirming it; a caller that gives up does not end the stop."""

    async def scenario() -> None:
        config = FirmwareConfig(boot_time_s=0.01).with_speed(4)
        async with simulated_link(config=config) as (_firmware, _, link):
            execution = link.execute(SOLVE)
            sent = link.stats.frames_sent
            quitter = asyncio.ensure_future(link.estop())
            await asyncio.sleep(0)
            quitter.cancel()
            statuses = await asyncio.gather(*(link.estop() for _ in range(500)))
            assert {s.state for s in statuses} == {FirmwareState.STOPPED}
            assert link.stats.frames_sent - sent < 10  # one stop (and its repeats), not 500
            with pytest.raises(EmergencyStopError):
                await execution.wait()
            again = await link.estop()  # the next stop is a new one
            assert again.state is FirmwareState.STOPPED

    run(scenario())


def test_a_stop_on_its_way_when_the_link_closes_fails_with_the_closed_link() -> None:
    async def scenario() -> None:
        async with simulated_link(config=FAST) as (_firmware, _, link):
            stops = [asyncio.ensure_future(link.estop()) for _ in range(3)]
            await asyncio.sleep(0)
            await asyncio.sleep(0)  # the stop is on the wire, its answer not back
            assert link._stop is not None and not link._stop.done()
            await link.close()
            for stop in stops:  # the closed link's error, never a cancellation
                with pytest.raises(LinkClosedError):
                    await stop

    run(scenario())


def test_an_estop_while_homing_ends_the_home_at_once() -> None:
    """Found by bench/chaos.py: an abort during the homing after a firmware reset stopped the
    motors, and home() waited its whole 30 s for a homed STATUS that could never come."""

    async def scenario() -> None:
        config = FirmwareConfig(boot_time_s=0.01, home_time_s=0.5)
        async with simulated_link(config=config) as (firmware, _, link):
            homing = asyncio.ensure_future(link.home())
            while firmware.state is not FirmwareState.HOMING:
                await asyncio.sleep(0.005)
            began = asyncio.get_running_loop().time()
            await link.estop()
            with pytest.raises(EmergencyStopError, match=r"HOME interrupted.*STOPPED"):
                await homing
            assert asyncio.get_running_loop().time() - began < 0.4
            status = await link.home()  # a home after it homes
            assert status.state is FirmwareState.IDLE and status.flags & StatusFlags.HOMED

    run(scenario(), timeout=20)
