"""Validation: can this cube exist? Every fault is reported, each naming its place.

Checks, in order (later checks run only when the earlier ones leave them meaningful):

1. colour counts: every colour exactly N² times;
2. centres: for odd N six different centre colours; for N ≥ 4 (N-2)² centre stickers of each
   colour;
3. corners: each slot shows a real piece (``corner at UFR shows white/green/green``), not a
   mirror image, no piece twice, none missing;
4. edges (3x3) / edge wings (N ≥ 4): real colour pairs, each the right number of times;
5. 3x3 (and 2x2 corners): corner twist sum, edge flip sum, permutation parity;
6. N ≥ 4: orbit by orbit (:mod:`solver.cube.validate_nxn`): centre orbits, wing handedness,
   middle edges of odd N.

Colours are named by the colour scheme; pieces are identified relative to the centres for odd N
and by the scheme for even N.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from solver.cube.cubie import (
    CORNER_FACES,
    EDGE_FACES,
    Corner,
    Edge,
    cubie_layout,
    permutation_parity,
)
from solver.cube.facelets import DEFAULT_SCHEME, ColourScheme, Cube
from solver.cube.geometry import Face
from solver.cube.validate_nxn import orbit_problems
from solver.errors import InvalidCubeError, Problem

__all__ = ["check", "validate"]


def validate(cube: Cube, scheme: ColourScheme = DEFAULT_SCHEME) -> list[Problem]:
    """Every problem found (empty list: the cube is legal)."""
    n = cube.n
    names = scheme.colours
    problems: list[Problem] = []
    flat = cube.flat.tolist()

    counts = Counter(flat)
    for colour in range(6):
        got = counts.get(colour, 0)
        if got != n * n:
            problems.append(
                Problem(
                    "colour_count",
                    names[colour],
                    f"{names[colour]} ({Face(colour).name}) appears {got} times, expected {n * n}",
                )
            )

    # Which face each colour belongs to.
    face_of = list(range(6))
    centres = cube.centre_colours()
    if centres is not None and n > 1:
        seen: dict[int, Face] = {}
        for face, colour in enumerate(centres):
            if colour in seen:
                problems.append(
                    Problem(
                        "centre_duplicate",
                        f"{seen[colour].name}/{Face(face).name}",
                        f"centres of {seen[colour].name} and {Face(face).name} are both "
                        f"{names[colour]}",
                    )
                )
            else:
                seen[colour] = Face(face)
        if len(seen) == 6:
            if tuple(centres) not in _legal_centre_arrangements():
                problems.append(
                    Problem(
                        "centre_arrangement",
                        "centres",
                        "the centres are not arranged as on a real cube ("
                        + ", ".join(f"{Face(f).name} {names[c]}" for f, c in enumerate(centres))
                        + "): opposite colours must be on opposite faces, in the scheme's order",
                    )
                )
                return problems
            for colour, face in seen.items():
                face_of[colour] = face
    if n >= 4:
        layout = cubie_layout(n)
        centre_counts = Counter(flat[i] for stickers in layout.centres for i in stickers)
        expected = (n - 2) ** 2
        for colour in range(6):
            got = centre_counts.get(colour, 0)
            if got != expected:
                problems.append(
                    Problem(
                        "centre_count",
                        names[colour],
                        f"{got} centre stickers are {names[colour]}, expected {expected}",
                    )
                )
    if n < 2:
        return problems

    def describe(colours: list[int]) -> str:
        return "/".join(names[c] for c in colours)

    layout = cubie_layout(n)
    # Corners ---------------------------------------------------------------------------------
    corner_at: dict[int, list[str]] = {}
    twist_sum = 0
    cp: list[int] = []
    for slot, stickers in enumerate(layout.corners):
        colours = [flat[s] for s in stickers]
        faces = [face_of[c] for c in colours]
        name = Corner(slot).name
        piece, twist, mirrored = _identify_corner(faces)
        if piece is None:
            code, text = "corner_invalid", f"corner at {name} shows {describe(colours)}"
            if mirrored:
                code = "corner_mirrored"
                text = (
                    f"corner at {name} shows {describe(colours)}: a mirror image of a real corner"
                )
            problems.append(Problem(code, name, text))
            continue
        corner_at.setdefault(piece, []).append(name)
        twist_sum += twist
        cp.append(piece)
    for piece, places in corner_at.items():
        if len(places) > 1:
            problems.append(
                Problem(
                    "corner_duplicate",
                    ",".join(places),
                    f"corner {_piece_colours(CORNER_FACES[piece], face_of, names)} appears "
                    f"{len(places)} times (at {', '.join(places)})",
                )
            )
    corners_ok = len(cp) == 8 and len(corner_at) == 8
    if len(cp) == 8 and len(corner_at) < 8:
        for piece in range(8):
            if piece not in corner_at:
                problems.append(
                    Problem(
                        "corner_missing",
                        Corner(piece).name,
                        f"corner {_piece_colours(CORNER_FACES[piece], face_of, names)} is missing",
                    )
                )

    # Edges -----------------------------------------------------------------------------------
    edges_ok = True
    flip_sum = 0
    ep: list[int] = []
    if n == 3:
        edge_at: dict[int, list[str]] = {}
        for slot, wings in enumerate(layout.edges):
            ((a, b),) = wings
            colours = [flat[a], flat[b]]
            faces = [face_of[c] for c in colours]
            name = Edge(slot).name
            found = _identify_edge(faces)
            if found is None:
                problems.append(
                    Problem("edge_invalid", name, f"edge at {name} shows {describe(colours)}")
                )
                edges_ok = False
                continue
            edge_at.setdefault(found[0], []).append(name)
            flip_sum += found[1]
            ep.append(found[0])
        for piece, places in edge_at.items():
            if len(places) > 1:
                edges_ok = False
                problems.append(
                    Problem(
                        "edge_duplicate",
                        ",".join(places),
                        f"edge {_piece_colours(EDGE_FACES[piece], face_of, names)} appears "
                        f"{len(places)} times (at {', '.join(places)})",
                    )
                )
        if edges_ok and len(edge_at) < 12:
            edges_ok = False
        if len(ep) == 12 and len(edge_at) < 12:
            for piece in range(12):
                if piece not in edge_at:
                    problems.append(
                        Problem(
                            "edge_missing",
                            Edge(piece).name,
                            f"edge {_piece_colours(EDGE_FACES[piece], face_of, names)} is missing",
                        )
                    )
    elif n >= 4:
        wing_pairs: Counter[frozenset[int]] = Counter()
        for slot, wings in enumerate(layout.edges):
            for k, (a, b) in enumerate(wings):
                colours = [flat[a], flat[b]]
                faces = [face_of[c] for c in colours]
                if _identify_edge(faces) is None:
                    problems.append(
                        Problem(
                            "wing_invalid",
                            f"{Edge(slot).name}#{k + 1}",
                            f"edge wing {k + 1} of {Edge(slot).name} shows {describe(colours)}",
                        )
                    )
                else:
                    wing_pairs[frozenset(faces)] += 1
        for piece, faces2 in enumerate(EDGE_FACES):
            got = wing_pairs.get(frozenset(faces2), 0)
            if got != n - 2:
                problems.append(
                    Problem(
                        "wing_count",
                        Edge(piece).name,
                        f"edge {_piece_colours(faces2, face_of, names)} has {got} wings, "
                        f"expected {n - 2}",
                    )
                )

    # Orientation and parity --------------------------------------------------------------------
    if corners_ok and twist_sum % 3:
        problems.append(
            Problem(
                "twist",
                "corners",
                f"a corner is twisted (orientation sum {twist_sum} is not a multiple of 3): "
                "take one corner out and turn it",
            )
        )
    if n == 3 and edges_ok and len(ep) == 12:
        if flip_sum % 2:
            problems.append(
                Problem(
                    "flip",
                    "edges",
                    f"an edge is flipped (orientation sum {flip_sum} is odd): flip one edge",
                )
            )
        if corners_ok and permutation_parity(cp) != permutation_parity(ep):
            problems.append(
                Problem(
                    "parity",
                    "pieces",
                    "two pieces are swapped (corner and edge permutation parities differ)",
                )
            )
    if n >= 4:
        codes = {p.code for p in problems}
        problems += orbit_problems(
            cube,
            face_of,
            names,
            centres=not codes & {"colour_count", "centre_count", "centre_duplicate"},
            wings=not codes & {"colour_count", "wing_invalid", "wing_count"},
        )
    return problems


def check(cube: Cube, scheme: ColourScheme = DEFAULT_SCHEME) -> Cube:
    """Return ``cube`` if legal, else raise :class:`InvalidCubeError` with every problem."""
    problems = validate(cube, scheme)
    if problems:
        raise InvalidCubeError(problems)
    return cube


@lru_cache(maxsize=1)
def _legal_centre_arrangements() -> frozenset[tuple[int, ...]]:
    solved = Cube.solved(3)
    found = set()
    for pre in ("", "x", "x2", "x'", "z", "z'"):
        for post in ("", "y", "y2", "y'"):
            centres = solved.apply(f"{pre} {post}").centre_colours()
            assert centres is not None
            found.add(tuple(centres))
    return frozenset(found)


def _identify_corner(faces: list[int]) -> tuple[int | None, int, bool]:
    """(piece, twist, mirrored) for three faces read in slot order."""
    as_set = set(faces)
    for piece, home in enumerate(CORNER_FACES):
        if set(home) != as_set:
            continue
        for twist in range(3):
            if [faces[(twist + k) % 3] for k in range(3)] == list(home):
                return piece, twist, False
        return None, 0, True
    return None, 0, False


def _identify_edge(faces: list[int]) -> tuple[int, int] | None:
    for piece, home in enumerate(EDGE_FACES):
        if faces == [home[0], home[1]]:
            return piece, 0
        if faces == [home[1], home[0]]:
            return piece, 1
    return None


def _piece_colours(faces: tuple[Face, ...], face_of: list[int], names: tuple[str, ...]) -> str:
    colour_of = {face: colour for colour, face in enumerate(face_of)}
    return "/".join(names[colour_of[f]] for f in faces)
