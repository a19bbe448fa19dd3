"""Cancellation is never lost (firmware_protocol.tasks)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from firmware_protocol.tasks import cancel_and_wait, raise_if_cancelling
from tests.robot.helpers import run


async def _slow_to_end(ended: asyncio.Event) -> None:
    """A child that takes a while to end once cancelled (as a task closing a port does)."""
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        await asyncio.sleep(0.3)
        ended.set()
        raise


def test_cancel_and_wait_ends_the_child() -> None:
    async def scenario() -> bool:
        ended = asyncio.Event()
        child = asyncio.create_task(_slow_to_end(ended))
        await asyncio.sleep(0)
        await cancel_and_wait(child)
        return ended.is_set() and child.cancelled()

    assert run(scenario(), 10)


def test_cancel_and_wait_raises_the_childs_error() -> None:
    async def failing() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise OSError("port gone") from None

    async def scenario() -> None:
        child = asyncio.create_task(failing())
        await asyncio.sleep(0)
        await cancel_and_wait(child)

    with pytest.raises(OSError, match="port gone"):
        run(scenario(), 10)


def test_a_cancellation_of_the_caller_during_the_wait_propagates() -> None:
    """``suppress(CancelledError)`` around the wait would swallow it: the caller would go on."""

    async def scenario() -> tuple[bool, bool]:
        ended = asyncio.Event()
        went_on = asyncio.Event()

        async def caller() -> None:
            child = asyncio.create_task(_slow_to_end(ended))
            await asyncio.sleep(0)
            await cancel_and_wait(child)
            went_on.set()
            await asyncio.sleep(60)

        task = asyncio.create_task(caller())
        await asyncio.sleep(0.05)  # the caller waits for its child to end
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=5)
        return bool(done) and task.cancelled(), went_on.is_set()

    stopped, went_on = run(scenario(), 10)
    assert stopped and not went_on


def test_raise_if_cancelling_catches_a_swallowed_cancellation() -> None:
    """A cancellation that arrives with the result of ``asyncio.wait_for`` (lost by it on
    Python 3.11) still stops a loop that checks after its waits."""

    async def scenario() -> bool:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[int] = loop.create_future()
        rounds = 0

        async def worker() -> None:
            nonlocal rounds
            while True:
                raise_if_cancelling()
                # swallowed, as wait_for on 3.11 does when the result is there
                with contextlib.suppress(asyncio.CancelledError):
                    await ready
                rounds += 1
                await asyncio.sleep(0.01)

        task = asyncio.create_task(worker())
        await asyncio.sleep(0.01)
        ready.set_result(1)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=5)
        return bool(done) and task.cancelled() and rounds <= 1

    assert run(scenario(), 10)


def test_a_count_left_from_before_does_not_read_as_a_cancellation() -> None:
    """On 3.11 a task group can leave its parent counted as cancelling for good: waiting for a
    cancelled child afterwards still returns."""

    async def scenario() -> bool:
        this = asyncio.current_task()
        assert this is not None
        this.cancel()
        with contextlib.suppress(asyncio.CancelledError):  # not uncancelled: the count stays 1
            await asyncio.sleep(1)
        assert this.cancelling() == 1
        ended = asyncio.Event()
        child = asyncio.create_task(_slow_to_end(ended))
        await asyncio.sleep(0)
        await cancel_and_wait(child)
        return ended.is_set()

    assert run(scenario(), 10)
