"""The C line planner of the block commutators (``_lines.c``) against a plain reference."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.geometry import Face
from solver.engines.nxn import _lines, centres


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
        line, gain, cost, taken = _lines.best_line(net, cfg.u, cfg.u2, n, setup, out)
        assert (line, gain, cost, out[:taken].tolist()) == _reference(net, cfg.u, cfg.u2, n, setup)


def test_best_line_without_gain_and_bad_input() -> None:
    n = 9
    cfg = centres._configs(n, Face.U, Face.F)[0]
    out = np.zeros(n, dtype=np.int64)
    net = -np.ones(cfg.cells.size, dtype=np.int64)
    assert _lines.best_line(net, cfg.u, cfg.u2, n, 0, out)[1:] == (0, 7, 0)
    with pytest.raises(ValueError, match="sorted"):
        _lines.best_line(net, cfg.u[::-1].copy(), cfg.u2[::-1].copy(), n, 0, out)
    with pytest.raises(ValueError, match="one length"):
        _lines.best_line(net[:-1], cfg.u, cfg.u2, n, 0, out)
    with pytest.raises(ValueError, match="int64"):
        _lines.best_line(net.astype(np.int32), cfg.u, cfg.u2, n, 0, out)
