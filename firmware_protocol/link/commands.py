"""Sequenced commands (HOME, ENABLE, CLEAR) waiting to be sent or acknowledged. Pure
bookkeeping, like :mod:`~firmware_protocol.link.waiters`: time is an argument; the
:class:`~firmware_protocol.link.actions.OpDone` of the commands that ended are returned."""

from __future__ import annotations

from collections.abc import Iterator

from firmware_protocol.errors import LinkError, LinkTimeoutError
from firmware_protocol.link.actions import OpDone
from firmware_protocol.link.window import Op
from firmware_protocol.messages import Clear

__all__ = ["Commands"]


class Commands:
    """The commands of one link, in the order they are to be sent."""

    def __init__(self, port: str) -> None:
        self._port = port
        self._ops: list[Op] = []

    def __iter__(self) -> Iterator[Op]:
        return iter(self._ops)

    def add(self, op: Op) -> None:
        self._ops.append(op)

    def add_first(self, op: Op) -> None:
        """``op`` goes before every other command (the link's own CLEAR after a watchdog stop)."""
        self._ops.insert(0, op)

    def discard(self, op_id: int) -> None:
        self._ops = [op for op in self._ops if op.op_id != op_id]

    @property
    def clearing(self) -> bool:
        """A CLEAR is waiting to be sent or acknowledged."""
        return any(isinstance(op.message, Clear) for op in self._ops)

    def done(self, op: Op, error: LinkError | None) -> OpDone | None:
        """``op`` was acknowledged (``error`` None) or refused: its end, if it was still ours."""
        if op not in self._ops:
            return None
        self._ops.remove(op)
        return OpDone(op.op_id, error)

    def expired(self, now: float) -> list[OpDone]:
        """The commands not acknowledged by their deadline (removed), each with its error."""
        late = [op for op in self._ops if op.deadline is not None and now >= op.deadline]
        ends: list[OpDone] = []
        for op in late:
            self._ops.remove(op)
            name = type(op.message).__name__.upper()
            error = LinkTimeoutError(
                f"{name} not acknowledged by the firmware on {self._port}; check the cable, "
                "then retry",
                self._port,
            )
            ends.append(OpDone(op.op_id, error))
        return ends

    def drop_all(self, error: LinkError) -> list[OpDone]:
        """Every command dropped (the link failed): the ends of those someone waits for."""
        ends = [OpDone(op.op_id, error) for op in self._ops if op.deadline is not None]
        self._ops.clear()
        return ends

    def deadlines(self) -> list[float | None]:
        return [op.deadline for op in self._ops]
