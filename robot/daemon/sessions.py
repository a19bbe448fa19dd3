"""The engine search sessions of anytime solving (:mod:`robot.daemon.anytime`): one for the head
start, which the event loop waits for, and one for the refinements while the motors turn (its
priority :data:`SEARCH_NICE`); made once, their threads started by a first search
(:func:`make_sessions`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from robot.config import RobotConfig
from solver.cube.facelets import Cube
from solver.cube.notation import parse
from solver.engines.twophase.engine import get_solver
from solver.engines.twophase.session import SearchSession

__all__ = ["HEAD_THREADS", "SEARCH_NICE", "SEARCH_THREADS", "Sessions", "make_sessions"]

logger = logging.getLogger(__name__)

#: Worker threads of the head start: both cores (the host waits for the firmware's STATUS
#: meanwhile). Measured (60 states, load 10): 2.176 s of robot time against 2.236 s on one
#: thread for the same 3 ms budget; the plan's first groups decide most of the job's time.
HEAD_THREADS = 2
#: The scramble whose search starts the sessions' threads (any state will do).
WARM_UP = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"


@dataclass(frozen=True)
class Sessions:
    """The anytime searches' engine sessions, made once (:func:`make_sessions`)."""

    #: the head start: the event loop waits for it, at normal priority
    head: SearchSession
    #: the refinements while the motors turn (at :data:`SEARCH_NICE`)
    refine: SearchSession


#: Worker threads of a search while the motors turn: both cores (the host does little else).
SEARCH_THREADS = 2
#: ... at the process's priority. Lower (10, as before) kept the searches from competing
#: with the event loop for a core, but a thread of the pool runs Python (the pool's own, the
#: hand-back) with the GIL held, and one preempted there by the machine's other work waits for
#: a core as long as its niceness makes it: the loop, wanting the GIL, waits as long (a 600 ms
#: stall and a gap in 30 jobs at load 9, the bench under ``nice``: the threads at 19). At the
#: loop's own priority no such wait is longer than the loop's own; the loop, asleep most of the
#: time, still wins a core as it wakes.
SEARCH_NICE = 0


def make_sessions(config: RobotConfig) -> Sessions:
    """The sessions for ``config``'s robot (its cost model; its faces, when one has no motor),
    ready: options checked, robot-metric tables loaded, worker threads started (a search of
    each), the hot tables' huge-page copies begun. Blocks."""
    faces = sorted(config.motors.faces) if config.motors.missing else None
    cost = config.cost_model
    solver = get_solver()
    solver._start_hot_copies()  # (as the engine's first budgeted search does)
    sessions = Sessions(
        solver.session(cost_model=cost, faces=faces, threads=HEAD_THREADS),
        solver.session(cost_model=cost, faces=faces, threads=SEARCH_THREADS, nice=SEARCH_NICE),
    )
    warm_up = Cube.solved(3).apply(parse(WARM_UP))
    for session in (sessions.head, sessions.refine):
        session.submit(warm_up, time.monotonic() + 0.002).result()
    logger.debug("anytime search sessions ready")
    return sessions
