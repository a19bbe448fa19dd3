"""The async iterator :meth:`FirmwareLink.execute` returns, over the core's execution state."""

from __future__ import annotations

import asyncio

from firmware_protocol.errors import ExecutionError
from firmware_protocol.link.accounting import ExecutionState
from firmware_protocol.link.data import MoveExecuted
from firmware_protocol.moves import Move

__all__ = ["Execution"]


class _End:
    def __init__(self, error: ExecutionError | None) -> None:
        self.error = error


class Execution:
    """The async iterator returned by :meth:`FirmwareLink.execute`.

    Yields one :class:`MoveExecuted` per move, in order, as the firmware reports it executed.
    Ends normally when every move executed; raises an :class:`ExecutionError` (whose ``report``
    is exact) otherwise. ``await execution.wait()`` runs it to the end and returns all events.
    """

    def __init__(self, state: ExecutionState) -> None:
        self.state = state
        self._queue: asyncio.Queue[MoveExecuted | _End] = asyncio.Queue()
        self._delivered_end = False

    @property
    def moves(self) -> tuple[Move, ...]:
        return self.state.moves

    @property
    def events(self) -> list[MoveExecuted]:
        """The moves reported executed so far."""
        return self.state.events

    @property
    def base(self) -> int | None:
        """The firmware move index of ``moves[0]`` (``None`` until the first moves are sent)."""
        return self.state.base

    @property
    def error(self) -> ExecutionError | None:
        return self.state.error

    @property
    def done(self) -> bool:
        return self.state.done

    def __aiter__(self) -> Execution:
        return self

    async def __anext__(self) -> MoveExecuted:
        if self._delivered_end:
            raise StopAsyncIteration
        item = await self._queue.get()
        if isinstance(item, MoveExecuted):
            return item
        self._delivered_end = True
        if item.error is not None:
            raise item.error
        raise StopAsyncIteration

    async def wait(self) -> list[MoveExecuted]:
        """Consume to the end; return every event (raises the execution's error, if any)."""
        async for _ in self:
            pass
        if self.error is not None:
            raise self.error
        return list(self.events)

    # called by the link
    def _deliver(self, events: tuple[MoveExecuted, ...]) -> None:
        for event in events:
            self._queue.put_nowait(event)

    def _end(self, error: ExecutionError | None) -> None:
        self._queue.put_nowait(_End(error))
