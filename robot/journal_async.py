"""The job journal for the event loop (:class:`AsyncJournal`): :class:`~robot.journal.Journal`'s
calls run on one dedicated worker thread, in the order made."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ParamSpec, TypeVar

from robot.journal import Journal

__all__ = ["AsyncJournal"]

T = TypeVar("T")
P = ParamSpec("P")


class AsyncJournal:
    """The journal for the event loop: every call runs on one dedicated worker thread, in the
    order made, so the loop never waits on a disk sync."""

    def __init__(self, journal: Journal) -> None:
        self.sync = journal
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="journal")

    @classmethod
    def open(cls, path: str | Path) -> AsyncJournal:
        return cls(Journal(path))

    async def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``await call(journal.sync.op, ...)`` runs ``op`` on the journal's thread; the
        arguments are checked against ``op``'s own signature."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(*args, **kwargs))

    async def close(self) -> None:
        await self.call(self.sync.close)
        self._pool.shutdown(wait=True)
