"""The sliding window and the reconnect policy, pure."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_protocol.codec import BITS_PER_BYTE
from firmware_protocol.errors import LinkTimeoutError, PortOpenError
from firmware_protocol.link.data import LinkConfig
from firmware_protocol.link.supervisor import (
    GiveUp,
    HandshakeError,
    PortDown,
    ReconnectPolicy,
    Retry,
)
from firmware_protocol.link.window import SendWindow, seq_le
from firmware_protocol.messages import Heartbeat, Home

CONFIG = LinkConfig(window_frames=4, ack_timeout_s=0.1, max_backoff_s=0.5, baudrate=115200)


@given(st.integers(0, 0xFFFF), st.integers(0, 0x7FFF))
def test_seq_le_holds_across_the_wrap(a: int, distance: int) -> None:
    b = (a + distance) & 0xFFFF
    assert seq_le(a, b)
    assert seq_le(b, a) == (distance == 0)


def test_acknowledgements_pop_frames_across_the_wrap() -> None:
    window = SendWindow(CONFIG, first_seq=0xFFFE)
    sent = [window.push(Home(), 0.0) for _ in range(4)]
    assert [o.seq for o in sent] == [0xFFFE, 0xFFFF, 0, 1] and window.full
    assert window.acknowledge(0xFFFD) == []  # before the window: nothing
    assert [o.seq for o in window.acknowledge(0)] == [0xFFFE, 0xFFFF, 0]
    assert [o.seq for o in window] == [1] and not window.full


def test_a_nak_acknowledges_the_frames_before_its_seq_only() -> None:
    window = SendWindow(CONFIG, first_seq=0xFFFF)
    for _ in range(3):
        window.push(Home(), 0.0)
    assert [o.seq for o in window.acknowledge_before(1)] == [0xFFFF, 0]
    assert [o.seq for o in window] == [1]
    assert window.acknowledge_before(1) == []


def test_retransmission_goes_back_n_and_backs_off() -> None:
    window = SendWindow(CONFIG, first_seq=10)
    frames = [window.push(Home(), 0.0) for _ in range(3)]
    wire_s = 2 * sum(len(f.data) for f in frames) * BITS_PER_BYTE / CONFIG.baudrate
    assert window.deadline() == pytest.approx(0.1 + wire_s)
    assert window.timed_out(0.1) is None
    assert window.timed_out(0.1 + wire_s) is frames[0]
    assert window.retransmit_from(11, 1.0) == [frames[1].data, frames[2].data]
    assert [f.retries for f in frames] == [0, 1, 1]
    assert window.rto(1) == pytest.approx(0.2 + wire_s)
    assert window.rto(9) == pytest.approx(0.5 + wire_s)  # capped


def test_realtime_seq_numbers_are_taken_without_tracking() -> None:
    window = SendWindow(CONFIG, first_seq=5)
    assert window.take_seq() == 5 and window.next_seq == 6 and len(window) == 0
    assert window.push(Heartbeat(), 0.0).seq == 6


POLICY = LinkConfig(
    connect_timeout_s=1.0,
    reconnect_timeout_s=3.0,
    reconnect_backoff_min_s=0.1,
    reconnect_backoff_max_s=0.4,
)


def test_the_first_connection_gives_up_with_the_cause() -> None:
    policy = ReconnectPolicy("/dev/x", POLICY, random.Random(0), now=0.0)
    (retry,) = policy.next_step(0.5, connecting=True, problem=OSError("no such file"))
    assert isinstance(retry, Retry) and 0.08 <= retry.delay_s <= 0.12
    (give_up,) = policy.next_step(1.5, connecting=True, problem=OSError("no such file"))
    assert isinstance(give_up, GiveUp) and isinstance(give_up.error, PortOpenError)
    assert "firmware-sim" in str(give_up.error)
    silent = ReconnectPolicy("/dev/x", POLICY, random.Random(0), now=0.0)
    (step,) = silent.next_step(1.5, connecting=True, problem=HandshakeError("no IDENT"))
    assert isinstance(step, GiveUp) and isinstance(step.error, LinkTimeoutError)


def test_a_lost_port_is_declared_down_once_and_retried_with_capped_back_off() -> None:
    policy = ReconnectPolicy("/dev/x", POLICY, random.Random(0), now=0.0)
    policy.ended(10.0, session_opened_at=1.0)
    delays = []
    downs = []
    for now in (10.1, 10.5, 11.0, 13.5, 14.0):
        *other, retry = policy.next_step(now, connecting=False, problem=OSError("gone"))
        assert isinstance(retry, Retry)
        delays.append(retry.delay_s)
        downs += [s for s in other if isinstance(s, PortDown)]
    backoff = (0.1, 0.2, 0.4, 0.4, 0.4)  # doubling, capped; each ±20 % jitter
    assert all(0.8 * b <= d <= 1.2 * b for d, b in zip(delays, backoff, strict=True))
    assert len(downs) == 1 and downs[0].seconds == pytest.approx(3.5)
    policy.back_up()
    assert not policy.down
    policy.ended(20.0, session_opened_at=15.0)  # a session, then lost again
    (retry,) = policy.next_step(20.1, connecting=False, problem=OSError("gone"))
    assert isinstance(retry, Retry) and retry.delay_s <= 1.2 * 0.1  # a session: from the start


def test_a_port_that_opens_but_never_answers_keeps_doubling_its_back_off() -> None:
    """A port that opens and fails before the firmware answers (loop://, a flapping cable)
    used to restart the back-off at every open: a retry every 0.1 s and a warning each."""
    policy = ReconnectPolicy("/dev/x", POLICY, random.Random(0), now=0.0)
    delays = []
    for now in (1.0, 1.2, 1.5, 2.0):
        policy.ended(now, session_opened_at=0.0)  # opened, lost before any session
        *_, retry = policy.next_step(now, connecting=False, problem=OSError("write timeout"))
        assert isinstance(retry, Retry)
        delays.append(retry.delay_s)
    backoff = (0.1, 0.2, 0.4, 0.4)
    assert all(0.8 * b <= d <= 1.2 * b for d, b in zip(delays, backoff, strict=True))
