"""The robot daemon: commands in, a job state machine, the journal, events out over MQTT.

The rooms, each a module a newcomer can read on its own::

    events.py      the vocabulary: JobState, ErrorCode, EventName (each member described) and
                   the typed payloads of the events and the status; pure
    ports.py       the seams: FirmwarePort, Cameras, Solver, EventSink (fakes plug in here)
    context.py     what the rooms share: the current Job, the state, the Outbox (status,
                   events and replies to the sink and the listeners)
    intake.py      commands: validation, de-duplication by id, the cmd-<verb> and job tasks
    pipeline.py    a job: scan → validate → solve → execute, and how it ends (DONE / ERROR /
                   ABORTED)
    execution.py   the moves on the firmware, journaled one by one; firmware resets recovered
    recovery.py    at start: reconcile the journal's unfinished job with the firmware's
                   counter, announce again what the broker never acknowledged
    core.py        Daemon: builds the rooms, runs the TaskGroup (mqtt, firmware, job, cmd-*)

States (``status.state``; :class:`JobState`)::

    IDLE ──start──► SCANNING ──► VALIDATING ──► SOLVING ──► EXECUTING ──► DONE
      ▲  ──solve (given state)──────►┘                          │
      │  ──scan─► SCANNING ──────────────► DONE                 ├──► ERROR    (with a code)
      └───────────── any of DONE / ERROR / ABORTED ◄────────────┴──► ABORTED  (abort, estop)

A scan job ends after SCANNING (the scan itself refuses a cube that is not valid as read); a
cube already solved goes from SOLVING to DONE. ``tests/robot/test_daemon_jobs.py`` drives every
transition.

Nothing is lost: the scanned state, the plan and every executed move (as the firmware reports
it) are in the journal before the next thing happens. After a crash the daemon reconciles an
unfinished job with the firmware's non-volatile executed counter and waits for ``resume`` (the
remaining moves) or ``resume`` with ``rescan`` (scan, solve and execute from the cube as it
is). A firmware reset mid-job is reconciled the same way from the link's exact report; the job
then homes the motors and continues (up to ``Executor.max_resets`` resets per job).

The names below are loaded on first use: :mod:`robot.commands`, :mod:`robot.errors` and
:mod:`robot.journal` import :mod:`robot.daemon.events`, and :mod:`robot.daemon.core` imports
them, so importing the core here eagerly would be an import cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from robot.daemon.events import ErrorCode, EventName, JobState

if TYPE_CHECKING:
    from robot.daemon.core import Daemon
    from robot.daemon.ports import Cameras, EventSink, FirmwarePort, Solver, link_config

__all__ = [
    "Cameras",
    "Daemon",
    "ErrorCode",
    "EventName",
    "EventSink",
    "FirmwarePort",
    "JobState",
    "Solver",
    "State",
    "link_config",
]

#: the daemon's state enum under its former name
State = JobState

_LAZY = {
    "Daemon": "robot.daemon.core",
    "Cameras": "robot.daemon.ports",
    "EventSink": "robot.daemon.ports",
    "FirmwarePort": "robot.daemon.ports",
    "Solver": "robot.daemon.ports",
    "link_config": "robot.daemon.ports",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'robot.daemon' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
