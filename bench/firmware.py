"""Benchmark of the reference firmware in the AVR emulator, driven by the real host link.

    python bench/firmware.py            # table
    python bench/firmware.py --json     # the same figures as JSON

For each board a 20-move solution (the superflip on the six-motor Mega 2560; a 20-move sequence
of the four faces the Uno's CNC shield drives) goes through ``FirmwareLink`` at 115200 baud to
the firmware ELF running in simavr; the harness records every motor pin. Figures:

- ``host_gaps``: gaps between two move groups longer than 1 ms (the motors waited for the
  host; target 0) and the longest gap between groups (firmware latency, µs);
- ``overhead_motor_pct``: the recorded motor timeline (first start to last settle) over the
  pure motor time of the motion model (``firmware_protocol.sim.motors``, trapezoid + settle);
  ``overhead_host_pct``: the host's ``execute()`` to its last EXECUTED, over the same;
- flash and RAM of each board's build (``avr-size``), and every interrupt's worst case in cycles
  (emulated, cycle-exact); ``pair_rate_hz``: the cruise step rate measured on each motor of a
  two-motor group; ``isr_ceiling_hz``: the rate at which two motors' step interrupts alone would
  take the whole CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from firmware_protocol import FirmwareLink, Move, parse_moves
from firmware_protocol.emulator import firmware_dir, missing_tools, start_emulator
from firmware_protocol.moves import groups
from firmware_protocol.pulses import PulseRecord, Turn, extract_turns, read_record
from firmware_protocol.sim.motors import MotorProfile, group_time_s

#: The superflip in 20 face turns (God's number in HTM), with two opposite-face pairs joined.
SUPERFLIP = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"
MEGA_MOVES = SUPERFLIP.replace("U' D'", "U'+D'").replace("F B", "F+B", 1)
UNO_MOVES = "U R2 D L' U2 R' D2 L U+D' R2+L U' R D' L2 U R' D L"
HOST_GAP_S = 1e-3


def _sizes(board: str) -> dict[str, int]:
    elf = firmware_dir() / "build" / board / "firmware.elf"
    out = subprocess.run(["avr-size", "-A", str(elf)], capture_output=True, text=True, check=True)
    sections = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            sections[parts[0]] = int(parts[1])
    flash = sections.get(".text", 0) + sections.get(".data", 0)
    ram = sum(sections.get(s, 0) for s in (".data", ".bss", ".noinit"))
    return {"flash_bytes": flash, "ram_bytes": ram}


def _profile(record: PulseRecord) -> MotorProfile:
    board = record.board
    steps_per_degree = board.steps_per_quarter / 90.0
    return MotorProfile(
        max_speed_dps=board.max_rate / steps_per_degree,
        accel_dps2=board.accel / steps_per_degree,
        settle_s=board.settle_s,
    )


def _group_turns(turns: list[Turn]) -> list[list[Turn]]:
    out: list[list[Turn]] = []
    for turn in turns:
        if out and turn.start_s - out[-1][0].start_s < 1e-3:
            out[-1].append(turn)
        else:
            out.append([turn])
    return out


def _timeline(record: PulseRecord, moves: list[Move]) -> dict[str, Any]:
    board = record.board
    first = board.first_interval_s
    model = _profile(record)
    pure = sum(
        group_time_s([model] * 6, [(m.motor, m.quarter_turns) for m in moves[a:b]])
        for a, b in groups(moves)
    )
    spans = [
        (min(t.start_s for t in g) - first, max(t.end_s for t in g) + board.settle_s)
        for g in _group_turns(extract_turns(record))
    ]
    gaps = [b[0] - a[1] for a, b in itertools.pairwise(spans)]
    timeline = spans[-1][1] - spans[0][0]
    return {
        "motor_time_s": pure,
        "timeline_s": timeline,
        "overhead_motor_pct": 100.0 * (timeline / pure - 1.0),
        "host_gaps": sum(g > HOST_GAP_S for g in gaps),
        "max_gap_us": 1e6 * max(gaps, default=0.0),
    }


def _pair_rate(record: PulseRecord) -> float:
    """Cruise rate of the slowest motor of any two-motor group (middle third of its steps)."""
    rates = []
    for group in _group_turns(extract_turns(record)):
        if len(group) != 2:
            continue
        for turn in group:
            gaps = [b - a for a, b in itertools.pairwise(turn.times)]
            middle = gaps[len(gaps) // 3 : 2 * len(gaps) // 3]
            rates.append(len(middle) / sum(middle))
    return min(rates, default=0.0)


async def _execute(port: str, moves: list[Move]) -> float:
    async with FirmwareLink(port) as link:
        start = time.monotonic()
        await link.execute(moves).wait()
        return time.monotonic() - start


def bench_board(board: str, text: str, workdir: Path) -> dict[str, Any]:
    moves = parse_moves(text)
    emu = start_emulator(board, record=workdir / f"{board}.rec", stats=workdir / f"{board}.json")
    try:
        host_s = asyncio.run(_execute(emu.port, moves))
    finally:
        stats = emu.stop()
    record = read_record(workdir / f"{board}.rec")
    figures: dict[str, Any] = {"board": board, "moves": len(moves), **_sizes(board)}
    figures.update(_timeline(record, moves))
    figures["overhead_host_pct"] = 100.0 * (host_s / figures["motor_time_s"] - 1.0)
    isr = stats["isr"]
    step_cycles = max(isr["step_a"]["max_cycles"], isr["step_b"]["max_cycles"])
    figures["isr_max_cycles"] = {name: v["max_cycles"] for name, v in isr.items()}
    figures["step_isr_max_us"] = step_cycles / stats["f_cpu"] * 1e6
    figures["max_rate_hz"] = record.board.max_rate
    figures["pair_rate_hz"] = _pair_rate(record)
    figures["isr_ceiling_hz"] = stats["f_cpu"] / (2 * step_cycles)
    figures["step_cpu_pct_two_motors"] = (
        100.0 * 2 * step_cycles * record.board.max_rate / (stats["f_cpu"])
    )
    figures["min_pulse_us"] = record.min_pulse_s * 1e6
    figures["emulator_max_lag_ms"] = stats["max_lag_ms"]
    return figures


ROWS = [
    ("moves", "{:d}"),
    ("flash_bytes", "{:d}"),
    ("ram_bytes", "{:d}"),
    ("motor_time_s", "{:.3f}"),
    ("timeline_s", "{:.3f}"),
    ("overhead_motor_pct", "{:.2f}"),
    ("overhead_host_pct", "{:.2f}"),
    ("host_gaps", "{:d}"),
    ("max_gap_us", "{:.0f}"),
    ("max_rate_hz", "{:.0f}"),
    ("pair_rate_hz", "{:.0f}"),
    ("step_isr_max_us", "{:.2f}"),
    ("isr_ceiling_hz", "{:.0f}"),
    ("step_cpu_pct_two_motors", "{:.1f}"),
    ("min_pulse_us", "{:.2f}"),
    ("emulator_max_lag_ms", "{:.1f}"),
]


def _table(results: list[dict[str, Any]]) -> str:
    lines = [f"{'':26}" + "".join(f"{r['board']:>18}" for r in results)]
    for key, fmt in ROWS:
        lines.append(f"{key:26}" + "".join(f"{fmt.format(r[key]):>18}" for r in results))
    names = sorted(results[0]["isr_max_cycles"])
    for name in names:
        cells = "".join(f"{r['isr_max_cycles'][name]:>18d}" for r in results)
        lines.append(f"{'isr ' + name + ' (cycles)':26}" + cells)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    missing = missing_tools()
    if missing:
        print(f"bench/firmware.py: cannot run, missing {', '.join(missing)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="cuberobot-fwbench-") as tmp:
        results = [
            bench_board("mega2560_ramps", MEGA_MOVES, Path(tmp)),
            bench_board("uno_cnc", UNO_MOVES, Path(tmp)),
        ]
    print(json.dumps(results, indent=2) if args.json else _table(results))
    return 1 if any(r["host_gaps"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
