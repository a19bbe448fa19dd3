"""Untrusted JSON within limits: every input gives a dict or one PayloadError, never a crash."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robot.safejson import DEFAULT_LIMITS, JsonLimits, PayloadError, parse_object

NASTY = [
    pytest.param(b"[" * 1024, "nests deeper", id="deep-arrays"),
    pytest.param(b'{"a":' * 600 + b"1" + b"}" * 600, "nests deeper", id="deep-objects"),
    pytest.param(b'{"id": ' + b"1" * 5000 + b"}", "number of 5000", id="huge-int"),
    pytest.param(b'{"x": 1e99999}', "out of range", id="float-overflow-is-inf"),
    pytest.param(b'{"x": NaN}', "NaN is not", id="nan"),
    pytest.param(b'{"x": -Infinity}', "Infinity is not", id="infinity"),
    pytest.param(b"\xff\xfe{}", "not UTF-8", id="not-utf8"),
    pytest.param(b'{"a": "\xed\xa0\x80"}', "not UTF-8", id="surrogate-bytes"),
    pytest.param(b" " * (DEFAULT_LIMITS.max_bytes + 1), "limit is", id="oversized"),
    pytest.param(b"[]", "not an array", id="array-top"),
    pytest.param(b'"hello"', "not a string", id="string-top"),
    pytest.param(b"null", "not null", id="null-top"),
    pytest.param(b"true", "not a boolean", id="bool-top"),
    pytest.param(b"12", "not a number", id="number-top"),
    pytest.param(b"{", "not JSON", id="unclosed"),
    pytest.param(b'{"a": 1,}', "not JSON", id="trailing-comma"),
    pytest.param(b'{"a": "[[[[[[[[[[[[["}', None, id="brackets-inside-strings-are-fine"),
    pytest.param(b'{"a": "\\"[[[[[[[[[[[[[["}', None, id="escaped-quote-then-brackets"),
]


@pytest.mark.parametrize(("payload", "reason"), NASTY)
def test_nasty_payloads(payload: bytes, reason: str | None) -> None:
    if reason is None:
        assert isinstance(parse_object(payload), dict)
        return
    with pytest.raises(PayloadError) as info:
        parse_object(payload)
    assert reason in str(info.value)
    assert len(str(info.value)) < 200


def test_the_1e99999_float_is_refused_by_length_when_long() -> None:
    with pytest.raises(PayloadError, match="number of"):
        parse_object('{"x": 1.' + "0" * 40 + "}")


def test_empty_payload_is_an_empty_object() -> None:
    assert parse_object(b"") == {}
    assert parse_object("  \n") == {}


def test_limits_are_settings() -> None:
    deep = '{"a": [[[1]]]}'
    assert parse_object(deep) == {"a": [[[1]]]}
    with pytest.raises(PayloadError, match="deeper than 2"):
        parse_object(deep, JsonLimits(max_depth=2))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=15,
)


@given(st.binary(max_size=300))
@settings(max_examples=300)
def test_random_bytes_give_a_dict_or_a_payload_error(payload: bytes) -> None:
    with contextlib.suppress(PayloadError):
        assert isinstance(parse_object(payload), dict)


@given(st.text(alphabet='[]{}",:0123456789.eE-+ \\nulltruefalse', max_size=300))
@settings(max_examples=300)
def test_json_shaped_noise_gives_a_dict_or_a_payload_error(text: str) -> None:
    with contextlib.suppress(PayloadError):
        assert isinstance(parse_object(text), dict)


@given(st.dictionaries(st.text(max_size=10), json_values, max_size=5))
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
def test_valid_objects_within_limits_parse_like_json(value: dict[str, Any]) -> None:
    text = json.dumps(value)
    try:
        parsed = parse_object(text)
    except PayloadError as exc:
        assert any(k in str(exc) for k in ("deeper", "number of", "bytes")), exc
        return
    assert parsed == json.loads(text)
