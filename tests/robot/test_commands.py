"""Command payloads: validated strictly, with replies that name the field at fault."""

from __future__ import annotations

import pytest

from robot.commands import (
    NewJobCommand,
    ResumeCommand,
    SolveCommand,
    command_id_of,
    error_reply,
    ok_reply,
    parse_command,
)
from robot.daemon.events import ErrorCode
from robot.errors import CommandError

SOLVED = "U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9


@pytest.mark.parametrize(
    ("verb", "payload", "code", "words"),
    [
        pytest.param("start", b"{", "malformed", "not JSON", id="broken-json"),
        pytest.param("start", b"[1, 2]", "malformed", "JSON object", id="array"),
        pytest.param("start", b'"start"', "malformed", "JSON object", id="string"),
        pytest.param("start", b'{"colour": 1}', "malformed", "colour: unknown field", id="extra"),
        pytest.param("start", b'{"id": 5}', "malformed", "id:", id="id-not-string"),
        pytest.param("start", b'{"id": ""}', "malformed", "id:", id="id-empty"),
        pytest.param("start", b'{"verb": "solve"}', "malformed", "topic", id="verb-in-body"),
        pytest.param("solve", b"{}", "malformed", "facelets: Field required", id="no-facelets"),
        pytest.param("solve", b'{"facelets": "UUQ"}', "malformed", "facelets", id="short"),
        pytest.param(
            "solve", ('{"facelets": "' + "X" * 54 + '"}').encode(), "malformed", "URFDLB", id="x"
        ),
        pytest.param("resume", b'{"rescan": "maybe"}', "malformed", "rescan", id="rescan-type"),
        pytest.param("scan", b'{"start_pose": 1}', "malformed", "start_pose", id="pose-type"),
        pytest.param("resume", b'{"start_pose": true}', "malformed", "unknown field", id="pose-r"),
        pytest.param("home", b'{"start_pose": true}', "malformed", "unknown field", id="pose-h"),
        pytest.param("launch", b"{}", "unknown_command", "the commands are", id="unknown-verb"),
        pytest.param("start", b"\xff\xfe", "malformed", "not UTF-8", id="not-utf8"),
    ],
)
def test_malformed(verb: str, payload: bytes, code: str, words: str) -> None:
    with pytest.raises(CommandError) as info:
        parse_command(verb, payload)
    assert info.value.code == code
    assert words in str(info.value)


def test_valid_commands() -> None:
    assert parse_command("start", b"").verb == "start"
    assert parse_command("start", b'{"id": "a1", "source": "homeassistant"}').id == "a1"
    solve = parse_command("solve", {"facelets": SOLVED})
    assert isinstance(solve, SolveCommand) and solve.facelets == SOLVED
    resume = parse_command("resume", '{"rescan": true}')
    assert isinstance(resume, ResumeCommand) and resume.rescan
    for verb, extra in (("start", ""), ("scan", ""), ("solve", f', "facelets": "{SOLVED}"')):
        posed = parse_command(verb, f'{{"start_pose": true{extra}}}')
        assert isinstance(posed, NewJobCommand) and posed.start_pose
        plain = parse_command(verb, f'{{"id": "1"{extra}}}')
        assert isinstance(plain, NewJobCommand) and not plain.start_pose


def test_replies() -> None:
    command = parse_command("start", b'{"id": "7"}')
    assert ok_reply(command, job_id="j") == {
        "ok": True,
        "id": "7",
        "verb": "start",
        "source": None,
        "job_id": "j",
    }
    err = error_reply("start", "7", ErrorCode.BUSY, "wait")
    assert err["ok"] is False and err["error"] == {"code": "busy", "message": "wait"}
    # who asked is in every reply
    asked = parse_command("start", b'{"id": "8", "source": "homeassistant"}')
    assert ok_reply(asked)["source"] == "homeassistant"
    assert error_reply("start", "8", ErrorCode.BUSY, "wait", "web")["source"] == "web"


def test_a_refusal_echoes_a_long_unknown_verb_cut() -> None:
    """An unknown verb may be a topic level of some 65,000 characters: the reply (published on
    every verb's ``reply`` topic too) carries its first 64, not all of it."""
    long_verb = "v" * 65_000
    with pytest.raises(CommandError) as refused:
        parse_command(long_verb, b"{}")
    reply = error_reply(long_verb, None, refused.value.code, str(refused.value))
    assert reply["verb"] == "v" * 64 + "…"
    assert len(str(reply)) < 500
    assert error_reply("x" * 64, None, ErrorCode.UNKNOWN_COMMAND, "")["verb"] == "x" * 64


def test_command_id_of_malformed_payloads() -> None:
    assert command_id_of(b'{"id": "x", "bad": 1}') == "x"
    assert command_id_of(b"garbage") is None
    assert command_id_of(b'{"id": 3}') is None
