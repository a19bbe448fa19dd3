"""Engine options: parsed once into typed settings, unknown names and bad values refused with an
OptionError naming the option (an UnsupportedError, so the CLI's exit code 2 is unchanged)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from solver.api import solve
from solver.cube.facelets import SCHEMES, Cube
from solver.cube.geometry import Face
from solver.engines.cfop import CfopSettings
from solver.engines.common.settings import (
    check_int,
    check_known,
    check_one_of,
    check_positive,
)
from solver.engines.lbl import LblSettings
from solver.engines.trace import TraceSettings
from solver.engines.twophase.settings import DEFAULT_TIMEOUT_S, TwoPhaseSettings
from solver.errors import OptionError, UnsupportedError


def test_option_error_is_an_unsupported_value_error() -> None:
    err = OptionError("threads", "threads must be at least 1")
    assert isinstance(err, UnsupportedError) and isinstance(err, ValueError)
    assert err.option == "threads" and str(err) == "threads must be at least 1"


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        pytest.param(3, True, id="inside"),
        pytest.param(1, True, id="low-bound"),
        pytest.param(4, True, id="high-bound"),
        pytest.param(0, False, id="below"),
        pytest.param(5, False, id="above"),
        pytest.param(True, False, id="bool"),
        pytest.param(2.0, False, id="float"),
        pytest.param("2", False, id="text"),
    ],
)
def test_check_int(value: object, ok: bool) -> None:
    if ok:
        assert check_int("beam", value, 1, 4) == value
    else:
        with pytest.raises(OptionError, match=r"beam must be an integer from 1 to 4") as info:
            check_int("beam", value, 1, 4)
        assert info.value.option == "beam"


def test_check_int_without_upper_bound() -> None:
    assert check_int("threads", 1000, 1) == 1000
    with pytest.raises(OptionError, match="threads must be an integer of at least 1"):
        check_int("threads", 0, 1)


@pytest.mark.parametrize("value", [0, -1.5, math.nan, math.inf, "5", True, None])
def test_check_positive_refuses(value: object) -> None:
    with pytest.raises(OptionError, match="timeout_s must be a number above 0"):
        check_positive("timeout_s", value)


def test_check_positive_gives_a_float() -> None:
    assert check_positive("timeout_s", 2) == 2.0
    assert isinstance(check_positive("timeout_s", 2), float)


def test_check_one_of_and_check_known() -> None:
    assert check_one_of("robot_search", "moves", ("groups", "moves")) == "moves"
    with pytest.raises(OptionError, match="robot_search must be one of 'groups', 'moves'"):
        check_one_of("robot_search", "fast", ("groups", "moves"))
    with pytest.raises(OptionError, match=r"x engine: unknown option\(s\) a, b; it takes c") as e:
        check_known("x", {"b": 1, "a": 2, "c": 3}, ("c",))
    assert e.value.option == "a"


def test_twophase_settings_defaults_and_conversion(tmp_path: Path) -> None:
    default = TwoPhaseSettings.from_extra({})
    assert default == TwoPhaseSettings()
    assert default.timeout_s == DEFAULT_TIMEOUT_S and default.cache_dir is None
    parsed = TwoPhaseSettings.from_extra({"cache_dir": str(tmp_path), "timeout_s": 2})
    assert parsed.cache_dir == tmp_path and parsed.timeout_s == 2.0


@pytest.mark.parametrize(
    ("option", "value"),
    [
        pytest.param("timeout_s", 0, id="timeout-zero"),
        pytest.param("timeout_s", "5", id="timeout-text"),
        pytest.param("phase2_max", 31, id="phase2-too-long"),
        pytest.param("phase2_max", -1, id="phase2-negative"),
        pytest.param("directions", 4, id="directions-4"),
        pytest.param("directions", True, id="directions-bool"),
        pytest.param("robot_search", "fast", id="robot-search"),
        pytest.param("threads", 0, id="threads-zero"),
        pytest.param("cache_dir", 5, id="cache-dir-number"),
        pytest.param("progress", 3, id="progress-not-callable"),
        pytest.param("colour", "red", id="unknown"),
    ],
)
def test_twophase_settings_refuse(option: str, value: Any) -> None:
    with pytest.raises(OptionError, match=option) as info:
        TwoPhaseSettings.from_extra({option: value})
    assert info.value.option == option


def test_bad_option_is_refused_through_the_api() -> None:
    cube = Cube.solved(3).apply("R U")
    with pytest.raises(OptionError, match="threads") as info:
        solve(cube, "twophase", threads=0)
    assert info.value.option == "threads"
    with pytest.raises(OptionError, match="max_length"):
        solve(cube, "twophase", max_length=31)


def test_cfop_settings() -> None:
    parsed = CfopSettings.from_extra({"cross": "neutral", "f2l_beam": 4, "scheme": "white-red"})
    assert parsed.scheme is SCHEMES["white-red"] and parsed.f2l_beam == 4
    assert parsed.bottoms(Cube.solved(3)) == list(Face)
    assert CfopSettings.from_extra({}).bottoms(Cube.solved(3)) == [Face.D]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        pytest.param("cross_candidates", 65, id="candidates-above"),
        pytest.param("f2l_beam", 0, id="beam-zero"),
        pytest.param("f2l_beam", True, id="beam-bool"),
        pytest.param("cross", "sideways", id="cross"),
        pytest.param("scheme", "purple", id="scheme"),
        pytest.param("first_layer", "D", id="unknown"),
    ],
)
def test_cfop_settings_refuse(option: str, value: Any) -> None:
    with pytest.raises(OptionError, match=option) as info:
        CfopSettings.from_extra({option: value})
    assert info.value.option == option


def test_lbl_settings() -> None:
    assert LblSettings.from_extra({}).bottoms(Cube.solved(3)) == [Face.U]  # white is up
    assert LblSettings.from_extra({"first_layer": "D"}).bottoms(Cube.solved(3)) == [Face.D]
    for option, value in (("first_layer", "purple"), ("scheme", "none"), ("cross", "D")):
        with pytest.raises(OptionError, match=option) as info:
            LblSettings.from_extra({option: value})
        assert info.value.option == option


def test_trace_settings() -> None:
    assert TraceSettings.from_extra({"edge_buffer": "b", "corner_buffer": "A"})
    for option, value in (("edge_buffer", "c"), ("corner_buffer", "B"), ("colour", "red")):
        with pytest.raises(OptionError, match=option) as info:
            TraceSettings.from_extra({option: value})
        assert info.value.option == option
