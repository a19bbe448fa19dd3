"""The solver's front door (:func:`solver.api.solve`): a state or a common option of the wrong
type or out of range is a typed error naming it, before any engine runs, for every engine."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from solver.api import AUTO, engine_for_size, solve, to_cube
from solver.cube.facelets import Cube
from solver.errors import FaceletFormatError, OptionError, UnsupportedError

CUBES = {n: Cube.solved(n).apply("R U F") for n in (2, 3, 4)}


@pytest.mark.parametrize(
    "state",
    [
        pytest.param(None, id="none"),
        pytest.param(5, id="int"),
        pytest.param(b"UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB", id="bytes"),
        pytest.param(["U"] * 54, id="list"),
        pytest.param(np.zeros(54), id="array"),
    ],
)
def test_a_state_of_another_type_is_a_facelet_format_error(state: Any) -> None:
    with pytest.raises(FaceletFormatError, match=f"not {type(state).__name__}"):
        to_cube(state)
    with pytest.raises(FaceletFormatError):
        solve(state)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        pytest.param("max_length", -1, id="length-negative"),
        pytest.param("max_length", "20", id="length-text"),
        pytest.param("max_length", 1.5, id="length-fraction"),
        pytest.param("max_length", True, id="length-bool"),
        pytest.param("budget_s", -1, id="budget-negative"),
        pytest.param("budget_s", float("nan"), id="budget-nan"),
        pytest.param("budget_s", float("inf"), id="budget-inf"),
        pytest.param("budget_s", "1", id="budget-text"),
        pytest.param("budget_s", None, id="budget-none"),
        pytest.param("faces", ["X"], id="faces-unknown-letter"),
        pytest.param("faces", [1, 2], id="faces-numbers"),
        pytest.param("faces", 5, id="faces-not-a-collection"),
        pytest.param("faces", [], id="faces-empty"),
        pytest.param("cost_model", "fast", id="cost-model-text"),
    ],
)
@pytest.mark.parametrize(
    ("n", "engine"),
    [(2, AUTO), (3, AUTO), (3, "lbl"), (3, "cfop"), (3, "trace"), (4, AUTO)],
)
def test_a_bad_common_option_is_an_option_error_naming_it(
    n: int, engine: str, option: str, value: Any
) -> None:
    with pytest.raises(OptionError) as info:
        solve(CUBES[n], engine, **{option: value})
    assert info.value.option == option
    assert option in str(info.value)


def test_faces_are_faces_or_letters_in_any_case() -> None:
    solution = solve(CUBES[3], faces="urflb")
    assert {m.face.name for m in solution.moves} <= set("URFLB")


@pytest.mark.parametrize("engine", ["twophase", "lbl", "cfop", "trace"])
@pytest.mark.parametrize("n", [2, 4])
def test_a_3x3_engine_refuses_other_sizes_by_name(engine: str, n: int) -> None:
    with pytest.raises(UnsupportedError, match=f"engine '{engine}' does not solve {n}x{n}x{n}"):
        engine_for_size(n, engine)
    with pytest.raises(UnsupportedError, match=f"engine '{engine}' does not solve"):
        solve(CUBES[n], engine)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("cache_dir", 5),
        ("progress", 5),
        ("stages_only", "x"),
        ("centre_tries", 0),
        ("centre_tries", 1.5),
        ("centre_tries", True),
        ("centres", 3),
    ],
)
def test_a_big_cube_option_of_the_wrong_type_is_named(option: str, value: Any) -> None:
    """The nxn engine's own options: cache_dir=5 failed deep in the table code with a
    TypeError; stages_only="x" and progress=5 were taken silently."""
    with pytest.raises(OptionError, match=option) as caught:
        solve(CUBES[4], **{option: value})
    assert caught.value.option == option


def test_a_big_cube_with_a_face_not_allowed_is_refused_at_once() -> None:
    """faces went to the reduced 3x3 only: the centre and edge stages turned D anyway, and the
    3x3 without D searched 30 s for 20 moves before failing. The daemon's pipeline catches
    the refusal and lets the planner replace the outer D turns."""
    import time

    from solver.errors import NoSolutionError

    start = time.perf_counter()
    with pytest.raises(NoSolutionError, match="cannot avoid D: allow all six faces"):
        solve(CUBES[4], faces="URFLB")
    assert time.perf_counter() - start < 5
    assert solve(CUBES[4], faces="URFDLB").moves  # all six: solved as before
