"""The block-commutator planner's configurations as its C kernel takes them
(:func:`._lines.plan_lines`): each configuration (group of target cells) after several setups,
laid out flat, and every block's best line in one call. Shared by the plain commutators
(:mod:`.centres`), the twins (:mod:`.twins`) and the slice commutators (:mod:`.slices`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
    one line."""
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
