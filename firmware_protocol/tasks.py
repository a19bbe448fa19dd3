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
``asyncio.timeout`` does), so the count stays exact. One thing on 3.11 leaves the count one
too high: a ``TaskGroup`` whose child fails while the group waits for its children in
``__aexit__`` cancels its parent task and never uncancels it (fixed in 3.12). So a task that
reads the count does not run such a group itself (the MQTT bridge waits for its two tasks
with ``asyncio.wait``), and :func:`cancel_and_wait` compares the count with what it was when
the wait began.
"""

from __future__ import annotations

import asyncio
from typing import Any


def _cancelling() -> int:
    task = asyncio.current_task()
    return 0 if task is None else task.cancelling()


def raise_if_cancelling() -> None:
    """Raise :class:`asyncio.CancelledError` if the current task was asked to stop and that
    request was swallowed on the way (see the module docstring)."""
    if _cancelling():
        raise asyncio.CancelledError


async def cancel_and_wait(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait until it has ended. Its own cancellation is dropped, an error
    it ended with is raised; a cancellation of the caller meanwhile propagates."""
    before = _cancelling()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        # the caller's own (the child may have ended in the same turn), or the child's alone
        if _cancelling() > before or not task.done():
            raise
