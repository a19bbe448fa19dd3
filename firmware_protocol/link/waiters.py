"""Status waiters: someone waits for a STATUS that satisfies a predicate, asking for it again on
a schedule, until a deadline. Pure bookkeeping: time is an argument; the requests to send and
the waiters that ended are returned."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from firmware_protocol.errors import LinkError
from firmware_protocol.messages import Message, Status

__all__ = ["StatusWaiter", "StatusWaiters"]


@dataclass(eq=False)
class StatusWaiter:
    """``request`` is sent at once and again at ``next_poll`` (every ``retry_s``, multiplied by
    ``backoff`` each time) until a STATUS satisfies ``predicate`` or ``deadline`` passes; then
    the waiter fails with ``timeout_error``."""

    waiter_id: int
    request: Message
    predicate: Callable[[Status], bool]
    deadline: float
    next_poll: float
    retry_s: float
    backoff: float
    timeout_error: LinkError


class StatusWaiters:
    """The waiters of one link, by id."""

    def __init__(self) -> None:
        self._waiters: dict[int, StatusWaiter] = {}

    def __len__(self) -> int:
        return len(self._waiters)

    def add(self, waiter: StatusWaiter) -> None:
        self._waiters[waiter.waiter_id] = waiter

    def discard(self, waiter_id: int) -> None:
        self._waiters.pop(waiter_id, None)

    def matched(self, status: Status) -> list[int]:
        """The waiters ``status`` satisfies (removed)."""
        done = [w.waiter_id for w in self._waiters.values() if w.predicate(status)]
        for waiter_id in done:
            del self._waiters[waiter_id]
        return done

    def expired(self, now: float) -> list[StatusWaiter]:
        """The waiters whose deadline has passed (removed)."""
        done = [w for w in self._waiters.values() if now >= w.deadline]
        for waiter in done:
            del self._waiters[waiter.waiter_id]
        return done

    def polls_due(self, now: float) -> list[Message]:
        """The requests to send again now (each waiter's schedule advanced)."""
        due: list[Message] = []
        for waiter in self._waiters.values():
            if now >= waiter.next_poll:
                due.append(waiter.request)
                waiter.retry_s *= waiter.backoff
                waiter.next_poll = now + waiter.retry_s
        return due

    def take_all(self) -> list[int]:
        """Every waiter's id (all removed): the link failed."""
        ids = list(self._waiters)
        self._waiters.clear()
        return ids

    def deadline(self) -> float | None:
        """The earliest poll or deadline (``None``: no waiter)."""
        times = [min(w.next_poll, w.deadline) for w in self._waiters.values()]
        return min(times, default=None)
