"""Big-cube centres: the macro table, all faces at once, and rectangle commutators of many runs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from solver.cube.geometry import Face
from solver.cube.notation import Move
from solver.engines.nxn import centres, macros, rectangles, wings
from solver.engines.nxn.sim import geometry
from solver.scramble import random_state_nxn


@pytest.mark.parametrize("n", [5, 6])
def test_macro_permutations_are_what_the_moves_do(n: int) -> None:
    table = macros.macro_table(n)
    cells = macros.centre_cells(n)
    state = random_state_nxn(n, 7).flat.copy()
    picks = np.random.default_rng(n).choice(len(table.moves), 60, replace=False)
    for k in picks:
        turned = state.copy()
        geometry(n).apply(turned, table.moves[k])
        assert np.array_equal(turned[cells], state[cells][table.perm[k]])


@pytest.mark.parametrize("n", [6, 7])
def test_safe_macros_keep_every_wing_parity_and_plain_turns_do_not(n: int) -> None:
    table = macros.macro_table(n)
    state = random_state_nxn(n, 3).flat.copy()
    before = [wings.wing_parity(state, n, j) for j in range(1, (n - 2) // 2 + 1)]
    changed = 0
    for k in range(0, len(table.moves), 7):
        turned = state.copy()
        geometry(n).apply(turned, table.moves[k])
        after = [wings.wing_parity(turned, n, j) for j in range(1, (n - 2) // 2 + 1)]
        if table.safe[k]:
            assert after == before, table.moves[k]
        changed += after != before
    assert changed > 0  # quarter block turns are in the table, marked unsafe


def test_best_macro_gains_as_planned() -> None:
    n = 6
    state = random_state_nxn(n, 11).flat.copy()
    targets = centres.centre_targets(state, n)
    found = macros.best_macro(state, n, targets)
    assert found is not None and found.gain > 0
    before = centres._correct(state, n, targets)
    geometry(n).apply(state, found.moves)
    assert centres._correct(state, n, targets) - before == found.gain


@pytest.mark.parametrize(("n", "seed"), [(5, 1), (6, 2), (7, 3), (8, 4)])
def test_all_faces_at_once_solve_every_centre(n: int, seed: int) -> None:
    """First stage (U and D, every piece counted), then the other faces together; every step
    is checked as it is applied (gain as planned, finished faces untouched)."""
    state = random_state_nxn(n, seed).flat.copy()
    targets = centres.centre_targets(state, n)
    first = centres.first_centres(state, n, targets)
    for face in (Face.U, Face.D):
        assert (state[centres.interior(n, face)] == targets[face]).all()
    wings.parity_fixes(state, n, Face.U)
    parities = [wings.wing_parity(state, n, j) for j in range(1, (n - 2) // 2 + 1)]
    rest = centres.finish_centres(state, n, targets, (Face.U,))
    for face in Face:
        assert (state[centres.interior(n, face)] == targets[face]).all()
    assert first and [wings.wing_parity(state, n, j) for j in range(1, (n - 2) // 2 + 1)] == (
        parities
    )
    assert len(rest) < len(first)


def test_run_selection_is_optimal() -> None:
    """The dynamic programme against every subset of 8 layers (N = 10)."""
    n = 10
    rng = np.random.default_rng(5)
    for _ in range(40):
        values = np.zeros(n + 1, dtype=np.int64)
        values[2:n] = rng.integers(-3, 4, n - 2)
        allowed = np.ones(n + 1, dtype=bool)
        allowed[rng.integers(2, n)] = False
        lam = float(rng.uniform(0.1, 1.5))
        best = 0.0
        for mask in itertools.product((0, 1), repeat=n - 2):
            taken = [k + 2 for k, bit in enumerate(mask) if bit]
            if any(not allowed[k] for k in taken):
                continue
            runs = rectangles.runs_of(taken)
            best = max(best, values[taken].sum() - lam * rectangles.run_cost(n, runs))
        runs = rectangles.max_runs(values, allowed, lam, n)
        taken = [k for lo, hi in runs for k in range(lo, hi + 1)]
        assert all(allowed[k] for k in taken)
        got = values[taken].sum() - lam * rectangles.run_cost(n, runs)
        assert got == pytest.approx(best)


@pytest.mark.parametrize("n", [12, 21])
def test_rectangles_of_many_runs_change_only_target_and_source(n: int) -> None:
    state = random_state_nxn(n, 9).flat.copy()
    targets = centres.centre_targets(state, n)
    for target, source in ((Face.U, Face.F), (Face.R, Face.D), (Face.B, Face.F)):
        colours = (targets[target], targets[source])
        plan = centres._best_plan(state, n, target, source, colours)
        assert plan is not None and plan.gain > 0
        before = {f: state[centres.interior(n, f)].copy() for f in Face}
        total = centres._correct(state, n, targets)
        geometry(n).apply(state, plan.moves)
        assert centres._correct(state, n, targets) - total == plan.gain
        changed = {f for f in Face if not np.array_equal(state[centres.interior(n, f)], before[f])}
        assert changed == {target, source}


def test_alternation_takes_two_runs_and_the_commutator_cycles_their_rectangle() -> None:
    """Gaining cells in rows 3, 4, 7, 8 of line 10, losing ones in rows 5 and 6: two runs of
    ``m`` (the first widened to layer 2, a wide move), ``m2`` widened to layer 11 (wide); the
    commutator then cycles exactly that rectangle of U."""
    n = 12
    cfg = centres._configs(n, Face.U, Face.F)[0]
    net = np.zeros(cfg.cells.size, dtype=np.int64)
    net[np.isin(cfg.u, [3, 4, 7, 8]) & (cfg.u2 == 10)] = 1
    net[np.isin(cfg.u, [5, 6]) & (cfg.u2 == 10)] = -1
    rows, cols, gain, cost = centres._alternate(cfg, n, net, [(3, 8)], [(10, 10)], 3)
    assert (rows, gain, cost) == ([(2, 4), (7, 8)], 4, 3 + 2 + 4 + 2)
    assert len(cols) == 1 and 9 <= cols[0][0] <= 10 and cols[0][1] == 11  # line 9 is neutral
    moves = centres._commutator(cfg, n, rows, cols, 0)
    labels = np.arange(6 * n * n)
    closing = Move.outer(Face.U, -cfg.t)  # the T' that the stage leaves out
    geometry(n).apply(labels, [*moves, closing])
    moved = set(np.flatnonzero(labels != np.arange(labels.size)).tolist())
    interior = {int(c) for f in Face for c in centres.interior(n, f)}
    rect = np.isin(cfg.u, [2, 3, 4, 7, 8]) & np.isin(cfg.u2, range(cols[0][0], 12))
    assert {c for c in moved & interior if c // (n * n) == Face.U} == set(cfg.cells[rect].tolist())
    assert {c // (n * n) for c in moved & interior} == {Face.U, Face.F}


def _max_runs_reference(
    values: np.ndarray, allowed: np.ndarray, lam: float, n: int
) -> list[tuple[int, int]]:
    """The dynamic programme of ``rectangles.max_runs`` in Python, as it was before the C
    kernel: the best score at each layer not taken (o), in a run that started at layer 2 (a),
    in another run (b); back pointers: the state before (o) and whether (b) started here."""
    neg = float("-inf")
    vals, ok = values.tolist(), allowed.tolist()
    o, a, b = 0.0, neg, neg
    from_o: list[int] = []
    b_new: list[bool] = []
    for r in range(2, n):
        k = 0 if o >= a and o >= b else 1 if a >= b else 2
        best_prev = o if k == 0 else a if k == 1 else b
        from_o.append(k)
        if not ok[r]:
            o, a, b = best_prev, neg, neg
            b_new.append(False)
            continue
        v = vals[r]
        start = o - 4 * lam if r > 2 else neg
        new = start > b
        o, a, b = best_prev, (v - 2 * lam if r == 2 else a + v), (start if new else b) + v
        b_new.append(new)
    b += 2 * lam
    state = 0 if o >= a and o >= b else 1 if a >= b else 2
    taken: list[int] = []
    for r in range(n - 1, 1, -1):
        i = r - 2
        if state == 0:
            state = from_o[i]
            continue
        taken.append(r)
        if state == 2 and b_new[i]:
            state = 0
    return rectangles.runs_of(taken)


@pytest.mark.parametrize("n", [5, 12, 33, 103])
def test_run_selection_in_c_is_the_python_reference(n: int) -> None:
    """The same runs as the Python programme, ties included: small values (many equal
    scores), ratios of small integers (exact ties between taking and leaving a run)."""
    rng = np.random.default_rng(n)
    for trial in range(400):
        values = np.zeros(n + 1, dtype=np.int64)
        values[2:n] = rng.integers(-3, 4, n - 2)
        allowed = rng.random(n + 1) > (0.0 if trial % 2 else 0.2)
        lam = float(rng.integers(1, 12)) / float(rng.integers(1, 8))
        want = _max_runs_reference(values, allowed, lam, n)
        assert rectangles.max_runs(values, allowed, lam, n) == want
