"""How sure a read is: the margin of every sticker to the nearest other *legal* reading.

The classifier's answer is the cheapest legal labelling; its costs are squared Mahalanobis
distances under the scan's pooled within-colour covariance, so a cost difference Δ between two
labellings is twice their log-likelihood ratio under that Gaussian model. For every sticker the
module finds the cheapest change to the answer that gives the sticker another colour and keeps
the cube legal:

* a piece reoriented in its slot (for corners and midges together with a compensating
  reorientation elsewhere: a lone twist or flip is impossible);
* two pieces of an orbit exchanged; where the orbit's permutation parity is tied to another
  (corners and midges of odd N) an exchange must come with a second one, in the same orbit or
  the other, or be a three-cycle.

Costs are taken leave-one-out (a sticker's own colour reference without the sticker itself), so
an odd sticker does not vouch for itself. The sticker's confidence is the two-hypothesis
posterior ``1 / (1 + exp(-Δ / (2·T)))`` with a temperature T that widens the Gaussian model's
tails to what real scans show (measured, see docs/vision-calibration.md). The cube's confidence is
the lowest sticker confidence: the posterior of the answer against its nearest legal rival.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from vision.assign import Assignment, ConstraintLevel, OrbitSolution, tuple_cost
from vision.colour import FloatArray
from vision.pieces import OrbitKind

__all__ = [
    "ACCEPT_MARGIN",
    "TEMPERATURE",
    "confidence_from_margin",
    "leave_one_out",
    "sticker_margins",
]

IntArray = npt.NDArray[np.intp]

#: Scales the Gaussian model's log-likelihood ratios. Fitted by maximum likelihood of right vs
#: wrong on the perturbed real scans (docs/vision-calibration.md): 1.0, the model as it is.
TEMPERATURE = 1.0
#: The bar: a read is accepted when its nearest legal rival is at least this much worse (cost
#: units: twice the log-likelihood ratio). Chosen on the real scans, docs/vision-calibration.md.
ACCEPT_MARGIN = 9.0
_INF = float("inf")


def confidence_from_margin(margin: FloatArray, temperature: float = TEMPERATURE) -> FloatArray:
    """Posterior of the answer against a rival ``margin`` (cost units) worse."""
    z = np.clip(np.maximum(margin, 0.0) / (2.0 * temperature), 0.0, 700.0)
    result: FloatArray = 1.0 / (1.0 + np.exp(-z))
    return result


def sticker_margins(loo: FloatArray, assignment: Assignment, level: ConstraintLevel) -> FloatArray:
    """Per flat sticker, the least added cost of a legal reading that changes its colour
    (``loo``: the cost of every sticker for every label, taken leave-one-out)."""
    labels = assignment.labels
    rows = np.arange(labels.size)
    if level < ConstraintLevel.PIECES or not assignment.solutions:
        own = loo[rows, labels]
        other = loo.copy()
        other[rows, labels] = _INF
        margin: FloatArray = np.maximum(other.min(axis=1) - own, 0.0)
        return margin
    margin = np.full(labels.size, _INF)
    partner = {OrbitKind.CORNER: OrbitKind.MIDGE, OrbitKind.MIDGE: OrbitKind.CORNER}
    swaps = {
        sol.tables.orbit.kind: _swap_table(sol, loo)
        for sol in assignment.solutions
        if sol.tables.orbit.kind in partner
    }
    linked = level is ConstraintLevel.REPAIR and OrbitKind.MIDGE in swaps
    for sol in assignment.solutions:
        orb = sol.tables.orbit
        if orb.kind is OrbitKind.FIXED:
            continue  # odd N: the centres define the colours
        table, cur, q = swaps[orb.kind] if orb.kind in partner else _swap_table(sol, loo)
        if linked and orb.kind in partner:
            other_swap = float(swaps[partner[orb.kind]][0].min())
            per_slot = _linked_perm_margin(table, cur, q, other_swap)
        else:
            per_slot = table.min(axis=1)
        per_slot = np.minimum(per_slot, _orient_margin(sol, loo, cur))
        slots = np.arange(sol.perm.size)
        stickers = orb.tuples[sol.tables.by_slot[slots, sol.orient]]  # (S, width)
        np.minimum.at(margin, stickers.reshape(-1), np.repeat(per_slot, orb.width))
    result: FloatArray = np.maximum(margin, 0.0)
    return result


def leave_one_out(cost: FloatArray, labels: IntArray) -> FloatArray:
    """``x − μ₋ᵢ = k/(k−1)·(x − μ)`` for a colour of k stickers: scale the own-colour distance."""
    members = np.bincount(labels, minlength=6)[labels]
    loo = cost.copy()
    rows = np.arange(labels.size)
    loo[rows, labels] *= (members / np.maximum(members - 1, 1)) ** 2
    return loo


def _swap_table(sol: OrbitSolution, cost: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(Δ of exchanging the pieces of slots a and b (S, S), current slot costs (S,), and
    ``q[a, b]`` = cost of slot a holding slot b's piece in its best orientation)."""
    tables = sol.tables
    tc = tuple_cost(tables.orbit, cost)
    slots = np.arange(sol.perm.size)
    cur = tc[tables.by_slot[slots, sol.orient], sol.perm]
    q = tc[tables.by_slot][:, :, sol.perm].min(axis=1)  # (S, S)
    table = q + q.T - cur[:, None] - cur[None, :]
    pieces = tables.orbit.pieces[sol.perm]
    same = (pieces[:, None, :] == pieces[None, :, :]).all(axis=2)  # identical pieces: no change
    table[same] = _INF
    return table, cur, q


