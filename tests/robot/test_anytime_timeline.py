"""The anytime timeline: when the committed moves end, and when the next must be committed."""

from __future__ import annotations

import pytest

from robot.daemon.anytime import Timeline, group_ends, move_durations
from robot.planner import PlannedMove
from solver.cost import CostModel
from solver.cube.geometry import Face

COST = CostModel(quarter_turn_s=0.1, half_turn_s=0.16, pair_extra_s=0.01, settle_s=0.005)
#: R, U+D' (a pair), F2
PLAN = [
    PlannedMove(Face.R, 1, 1),
    PlannedMove(Face.U, 1, 0, simultaneous_with_next=True),
    PlannedMove(Face.D, -1, 3),
    PlannedMove(Face.F, 2, 2),
]


def test_each_group_adds_its_time_and_a_settle_on_its_last_move() -> None:
    assert move_durations(PLAN, COST) == pytest.approx([0.105, 0.0, 0.115, 0.165])
    assert group_ends(PLAN, 0) == [1, 3, 4]
    assert group_ends(PLAN, 1) == [3, 4]


def test_the_end_is_predicted_from_the_commit_then_from_the_firmwares_reports() -> None:
    timeline = Timeline(lambda: 0.01, move_durations(PLAN, COST), started_at=10.0)
    assert timeline.end(1) == pytest.approx(10.105)
    assert timeline.deadline(1) == pytest.approx(10.095)  # one latency before
    timeline.observe((10.085, 1))  # R reported 20 ms sooner than the model says
    assert timeline.overstated_s == pytest.approx(0.02)
    assert timeline.end(3) == pytest.approx(10.085 + 0.115)
    assert timeline.deadline(3) == pytest.approx(10.2 - 0.01 - 0.02)
    timeline.observe((10.30, 3))  # later than predicted (a pause): nothing learnt
    assert timeline.overstated_s == pytest.approx(0.02)
    assert timeline.end(4) == pytest.approx(10.465)
