"""The C line planner of the block commutators (``_lines.c``) against a plain reference, and the
twin commutators built on it (``twins.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.geometry import Face
from solver.cube.notation import Move
from solver.engines.nxn import _lines, centres, twins
from solver.engines.nxn.blocks import plan_blocks
from solver.engines.nxn.sim import geometry
from solver.scramble import random_state_nxn


def _reference(
    net: np.ndarray, u: np.ndarray, u2: np.ndarray, n: int, setup: int
) -> tuple[int, int, int, list[int]]:
    """Line by line: runs of adjacent layers whose cells lose nothing, kept when they gain."""
    best: tuple[float, int, int, int, list[int]] | None = None
    for line in range(n + 1):
        cells = sorted((int(a), int(v)) for a, b, v in zip(u, u2, net, strict=True) if b == line)
        kept: list[list[tuple[int, int]]] = []
        run: list[tuple[int, int]] = []
        for layer, value in [*cells, (-9, -1)]:
            if value >= 0 and run and run[-1][0] + 1 == layer:
                run.append((layer, value))
                continue
            if run and sum(v for _, v in run) > 0:
                kept.append(run)
            run = [(layer, value)] if value >= 0 else []
        gain = sum(v for r in kept for _, v in r)
        m = sum(1 if r[0][0] == 2 or r[-1][0] == n - 1 else 2 for r in kept)
        cost = 3 + 2 * m + 2 * (1 if line in (2, n - 1) else 2) + (1 if setup else 0)
        ratio = gain / cost if gain > 0 else -1.0
        if best is None or ratio > best[0]:
            best = (ratio, line, gain, cost, [layer for r in kept for layer, _ in r])
    assert best is not None
    return best[1], best[2], best[3], best[4] if best[2] > 0 else []


@pytest.mark.parametrize("n", [9, 11, 15])
def test_best_line_matches_the_reference(n: int) -> None:
    rng = np.random.default_rng(n)
    configs = [c for s in (Face.F, Face.R, Face.D) for c in centres._configs(n, Face.U, s)]
    for k in range(30):
        cfg = configs[k % len(configs)]
        net = rng.choice([-1, 0, 0, 1], cfg.cells.size).astype(np.int64)
        if k % 3 == 0:  # mostly neutral, as late in a face: long runs joined over neutral cells
            net = rng.choice([-1, 0, 0, 0, 0, 0, 1], cfg.cells.size).astype(np.int64)
        setup = k % 2
        out = np.zeros(n, dtype=np.int64)
        line, gain, cost, taken = _lines.best_line(net, cfg.u, cfg.u2, n, 3 + setup, out)
        assert (line, gain, cost, out[:taken].tolist()) == _reference(net, cfg.u, cfg.u2, n, setup)


def test_best_line_without_gain_and_bad_input() -> None:
    n = 9
    cfg = centres._configs(n, Face.U, Face.F)[0]
    out = np.zeros(n, dtype=np.int64)
    net = -np.ones(cfg.cells.size, dtype=np.int64)
    assert _lines.best_line(net, cfg.u, cfg.u2, n, 3, out)[1:] == (0, 7, 0)
    with pytest.raises(ValueError, match="sorted"):
        _lines.best_line(net, cfg.u[::-1].copy(), cfg.u2[::-1].copy(), n, 3, out)
    with pytest.raises(ValueError, match="one length"):
        _lines.best_line(net[:-1], cfg.u, cfg.u2, n, 3, out)
    with pytest.raises(ValueError, match="int64"):
        _lines.best_line(net.astype(np.int32), cfg.u, cfg.u2, n, 3, out)


@pytest.mark.parametrize("n", [9, 12])
def test_twin_commutator_cycles_a_rectangle_on_the_target_and_on_its_opposite(n: int) -> None:
    """Each twin (with its left-out closing turns): the rows x lines rectangle of the target
    gets the pieces of its source cells, the matching cells of the opposite face those of
    theirs; nothing else changes on those two faces, and only the source faces besides."""
    rows, cols = [(3, 4)], [(n - 3, n - 2)]
    for target, source in ((Face.U, Face.F), (Face.F, Face.R), (Face.R, Face.D)):
        found = twins.twin_configs(n, target, source)
        assert len(found) == 4
        o, s2 = Face((target + 3) % 6), Face((source + 3) % 6)
        for tw in found:
            moves = twins.twin_moves(tw, n, rows, cols, 0)
            closing = [Move.outer(o, -tw.t2), Move.outer(target, -tw.cfg.t)]
            labels = np.arange(6 * n * n)
            geometry(n).apply(labels, [*moves, *closing])
            moved = {int(c) for c in np.flatnonzero(labels != np.arange(labels.size))}
            on = {f: moved & set(centres.interior(n, f).tolist()) for f in Face}
            rect = np.isin(tw.cfg.u, [3, 4]) & np.isin(tw.cfg.u2, [n - 3, n - 2])
            assert on[target] == set(tw.cfg.cells[rect].tolist())
            assert on[o] == set(tw.o_cells[rect].tolist())
            assert labels[tw.cfg.cells[rect]].tolist() == tw.cfg.src[rect].tolist()
            assert labels[tw.o_cells[rect]].tolist() == tw.o_src[rect].tolist()
            assert {f for f in Face if on[f]} == {target, o, source, s2}


@pytest.mark.parametrize(("n", "seed"), [(9, 1), (13, 2)])
def test_pairs_of_faces_fill_every_centre_as_planned(n: int, seed: int) -> None:
    """U and D, then F and B, then R and L; every step is checked as it is applied."""
    state = random_state_nxn(n, seed).flat.copy()
    targets = centres.centre_targets(state, n)
    first = twins.first_pair(state, n, targets)
    for face in (Face.U, Face.D):
        assert (state[centres.interior(n, face)] == targets[face]).all()
    rest = twins.finish_pairs(state, n, targets)
    assert first and rest
    for face in Face:
        assert (state[centres.interior(n, face)] == targets[face]).all()


def test_nets_match_numpy_and_reject_bad_indices() -> None:
    n = 11
    state = random_state_nxn(n, 4).flat.copy()
    rng = np.random.default_rng(3)
    idx = rng.integers(0, state.size, (4, 500)).astype(np.int64)
    for colours in ((2, -1, 5, -1), (1, 3, 0, 4)):
        out = np.empty(500, dtype=np.int64)
        _lines.nets(state, idx, np.array(colours, dtype=np.int64), out)
        want = np.zeros(500, dtype=np.int64)
        for j in range(2):
            a, b = state[idx[2 * j]], state[idx[2 * j + 1]]
            c_in, c_out = colours[2 * j], colours[2 * j + 1]
            want += (a == c_in).astype(np.int64) - (b == c_in)
            if c_out >= 0:
                want += (b == c_out).astype(np.int64) - (a == c_out)
        assert np.array_equal(out, want)
    idx[1, 7] = state.size
    with pytest.raises(ValueError, match="outside"):
        _lines.nets(state, idx, np.array([1, -1, 2, -1], dtype=np.int64), out)
    with pytest.raises(ValueError, match="2 rows per colour pair"):
        _lines.nets(state, idx[:3], np.array([1, -1, 2, -1], dtype=np.int64), out)


@pytest.mark.parametrize(("n", "seed"), [(9, 5), (12, 6)])
def test_plan_lines_matches_nets_and_best_line_block_by_block(n: int, seed: int) -> None:
    """The fused kernel against the two it fuses: for plain commutators (one colour pair,
    with and without the source's own colour), twins (two pairs) and slices (two pairs, a
    barred cell, N + 2 layers), every block's best line, gain, cost and bounds."""
    from solver.engines.nxn import slices

    state = random_state_nxn(n, seed).flat.copy()
    cases = [
        (centres._gathered(n, Face.U, Face.F), (2, -1), n),
        (centres._gathered(n, Face.R, Face.L), (1, 3), n),
        (twins._gathered(n, Face.U, Face.R), (0, -1, 5, -1), n),
        (slices._gathered(n, Face.U), (0, -1, 5, -1), n + 2),
    ]
    for blocks, colours, m in cases:
        out = plan_blocks(state, m, blocks, colours)
        groups = blocks.groups.size - 1
        assert out.shape == (blocks.fixed.size * groups, 5)
        for k in range(out.shape[0]):
            s, g = divmod(k, groups)
            lo, hi = int(blocks.groups[g]), int(blocks.groups[g + 1])
            net = blocks.net(state, colours, k)
            idx = np.stack(
                [
                    r
                    for j in range(len(colours) // 2)
                    for r in (blocks.src[s, j, lo:hi], blocks.cells[j, lo:hi])
                ]
            ).astype(np.int64)
            plain = np.empty(hi - lo, dtype=np.int64)
            _lines.nets(state, idx, np.array(colours, dtype=np.int64), plain)
            if blocks.bias.size:
                plain += blocks.bias[lo:hi]
            assert np.array_equal(net, plain)
            u, u2 = blocks.u[lo:hi].astype(np.int64), blocks.u2[lo:hi].astype(np.int64)
            layers = np.empty(m, dtype=np.int64)
            line, gain, cost, _ = _lines.best_line(net, u, u2, m, int(blocks.fixed[s]), layers)
            positive = np.maximum(net, 0)
            per_line = np.bincount(u2, weights=positive, minlength=m + 1)
            assert out[k].tolist() == [line, gain, cost, int(positive.sum()), int(per_line.max())]


def test_plan_lines_rejects_bad_input() -> None:
    n = 9
    state = random_state_nxn(n, 1).flat.copy()
    blocks = centres._gathered(n, Face.U, Face.F)
    out = np.empty((blocks.fixed.size * (blocks.groups.size - 1), 5), dtype=np.int64)
    colours = np.array([2, -1], dtype=np.int64)

    def run(**change: object) -> None:
        args = {
            "cells": blocks.cells,
            "src": blocks.src,
            "u": blocks.u,
            "u2": blocks.u2,
            "groups": blocks.groups,
            "bias": blocks.bias,
            "out": out,
        }
        args.update(change)
        _lines.plan_lines(
            state,
            args["cells"],
            args["src"],
            colours,
            args["u"],
            args["u2"],
            args["groups"],
            blocks.fixed,
            args["bias"],
            n,
            args["out"],
        )

    run()
    bad = blocks.src.copy()
    bad[0, 0, 3] = state.size
    with pytest.raises(ValueError, match="outside"):
        run(src=bad)
    with pytest.raises(ValueError, match="sorted"):
        run(u=blocks.u[::-1].copy(), u2=blocks.u2[::-1].copy())
    with pytest.raises(ValueError, match="int32"):
        run(cells=blocks.cells.astype(np.int64))
    with pytest.raises(ValueError, match="5 per setup"):
        run(out=out[:-1])
    short = blocks.groups.copy()
    short[-1] -= 1
    with pytest.raises(ValueError, match="groups must run"):
        run(groups=short)
    with pytest.raises(ValueError, match="bias out of range"):
        run(bias=np.full(blocks.u.size, -(2**40), dtype=np.int64))


def _ranked_reference(out: np.ndarray, fixed: np.ndarray, extra: int, floor: float) -> list[int]:
    """The loop of ``centres.candidates`` before :func:`_lines.rank_lines` took it over."""
    least = np.repeat(fixed, out.shape[0] // fixed.size) + extra
    order = np.argsort(-out[:, 3] / least, kind="stable").tolist()
    rows, fewest = out.tolist(), least.tolist()
    kept = []
    for k in order:
        if rows[k][3] <= floor * fewest[k]:
            break
        gain, cost = rows[k][1], rows[k][2]
        if gain > 0:
            kept.append(k)
            floor = max(floor, gain / cost)
    return kept


@pytest.mark.parametrize("seed", range(6))
def test_rank_lines_is_the_python_loop(seed: int) -> None:
    """Random kernel outputs with many equal bounds and ratios (small values), every floor
    from none to above all: the same blocks in the same order."""
    rng = np.random.default_rng(seed)
    for _ in range(300):
        setups, groups = int(rng.integers(1, 8)), int(rng.integers(1, 9))
        blocks = setups * groups
        out = np.zeros((blocks, 5), dtype=np.int64)
        out[:, 2] = rng.integers(7, 16, blocks)
        out[:, 1] = rng.integers(-3, 3 * int(rng.integers(1, 20)), blocks)
        out[:, 3] = np.maximum(out[:, 1], 0) + rng.integers(0, 6, blocks)
        fixed = rng.integers(3, 6, setups).astype(np.int64)
        for floor in (0.0, 0.5, 1.0, 4 / 3, float(rng.random() * 3), 100.0):
            want = _ranked_reference(out, fixed, 4, floor)
            assert _lines.rank_lines(out, fixed, 4, floor) == want


def test_rank_lines_checks_its_sizes() -> None:
    out = np.zeros((6, 5), dtype=np.int64)
    with pytest.raises(ValueError, match="5 per block"):
        _lines.rank_lines(out[:, :4].copy(), np.array([3, 4], dtype=np.int64), 4, 0.0)
    with pytest.raises(ValueError, match="5 per block"):
        _lines.rank_lines(out, np.array([3, 4, 4, 4], dtype=np.int64), 4, 0.0)
    with pytest.raises(ValueError, match="least cost"):
        _lines.rank_lines(out, np.array([-4, 3], dtype=np.int64), 4, 0.0)
    with pytest.raises(ValueError, match="int64"):
        _lines.rank_lines(out.astype(np.int32), np.array([3, 4], dtype=np.int64), 4, 0.0)
