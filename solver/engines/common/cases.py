"""Last-layer case tables (data) and their recognition, for the CFOP and LBL engines.

Every case is data: a family, a name (and number for OLL), the shape group people learn it by,
its algorithms (the first is the primary; the others solve the same case, possibly from another
AUF) and its *signature*: the last layer of the state the primary algorithm solves, i.e. of the
solved cube with the inverse of the algorithm applied. Signatures are cubie data of the four
last-layer slots, in :mod:`solver.cube.cubie` numbering::

    corners  URF UFL ULB UBR        edges  UR UF UL UB

    OLL, OCLL   "co=1212 eo=1111"   twist of the corner / flip of the edge in each slot
    LL cross    "eo=1111"
    PLL, edges  "cp=2130 ep=0123"   the piece that sits in each slot (edges: LBL's last step)
    corners     "cp=2130"           (LBL: permute corners)

``tests/solver/test_cfop.py`` and ``test_lbl.py`` check every algorithm against its signature,
that no two cases are the same up to AUF, and that each family covers every state it must.

Recognition (:class:`Recogniser`) maps the last layer of a state to every way of solving it
with the family's cases: ``(pre-AUF, case, algorithm, post-AUF)``. Tables are built on first use
from the algorithms themselves (the inverse of ``U^a · alg · U^b`` is the state it solves), so
a case is recognised with any AUF by construction.

Algorithms may use wide, slice and rotation moves as they are usually written; engines use them
re-expressed as outer turns with fixed centres
(:func:`solver.engines.common.stage_search.to_outer`), which is also how they are counted.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from solver.cube.cubie import CubieCube
from solver.cube.notation import Metric, Move, count, parse
from solver.engines.common.stage_search import to_outer

__all__ = [
    "ALL_CASES",
    "AUF_MOVES",
    "CP_CASES",
    "EO_CASES",
    "EP_CASES",
    "OCLL_CASES",
    "OLL_CASES",
    "PLL_CASES",
    "Case",
    "Family",
    "Option",
    "Recogniser",
    "recogniser",
    "signature",
]


class Family(StrEnum):
    OLL = "OLL"
    PLL = "PLL"
    EO = "last-layer cross"
    OCLL = "orient last-layer corners"
    CP = "permute corners"
    EP = "permute edges"


@dataclass(frozen=True, slots=True)
class Case:
    family: Family
    name: str
    group: str
    algorithms: tuple[str, ...]
    signature: str
    number: int | None = None

    @property
    def label(self) -> str:
        return f"OLL {self.number}" if self.number is not None else self.name


def _oll(number: int, group: str, sig: str, *algs: str, nickname: str = "") -> Case:
    name = f"OLL {number}" + (f" ({nickname})" if nickname else "")
    return Case(Family.OLL, name, group, algs, sig, number)


def _case(family: Family, name: str, group: str, sig: str, *algs: str) -> Case:
    return Case(family, name, group, algs, sig)


# --- OLL: the 57 cases (standard numbering) --------------------------------------------------
OLL_CASES: tuple[Case, ...] = (
    _oll(1, "dot", "co=1212 eo=1111", "R U2 R2 F R F' U2 R' F R F'"),
    _oll(
        2, "dot", "co=1221 eo=1111", "r U r' U2 r U2 R' U2 R U' r'", "F R U R' U' F' f R U R' U' f'"
    ),
    _oll(
        3, "dot", "co=2022 eo=1111", "r' R2 U R' U r U2 r' U M'", "f R U R' U' f' U' F R U R' U' F'"
    ),
    _oll(
        4, "dot", "co=0111 eo=1111", "M U' r U2 r' U' R U' R' M'", "f R U R' U' f' U F R U R' U' F'"
    ),
    _oll(5, "square", "co=2202 eo=1100", "l' U2 L U L' U l"),
    _oll(6, "square", "co=1110 eo=0110", "r U2 R' U' R U' r'"),
    _oll(7, "small lightning", "co=2022 eo=1100", "r U R' U R U2 r'"),
    _oll(8, "small lightning", "co=0111 eo=0110", "l' U' L U' L' U2 l"),
    _oll(9, "fish", "co=0111 eo=1100", "R U R' U' R' F R2 U R' U' F'"),
    _oll(10, "fish", "co=2220 eo=1001", "R U R' U R' F R F' R U2 R'"),
    _oll(11, "small lightning", "co=2220 eo=1100", "r U R' U R' F R F' R U2 r'"),
    _oll(12, "small lightning", "co=1101 eo=0110", "M' R' U' R U' R' U2 R U' R r'"),
    _oll(13, "knight move", "co=2022 eo=0101", "F U R U' R2 F' R U R U' R'"),
    _oll(14, "knight move", "co=0111 eo=0101", "R' F R U R' F' R F U' F'"),
    _oll(15, "knight move", "co=2202 eo=0101", "l' U' l L' U' L U l' U l"),
    _oll(16, "knight move", "co=1110 eo=0101", "r U r' R U R' U' r U' r'"),
    _oll(17, "dot", "co=0102 eo=1111", "F R' F' R2 r' U R U' R' U' M'"),
    _oll(18, "dot", "co=2100 eo=1111", "r U R' U R U2 r2 U' R U' R' U2 r"),
    _oll(19, "dot", "co=1200 eo=1111", "r' R U R U R' U' M' R' F R F'"),
    _oll(20, "dot", "co=0000 eo=1111", "r U R' U' M2 U R U' R' U' M'"),
    _oll(21, "cross", "co=2121 eo=0000", "R U2 R' U' R U R' U' R U' R'", nickname="H"),
    _oll(22, "cross", "co=2211 eo=0000", "R U2 R2 U' R2 U' R2 U2 R", nickname="Pi"),
    _oll(23, "cross", "co=0021 eo=0000", "R2 D' R U2 R' D R U2 R", nickname="Headlights"),
    _oll(24, "cross", "co=0120 eo=0000", "r U R' U' r' F R F'", nickname="Chameleon"),
    _oll(25, "cross", "co=2010 eo=0000", "F' r U R' U' r' F R", nickname="Bowtie"),
    _oll(26, "cross", "co=1110 eo=0000", "R U2 R' U' R U' R'", nickname="Anti-Sune"),
    _oll(27, "cross", "co=2022 eo=0000", "R U R' U R U2 R'", nickname="Sune"),
    _oll(28, "corners oriented", "co=0000 eo=1100", "r U R' U' r' R U R U' R'"),
    _oll(29, "awkward", "co=0120 eo=1100", "R U R' U' R U' R' F' U' F R U R'"),
    _oll(30, "awkward", "co=0012 eo=1100", "F R' F R2 U' R' U' R U R' F2"),
    _oll(31, "P", "co=0120 eo=0110", "R' U' F U R U' R' F' R"),
    _oll(32, "P", "co=2001 eo=1100", "L U F' U' L' U L F L'"),
    _oll(33, "T", "co=0120 eo=0101", "R U R' U' R' F R F'"),
    _oll(34, "C", "co=0012 eo=0101", "R U R2 U' R' F R U R U' F'"),
    _oll(35, "fish", "co=0102 eo=0011", "R U2 R2 F R F' R U2 R'"),
    _oll(36, "W", "co=0201 eo=0110", "L' U' L U' L' U L U L F' L' F"),
    _oll(37, "fish", "co=0102 eo=1100", "F R' F' R U R U' R'"),
    _oll(38, "W", "co=1020 eo=1100", "R U R' U R U' R' U' R' F R F'"),
    _oll(39, "big lightning", "co=1020 eo=0101", "L F' L' U' L U F U' L'"),
    _oll(40, "big lightning", "co=0201 eo=0101", "R' F R U R' U' F' U R"),
    _oll(41, "awkward", "co=0021 eo=1100", "R U R' U R U2 R' F R U R' U' F'"),
    _oll(42, "awkward", "co=2100 eo=1001", "R' U' R U' R' U2 R F R U R' U' F'"),
    _oll(43, "P", "co=0210 eo=0110", "F' U' L' U L F"),
    _oll(44, "P", "co=1002 eo=1100", "F U R U' R' F'"),
    _oll(45, "T", "co=0210 eo=0101", "F R U R' U' F'"),
    _oll(46, "C", "co=1002 eo=1010", "R' U' R' F R F' U R"),
    _oll(47, "small L", "co=1122 eo=0110", "R' U' R' F R F' R' F R F' U R"),
    _oll(48, "small L", "co=2211 eo=1100", "F R U R' U' R U R' U' F'"),
    _oll(49, "small L", "co=2211 eo=0110", "r U' r2 U r2 U r2 U' r"),
    _oll(50, "small L", "co=2211 eo=0011", "r' U r2 U' r2 U' r2 U r'"),
    _oll(51, "I", "co=1122 eo=0101", "F U R U' R' U R U' R' F'"),
    _oll(52, "I", "co=1122 eo=1010", "R U R' U R U' B U' B' R'"),
    _oll(53, "small L", "co=2121 eo=0110", "l' U2 L U L' U' L U L' U l"),
    _oll(54, "small L", "co=2121 eo=1100", "r U2 R' U' R U R' U' R U' r'"),
    _oll(55, "I", "co=2121 eo=0101", "R' F R U R U' R2 F' R2 U' R' U R U R'"),
    _oll(56, "I", "co=1212 eo=0101", "r' U' r U' R' U R U' R' U R r' U r"),
    _oll(57, "corners oriented", "co=0000 eo=0101", "R U R' U' M' U R U' r'"),
)

# --- PLL: the 21 cases -----------------------------------------------------------------------
_P = Family.PLL
PLL_CASES: tuple[Case, ...] = (
    _case(_P, "Aa", "corners only", "cp=2130 ep=0123", "x R' U R' D2 R U' R' D2 R2 x'"),
    _case(_P, "Ab", "corners only", "cp=3102 ep=0123", "x R2 D2 R U R' D2 R U' R x'"),
    _case(
        _P, "E", "corners only", "cp=3210 ep=0123", "x' R U' R' D R U R' D' R U R' D R U' R' D' x"
    ),
    _case(
        _P,
        "F",
        "adjacent corners",
        "cp=1203 ep=3210",
        "R' U R U' R2 F' U' F U R F R' F' R2",
        "R' U' F' R U R' U' R' F R2 U' R' U' R U R' U R",
    ),
    _case(
        _P,
        "Ga",
        "G",
        "cp=0231 ep=3102",
        "R2 u R' U R' U' R u' R2 F' U F",
        "R2 U R' U R' U' R U' R2 U' D R' U R D'",
    ),
    _case(
        _P,
        "Gb",
        "G",
        "cp=0312 ep=2130",
        "F' U' F R2 u R' U R U' R u' R2",
        "R' U' R U D' R2 U R' U R U' R U' R2 D",
    ),
    _case(
        _P,
        "Gc",
        "G",
        "cp=2013 ep=1203",
        "R2 u' R U' R U R' u R2 f R' f'",
        "R2 U' R U' R U R' U R2 U D' R U' R' D",
    ),
    _case(
        _P,
        "Gd",
        "G",
        "cp=1203 ep=2013",
        "f R f' R2 u' R U' R' U R' u R2",
        "R U R' U' D R2 U' R U' R' U R' U R2 D'",
    ),
    _case(_P, "H", "edges only", "cp=0123 ep=2301", "M2 U M2 U2 M2 U M2"),
    _case(_P, "Ja", "adjacent corners", "cp=3120 ep=3120", "x R2 F R F' R U2 r' U r U2 x'"),
    _case(_P, "Jb", "adjacent corners", "cp=0231 ep=2130", "R U R' F' R U R' U' R' F R2 U' R'"),
    _case(
        _P,
        "Na",
        "diagonal corners",
        "cp=1032 ep=3210",
        "L U' R U2 L' U R' L U' R U2 L' U R'",
        "R U R' U R U R' F' R U R' U' R' F R2 U' R' U2 R U' R'",
    ),
    _case(
        _P,
        "Nb",
        "diagonal corners",
        "cp=1032 ep=1032",
        "R' U L' U2 R U' L R' U L' U2 R U' L",
        "R' U R U' R' F' U' F R U R' F R' F' R U' R",
    ),
    _case(
        _P, "Ra", "adjacent corners", "cp=0231 ep=1203", "R U' R' U' R U R D R' U' R D' R' U2 R'"
    ),
    _case(_P, "Rb", "adjacent corners", "cp=2013 ep=3102", "R2 F R U R U' R' F' R U2 R' U2 R"),
    _case(_P, "T", "adjacent corners", "cp=3120 ep=2103", "R U R' U' R' F R2 U' R' U' R U R' F'"),
    _case(_P, "Ua", "edges only", "cp=0123 ep=3021", "R2 U' S' U2 S U' R2", "M2 U M U2 M' U M2"),
    _case(_P, "Ub", "edges only", "cp=0123 ep=1320", "R2 U S' U2 S U R2", "M2 U' M U2 M' U' M2"),
    _case(_P, "V", "diagonal corners", "cp=2103 ep=3120", "R' U R' U' y R' F' R2 U' R' U R' F R F"),
    _case(
        _P,
        "Y",
        "diagonal corners",
        "cp=2103 ep=0132",
        "F R U' R' U' R U R' F' R U R' U' R' F R F'",
        "F R' F R2 U' R' U' R U R' F' R U R' U' F'",
    ),
    _case(_P, "Z", "edges only", "cp=1230 ep=0321", "M' U M2 U M2 U M' U2 M2"),
)

# --- LBL last-layer families (seed 004's beginner steps) --------------------------------------
EO_CASES: tuple[Case, ...] = (
    _case(Family.EO, "line", "two opposite edges oriented", "eo=0101", "F R U R' U' F'"),
    _case(Family.EO, "L", "two adjacent edges oriented", "eo=0011", "f R U R' U' f'"),
    _case(Family.EO, "dot", "no edge oriented", "eo=1111", "F R U R' U' F' f R U R' U' f'"),
)

OCLL_CASES: tuple[Case, ...] = tuple(
    _case(
        Family.OCLL,
        c.name.split("(")[1].rstrip(")"),
        c.label,
        c.signature.split()[0],
        *c.algorithms,
    )
    for c in OLL_CASES
    if c.group == "cross"
)

CP_CASES: tuple[Case, ...] = (
    _case(
        Family.CP,
        "adjacent",
        "two adjacent corners swapped (A perm)",
        "cp=2130",
        "x R' U R' D2 R U' R' D2 R2 x'",
        "x R2 D2 R U R' D2 R U' R x'",
    ),
    _case(
        Family.CP,
        "diagonal",
        "two diagonal corners swapped",
        "cp=1032",
        "R' U L' U2 R U' L R' U L' U2 R U' L",
        "L U' R U2 L' U R' L U' R U2 L' U R'",
        "R' U R' U' y R' F' R2 U' R' U R' F R F",
    ),
)

EP_CASES: tuple[Case, ...] = tuple(
    _case(Family.EP, c.name, "edges only (U, H, Z perms)", c.signature, *c.algorithms)
    for c in PLL_CASES
    if c.group == "edges only"
)

ALL_CASES: tuple[Case, ...] = OLL_CASES + PLL_CASES + EO_CASES + OCLL_CASES + CP_CASES + EP_CASES

#: U-layer adjustments: index a = clockwise quarter turns of U
AUF_MOVES: tuple[tuple[Move, ...], ...] = tuple(tuple(parse(s)) for s in ("", "U", "U2", "U'"))
_U_CUBES = tuple(CubieCube().apply(m) for m in AUF_MOVES)


# --- signatures -----------------------------------------------------------------------------

_KEYS: dict[Family, tuple[str, ...]] = {
    Family.OLL: ("co", "eo"),
    Family.OCLL: ("co",),
    Family.EO: ("eo",),
    Family.PLL: ("cp", "ep"),
    Family.CP: ("cp",),
    Family.EP: ("cp", "ep"),
}


def signature(family: Family, state: CubieCube) -> str:
    """The family's view of the last layer of ``state`` (module docstring)."""
    parts = []
    for key in _KEYS[family]:
        values: tuple[int, ...] = getattr(state, key)
        parts.append(f"{key}=" + "".join(str(v) for v in values[:4]))
    return " ".join(parts)


