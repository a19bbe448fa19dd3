"""A watchdog for the hostile-file tests: a call handed a FIFO must not wait for a writer."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest


def outcome_without_writer(fifo: Path, call: Callable[[], object]) -> list[object]:
    """What ``call`` returned or raised (one item); fails the test if it waited on ``fifo``.

    The call runs on a thread; if it is still running after 10 s, the FIFO is opened for
    writing once to unblock it (so no thread is left behind) and the test fails.
    """
    got: list[object] = []

    def body() -> None:
        try:
            got.append(call())
        except BaseException as exc:  # handed to the test thread
            got.append(exc)

    worker = threading.Thread(target=body)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        with open(fifo, "wb"):
            pass
        worker.join(10)
        pytest.fail(f"{call} waited for a writer on {fifo}")
    return got
