"""Helpers of the robot tests: a deadline around asyncio.run, an MQTT recorder, profiles."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import aiomqtt

from robot.config import RobotConfig, load_config

T = TypeVar("T")
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def run(coro: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def sim_config(**simulation: Any) -> RobotConfig:
    """configs/simulated.toml with ``[simulation]`` overrides."""
    config = load_config(CONFIGS / "simulated.toml")
    assert config.simulation is not None
    return config.model_copy(update={"simulation": config.simulation.model_copy(update=simulation)})


class Recorder:
    """Subscribes to ``topics`` on a broker and keeps every message (JSON decoded when it is).
    Reconnects by itself (with a persistent session) if the broker restarts."""

    def __init__(self, host: str, port: int, *topics: str, client_id: str = "test-recorder"):
        self.host, self.port, self.topics = host, port, topics
        self.client_id = client_id
        self.messages: list[tuple[str, Any, bool]] = []
        self._task: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()
        self.client: aiomqtt.Client | None = None

    async def _run(self) -> None:
        while True:
            try:
                async with aiomqtt.Client(
                    self.host, self.port, identifier=self.client_id, clean_session=False
                ) as client:
                    self.client = client
                    for topic in self.topics:
                        await client.subscribe(topic, qos=1)
                    self.subscribed.set()
                    async for message in client.messages:
                        raw = message.payload if isinstance(message.payload, bytes) else b""
                        try:
                            value: Any = json.loads(raw)
                        except (json.JSONDecodeError, UnicodeDecodeError):
                            value = raw.decode(errors="replace")
                        self.messages.append((str(message.topic), value, bool(message.retain)))
            except aiomqtt.MqttError:
                self.client = None
                await asyncio.sleep(0.1)

    async def __aenter__(self) -> Recorder:
        self._task = asyncio.create_task(self._run())
        await asyncio.wait_for(self.subscribed.wait(), 10)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def publish(self, topic: str, payload: str | bytes) -> None:
        for _ in range(100):
            if self.client is not None:
                with contextlib.suppress(aiomqtt.MqttError):
                    await self.client.publish(topic, payload, qos=1)
                    return
            await asyncio.sleep(0.05)
        raise TimeoutError(f"could not publish to {topic}")

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        out = []
        for topic, value, _ in self.messages:
            parts = topic.split("/")
            if len(parts) == 4 and parts[2] == "event" and (name is None or parts[3] == name):
                out.append(value)
        return out

    def event_names(self) -> list[str]:
        return [t.split("/")[3] for t, _, _ in self.messages if t.split("/")[2:3] == ["event"]]

    def on(self, topic: str) -> list[Any]:
        return [v for t, v, _ in self.messages if t == topic]

    async def wait(self, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                names = self.event_names()
                raise TimeoutError(f"condition not met in {timeout} s; events so far: {names}")
            await asyncio.sleep(0.02)


def six_face_job(path: Path) -> str:
    """A journal at ``path`` whose one finished job was a six-face robot's (an R turn
    executed): not the actions of a turntable or gripper robot. The job's id."""
    from robot.daemon.events import JobState
    from robot.journal import Journal

    journal = Journal(path)
    try:
        old = journal.create_job("start", 3)
        journal.record_plan(old, "R", {}, "", [("R", 1, 1, False)])
        journal.record_executed(old, 0, None)
        journal.finish(old, JobState.DONE)
    finally:
        journal.close()
    return old
