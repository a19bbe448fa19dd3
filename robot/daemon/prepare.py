"""At start, before the daemon takes jobs: the solver's tables loaded (or, on a new robot, built)
so that the first job does not spend minutes building them (state ``PREPARING``, with the table
and its progress in ``status.preparing``).

:func:`solver_tables` is what a real daemon prepares for its profile: the two-phase tables the
engine searches (3x3, and the reduced 3x3 of big cubes), the robot-metric tables its cost model
needs, and the 2x2 table for a 2x2 robot. It blocks (the daemon runs it in a thread) and reports
``(task, done, total)`` as the table code does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from robot.config import RobotConfig

__all__ = ["Prepare", "solver_tables"]

logger = logging.getLogger(__name__)

#: a blocking preparation, given a progress callback ``(task, done, total)``
Prepare = Callable[[Callable[[str, int, int], None]], None]


def solver_tables(config: RobotConfig) -> Prepare:
    """The preparation of the tables the daemon of ``config`` will search with."""

    def prepare(progress: Callable[[str, int, int], None]) -> None:
        n = config.robot.cube_size
        if config.robot.kind != "six-face":  # a turntable's or two-gripper's planner tables
            from robot.daemon.mechanism import prepare_planner

            progress(f"{config.robot.kind} planner", 0, 1)
            prepare_planner(config)
            progress(f"{config.robot.kind} planner", 1, 1)
        if n == 2:
            from solver.engines.pocket import load_pocket_table

            progress("2x2 distance table", 0, 1)
            load_pocket_table()
            progress("2x2 distance table", 1, 1)
            return
        from solver.engines.twophase.engine import get_solver
        from solver.engines.twophase.tables import build_all

        # every missing group in one pool of workers (sized by free memory), then loaded
        build_all(robot=True, progress=progress)
        solver = get_solver(progress=progress)
        solver.axial_tables(progress=progress)  # the robot-time objective's tables
        logger.info("solver tables ready")

    return prepare
