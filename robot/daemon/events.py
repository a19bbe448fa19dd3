"""The daemon's vocabulary: job states, error codes and event names, each with a one-line
description, and the typed payloads of the events and of the status.

This module is the one place these names live. The values are the strings on the wire (MQTT
``status.state``, ``event/<name>``, ``error.code``) and in the journal (``jobs.state``,
``jobs.error_code``); they never change. Every member has a ``description`` (for the docs
table), checked complete by the tests::

    for member in (*JobState, *ErrorCode, *EventName):
        print(type(member).__name__, member.value, member.description)

``ErrorCode.channels`` says where a code can appear (an ``error``/``aborted`` event, a command
reply, the journal); ``EventName.payload`` is the ``TypedDict`` of an event's fields.

Pure: imports nothing of the robot, so every module of ``robot`` may import it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, TypedDict

from solver.cube.notation import format_moves

if TYPE_CHECKING:
    from solver.solution import Solution

__all__ = [
    "ABORT_CODES",
    "RESCAN_CODES",
    "RESUMABLE_CODES",
    "STATUS",
    "AbortedPayload",
    "Channel",
    "DonePayload",
    "ErrorCode",
    "ErrorInfo",
    "ErrorPayload",
    "EventName",
    "FirmwareResetPayload",
    "FirmwareSummary",
    "JobState",
    "MoveExecutedPayload",
    "RecoveredPayload",
    "RescanPayload",
    "ResumableInfo",
    "ScanCompletePayload",
    "ScanInvalidDetail",
    "SolutionPayload",
    "SolutionRefinedPayload",
    "StatusPayload",
    "VerifyPayload",
    "VisionChecks",
]

#: the name under which listeners receive the status (it is a topic of its own, not an event)
STATUS: Final = "status"

Channel = Literal["event", "reply", "journal"]


class JobState(StrEnum):
    """The daemon's state (``status.state``) and a job's state in the journal (``jobs.state``).

    ::

        PREPARING ──(solver tables loaded or built at start)──► IDLE
        IDLE ──start──► SCANNING ──► VALIDATING ──► SOLVING ──► EXECUTING ──► DONE
          ▲  ──solve (given state)──────►┘                          │
          │  ──scan─► SCANNING ──────────────► DONE                 ├──► ERROR    (with a code)
          └───────────── any of DONE / ERROR / ABORTED ◄────────────┴──► ABORTED  (abort, estop)
    """

    PREPARING = "PREPARING"
    IDLE = "IDLE"
    SCANNING = "SCANNING"
    VALIDATING = "VALIDATING"
    SOLVING = "SOLVING"
    EXECUTING = "EXECUTING"
    DONE = "DONE"
    ERROR = "ERROR"
    ABORTED = "ABORTED"

    @property
    def description(self) -> str:
        return _STATE_DESCRIPTIONS[self]

    @property
    def finished(self) -> bool:
        """A job in this state is over (anything else in the journal is resumable)."""
        return self in (JobState.DONE, JobState.ERROR, JobState.ABORTED)


_STATE_DESCRIPTIONS: Final[dict[JobState, str]] = {
    JobState.PREPARING: "at start: the solver's tables are loaded or built (progress in status)",
    JobState.IDLE: "no job has run since the daemon started; in the journal: a job just created",
    JobState.SCANNING: "the cameras are read and the colours classified",
    JobState.VALIDATING: "the scanned or given state is checked to be a possible cube",
    JobState.SOLVING: "the solver searches a solution and the planner turns it into motor moves",
    JobState.EXECUTING: "the firmware turns the faces; in the journal: a job left to resume",
    JobState.DONE: "the job finished: the cube is solved (or, for scan, read and valid)",
    JobState.ERROR: "the job failed; the error code says why",
    JobState.ABORTED: "the job was stopped on request (abort, estop) or superseded",
}


class ErrorCode(StrEnum):
    """Every error code: of a job (``error``/``aborted`` events, ``status.error``,
    ``jobs.error_code``) and of a refused command (``cmd/<verb>/reply`` ``error.code``)."""

    # a job's scan and state
    NO_CALIBRATION = "no_calibration"
    SCAN_FAILED = "scan_failed"
    SCAN_INVALID = "scan_invalid"
    SCAN_REFUSED = "scan_refused"
    SOLVE_FAILED = "solve_failed"
    PLAN_FAILED = "plan_failed"
    PARTS_UNKNOWN = "parts_unknown"
    # a job's execution on the firmware
    FIRMWARE = "firmware"
    FIRMWARE_RESET = "firmware_reset"
    FIRMWARE_COUNTER = "firmware_counter"
    LINK_LOST = "link_lost"
    MOTOR_FAULT = "motor_fault"
    EXECUTION_FAILED = "execution_failed"
    EXECUTION_ORDER = "execution_order"
    FIRMWARE_CONTRADICTION = "firmware_contradiction"
    FIRMWARE_BUSY = "firmware_busy"
    NOT_SOLVED = "not_solved"
    # a job stopped
    ABORTED = "aborted"
    ESTOP = "estop"
    INTERRUPTED = "interrupted"
    SUPERSEDED = "superseded"
    # the daemon
    JOURNAL_CORRUPT = "journal_corrupt"
    FIRMWARE_UNAVAILABLE = "firmware_unavailable"
    INTERNAL = "internal"
    # a command
    UNKNOWN_COMMAND = "unknown_command"
    MALFORMED = "malformed"
    BUSY = "busy"
    RATE_LIMITED = "rate_limited"
    NOT_RUNNING = "not_running"
    NOT_RESUMABLE = "not_resumable"

    @property
    def description(self) -> str:
        return _ERROR_DESCRIPTIONS[self][0]

    @property
    def channels(self) -> frozenset[Channel]:
        """Where the code appears: ``event`` (an ``error`` or ``aborted`` event, and
        ``status.error``), ``reply`` (a command's reply), ``journal`` (``jobs.error_code``)."""
        return _ERROR_DESCRIPTIONS[self][1]


_JOB: Final[frozenset[Channel]] = frozenset({"event", "journal"})
_REPLY: Final[frozenset[Channel]] = frozenset({"reply"})
_ERROR_DESCRIPTIONS: Final[dict[ErrorCode, tuple[str, frozenset[Channel]]]] = {
    ErrorCode.NO_CALIBRATION: ("a camera has no calibration: nothing can be scanned", _JOB),
    ErrorCode.SCAN_FAILED: ("a camera returned nothing usable, or no grid was found", _JOB),
    ErrorCode.SCAN_INVALID: (
        "the scanned (or given) state is not a possible cube; names the stickers at fault",
        _JOB,
    ),
    ErrorCode.SCAN_REFUSED: (
        "a possible cube was read, but too uncertain to act on: the stickers in doubt are named",
        _JOB,
    ),
    ErrorCode.SOLVE_FAILED: ("the solver found no solution within its limits", _JOB),
    ErrorCode.PLAN_FAILED: ("the solution cannot be executed by this robot's motors", _JOB),
    ErrorCode.PARTS_UNKNOWN: (
        "the journal cannot say where the mechanism's parts are: set its start pose by hand",
        _JOB,
    ),
    ErrorCode.FIRMWARE: (
        "the firmware refused the moves or a command (stopped, busy, not connected)",
        frozenset({"event", "journal", "reply"}),
    ),
    ErrorCode.FIRMWARE_RESET: (
        "the firmware reset more often than a job recovers (3); resumable when moves remain",
        _JOB,
    ),
    ErrorCode.FIRMWARE_COUNTER: (
        "the firmware's counter is behind the journal (other firmware): resume only with rescan",
        frozenset({"event", "journal", "reply"}),
    ),
    ErrorCode.FIRMWARE_CONTRADICTION: (
        "a firmware report contradicted what the host sent: resumable only with rescan",
        _JOB,
    ),
    ErrorCode.FIRMWARE_BUSY: (
        "the firmware still ran an interrupted job's moves after [serial] resume_drain_s",
        frozenset({"event", "journal", "reply"}),
    ),
    ErrorCode.JOURNAL_CORRUPT: (
        "at start the journal could not be trusted: moved aside, a new one started; scan first",
        frozenset({"event"}),
    ),
    ErrorCode.LINK_LOST: ("the serial link failed mid-job; resumable when moves remain", _JOB),
    ErrorCode.MOTOR_FAULT: ("a motor stalled, its driver faulted or a limit tripped", _JOB),
    ErrorCode.EXECUTION_FAILED: ("the firmware ended the moves for another reason", _JOB),
    ErrorCode.EXECUTION_ORDER: ("the firmware reported moves out of order", _JOB),
    ErrorCode.NOT_SOLVED: ("every move executed but the tracked cube is not solved", _JOB),
    ErrorCode.ABORTED: ("stopped by the abort command (after the move group in progress)", _JOB),
    ErrorCode.ESTOP: ("stopped by an emergency stop", _JOB),
    ErrorCode.INTERRUPTED: (
        "the daemon stopped before any move was sent; closed at the restart",
        frozenset({"journal"}),
    ),
    ErrorCode.SUPERSEDED: (
        "an interrupted job closed because a new job was started instead of resume",
        frozenset({"journal"}),
    ),
    ErrorCode.FIRMWARE_UNAVAILABLE: (
        "the firmware is not connected (yet); the daemon keeps retrying",
        frozenset({"event", "reply"}),
    ),
    ErrorCode.INTERNAL: (
        "a bug: an unexpected exception (logged with its traceback)",
        frozenset({"event", "journal", "reply"}),
    ),
    ErrorCode.UNKNOWN_COMMAND: ("no command has this verb", _REPLY),
    ErrorCode.MALFORMED: ("the payload is not a valid command; names the field", _REPLY),
    ErrorCode.BUSY: (
        "a job is running (wait for it or send abort), or the command queue is full",
        _REPLY,
    ),
    ErrorCode.RATE_LIMITED: (
        "too many commands of this verb per second; the command was dropped, not queued",
        _REPLY,
    ),
    ErrorCode.NOT_RUNNING: ("abort with no job running, or the daemon is not running", _REPLY),
    ErrorCode.NOT_RESUMABLE: ("resume with no interrupted job in the journal", _REPLY),
}

#: codes that end a job as ABORTED (an ``aborted`` event) rather than ERROR
ABORT_CODES: Final = frozenset({ErrorCode.ABORTED, ErrorCode.ESTOP})
#: codes after which a job with moves left stays open in the journal for ``resume``
RESUMABLE_CODES: Final = frozenset(
    {
        ErrorCode.LINK_LOST,
        ErrorCode.FIRMWARE_RESET,
        ErrorCode.FIRMWARE_COUNTER,
        ErrorCode.FIRMWARE_CONTRADICTION,
        ErrorCode.FIRMWARE_BUSY,
    }
)
#: resumable codes after which the moves the journal counts cannot be trusted: the job stays
#: open even with no move left, and only ``resume`` with ``rescan`` may finish it
RESCAN_CODES: Final = frozenset({ErrorCode.FIRMWARE_CONTRADICTION})


# --- payloads --------------------------------------------------------------------------------
# Every event also carries "event" (its name) and "timestamp", added by the MQTT bridge.


class ScanCompletePayload(TypedDict):
    job_id: str
    facelets: str
    valid: bool
    repairs: list[dict[str, Any]]
    low_confidence: list[dict[str, Any]]
    min_confidence: float
    timings_ms: dict[str, float]
    #: vision's verdict: "accepted" or "refused" (a refused read is never solved)
    verdict: str
    confidence: float
    in_doubt: list[dict[str, Any]]


class SolutionPayload(TypedDict):
    job_id: str
    moves: str
    engine: str
    htm: int
    qtm: int
    robot_time_s: float | None
    program: dict[str, Any]
    #: anytime solving: the motors start on this plan and refinements may replace its moves
    #: not yet sent (``solution_refined``)
    anytime: NotRequired[bool]


def solution_payload(
    job_id: str,
    solution: Solution,
    program: dict[str, Any],
    *,
    robot_time_s: float | None = None,
    anytime: bool = False,
) -> SolutionPayload:
    """The ``solution`` event of job ``job_id``: ``solution`` planned as ``program`` (its
    ``to_dict()``); ``robot_time_s`` the planner's figure where it has one (default: the
    solver's); ``anytime`` when refinements may follow."""
    payload: SolutionPayload = {
        "job_id": job_id,
        "moves": format_moves(solution.moves),
        "engine": solution.engine,
        "htm": solution.htm,
        "qtm": solution.qtm,
        "robot_time_s": solution.robot_time_s if robot_time_s is None else robot_time_s,
        "program": program,
    }
    if anytime:
        payload["anytime"] = True
    return payload


class SolutionRefinedPayload(TypedDict):
    """A ``solution_refined`` event (anytime solving): a search from the cube as it will be
    after the moves already sent found a faster remainder; the plan as it stands now."""

    job_id: str
    refinement: int  # 1-based within the job
    #: job moves kept (executed, or sent to the firmware): the plan's first ``kept`` moves
    kept: int
    moves: str  # the whole plan, physical face turns in solver notation
    htm: int
    robot_time_s: float  # the cost model's estimate of the whole plan
    saved_s: float  # how much sooner the remainder ends than the one it replaces
    search_ms: float  # the search's wall time (while the motors turned)
    program: dict[str, Any]


class MoveExecutedPayload(TypedDict):
    job_id: str
    index: int  # 1-based in the job
    total: int
    move: str
    motor: int
    fw_index: NotRequired[int | None]
    progress: NotRequired[int]
    recovered: NotRequired[bool]  # learnt from the firmware's counter after a restart
    replayed: NotRequired[bool]  # announced again: the broker never acknowledged it


class DonePayload(TypedDict):
    job_id: str
    kind: str
    moves: int
    stage_times_s: dict[str, float]
    total_s: float
    solved: bool | None
    #: the cube read as solved after execution (None: not checked: no cameras, or a scan job)
    verified: bool | None
    #: face turns made to look at doubtful stickers from another view (each undone)
    rescans: int
    #: solves started again because the check after execution saw a misread
    corrections: int


class RescanPayload(TypedDict):
    """A ``rescan`` event: a face was turned to read doubtful stickers from another view, and
    turned back; the reads so far were combined per physical sticker."""

    job_id: str
    stage: Literal["scan", "verify"]
    attempt: int  # 1-based within the stage
    turn: str  # the face turn made (and undone)
    reads: int  # reads combined so far
    verdict: str  # of the combined reading
    confidence: float
    in_doubt: list[str]  # stickers still in doubt (reference positions)


class VerifyPayload(TypedDict):
    """A ``verify`` event: the check after execution did not see a solved cube; the misread
    stickers (of the reading the job solved from) were found and the solve goes on from the
    state seen now."""

    job_id: str
    attempt: int
    solved: bool  # what the combined reading says of the cube now
    confidence: float
    misread: list[str]  # stickers the reading the moves were planned from got wrong
    facelets: str  # the cube as it is now (scheme letters)


class ScanInvalidDetail(TypedDict):
    """The extra fields of an ``error`` event with code ``scan_invalid``."""

    stickers: list[str]
    problems: list[dict[str, Any]]
    repairs: NotRequired[list[dict[str, Any]]]
    low_confidence: list[dict[str, Any]]


class ErrorPayload(TypedDict):
    """An ``error`` event; for ``scan_invalid`` also the fields of :class:`ScanInvalidDetail`.
    ``firmware_unavailable`` (no job yet) has only ``code`` and ``message``."""

    code: ErrorCode
    message: str
    job_id: NotRequired[str]
    moves_done: NotRequired[int]
    resumable: NotRequired[bool]


class AbortedPayload(TypedDict):
    job_id: str
    code: ErrorCode
    message: str
    moves_done: int


class FirmwareResetPayload(TypedDict):
    job_id: str
    moves_done: int
    moves_total: int
    interrupted: list[str]
    message: str
    recovering: bool
    #: job moves (1-based) reported executed before the reset that the counters the firmware
    #: kept deny: journaled as not executed again, and sent again
    retracted: NotRequired[list[int]]
    #: job moves (1-based) sent but not reported executed when a reset lost the firmware's
    #: counters (they came back at zero): whether they ran is unknown, so the job stops
    #: (``recovering`` false) for a resume with rescan
    unknown: NotRequired[list[int]]


class RecoveredPayload(TypedDict):
    job_id: str
    state: JobState
    moves_done: int
    moves_total: NotRequired[int]
    physical: NotRequired[str | None]
    resumable: bool


class EventName(StrEnum):
    """The events, published on ``<base>/<robot id>/event/<name>`` (QoS 1, not retained)."""

    SCAN_COMPLETE = "scan_complete"
    SOLUTION = "solution"
    MOVE_EXECUTED = "move_executed"
    DONE = "done"
    ERROR = "error"
    ABORTED = "aborted"
    FIRMWARE_RESET = "firmware_reset"
    RECOVERED = "recovered"
    RESCAN = "rescan"
    VERIFY = "verify"
    SOLUTION_REFINED = "solution_refined"

    @property
    def description(self) -> str:
        return _EVENT_DESCRIPTIONS[self][0]

    @property
    def payload(self) -> type[Any]:
        """The ``TypedDict`` of the event's fields (``payload.__annotations__`` lists them)."""
        return _EVENT_DESCRIPTIONS[self][1]


_EVENT_DESCRIPTIONS: Final[dict[EventName, tuple[str, type[Any]]]] = {
    EventName.SCAN_COMPLETE: (
        "the cameras were read and the colours classified",
        ScanCompletePayload,
    ),
    EventName.SOLUTION: ("a solution was found and planned as motor moves", SolutionPayload),
    EventName.SOLUTION_REFINED: (
        "anytime solving found a faster remainder for the moves not yet sent",
        SolutionRefinedPayload,
    ),
    EventName.MOVE_EXECUTED: ("the firmware reported a move executed", MoveExecutedPayload),
    EventName.DONE: ("the job finished (solved, or scanned)", DonePayload),
    EventName.ERROR: ("a job failed, or the firmware cannot be reached", ErrorPayload),
    EventName.ABORTED: ("a job was stopped by abort or an emergency stop", AbortedPayload),
    EventName.FIRMWARE_RESET: ("the firmware reset mid-job", FirmwareResetPayload),
    EventName.RECOVERED: ("at start, an unfinished job was found in the journal", RecoveredPayload),
    EventName.RESCAN: (
        "a face was turned to read doubtful stickers from another view, and turned back",
        RescanPayload,
    ),
    EventName.VERIFY: (
        "the check after execution saw a misread; the solve goes on from the state seen",
        VerifyPayload,
    ),
}


# --- status ------------------------------------------------------------------------------------


class ErrorInfo(TypedDict):
    code: ErrorCode | None
    message: str | None


class ResumableInfo(TypedDict):
    job_id: str
    moves_done: int
    moves_total: int
    #: the firmware does not match the journal: only ``resume`` with ``rescan`` can finish it
    needs_rescan: bool


class PreparingStatus(TypedDict):
    """What the daemon is preparing at start (``status.preparing``; null once ready)."""

    task: str
    done: int
    total: int


class JournalStatus(TypedDict):
    """Why the journal was not trusted at start (until a job has scanned the cube again)."""

    problem: str
    quarantined: str | None


class FirmwareSummary(TypedDict):
    connected: bool
    version: str | None
    boot_id: int | None


class VisionChecks(TypedDict):
    """What the job's reads took: rescans (face turns to see doubtful stickers again),
    corrections (solves restarted after the check after execution), and that check's result."""

    rescans: int
    corrections: int
    verified: bool | None


class StatusPayload(TypedDict):
    """The retained ``status`` (the bridge adds ``timestamp``)."""

    state: str
    job_id: str | None
    kind: str | None
    progress: int
    moves_done: int
    moves_total: int
    eta_s: float | None
    error: ErrorInfo | None
    resumable: ResumableInfo | None
    firmware: FirmwareSummary
    robot_id: str
    cube_size: int
    journal: JournalStatus | None
    preparing: PreparingStatus | None
    vision: VisionChecks | None
