"""Every benchmark runs as the docs say, ``python bench/<name>.py``: a script's folder comes
first on ``sys.path`` there, so a bench file named like a package of the project
(bench/vision.py) must not shadow it (four benchmarks, bench/time_to_solved.py among them,
failed at import once robot.config read files through vision.imagefile)."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchload import load_bench

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(path.name for path in BENCH.glob("*.py") if not path.name.startswith("_"))


def test_every_benchmark_is_seen() -> None:
    assert {"time_to_solved.py", "vision.py", "chaos.py", "solve_nxn.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmark_starts_as_a_script(script: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"],
        cwd=tmp_path,  # not the checkout: the project must come from the script's own path
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("modes", ["100ms", "0.1,fast", "-1", "nan", ","])
def test_time_to_solved_refuses_a_bad_mode_by_name(modes: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "time_to_solved.py"), "--modes", modes, "--states", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--modes" in done.stderr
    assert "Traceback" not in done.stderr


#: (script, arguments, the option the error must name): bad values of every kind of option,
#: each refused by argparse (exit 2) before the benchmark starts
BAD_VALUES = [
    ("anytime_kinds.py", ["--states", "0"], "--states"),
    ("anytime_kinds.py", ["--budgets", "abc"], "--budgets"),
    ("anytime_kinds.py", ["--head-starts", "nan"], "--head-starts"),
    ("anytime_kinds.py", ["--window-cap", "-1"], "--window-cap"),
    ("anytime_kinds.py", ["--length-slack", "-1"], "--length-slack"),
    ("anytime_kinds.py", ["--only", "six-face"], "--only"),
    ("anytime_remainder.py", ["--states", "0"], "--states"),
    ("anytime_remainder.py", ["--states", "-1"], "--states"),
    ("anytime_remainder.py", ["--budgets", "abc"], "--budgets"),
    ("anytime_remainder.py", ["--budgets", "0.05,,0.3"], "--budgets"),
    ("anytime_remainder.py", ["--after", "x"], "--after"),
    ("anytime_remainder.py", ["--after", "0"], "--after"),
    ("anytime_remainder.py", ["--head-start", "nan"], "--head-start"),
    ("anytime_remainder.py", ["--head-threads", "0"], "--head-threads"),
    ("chaos.py", ["--trials", "0"], "--trials"),
    ("chaos.py", ["--seed", "-1"], "--seed"),
    ("chaos.py", ["--speed", "0"], "--speed"),
    ("first_group.py", ["--states", "0"], "--states"),
    ("first_group.py", ["--heads", "-1"], "--heads"),
    ("first_group.py", ["--heads", "0.005,0.005"], "--heads"),
    ("first_group.py", ["--head-directions", "6,4"], "--head-directions"),
    ("first_group.py", ["--remainder", "-0.1"], "--remainder"),
    ("first_group.py", ["--every-group", "-1"], "--every-group"),
    ("kinds_scan.py", ["--sizes", "0"], "--sizes"),
    ("kinds_scan.py", ["--sizes", "3,x"], "--sizes"),
    ("kinds_scan.py", ["--scans", "0"], "--scans"),
    ("kinds_scan.py", ["--severity", "2"], "--severity"),
    ("kinds_scan.py", ["--width", "10"], "--width"),
    ("link.py", ["--runs", "0"], "--runs"),
    ("link.py", ["--overhead-runs", "0"], "--overhead-runs"),
    ("link.py", ["--baud", "0"], "--baud"),
    ("link.py", ["--baud", "9600x"], "--baud"),
    ("methods.py", ["--states", "0"], "--states"),
    ("methods.py", ["--states", "x"], "--states"),
    ("plan_nxn.py", ["--sizes", "3"], "--sizes"),
    ("plan_nxn.py", ["--states", "0"], "--states"),
    ("plan_nxn.py", ["--depths", "0"], "--depths"),
    ("plan_nxn.py", ["--depths", "1,17"], "--depths"),
    ("robot_bounds.py", ["--states", "0"], "--states"),
    ("robot_bounds.py", ["--scrambles", "0"], "--scrambles"),
    ("robot_bounds.py", ["--depths", "0"], "--depths"),
    ("robot_bounds.py", ["--samples", "0"], "--samples"),
    ("robot_bounds.py", ["--long-s", "-1"], "--long-s"),
    ("robot_kinds.py", ["--states", "0"], "--states"),
    ("robot_kinds.py", ["--budgets", "abc"], "--budgets"),
    ("robot_kinds.py", ["--budgets", "1e9"], "--budgets"),
    ("robot_kinds.py", ["--modes", "x"], "--modes"),
    ("robot_kinds.py", ["--modes", ","], "--modes"),
    ("robot_vision.py", ["--jobs", "0"], "--jobs"),
    ("robot_vision.py", ["--jobs", "x"], "--jobs"),
    ("solve3x3.py", ["--states", "0"], "--states"),
    ("solve3x3.py", ["--only", "no such row"], "--only"),
    ("solve_nxn.py", ["--sizes", "0"], "--sizes"),
    ("solve_nxn.py", ["--sizes", "4,1"], "--sizes"),
    ("solve_nxn.py", ["--sizes", "129"], "--sizes"),
    ("solve_nxn.py", ["--count", "0"], "--count"),
    ("tables.py", ["--workers", "0"], "--workers"),
    ("tables.py", ["--workers", "1,x"], "--workers"),
    ("time_to_solved.py", ["--states", "0"], "--states"),
    ("time_to_solved.py", ["--head-start", "2"], "--head-start"),
    ("time_to_solved.py", ["--first-step", "-1"], "--first-step"),
    ("time_to_solved.py", ["--profile", "no-such-robot"], "--profile"),
    ("twophase_kernel.py", ["--states", "-1"], "--states"),
    ("twophase_kernel.py", ["--mode", "first:x"], "--mode"),
    ("twophase_kernel.py", ["--mode", "exhaustive:0"], "--mode"),
    ("twophase_kernel.py", ["--mode", "budget:abc"], "--mode"),
    ("twophase_kernel.py", ["--mode", "bad"], "--mode"),
    ("vision.py", ["--sizes", "0"], "--sizes"),
    ("vision.py", ["--sizes", "3", "10"], "--sizes"),
    ("vision.py", ["--cubes", "-1"], "--cubes"),
    ("vision.py", ["--seed", "-1"], "--seed"),
    ("vision.py", ["--extra-seeds", "1", "-2"], "--extra-seeds"),
    ("vision_adversarial.py", ["--seeds", "-1"], "--seeds"),
    ("vision_adversarial.py", ["--photo-seeds", "x"], "--photo-seeds"),
    ("vision_adversarial.py", ["--first-seed", "-1"], "--first-seed"),
    ("vision_adversarial.py", ["--data", "no-such-folder"], "--data"),
]


@pytest.mark.parametrize(
    ("script", "argv", "option"), BAD_VALUES, ids=[f"{s} {' '.join(a)}" for s, a, _ in BAD_VALUES]
)
def test_a_bad_value_is_refused_by_its_option(
    script: str, argv: list[str], option: str, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,  # the value is refused while the arguments are parsed: seconds at most
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert option in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]


def test_every_benchmark_with_options_is_checked() -> None:
    checked = {script for script, _, _ in BAD_VALUES}
    assert checked == set(SCRIPTS) - {"firmware.py"}  # firmware.py takes --json alone


def test_the_argument_types_check_range_and_form() -> None:
    args = load_bench("_args")
    assert args.count()("3") == 3
    assert args.count(0, 5)("0") == 0
    assert args.number(0.0, 1.0)("0.25") == 0.25
    assert args.seconds()("1e-3") == 0.001
    assert args.int_list(2, 7)("2, 3,7") == [2, 3, 7]
    assert args.int_list(2, 7, skip_blank=True)("3,,4,") == [3, 4]
    assert args.int_list(2, 7, skip_blank=True, allow_empty=True)("") == []
    assert args.int_list(1, choices=(1, 2, 3, 6))("6,3") == [6, 3]
    assert args.float_list(0.0, 1.0)("0.5,0.5") == [0.5, 0.5]
    assert args.seconds_list()("0.05,0.15") == [0.05, 0.15]
    assert args.name_list(("a", "b"), skip_blank=True)("b,a,") == ["b", "a"]
    refused = [
        (args.count(), "0", "from 1 up, got 0"),
        (args.count(), "x", "got 'x'"),
        (args.count(), "2.5", "whole number"),
        (args.count(1, 6), "7", "from 1 to 6, got 7"),
        (args.number(0.0, 1.0), "nan", "from 0 to 1, got 'nan'"),
        (args.seconds(), "inf", "from 0 to 60 s, got 'inf'"),
        (args.seconds(), "-0.5", "got '-0.5'"),
        (args.int_list(2, 7), "", "comma-separated list"),
        (args.int_list(2, 7), "3,,4", "item 2 of '3,,4' is empty"),
        (args.int_list(2, 7), "3,8", "item 2 of '3,8'"),
        (args.int_list(2, 7, skip_blank=True), ",", "comma-separated list"),
        (args.int_list(1, choices=(1, 2, 3, 6)), "4", "one of 1, 2, 3, 6, got 4"),
        (args.float_list(0.0, 1.0, unique=True), "0.5,5e-1", "item 2 of '0.5,5e-1' repeats"),
        (args.seconds_list(), "0.1,abc", "item 2 of '0.1,abc'"),
        (args.name_list(("a", "b")), "a,c", "one of a, b, got 'c'"),
    ]
    for parse, text, message in refused:
        with pytest.raises(argparse.ArgumentTypeError, match=r"expected|repeats") as error:
            parse(text)
        assert message in str(error.value), (text, str(error.value))


def test_loading_a_benchmark_keeps_the_vision_package_first() -> None:
    load_bench("_args")
    assert str(BENCH) in sys.path
    spec = importlib.util.find_spec("vision")
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).parent.name == "vision"  # the package, not bench/vision.py


def test_vision_refuses_real_data_with_one_manifest_of_two(tmp_path: Path) -> None:
    """The real rows read the labelled scans and the photos: a --data folder with only the
    scans' manifest is refused by name before any work (it crashed in the photo rows)."""
    (tmp_path / "rgb-scans").mkdir()
    (tmp_path / "rgb-scans" / "MANIFEST.json").write_text("{}", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(BENCH / "vision.py"), "--data", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "photos" in done.stderr and "--data" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--first-step", "0.004", "--head-start", "0.005"], "first_step_s"),
        (["--head-start", "2"], "head_start_s"),
    ],
)
def test_time_to_solved_holds_its_settings_to_the_profiles_rules(
    options: list[str], named: str, tmp_path: Path
) -> None:
    """The anytime settings are checked as the profile's [solver] table is (ranges, and
    first_step_s above head_start_s), before any job runs."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "time_to_solved.py"), *options, "--states", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert named in done.stderr
    assert "Traceback" not in done.stderr
