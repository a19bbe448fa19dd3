"""The daemon's vocabulary (robot.daemon.events): the wire strings never change, every member
is described in one line, and the payload types name the fields the daemon publishes."""

from __future__ import annotations

from typing import get_type_hints, is_typeddict

import pytest

import robot.daemon
from robot.daemon.events import (
    ABORT_CODES,
    RESUMABLE_CODES,
    ErrorCode,
    EventName,
    JobState,
)
from robot.journal import FINISHED

#: the strings on the wire and in the journal (MQTT payloads and the journal schema)
WIRE = {
    JobState: "PREPARING IDLE SCANNING VALIDATING SOLVING EXECUTING DONE ERROR ABORTED",
    ErrorCode: (
        "no_calibration scan_failed scan_invalid scan_refused solve_failed plan_failed "
        "parts_unknown firmware firmware_reset firmware_counter link_lost motor_fault "
        "execution_failed "
        "execution_order firmware_contradiction firmware_busy not_solved aborted estop "
        "interrupted superseded journal_corrupt firmware_unavailable internal unknown_command "
        "malformed busy rate_limited not_running not_resumable"
    ),
    EventName: (
        "scan_complete solution move_executed done error aborted firmware_reset recovered "
        "rescan verify solution_refined"
    ),
}
MEMBERS = [*JobState, *ErrorCode, *EventName]


@pytest.mark.parametrize("enum", list(WIRE), ids=lambda e: e.__name__)
def test_the_wire_strings(enum: type[JobState | ErrorCode | EventName]) -> None:
    assert [m.value for m in enum] == WIRE[enum].split()


@pytest.mark.parametrize("member", MEMBERS, ids=lambda m: f"{type(m).__name__}.{m.name}")
def test_every_member_has_a_one_line_description(
    member: JobState | ErrorCode | EventName,
) -> None:
    text = member.description
    assert text and "\n" not in text and len(text) < 100 and text == text.strip()


def test_error_code_channels() -> None:
    for code in ErrorCode:
        assert code.channels and code.channels <= {"event", "reply", "journal"}
    job_codes = {c for c in ErrorCode if "journal" in c.channels}
    assert job_codes >= ABORT_CODES | RESUMABLE_CODES
    assert ErrorCode.MALFORMED.channels == {"reply"}


def test_event_payloads_are_typed_dicts() -> None:
    for name in EventName:
        payload = name.payload
        assert is_typeddict(payload)
        fields = get_type_hints(payload)
        assert "message" in fields or "job_id" in fields, name
    assert "stickers" not in get_type_hints(EventName.ERROR.payload)  # only for scan_invalid


def test_finished_states() -> None:
    assert set(FINISHED) == {JobState.DONE, JobState.ERROR, JobState.ABORTED}
    assert not JobState.EXECUTING.finished


def test_the_package_exports() -> None:
    """What other modules import from robot.daemon keeps working (loaded on first use)."""
    for name in robot.daemon.__all__:
        assert getattr(robot.daemon, name) is not None
    assert robot.daemon.State is JobState
    with pytest.raises(AttributeError):
        _ = robot.daemon.Nothing
