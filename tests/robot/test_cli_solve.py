"""``cuberobot solve``: single states, scrambles, batches, errors and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from robot.cli import main
from solver.cube.facelets import Cube
from solver.cube.notation import parse

SOLVED = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
SCRAMBLE = "R U2 F' L D B2 R' U F2 D' L2 B"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _solves(facelets: str, moves: str) -> bool:
    return Cube.from_facelets(facelets).apply(parse(moves)).is_solved()


def test_solve_facelets(capsys: pytest.CaptureFixture[str]) -> None:
    state = Cube.solved(3).apply(SCRAMBLE).to_facelets()
    code, out, _ = run(capsys, "solve", state)
    assert code == 0
    assert _solves(state, out.strip())
    assert len(parse(out.strip())) <= 20


def test_solve_scramble_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "solve", "--scramble", SCRAMBLE, "--budget", "0.05", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert {"moves", "htm", "qtm", "robot_time_s", "engine", "stats", "solve_ms"} <= set(data)
    assert data["engine"] == "twophase"
    assert _solves(Cube.solved(3).apply(SCRAMBLE).to_facelets(), data["moves"])
    assert data["htm"] <= 12


def test_solved_state_prints_empty_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "solve", SOLVED)
    assert (code, out) == (0, "\n")


def test_faces_and_robot_time(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "solve",
        "--scramble",
        SCRAMBLE,
        "--faces",
        "URFLB",
        "--robot-time",
        "--budget",
        "0.05",
        "--max-length",
        "24",
    )
    assert code == 0
    assert "D" not in out
    assert _solves(Cube.solved(3).apply(SCRAMBLE).to_facelets(), out.strip())


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        pytest.param(["solve", SOLVED[:-1] + "F"], 1, "impossible cube", id="impossible"),
        pytest.param(["solve", SOLVED[:20]], 2, "54", id="too-short"),
        pytest.param(["solve", "--scramble", "R Q"], 2, "not a move", id="bad-move"),
        pytest.param(
            ["solve", "--scramble", SCRAMBLE, "--max-length", "3"],
            1,
            "at most 3",
            id="too-short-limit",
        ),
        pytest.param(
            ["solve", "--scramble", "R", "--engine", "nope"], 2, "unknown engine", id="engine"
        ),
    ],
)
def test_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str
) -> None:
    got, _, err = run(capsys, *argv)
    assert got == code
    assert message in err


def test_an_argument_meant_as_a_file_or_a_scramble_is_named_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # FACELETS that are no facelet string but a path or moves: exit 2 with the option meant
    monkeypatch.chdir(tmp_path)
    (tmp_path / "states.txt").write_text(SOLVED + "\n")
    cases = [
        ("states.txt", "give it as --batch states.txt"),
        (str(tmp_path / "missing.txt"), f"give it as --batch {tmp_path / 'missing.txt'}"),
        (str(tmp_path), "is a directory; --batch FILE"),
        ("R U F'", 'give them as --scramble "R U F\'"'),
        ("R2", "give them as --scramble 'R2'"),
    ]
    for text, hint in cases:
        code, out, err = run(capsys, "solve", text)
        assert (code, out) == (2, ""), text
        assert "not a facelet string" in err and hint in err, err
    # letters of URFDLB alone are a facelet string of the wrong length, not moves
    for text in ("UUU", SOLVED[:-1], "hello world"):
        code, _, err = run(capsys, "solve", text)
        assert code == 2 and "stickers is not" in err and "--" not in err, err
    # too long to be a file name: no OSError from looking it up; a long scramble shortened
    code, _, err = run(capsys, "solve", "q" * 5000)
    assert code == 2 and "stickers is not" in err and "--" not in err
    code, _, err = run(capsys, "solve", "R U " * 3000)
    assert code == 2 and "--scramble 'R U R U" in err and "…'" in err and len(err) < 400, err


def test_batch(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    states = [Cube.solved(3).apply(s).to_facelets() for s in (SCRAMBLE, "R U R' U'", "F2")]
    lines = ["# a comment", states[0], "", states[1], SOLVED[:-1] + "F", states[2]]
    path = tmp_path / "states.txt"
    path.write_text("\n".join(lines) + "\n")
    code, out, _ = run(capsys, "solve", "--batch", str(path))
    assert code == 1  # one state was impossible
    rows = out.rstrip("\n").split("\n")
    assert len(rows) == 4
    for row, state in zip([rows[0], rows[1], rows[3]], states, strict=True):
        moves, ms = row.split("\t")
        assert _solves(state, moves)
        assert float(ms) >= 0
    assert rows[2].startswith("ERROR: impossible cube")


def test_batch_from_stdin_in_a_fresh_process(tmp_path: Path) -> None:
    state = Cube.solved(3).apply(SCRAMBLE).to_facelets()
    done = subprocess.run(
        [sys.executable, "-m", "robot.cli", "solve", "--batch", "-"],
        input=f"{state}\n{state}\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = done.stdout.strip().split("\n")
    assert len(rows) == 2
    assert all(_solves(state, r.split("\t")[0]) for r in rows)


def test_batch_of_mixed_sizes_solves_each_line_with_the_engine_for_its_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    states = [Cube.solved(n).apply("R U F'").to_facelets() for n in (3, 2, 4)]
    path = tmp_path / "states.txt"
    path.write_text("\n".join(states) + "\n")
    code, out, err = run(capsys, "solve", "--batch", str(path), "--format", "json")
    assert code == 0, err
    rows = [json.loads(row) for row in out.strip().split("\n")]
    assert [row["engine"] for row in rows] == ["twophase", "pocket", "nxn"]
    assert all(_solves(s, row["moves"]) for s, row in zip(states, rows, strict=True))


def test_batch_with_a_named_big_cube_engine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = Cube.solved(4).apply("Rw U").to_facelets()
    path = tmp_path / "states.txt"
    path.write_text(f"{state}\n{SOLVED}\n")
    code, out, _ = run(capsys, "solve", "--engine", "nxn", "--batch", str(path))
    assert code == 1  # the 3x3 line, not the whole batch
    rows = out.rstrip("\n").split("\n")
    assert _solves(state, rows[0].split("\t")[0])
    assert rows[1].startswith("ERROR: engine 'nxn' does not solve 3x3x3 cubes (line 2)\t")


def test_batch_errors_name_their_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "states.txt"
    path.write_text(f"# states\n{SOLVED}\n\nnot a cube\n")
    code, out, _ = run(capsys, "solve", "--batch", str(path))
    assert code == 1
    error = out.split("\n")[1]
    assert error.startswith("ERROR: 10 stickers") and "(line 4)\t" in error
    code, out, _ = run(capsys, "solve", "--batch", str(path), "--format", "json")
    failed = json.loads(out.strip().split("\n")[1])
    assert failed["line"] == 4 and failed["error"]["type"] == "FaceletFormatError"


def test_batch_file_with_a_byte_order_mark(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "states.txt"
    path.write_bytes(b"\xef\xbb\xbf" + SOLVED.encode() + b"\r\n" + SOLVED.encode() + b"\r\n")
    code, out, _ = run(capsys, "solve", "--batch", str(path))
    assert code == 0
    assert [row.split("\t")[0] for row in out.rstrip("\n").split("\n")] == ["", ""]


@pytest.mark.parametrize(
    "option",
    [
        pytest.param(["--budget", "inf"], id="budget-inf"),
        pytest.param(["--budget", "1e400"], id="budget-overflow"),
        pytest.param(["--cost", "inf,0.1,0,0"], id="cost-inf"),
    ],
)
def test_infinite_seconds_are_a_usage_error(
    capsys: pytest.CaptureFixture[str], option: list[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["solve", "--scramble", "R", *option])
    assert info.value.code == 2
    assert "finite" in capsys.readouterr().err
