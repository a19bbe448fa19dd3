"""Commands to the daemon: their JSON payloads, validated, and the replies. Pure.

Commands arrive on ``<base>/<robot id>/cmd/<verb>`` (MQTT) or from the CLI, as a JSON object.
Every payload may carry ``"id"`` (a string up to 64 characters): a command whose id was already
seen is not executed again; its first reply is repeated with ``"duplicate": true``.
``start_pose`` (start, solve, scan): the operator has set a turntable's or gripper's parts to
their start pose by hand (the answer to a ``parts_unknown`` refusal). Payloads are validated
strictly (unknown fields are errors) and a malformed one gets a reply with
``"ok": false`` and ``"error": {"code": "malformed", "message": ...}`` naming the field.

=========  ==========================================  =========================================
verb       payload (besides ``id``)                    does
=========  ==========================================  =========================================
start      ``{"start_pose": false}``                   scan, validate, solve, execute
solve      ``{"facelets": "UUU...BBB"}``               solve the given state (the cube in the
                                                       robot must be in it), execute
scan       ``{"start_pose": false}``                   scan and validate only
resume     ``{"rescan": false}``                       finish an interrupted job (from the
                                                       journal); ``rescan`` scans first
abort      ``{}``                                      stop after the move group in progress
estop      ``{}``                                      emergency stop: motors stop at once
home       ``{}``                                      home the motors (clears a stop)
status     ``{}``                                      reply with the current status
=========  ==========================================  =========================================
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from robot.daemon.events import ErrorCode
from robot.errors import CommandError
from robot.safejson import PayloadError, parse_object

__all__ = [
    "VERBS",
    "AbortCommand",
    "Command",
    "EStopCommand",
    "HomeCommand",
    "NewJobCommand",
    "ResumeCommand",
    "ScanCommand",
    "SolveCommand",
    "StartCommand",
    "StatusCommand",
    "error_reply",
    "ok_reply",
    "parse_command",
    "shown",
]

_Id = Annotated[str, Field(min_length=1, max_length=64)]


class Command(BaseModel):
    """A validated command. ``verb`` is fixed per class."""

    # strict: a boolean is a boolean ("yes" and 1 are not), a string a string
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    verb: str
    id: _Id | None = None
    source: Annotated[str, Field(max_length=64)] = ""


class NewJobCommand(Command):
    """start, solve, scan: ``start_pose`` says the operator set a turntable's or gripper's
    parts to their start pose by hand (what the daemon asks when its journal cannot say where
    they are: ``parts_unknown``); nothing for a six-face robot."""

    start_pose: bool = False


class StartCommand(NewJobCommand):
    verb: Literal["start"] = "start"


class SolveCommand(NewJobCommand):
    verb: Literal["solve"] = "solve"
    facelets: Annotated[str, Field(min_length=24, max_length=6 * 7 * 7)]

    @field_validator("facelets")
    @classmethod
    def _letters(cls, value: str) -> str:
        value = value.strip()
        bad = sorted(set(value) - set("URFDLB"))
        if bad:
            raise ValueError(f"facelets use only the letters URFDLB; found {''.join(bad)!r}")
        return value


class ScanCommand(NewJobCommand):
    verb: Literal["scan"] = "scan"


class ResumeCommand(Command):
    verb: Literal["resume"] = "resume"
    rescan: bool = False


class AbortCommand(Command):
    verb: Literal["abort"] = "abort"


class EStopCommand(Command):
    verb: Literal["estop"] = "estop"


class HomeCommand(Command):
    verb: Literal["home"] = "home"


class StatusCommand(Command):
    verb: Literal["status"] = "status"


VERBS: dict[str, type[Command]] = {
    c.model_fields["verb"].default: c
    for c in (
        StartCommand,
        SolveCommand,
        ScanCommand,
        ResumeCommand,
        AbortCommand,
        EStopCommand,
        HomeCommand,
        StatusCommand,
    )
}


def shown(text: str, limit: int = 40) -> str:
    """A sender's text (a verb, a field name, an id) as a message or a log line shows it: as
    it is when short and printable, else quoted with its escapes and cut at ``limit``
    characters (a newline in it must not start a line of the daemon's log)."""
    if len(text) <= limit and text.isprintable():
        return text
    cut = text if len(text) <= limit else text[:limit] + "…"
    return repr(cut)


def parse_command(verb: str, payload: bytes | str | dict[str, Any]) -> Command:
    """Validate a command; :class:`CommandError` (code ``unknown_command`` or ``malformed``)
    says what is wrong, naming the field."""
    cls = VERBS.get(verb)
    if cls is None:
        cut = verb if len(verb) <= 40 else verb[:40] + "…"
        raise CommandError(
            ErrorCode.UNKNOWN_COMMAND,
            f"unknown command {cut!r}; the commands are {', '.join(VERBS)}",
        )
    if isinstance(payload, dict):
        data: Any = payload
    else:
        try:
            data = parse_object(payload)
        except PayloadError as exc:
            raise CommandError(
                ErrorCode.MALFORMED,
                f'{verb}: {exc}; send a JSON object such as {{"id": "42"}}',
            ) from None
    if not isinstance(data, dict):
        raise CommandError(
            ErrorCode.MALFORMED, f"{verb}: payload must be a JSON object, not {type(data).__name__}"
        )
    if "verb" in data:
        raise CommandError(
            ErrorCode.MALFORMED, f"{verb}: 'verb' is given by the topic, not the payload"
        )
    try:
        return cls.model_validate({**data, "verb": verb})
    except ValidationError as exc:
        parts = []
        for item in exc.errors():
            field = shown(".".join(str(p) for p in item["loc"])) or "payload"
            msg = str(item["msg"]).removeprefix("Value error, ")
            if item["type"] == "extra_forbidden":
                allowed = [k for k in cls.model_fields if k != "verb"]
                msg = f"unknown field; {verb} accepts {', '.join(allowed)}"
            parts.append(f"{field}: {msg}")
        raise CommandError(ErrorCode.MALFORMED, f"{verb}: " + "; ".join(parts)) from None


def command_id_of(payload: bytes | str) -> str | None:
    """The ``id`` of a payload that may be malformed otherwise (for the error reply)."""
    try:
        data = parse_object(payload)
    except PayloadError:
        return None
    value = data.get("id")
    return value if isinstance(value, str) and 0 < len(value) <= 64 else None


def ok_reply(command: Command, **result: Any) -> dict[str, Any]:
    """A command's success reply; ``source`` says who asked (the command's own ``source``)."""
    return {
        "ok": True,
        "id": command.id,
        "verb": command.verb,
        "source": command.source or None,
        **result,
    }


#: The longest verb a reply echoes whole: an unknown verb may be a topic level of some 65,000
#: characters, which a reply (on ``reply``, every verb's topic) would otherwise carry back.
VERB_ECHO_LIMIT = 64


def error_reply(
    verb: str,
    command_id: str | None,
    code: ErrorCode,
    message: str,
    source: str | None = None,
) -> dict[str, Any]:
    """A command's refusal; ``verb`` is echoed as sent, cut at :data:`VERB_ECHO_LIMIT`
    characters (with ``…``) when longer (only an unknown verb can be)."""
    if len(verb) > VERB_ECHO_LIMIT:
        verb = verb[:VERB_ECHO_LIMIT] + "…"
    return {
        "ok": False,
        "id": command_id,
        "verb": verb,
        "source": source or None,
        "error": {"code": code, "message": message},
    }


__all__ += ["command_id_of"]
