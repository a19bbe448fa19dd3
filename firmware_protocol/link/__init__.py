"""The reliable asyncio link to the stepper firmware, over any pyserial URL.

Usage (the robot daemon's view)::

    from firmware_protocol import FirmwareLink, Move, ExecutionError, parse_moves

    async with FirmwareLink("/dev/ttyACM0") as link:        # connect(): open, HELLO, IDENT
        print(link.info)                                    # versions, queue depth, boot id
        try:
            async for event in link.execute(parse_moves("R U R' U'")):
                journal.record(event.index, event.move)     # exactly once, in order
        except ExecutionError as err:                       # reset, e-stop, stall, link lost
            report = err.report                             # exactly which moves executed
            ...
            link.acknowledge_reset()                        # only after a FirmwareResetError

What it does (``PROTOCOL.md`` has the wire-level detail):

- Opens the port (a device path, a pty path, ``socket://host:port``) with pyserial-asyncio-fast,
  which never blocks the event loop; opens a session with HELLO and reads the IDENT.
- Sends moves in MOVES frames through a sliding window of sequenced frames; the firmware
  acknowledges RECEIVED frames (ACK, cumulative) separately from reporting EXECUTED moves.
  Unacknowledged frames are retransmitted (go-back-N) on timeout, with exponential back-off,
  and at once on NAK; after ``max_retries`` the session is re-opened with a new HELLO.
- Exactly-once: every move carries a firmware move index; the firmware accepts index ``n`` only
  right after ``n - 1``, so a retransmitted or duplicated move is never queued twice, and its
  counters (received / started / executed) survive resets. The host only reports a move as
  executed when the firmware's cumulative ``last_executed`` passes it.
- Keeps the firmware's queue full: moves are sent as soon as the queue has room (credit =
  ``started_upto + queue_depth``); the first group goes alone in its own small frame so the
  motors start after one short frame time.
- Detects a firmware reset by its boot id (from the boot announcement, STATUS, or the IDENT of
  the next HELLO): the running execution fails with :class:`FirmwareResetError` whose report
  lists exactly which moves executed before the reset (from the firmware's non-volatile
  counters), which were interrupted mid-turn and which never started, and the link refuses new
  executions until :meth:`FirmwareLink.acknowledge_reset` (no continuing blind).
- Reconnects with back-off when the port vanishes, then re-synchronises from the IDENT counters
  and continues the execution. If the port stays away longer than ``reconnect_timeout_s`` the
  execution fails with :class:`ExecutionLinkError` (cause :class:`PortLostError`; its report
  lists the moves whose fate is unknown) but the link keeps reconnecting in the background; once
  back, ``link.info.last_executed`` tells which of those unknown moves executed.
- Sends a heartbeat when otherwise quiet (the firmware's watchdog stops the motors if the host
  goes silent for ``watchdog_ms``) and watches the firmware's own periodic STATUS.

How it is built: a sans-IO core holds every protocol decision and is driven by a thin asyncio
facade that owns the port and the clock (``PROTOCOL.md`` § 7, "Where this lives")::

    facade.py      FirmwareLink: tasks, port, clock; carries out the core's actions
    supervisor.py  the port (pyserial-asyncio-fast) and the reconnect policy
    execution.py   Execution, the async iterator execute() returns
    ---------------------------------------- no asyncio, no serial below this line ----------
    core.py        LinkCore: events in (bytes, time, requests), actions out
    actions.py     what the core asks of its driver (write, deliver, settle)
    handshake.py   HELLO / IDENT with retries
    window.py      sequence numbers, sliding window, ACK/NAK, retransmission deadlines
    executions.py  the running execution; resets, stops and failures that end it
    accounting.py  the firmware's move counters, execution state and reports, MOVES batching
    waiters.py     STATUS waiters: predicate, poll schedule, deadline
    failures.py    the errors that end an execution, with their operator messages
    data.py        LinkConfig, FirmwareInfo, MoveExecuted, ExecutionReport, LinkStats
"""

from __future__ import annotations

from firmware_protocol.link.data import (
    ExecutionReport,
    FirmwareInfo,
    LinkConfig,
    LinkStats,
    MoveExecuted,
    PlannedMove,
)
from firmware_protocol.link.execution import Execution
from firmware_protocol.link.facade import FirmwareLink

__all__ = [
    "Execution",
    "ExecutionReport",
    "FirmwareInfo",
    "FirmwareLink",
    "LinkConfig",
    "LinkStats",
    "MoveExecuted",
    "PlannedMove",
]
