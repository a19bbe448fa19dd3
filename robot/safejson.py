"""JSON from untrusted peers (MQTT commands, the web page), parsed within limits. Pure.

``json.loads`` alone lets two tiny payloads take a daemon down: a kilobyte of ``[`` raises
``RecursionError`` and an integer of 5,000 digits ``ValueError`` (Python's digit limit). Here
every limit is checked *before* or *while* parsing, and every failure is one
:class:`PayloadError` whose message says which limit and where:

* size: at most ``max_bytes`` bytes, checked before anything is decoded;
* encoding: strict UTF-8 (no silent replacement characters);
* nesting: at most ``max_depth`` levels of ``[``/``{``, counted outside strings by a linear scan
  before the recursive parser runs;
* numbers: at most ``max_number_chars`` characters each, finite (``NaN``, ``Infinity`` and
  ``1e999`` refused);
* text: no lone UTF-16 surrogate (``"\\ud800"``) in a key or a string;
* keys: each at most once in an object (``json.loads`` keeps the last without a word, where
  another reader of the same payload may take the first);
* shape: the top level must be a JSON object (or the payload empty, meaning ``{}``).

Every check runs in time linear in the payload's size.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_LIMITS", "JsonLimits", "PayloadError", "parse_object"]


class PayloadError(ValueError):
    """A payload outside the limits or not a JSON object; the message is for the sender."""


@dataclass(frozen=True, slots=True)
class JsonLimits:
    max_bytes: int = 16 * 1024
    max_depth: int = 8
    max_number_chars: int = 32


DEFAULT_LIMITS = JsonLimits()

# what the nesting check looks at: an escape (a backslash and the character it escapes), a
# quote, a bracket; one pass over the text (a regex of whole string literals was tried at every
# quote: 16 kB of \"\"\"... took a second)
_TOKENS = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def parse_object(payload: bytes | str, limits: JsonLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The JSON object in ``payload`` (an empty payload is ``{}``); :class:`PayloadError` names
    the limit broken or the JSON error's line and column."""
    raw = payload.encode("utf-8", errors="surrogatepass") if isinstance(payload, str) else payload
    if len(raw) > limits.max_bytes:
        raise PayloadError(f"payload is {len(raw)} bytes; the limit is {limits.max_bytes}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"payload is not UTF-8 (byte {exc.start + 1})") from None
    if not text.strip():
        return {}
    _check_depth(text, limits.max_depth)
    try:
        data = json.loads(
            text,
            parse_int=lambda s: _number(s, int, limits),
            parse_float=lambda s: _number(s, float, limits),
            parse_constant=_no_constant,
            object_pairs_hook=_unique_keys,
        )
    except json.JSONDecodeError as exc:
        raise PayloadError(
            f"payload is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise PayloadError(f"payload must be a JSON object, not {_json_type(data)}")
    _check_text(data)
    return data


def _check_depth(text: str, max_depth: int) -> None:
    """Count ``[``/``{`` outside string literals, in linear time."""
    depth = 0
    in_string = False
    for match in _TOKENS.finditer(text):
        token = match.group()
        if in_string:
            in_string = token != '"'  # an escape (\\" too) never ends the string
            continue
        token = token[-1]  # a backslash outside a string is invalid JSON: count what follows
        if token == '"':
            in_string = True
        elif token in "[{":
            depth += 1
            if depth > max_depth:
                raise PayloadError(f"payload nests deeper than {max_depth} levels")
        elif token in "]}":
            depth -= 1


def _check_text(value: object) -> None:
    """Refuse a lone UTF-16 surrogate (JSON's ``\\ud800``) in any key or string: it is no
    character, and UTF-8 (the journal, a log file, a topic) cannot encode it."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise PayloadError(
                "payload holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its "
                "pair), which is no character"
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key)
            _check_text(item)
    elif isinstance(value, list):
        for item in value:
            _check_text(item)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _number(text: str, kind: type[int] | type[float], limits: JsonLimits) -> int | float:
    if len(text) > limits.max_number_chars:
        raise PayloadError(
            f"a number of {len(text)} characters; the limit is {limits.max_number_chars}"
        )
    value = kind(text)
    if not math.isfinite(value):
        raise PayloadError(f"the number {text} is out of range")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                shown = key if len(key) <= 40 else key[:40] + "…"
                raise PayloadError(f"payload gives the key {shown!r} twice; give each once")
            seen.add(key)
    return data


def _no_constant(name: str) -> Any:
    raise PayloadError(f"{name} is not a JSON number")


def _json_type(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", int: "a number"}
    names[float] = "a number"
    return "null" if value is None else names.get(type(value), type(value).__name__)
