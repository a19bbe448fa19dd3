"""``cuberobot solve`` and ``scramble`` for every size: the contract forms with ``--size``."""

from __future__ import annotations

import json
import subprocess

import pytest

from solver.cube.facelets import Cube
from solver.cube.notation import parse
from tests.conftest import CUBEROBOT


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CUBEROBOT, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("n", [2, 4, 5, 6])
def test_solve_a_random_state_of_any_size(n: int) -> None:
    facelets = cli("scramble", "--size", str(n), "--random-state", "--seed", "4", "--format",
                   "facelets")  # fmt: skip
    assert facelets.returncode == 0, facelets.stderr
    state = facelets.stdout.strip()
    assert len(state) == 6 * n * n
    solved = cli("solve", state, "--format", "json")
    assert solved.returncode == 0, solved.stderr
    body = json.loads(solved.stdout)
    assert body["engine"] == ("pocket" if n == 2 else "nxn")
    moves = parse(body["moves"])
    assert Cube.from_facelets(state).apply(moves).is_solved()
    if n >= 4:
        assert {s["name"] for s in body["stages"]} >= {"centres", "edges", "3x3"}


def test_solve_a_scramble_of_a_given_size() -> None:
    done = cli("solve", "--scramble", "R U Rw 2R' F2", "--size", "4")
    assert done.returncode == 0, done.stderr
    cube = Cube.solved(4).apply("R U Rw 2R' F2")
    assert cube.apply(parse(done.stdout)).is_solved()


def test_random_state_moves_make_the_state() -> None:
    moves = cli("scramble", "--size", "4", "--random-state", "--seed", "9")
    state = cli("scramble", "--size", "4", "--random-state", "--seed", "9", "--format", "facelets")
    assert moves.returncode == state.returncode == 0
    made = Cube.solved(4).apply(parse(moves.stdout))
    assert made == Cube.from_facelets(state.stdout.strip())


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        pytest.param(["solve", "UUUU", "--size", "4"], 2, "96 letters", id="short"),
        pytest.param(["solve", "--scramble", "R", "--size", "4", "--engine", "twophase"], 2,
                     "engine 'twophase' does not solve 4x4x4 cubes", id="engine-size"),
        pytest.param(["solve", "--scramble", "R", "--size", "1"], 2, "between 2", id="size-1"),
    ],
)  # fmt: skip
def test_errors(args: list[str], code: int, words: str) -> None:
    done = cli(*args)
    assert done.returncode == code, (done.returncode, done.stderr)
    assert words in done.stderr
