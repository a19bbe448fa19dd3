"""Pydantic's validation errors of a robot profile, as one :class:`~robot.errors.ConfigError`.

Each problem is placed by section and key (``[motors.U] motor``, ``[cameras[0]] faces``); the
first problem's place becomes the error's ``section`` and ``key`` and starts its message, once;
an unknown key gets the nearest key the format allows (``did you mean 'enabled'?``). The
profile's model is passed in (``root``), so this module imports nothing of :mod:`robot.config`.
"""

from __future__ import annotations

import difflib
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from robot.errors import ConfigError

__all__ = ["format_errors"]

#: Faces, as the profile names the ``[motors.<FACE>]`` tables.
_FACE_NAMES = ("U", "R", "F", "D", "L", "B")


def _locate(loc: tuple[int | str, ...], root: type[BaseModel]) -> tuple[str, str]:
    """(section, key) of a pydantic error location such as ('motors', 'U', 'motor')."""
    parts = [str(p) for p in loc]
    if not parts:
        return "", ""
    if parts[0] == "cameras" and len(parts) > 1:
        section = f"cameras[{parts[1]}]"
        return section, ".".join(parts[2:])
    sub = {"motors", "solver", "mqtt", "robot"}
    if (
        parts[0] in sub
        and len(parts) > 2
        and parts[1] in (*_FACE_NAMES, "cost", "tls", "discovery", "turntable", "two_gripper")
    ):
        return f"{parts[0]}.{parts[1]}", ".".join(parts[2:])
    if len(parts) == 1:
        return (parts[0], "") if parts[0] in root.model_fields else ("", parts[0])
    return parts[0], ".".join(parts[1:])


def _known_keys(loc: tuple[int | str, ...], root: type[BaseModel]) -> tuple[str, ...]:
    """The keys the profile format allows beside the one at ``loc`` (for a misspelt key)."""
    model: Any = root
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if _is_section(model) else None
        if field is None:
            return ()
        model = next(
            (a for a in (field.annotation, *get_args(field.annotation)) if _is_section(a)),
            None,
        )
    if not _is_section(model):
        return ()
    internal = ("source", "folder") if model is root else ()
    return tuple(k for k in model.model_fields if k not in internal)


def _is_section(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _unknown_key(loc: tuple[int | str, ...], root: type[BaseModel]) -> str:
    message = "unknown key (not part of the profile format; check its spelling)"
    near = difflib.get_close_matches(str(loc[-1]), _known_keys(loc, root), n=1) if loc else []
    return f"{message}; did you mean {near[0]!r}?" if near else message


def format_errors(error: ValidationError, file: str, root: type[BaseModel]) -> ConfigError:
    """``error`` of validating a profile against ``root`` (:class:`~robot.config.RobotConfig`)
    as one :class:`ConfigError`: the first problem's place is the error's section and key (its
    message starts with them once); further problems follow, each with its own place."""
    problems: list[tuple[str, str, str]] = []
    for item in error.errors():
        loc = tuple(item["loc"])
        section, key = _locate(loc, root)
        msg = str(item["msg"]).removeprefix("Value error, ")
        if msg.startswith("@"):  # a cross-section check that names its own place
            place, _, msg = msg[1:].partition(": ")
            section, _, key = place.partition(".")
        if item["type"] == "extra_forbidden":
            msg = _unknown_key(loc, root)
        problems.append((section, key, msg))
    (section, key, first), rest = problems[0], problems[1:]
    more = [f"{f'[{s}]' if s else 'top level'}{f' {k}' if k else ''}: {m}" for s, k, m in rest]
    return ConfigError("; ".join((first, *more)), file=file, section=section, key=key)
