"""Combining reads per physical sticker (vision.evidence), on constructed RGB scans: the scheme's
colours with seeded noise, and a bad light over the stickers of two corners and two midges that
washes out whatever colour sits there (so that exchanging both pairs is as likely as not: a
legal rival the piece constraints cannot rule out)."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.facelets import COLOUR_RGB, DEFAULT_SCHEME, Cube, sequence_permutation
from solver.cube.notation import parse
from vision.classify import Classification
from vision.errors import ScanInputError
from vision.evidence import Evidence
from vision.pieces import OrbitKind, orbits
from vision.scan import read_rgb

START = Cube.solved(3).apply("R U F' D2 L B R2 U' F2 L' D")
_GREY = np.array([128.0, 128.0, 128.0])
_CORNERS, _MIDGES = (orb for orb in orbits(3) if orb.kind is not OrbitKind.FIXED)
#: positions under the bad light: the home stickers of corner slots 0, 1 and midge slots 0, 1
BAD = [int(i) for orb in (_CORNERS, _MIDGES) for slot in orb.slots[:2] for i in slot]


def _read(cube: Cube, seed: int, bad: dict[int, float] | None = None) -> Classification:
    """A read of ``cube``: each position the colour of its sticker plus noise; at the ``bad``
    positions mixed (by the given share) with grey."""
    rng = np.random.default_rng(seed)
    palette = np.array([COLOUR_RGB[c] for c in DEFAULT_SCHEME.colours], dtype=float)
    rgb = palette[cube.stickers.reshape(-1)] + rng.normal(0, 6, (54, 3))
    for position, share in (bad or {}).items():
        rgb[position] = (1 - share) * rgb[position] + share * _GREY
    return read_rgb(np.clip(rgb, 0, 255).reshape(6, 3, 3, 3)).classification


def test_a_single_clean_read_combines_to_itself() -> None:
    read = _read(START, 1)
    evidence = Evidence(3)
    evidence.add(read)
    combined = evidence.combined()
    assert combined.cube == read.cube == START
    assert combined.accepted and combined.valid
    assert read.colour_costs is not None
    assert np.allclose(evidence.pooled_costs(), read.colour_costs.reshape(54, 6))


def test_reads_after_moves_map_back_to_the_reference_stickers() -> None:
    moves = parse("R U'")
    first, later = _read(START, 2), _read(START.apply(moves), 3)
    evidence = Evidence(3)
    evidence.add(first)
    evidence.add(later, moves)
    perm = sequence_permutation(moves, 3)  # later position i shows reference sticker perm[i]
    assert first.colour_costs is not None and later.colour_costs is not None
    expected = first.colour_costs.reshape(54, 6).copy()
    expected[perm] += later.colour_costs.reshape(54, 6)  # every sticker moved or not: 2 views
    moved = perm != np.arange(54)
    assert np.allclose(evidence.pooled_costs()[perm[moved]], expected[perm[moved]])
    assert evidence.combined().cube == START
    assert all(len(s) == (2 if m else 1) for s, m in zip(_seen(evidence, perm), moved, strict=True))


def _seen(evidence: Evidence, perm: np.ndarray) -> list[set[int]]:
    seen = evidence.positions_seen()
    return [seen[int(p)] for p in perm]


def test_same_position_reads_are_averaged_not_summed() -> None:
    """A second look from the same place under the same light is no new evidence about the
    light's bias: two identical reads combine to the same costs and margins as one."""
    read = _read(START, 4)
    evidence = Evidence(3)
    evidence.add(read)
    evidence.add(read)
    assert read.colour_costs is not None and read.margins is not None
    assert np.allclose(evidence.pooled_costs(), read.colour_costs.reshape(54, 6))
    combined = evidence.combined()
    assert combined.margins is not None
    undisputed = ~read.disputed if read.disputed is not None else np.ones((6, 3, 3), bool)
    assert np.allclose(combined.margins[undisputed], read.margins[undisputed])


def test_a_doubtful_sticker_moved_out_of_the_bad_light_is_read_sure() -> None:
    bad = dict.fromkeys(BAD, 0.95)
    first = _read(START, 5, bad)
    assert not first.accepted  # the single read is in doubt
    doubt = {s.flat(3) for s in first.in_doubt}
    assert len(doubt & set(BAD)) >= len(BAD) // 2  # chiefly the washed-out stickers
    evidence = Evidence(3)
    evidence.add(first)
    for k, turn in enumerate(("U", "R", "F", "L", "D", "B")):
        moves = parse(turn)
        evidence.add(_read(START.apply(moves), 6 + k, bad), moves)
        if evidence.combined().accepted:
            break
    combined = evidence.combined()
    assert combined.accepted and combined.cube == START
    assert combined.cube_confidence > first.cube_confidence


def test_a_bad_light_that_never_moves_off_a_sticker_stays_in_doubt() -> None:
    """Reads from the same place do not add up: the sticker stays in doubt however often it is
    read there (the evidence cannot be talked into a verdict by repetition)."""
    bad = dict.fromkeys(BAD, 0.95)
    evidence = Evidence(3)
    for seed in range(6):
        evidence.add(_read(START, 20 + seed, bad))
    assert not evidence.combined().accepted


def test_disputed_stickers_carry_no_evidence() -> None:
    read = _read(START, 7)
    assert read.colour_costs is not None
    disputed = np.zeros((6, 3, 3), dtype=bool)
    disputed[2, 0, 0] = True
    import dataclasses

    evidence = Evidence(3)
    evidence.add(dataclasses.replace(read, disputed=disputed))
    costs = evidence.pooled_costs()
    assert np.all(costs[18] == 0.0) and np.allclose(costs[19], read.colour_costs[2, 0, 1])


def test_the_strictest_bar_of_the_reads_holds() -> None:
    import dataclasses

    read = _read(START, 8)
    evidence = Evidence(3)
    evidence.add(dataclasses.replace(read, accept_confidence=1.01))
    assert evidence.combined().verdict == "refused"


def test_bad_use_is_a_clear_error() -> None:
    with pytest.raises(ScanInputError, match="no reads"):
        Evidence(3).combined()
    four = read_rgb(
        np.array([COLOUR_RGB[c] for c in DEFAULT_SCHEME.colours], float)[
            Cube.solved(4).stickers.reshape(-1)
        ].reshape(6, 4, 4, 3)
    )
    with pytest.raises(ScanInputError, match="N=4"):
        Evidence(3).add(four.classification)


def test_viewpoints_count_placings_not_reads() -> None:
    evidence = Evidence(3)
    evidence.add(_read(START, 30))
    evidence.add(_read(START, 31))
    assert len(evidence) == 2 and evidence.viewpoints == 1
    evidence.add(_read(START.apply("U"), 32), "U")
    evidence.add(_read(START.apply("U U'"), 33), "U U'")  # back where it was: the same placing
    assert len(evidence) == 4 and evidence.viewpoints == 2