def case_state(alg: str) -> CubieCube:
    """The state ``alg`` solves: the solved cube with the inverse of ``alg`` applied."""
    return CubieCube().apply(outer_moves(alg)).inverse()


_OUTER_CACHE: dict[str, tuple[Move, ...]] = {}


def outer_moves(alg: str) -> tuple[Move, ...]:
    """``alg`` as outer turns with fixed centres (cached)."""
    moves = _OUTER_CACHE.get(alg)
    if moves is None:
        moves = tuple(to_outer(parse(alg)))
        _OUTER_CACHE[alg] = moves
    return moves


# --- recognition ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Option:
    """One way to solve a recognised case: ``U^pre``, the algorithm, ``U^post`` (``moves`` are
    all three as outer turns)."""

    case: Case | None  # None: nothing to do but AUF (the skip)
    algorithm: str
    pre: int
    post: int
    moves: tuple[Move, ...]

    @classmethod
    def make(cls, case: Case | None, algorithm: str, pre: int, post: int) -> Option:
        alg = outer_moves(algorithm) if algorithm else ()
        return cls(case, algorithm, pre, post, AUF_MOVES[pre] + alg + AUF_MOVES[post])

    @property
    def htm(self) -> int:
        return count(self.moves, Metric.HTM)


class Recogniser:
    """All options of a family for every last-layer state it handles.

    ``post_auf``: whether the options end with an AUF (PLL and LBL's edge step solve the cube;
    OLL, LL cross and corner orientation only need their pieces oriented). For the LBL corner
    step the goal is the corners in the right order, up to a turn of U.
    """

    def __init__(self, family: Family, cases: Sequence[Case], post_auf: bool) -> None:
        self.family = family
        self.cases = tuple(cases)
        self.post_auf = post_auf
        self._options: dict[str, list[Option]] = {}
        posts = range(4) if post_auf else (0,)
        # the solved case (nothing but AUF)
        entries: list[tuple[Case | None, str]] = [(None, "")]
        entries += [(case, alg) for case in self.cases for alg in case.algorithms]
        for case, alg in entries:
            base = CubieCube().apply(outer_moves(alg)) if alg else CubieCube()
            for pre in range(4):
                for post in posts:
                    if case is None and (pre, post) != (0, 0) and not post_auf:
                        continue
                    x = _U_CUBES[pre] * base * _U_CUBES[post]
                    for goal_turn in self._goal_turns():
                        state = (x * _U_CUBES[goal_turn]).inverse()
                        key = signature(family, state)
                        self._options.setdefault(key, []).append(Option.make(case, alg, pre, post))
        for options in self._options.values():
            options.sort(key=lambda o: (o.htm, o.pre != 0, o.post != 0))
            unique: list[Option] = []
            seen: set[tuple[Move, ...]] = set()
            for option in options:
                if option.moves not in seen:
                    seen.add(option.moves)
                    unique.append(option)
            options[:] = unique

    def _goal_turns(self) -> Iterable[int]:
        # CP: corners solved up to a turn of U (the edge step does the final AUF)
        return range(4) if self.family is Family.CP else (0,)

    def keys(self) -> list[str]:
        """Every signature this family recognises."""
        return list(self._options)

    def by_signature(self, key: str) -> list[Option]:
        """The options for one signature (as :meth:`options` gives them for a state)."""
        return list(self._options.get(key, ()))

    def options(self, state: CubieCube) -> list[Option]:
        """Every way to do this step from ``state``, shortest first (empty if the state is not
        one this family handles, e.g. OLL before F2L is done)."""
        return list(self._options.get(signature(self.family, state), ()))


_RECOGNISERS: dict[Family, Recogniser] = {}
_LOCK = threading.Lock()
_FAMILY_CASES: dict[Family, tuple[tuple[Case, ...], bool]] = {
    Family.OLL: (OLL_CASES, False),
    Family.PLL: (PLL_CASES, True),
    Family.EO: (EO_CASES, False),
    Family.OCLL: (OCLL_CASES, False),
    Family.CP: (CP_CASES, False),
    Family.EP: (EP_CASES, True),
}


def recogniser(family: Family) -> Recogniser:
    """The family's recogniser, built on first use."""
    with _LOCK:
        rec = _RECOGNISERS.get(family)
        if rec is None:
            cases, post = _FAMILY_CASES[family]
            rec = Recogniser(family, cases, post)
            _RECOGNISERS[family] = rec
        return rec