def _linked_perm_margin(
    table: FloatArray, cur: FloatArray, q: FloatArray, other_orbit_swap: float
) -> FloatArray:
    """Per slot, the cheapest even change involving it: a three-cycle, two exchanges in this
    orbit, or an exchange here with one in the parity-linked orbit."""
    size = cur.size
    # three-cycle a→b→c: slot a takes b's piece, b takes c's, c takes a's
    cyc = q[:, :, None] + q[None, :, :] + q.T[:, None, :]
    cyc = cyc - cur[:, None, None] - cur[None, :, None] - cur[None, None, :]
    idx = np.arange(size)
    cyc[idx, idx, :] = _INF
    cyc[idx, :, idx] = _INF
    cyc[:, idx, idx] = _INF
    three = np.minimum(np.minimum(cyc.min(axis=(1, 2)), cyc.min(axis=(0, 2))), cyc.min(axis=(0, 1)))
    own = table.min(axis=1)
    second = np.array([_min_excluding(table, s) for s in range(size)])
    result: FloatArray = np.minimum(three, np.minimum(own + second, own + other_orbit_swap))
    return result


def _min_excluding(table: FloatArray, s: int) -> float:
    keep = np.ones(table.shape[0], dtype=bool)
    keep[s] = False
    return float(table[np.ix_(keep, keep)].min()) if keep.sum() > 1 else _INF


def _orient_margin(sol: OrbitSolution, cost: FloatArray, cur: FloatArray) -> FloatArray:
    """Per slot, the cheapest legal reorientation of its piece (with a compensating one in
    another slot where the orbit has an orientation law)."""
    tables = sol.tables
    size, width = sol.perm.size, tables.by_slot.shape[1]
    if width == 1:
        return np.full(size, _INF)
    tc = tuple_cost(tables.orbit, cost)
    d = tc[tables.by_slot, sol.perm[:, None]] - cur[:, None]  # (S, O): Δ of orientation o
    m = tables.modulus
    if m == 0:
        d[np.arange(size), sol.orient] = _INF
        result: FloatArray = d.min(axis=1)
        return result
    # e[k][s]: Δ of turning slot s's piece by k steps
    e = [d[np.arange(size), (sol.orient + k) % m] for k in range(m)]
    best = np.full(size, _INF)
    for k in range(1, m):
        comp = e[m - k]
        for s in range(size):
            others = np.delete(comp, s)
            best[s] = min(best[s], float(e[k][s] + others.min()))
    return best
