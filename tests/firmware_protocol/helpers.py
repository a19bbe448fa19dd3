"""Shared helpers of the firmware-protocol tests.

Async tests are plain sync tests that call :func:`run` (``asyncio.run`` with a deadline), so no
pytest plugin is needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
    """Run ``coro`` in a fresh event loop, failing after ``timeout`` seconds."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


class RecordingCube:
    """A test double of :class:`firmware_protocol.TurnableCube`: records the turns it is given.

    Its "facelets" are the turn log, which is all these tests need: the real cube model belongs
    to the solver and is exercised by the CLI tests.
    """

    def __init__(self) -> None:
        self.turns: list[tuple[str, int]] = []
        #: the depth of every turn (1: the outer layer alone)
        self.depths: list[int] = []

    def apply(self, face: str, quarter_turns: int, depth: int = 1) -> None:
        self.turns.append((face, quarter_turns))
        self.depths.append(depth)

    def facelets(self) -> str:
        return " ".join(f"{face}{turns:+d}" for face, turns in self.turns)
