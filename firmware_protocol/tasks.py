"""Cancellation that is never lost, for the link and for the daemon built on it.

Two habits of asyncio code lose a cancellation on Python 3.11, and a lost one hangs whoever
waits for the task (a task group at the daemon's stop waits for every child, forever):

* ``with contextlib.suppress(asyncio.CancelledError): await child`` after ``child.cancel()``
  swallows the *caller's* cancellation too when it arrives during that wait;
  :func:`cancel_and_wait` tells the two apart.
* ``asyncio.wait_for`` (3.11; 3.12 fixed it) returns the awaited result when a cancellation
  arrives in the same loop turn as the result: the task goes on as if never cancelled.
  Project code uses ``asyncio.timeout`` instead; code that awaits a library which uses
  ``wait_for`` inside (aiomqtt) calls :func:`raise_if_cancelling` after such awaits. The
  cancellation is still counted on the task (``Task.cancelling``), which is what both read.

A task that deliberately suppresses its own cancellation calls ``Task.uncancel`` (as
``asyncio.timeout`` does), so the count stays exact.
"""

from __future__ import annotations

import asyncio
from typing import Any


def raise_if_cancelling() -> None:
    """Raise :class:`asyncio.CancelledError` if the current task was asked to stop and that
    request was swallowed on the way (see the module docstring)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def cancel_and_wait(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait until it has ended. Its own cancellation is dropped, an error
    it ended with is raised; a cancellation of the caller meanwhile propagates."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        raise_if_cancelling()
        if not task.done():  # (only the caller's cancellation leaves it running)
            raise
