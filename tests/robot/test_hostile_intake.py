"""Hostile MQTT/web command payloads found in the 2026-11-27 evening sweep: each one used to
hold the event loop for a second or end as an internal error; now it is refused as
``malformed`` at once. See docs/security.md."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import pytest

from robot.daemon.events import ErrorCode
from robot.mqtt import MqttBridge
from robot.safejson import PayloadError, parse_object
from tests.robot.daemon_fakes import running
from tests.robot.helpers import run, sim_config

#: far above what a linear scan of 16 kB takes (~2 ms), far below the quadratic one (1.1 s here)
PARSE_BOUND_S = 0.2


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param('"' + '\\"' * 8000, id="escaped-quotes"),
        pytest.param('{"id": "' + '\\"' * 8000, id="escaped-quotes-in-object"),
        pytest.param('["' + '\\\\"' * 5000, id="escaped-backslash-quote"),
    ],
)
def test_an_unterminated_string_of_escaped_quotes_is_refused_in_linear_time(payload: str) -> None:
    """Every ``"`` in ``"\\"\\"\\"…`` started a string literal the nesting check scanned to
    the end: 16 kB took 1.1 s of the event loop, so a flood of them delayed an e-stop."""
    started = time.perf_counter()
    with pytest.raises(PayloadError):
        parse_object(payload)
    assert time.perf_counter() - started < PARSE_BOUND_S


@pytest.mark.parametrize(
    ("payload", "depth_ok"),
    [
        pytest.param('{"a": "[[[[[[[[[[[[", "b": 1}', True, id="brackets-in-a-string"),
        pytest.param('{"a": "\\"[[[[[[[[[[[[\\""}', True, id="brackets-after-an-escaped-quote"),
        pytest.param('{"a": "\\\\", "b": [[[[[[[[[[]]]]]]]]]]}', False, id="escaped-backslash"),
        pytest.param("[" * 9 + "]" * 9, False, id="nine-deep"),
    ],
)
def test_the_nesting_check_counts_brackets_outside_strings_only(
    payload: str, depth_ok: bool
) -> None:
    if depth_ok:
        assert isinstance(parse_object(payload), dict)
    else:
        with pytest.raises(PayloadError, match="deeper than"):
            parse_object(payload)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b'{"id": "\\ud800"}', id="id"),
        pytest.param(b'{"source": "web\\udfff"}', id="source"),
        pytest.param(b'{"\\ud83d": 1}', id="key"),
    ],
)
def test_a_lone_surrogate_is_no_text(payload: bytes) -> None:
    """JSON's ``\\ud800`` escape decodes to a code point UTF-8 cannot encode (SQLite, a log
    file, a topic). The command models refused it, but as "unable to parse raw data as a
    unicode string", and the refusal echoed the unencodable id back; now the parser names it."""
    with pytest.raises(PayloadError, match="surrogate"):
        parse_object(payload)


def test_a_surrogate_pair_is_text() -> None:
    assert parse_object(b'{"source": "\\ud83e\\udd16"}') == {"source": "\U0001f916"}


@pytest.mark.usefixtures("solver_tables")
def test_a_command_id_with_a_lone_surrogate_is_malformed_not_internal(fast_tmp: Path) -> None:
    """The journaled verbs store the id in SQLite, which cannot encode a lone surrogate: the
    command is refused before it gets there, and the refusal does not echo the id."""

    async def scenario() -> dict[str, object] | None:
        async with running(fast_tmp / "j.sqlite") as rig:
            got: list[dict[str, object]] = []
            reply = await rig.daemon.intake.accept("home", b'{"id": "\\ud800"}', got.append)
            return reply or (got[0] if got else None)

    reply = run(scenario(), 30)
    assert reply is not None and reply["ok"] is False
    error = reply["error"]
    assert isinstance(error, dict) and error["code"] == ErrorCode.MALFORMED
    assert "surrogate" in str(error["message"]) and reply["id"] is None


@pytest.mark.parametrize(
    ("payload", "key"),
    [
        pytest.param(b'{"start_pose": false, "start_pose": true}', "start_pose", id="flag"),
        pytest.param(b'{"id": "a", "source": "x", "id": "b"}', "id", id="id"),
        pytest.param(b'{"x": {"k": 1, "k": 2}}', "k", id="nested"),
    ],
)
def test_a_key_given_twice_is_refused_not_taken_from_the_last(payload: bytes, key: str) -> None:
    """``json.loads`` keeps the last of two equal keys, without a word: ``start_pose`` false
    then true started a job as if the operator had set the parts by hand, and a dashboard or
    proxy that reads the first one sees another command than the daemon runs."""
    with pytest.raises(PayloadError, match=f"'{key}' twice"):
        parse_object(payload)


FORGED = "x\n2026-11-29 17:00:00,000 ERROR robot.daemon.core: daemon stops"


def test_a_refused_verb_or_field_cannot_write_a_line_of_its_own_into_the_log(
    fast_tmp: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A verb (an MQTT topic level, a web path's %0A) and a payload's field names are the
    sender's text: logged as they came, a newline in them forged a line of the daemon's log."""

    async def scenario() -> list[object]:
        async with running(fast_tmp / "j.sqlite") as rig:
            intake = rig.daemon.intake
            replies = [await intake.accept(FORGED, b"{}")]
            replies.append(await intake.accept("start", json.dumps({FORGED: 1}).encode()))
            replies.append(await intake.accept("home", json.dumps({"id": FORGED}).encode()))
            await asyncio.sleep(0.2)
            replies.append(await rig.daemon.submit("home", json.dumps({"id": FORGED}).encode()))
            return replies

    with caplog.at_level(logging.INFO):
        replies = run(scenario(), 30)
    assert replies[-1] is not None and replies[-1]["duplicate"] is True  # type: ignore[index]
    lines = [r.getMessage() for r in caplog.records]
    assert not [line for line in lines if "\n" in line], lines
    refused = [r for r in replies[:2] if isinstance(r, dict)]
    assert len(refused) == 2 and all("\n" not in r["error"]["message"] for r in refused)


def test_a_retained_command_on_a_topic_with_a_newline_is_logged_on_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def ignore() -> None:
        async def handler(verb: str, payload: bytes) -> None:
            raise AssertionError("a retained command must not run")

        bridge = MqttBridge(sim_config(), handler, host="127.0.0.1", port=1)
        bridge._ignore_retained(f"cuberobot/sim/cmd/{FORGED}")

    with caplog.at_level(logging.WARNING):
        run(ignore(), 10)
    assert len(caplog.records) == 1 and "\n" not in caplog.records[0].getMessage()
