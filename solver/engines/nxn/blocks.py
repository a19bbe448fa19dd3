"""The block-commutator planner's configurations as its C kernel takes them
(:func:`._lines.plan_lines`): each configuration (group of target cells) after several setups,
laid out flat, and every block's best line in one call. Shared by the plain commutators
(:mod:`.centres`), the twins (:mod:`.twins`) and the slice commutators (:mod:`.slices`)."""

from __future__ import annotations

__all__ = ["Blocks", "Job", "Pending", "make_blocks", "plan_blocks"]

from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType

import numpy as np
import numpy.typing as npt

from solver.engines.nxn import _lines
from solver.engines.nxn.sim import IntArray

#: a state: one colour per sticker
Colours = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Blocks:
    """Configurations (groups of cells), each after several setups, laid out for
    :func:`._lines.plan_lines`: per colour pair the cells (``cells``, P x L, int32) and, per
    setup, the stickers whose pieces land on them (``src``, S x P x L), each cell's layer ``u``
    and line ``u2`` (int32), where each group starts (``groups``, G + 1 entries), the outer
    turns of each setup (``fixed``) and a bias per cell (empty, or a large negative value
    for a cell that may not be cycled). Block ``s * G + g`` is group ``g`` after setup ``s``."""

    cells: npt.NDArray[np.int32]
    src: npt.NDArray[np.int32]
    u: npt.NDArray[np.int32]
    u2: npt.NDArray[np.int32]
    groups: IntArray
    fixed: IntArray
    bias: IntArray

    def net(self, state: Colours, colours: Sequence[int], block: int) -> IntArray:
        """What cycling each cell of ``block`` gains (as the kernel counts it)."""
        s, g = divmod(block, self.groups.size - 1)
        lo, hi = int(self.groups[g]), int(self.groups[g + 1])
        net = np.zeros(hi - lo, dtype=np.int64)
        for j in range(len(colours) // 2):
            c_in, c_out = colours[2 * j], colours[2 * j + 1]
            a, c = state[self.src[s, j, lo:hi]], state[self.cells[j, lo:hi]]
            net += (a == c_in).astype(np.int64) - (c == c_in)
            if c_out >= 0:
                net += (c == c_out).astype(np.int64) - (a == c_out)
        if self.bias.size:
            net += self.bias[lo:hi]
        return net


@dataclass(frozen=True)
class Job:
    """One call of the kernel (:func:`plan_blocks`) that a candidate search makes: its blocks,
    the N its line search runs over and its colour pairs. A step's jobs do not depend on each
    other, so they can be run ahead (on other threads) and their outputs handed to the
    searches (``out=``) in the order the searches run."""

    blocks: Blocks
    n: int
    colours: tuple[int, ...]

    def run(self, state: Colours) -> IntArray:
        return plan_blocks(state, self.n, self.blocks, self.colours)

    def _args(self, out: IntArray) -> tuple[object, ...]:
        b = self.blocks
        colours = np.array(self.colours, dtype=np.int64)
        return (b.cells, b.src, colours, b.u, b.u2, b.groups, b.fixed, b.bias, self.n, out)


class Pending:
    """A step's jobs started in the background (:func:`._lines.plan_start`): ``threads`` - 1
    helper threads take them in the order given while the calling thread goes on (its own
    Python work, which must not change ``state``); :meth:`out` waits for one job, running it
    on the calling thread when no helper has taken it yet. The outputs are those of
    :meth:`Job.run` whatever the threads and their timing. A context manager: leaving it
    finishes every job and joins the helpers."""

    def __init__(self, state: Colours, jobs: Sequence[Job], threads: int) -> None:
        self._outs = [
            np.empty((j.blocks.fixed.size * (j.blocks.groups.size - 1), 5), np.int64) for j in jobs
        ]
        args = [j._args(out) for j, out in zip(jobs, self._outs, strict=True)]
        self._handle = _lines.plan_start(state, args, threads)

    def out(self, index: int) -> IntArray:
        """Job ``index``'s output, once it is written."""
        _lines.plan_wait(self._handle, index)
        return self._outs[index]

    def __enter__(self) -> Pending:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        _lines.plan_finish(self._handle)


def make_blocks(
    cells: list[list[IntArray]],
    src: list[list[list[IntArray]]],
    layers: list[tuple[IntArray, IntArray]],
    fixed: list[int],
    bias: IntArray | None = None,
) -> Blocks:
    """:class:`Blocks` of ``cells`` (per group, one row per colour pair), ``src`` (per setup,
    per group, one row per colour pair), ``layers`` ((u, u2) per group) and ``fixed`` (outer
    turns per setup)."""
    sizes = [u.size for u, _ in layers]
    return Blocks(
        np.stack([np.concatenate(r) for r in zip(*cells, strict=True)]).astype(np.int32),
        np.stack(
            [np.stack([np.concatenate(r) for r in zip(*per, strict=True)]) for per in src]
        ).astype(np.int32),
        np.concatenate([u for u, _ in layers]).astype(np.int32),
        np.concatenate([u2 for _, u2 in layers]).astype(np.int32),
        np.cumsum([0, *sizes]).astype(np.int64),
        np.array(fixed, dtype=np.int64),
        np.zeros(0, dtype=np.int64) if bias is None else bias.astype(np.int64),
    )


def plan_blocks(state: Colours, n: int, blocks: Blocks, colours: Sequence[int]) -> IntArray:
    """Every block's best line at once (:func:`._lines.plan_lines`): (S x G) x 5, block
    ``s * G + g``: line, gain, cost, total of the positive nets, largest positive total of
    one line. The kernel releases the GIL while it works (it reads ``state`` and the blocks'
    arrays only), so calls on other threads run at the same time."""
    out = np.empty((blocks.fixed.size * (blocks.groups.size - 1), 5), dtype=np.int64)
    _lines.plan_lines(
        state,
        blocks.cells,
        blocks.src,
        np.array(colours, dtype=np.int64),
        blocks.u,
        blocks.u2,
        blocks.groups,
        blocks.fixed,
        blocks.bias,
        n,
        out,
    )
    return out
