"""The daemon's MQTT side: topics, payloads, Home Assistant discovery, reconnection.

Topics, under ``<base_topic>/<robot id>/`` (the README's daemon section has every payload)::

    availability        retained   "online" / "offline" (the last will says "offline")
    status              retained   JSON: state, job_id, progress, moves_done, moves_total,
                                   eta_s, timestamp, ...
    event/<name>        QoS 1      JSON with "timestamp": scan_complete, solution,
                                   move_executed, done, error, ...
    cmd/<verb>          in         JSON command (robot.commands)
    cmd/<verb>/reply    out        JSON reply
    reply               out        the same replies, all verbs on one topic (dashboards)

Home Assistant discovery (``[mqtt.discovery]``, :mod:`robot.discovery`): a device with state,
progress, time-left, last-error, last-reply and firmware sensors, job events and command
buttons, published retained under
``<prefix>/<component>/<node>/<object>/config`` and again whenever ``<prefix>/status`` says
``online`` (Home Assistant restarted; at most once every :data:`HA_REANNOUNCE_S`, more are folded
into one), until :meth:`MqttBridge.withdraw_discovery` removes them.

The bridge never blocks the daemon: publishing only queues. One task keeps the connection:
connect, subscribe, announce (availability, discovery, current status), then send the queue and
dispatch incoming commands; when the broker goes away it reconnects with jittered exponential
back-off and republishes the retained state. Events wait in a bounded queue while the broker is
down (oldest dropped first past ``queue_limit``, with a warning), and a message leaves the queue
only once the broker acknowledged it, so nothing is lost to a reconnect. The daemon learns of
each acknowledged ``move_executed`` event and journals it, so the events a crash swallowed are
announced again after the restart (with ``replayed: true``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import ssl
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiomqtt

from firmware_protocol.tasks import cancel_and_wait, raise_if_cancelling
from robot.commands import shown as shown_text
from robot.config import RobotConfig
from robot.discovery import discovery_configs, discovery_topics

__all__ = ["MqttBridge", "OutMessage", "discovery_messages", "timestamp"]

logger = logging.getLogger(__name__)

#: The least time between two re-announcements of discovery that Home Assistant's ``online``
#: asks for (it says it once when it starts; more within this are folded into one).
HA_REANNOUNCE_S = 10.0

CommandHandler = Callable[[str, bytes], Awaitable[None]]


def timestamp() -> float:
    """Seconds since the epoch, to the millisecond (the ``timestamp`` of every payload)."""
    return round(time.time(), 3)


@dataclass(frozen=True, slots=True)
class OutMessage:
    topic: str
    payload: bytes
    qos: int = 1
    retain: bool = False
    #: called once the broker acknowledged the message (the daemon marks events as reported)
    on_delivered: Callable[[], None] | None = None


def _json(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":"), sort_keys=False).encode()


def discovery_messages(config: RobotConfig, sw_version: str) -> list[OutMessage]:
    """Home Assistant discovery configs for this robot (retained; :mod:`robot.discovery`)."""
    return [OutMessage(t, p, qos=1, retain=True) for t, p in discovery_configs(config, sw_version)]


class MqttBridge:
    """The MQTT connection of one daemon (see the module docstring).

    ``on_command(verb, payload)`` is awaited for every message on ``cmd/<verb>``; it must not
    block (the daemon queues the work).
    """

    def __init__(
        self,
        config: RobotConfig,
        on_command: CommandHandler,
        *,
        host: str,
        port: int,
        sw_version: str = "",
    ) -> None:
        self.config = config
        self.host = host
        self.port = port
        self.sw_version = sw_version
        self._on_command = on_command
        self._queue: deque[OutMessage] = deque()
        self._wake = asyncio.Event()
        self._status: bytes | None = None
        self._status_dirty = False
        self._announce = False
        #: when Home Assistant's ``online`` next re-announces discovery (monotonic; None: not
        #: asked), when it last did, and the ``online`` messages since that one asked for it
        #: (folded into it)
        self._announce_at: float | None = None
        self._ha_announced_at: float | None = None
        self.ha_online_folded = 0
        self.connected = asyncio.Event()
        self.connections = 0
        self.dropped = 0
        #: messages MQTT cannot carry, dropped (see :meth:`_drop_unsendable`)
        self.unsendable = 0
        #: retained commands ignored (see :meth:`_ignore_retained`)
        self.ignored_retained = 0
        self._stopping = False
        self._withdrawn = False
        self._current: aiomqtt.Client | None = None
        mq = config.mqtt
        self._identifier = (
            mq.client_id or f"cuberobot-{config.robot.id}-{random.getrandbits(32):08x}"
        )

    # --- publishing (never blocks) ------------------------------------------------------------
    def _enqueue(self, message: OutMessage) -> None:
        if len(self._queue) >= self.config.mqtt.queue_limit:
            self._queue.popleft()
            self.dropped += 1
            if self.dropped % 1000 == 1:  # the first drop and every 1000th: not a line each
                logger.warning(
                    "MQTT queue full (%d messages; broker %s:%d unreachable or too slow): "
                    "dropped the oldest (%d dropped so far)",
                    self.config.mqtt.queue_limit,
                    self.host,
                    self.port,
                    self.dropped,
                )
        self._queue.append(message)
        self._wake.set()

    def publish_status(self, status: dict[str, Any]) -> None:
        """Set the retained status (only the latest is sent if several wait)."""
        self._status = _json({**status, "timestamp": timestamp()})
        self._status_dirty = True
        self._wake.set()

    def publish_event(
        self,
        name: str,
        payload: dict[str, Any],
        on_delivered: Callable[[], None] | None = None,
    ) -> None:
        """Queue an event; ``on_delivered`` runs once the broker acknowledged it."""
        body = {"event": name, **payload, "timestamp": timestamp()}
        self._enqueue(
            OutMessage(self.config.topic("event", name), _json(body), on_delivered=on_delivered)
        )

    def reply(self, verb: str, payload: dict[str, Any]) -> None:
        """A command's reply, on ``cmd/<verb>/reply`` and, for dashboards that cannot
        subscribe per verb (Home Assistant's "Last command reply"), on ``reply``."""
        body = _json({**payload, "timestamp": timestamp()})
        self._enqueue(OutMessage(self.config.topic("cmd", verb, "reply"), body))
        self._enqueue(OutMessage(self.config.topic("reply"), body))

    def withdraw_discovery(self) -> None:
        """Remove this robot's Home Assistant device: queue an empty retained payload on every
        discovery topic (:func:`robot.discovery.discovery_topics`) and announce no more (a
        short-lived robot such as ``cuberobot demo`` does this before it stops; :meth:`flush`
        waits for the broker to take them)."""
        self._withdrawn = True
        self._announce = False
        for topic in discovery_topics(self.config):
            self._enqueue(OutMessage(topic, b"", qos=1, retain=True))

    @property
    def pending(self) -> int:
        return len(self._queue) + (1 if self._status_dirty else 0)

    # --- connection -----------------------------------------------------------------------------
    def _tls(self) -> aiomqtt.TLSParameters | None:
        tls = self.config.mqtt.tls
        if not tls.enabled:
            return None
        resolve = self.config.resolve
        return aiomqtt.TLSParameters(
            ca_certs=str(resolve(tls.ca_file)) if tls.ca_file else None,
            certfile=str(resolve(tls.cert_file)) if tls.cert_file else None,
            keyfile=str(resolve(tls.key_file)) if tls.key_file else None,
            cert_reqs=ssl.CERT_NONE if tls.insecure else ssl.CERT_REQUIRED,
        )

    def _client(self) -> aiomqtt.Client:
        mq = self.config.mqtt
        tls = self._tls()
        return aiomqtt.Client(
            self.host,
            self.port,
            identifier=self._identifier,
            username=mq.username or None,
            password=self.config.mqtt_password(),
            keepalive=mq.keepalive_s,
            will=aiomqtt.Will(self.config.topic("availability"), b"offline", qos=1, retain=True),
            tls_params=tls,
            tls_insecure=mq.tls.insecure if tls is not None else None,
            timeout=10.0,
        )

    async def run(self) -> None:
        """Keep connected until cancelled (see the module docstring)."""
        mq = self.config.mqtt
        delay = mq.reconnect_min_s
        while True:
            try:
                async with self._client() as client:
                    delay = mq.reconnect_min_s
                    await self._session(client)
            except aiomqtt.MqttError as exc:
                self.connected.clear()
                # aiomqtt's disconnect on the way out of a cancellation may time out and turn
                # it into an MqttError: a cancelled bridge must not reconnect
                raise_if_cancelling()
                if self._stopping:
                    return
                wait = delay * (0.5 + random.random())
                logger.warning(
                    "MQTT broker %s:%d: %s; reconnecting in %.1f s", self.host, self.port, exc, wait
                )
                await asyncio.sleep(wait)
                delay = min(delay * 2, mq.reconnect_max_s)

    async def _session(self, client: aiomqtt.Client) -> None:
        self.connections += 1
        cfg = self.config
        await client.subscribe(cfg.topic("cmd", "+"), qos=1)
        if cfg.mqtt.discovery.enabled:
            await client.subscribe(f"{cfg.mqtt.discovery.prefix}/status", qos=1)
        await client.publish(cfg.topic("availability"), b"online", qos=1, retain=True)
        if cfg.mqtt.discovery.enabled:
            await self._publish_discovery(client)
        raise_if_cancelling()  # (aiomqtt waits with wait_for: see firmware_protocol.tasks)
        if self._status is not None:
            self._status_dirty = True  # republish retained state after every (re)connect
        logger.info("MQTT connected to %s:%d as %s", self.host, self.port, self._identifier)
        self.connected.set()
        self._current = client
        # two tasks awaited with asyncio.wait, not a TaskGroup: on 3.11 a group whose child
        # fails (the broker went away) leaves this task counted as cancelling, which would
        # read as a stop of the bridge (firmware_protocol.tasks)
        tasks = (
            asyncio.create_task(self._sender(client), name="mqtt-sender"),
            asyncio.create_task(self._receiver(client), name="mqtt-receiver"),
        )
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()  # the MqttError that ended the session
            raise aiomqtt.MqttError("the broker ended the session")
        finally:
            self._current = None
            for task in tasks:
                with contextlib.suppress(Exception):  # (the other one's MqttError)
                    await cancel_and_wait(task)

    async def _publish_discovery(self, client: aiomqtt.Client) -> None:
        if self._withdrawn:
            return
        for message in discovery_messages(self.config, self.sw_version):
            await client.publish(message.topic, message.payload, qos=1, retain=True)
        logger.info(
            "Home Assistant discovery published under %s", self.config.mqtt.discovery.prefix
        )

    def _ha_online(self) -> None:
        """Home Assistant said ``online``: re-announce discovery now, or, within
        :data:`HA_REANNOUNCE_S` of the last re-announcement, once at its end (a client that
        floods the status topic gets one burst of discovery an interval, not one a message)."""
        if self._announce_at is not None:  # one is already due: this one adds nothing
            self.ha_online_folded += 1
            return
        now = time.monotonic()
        last = self._ha_announced_at
        self._announce_at = now if last is None else max(now, last + HA_REANNOUNCE_S)
        self._wake.set()

    async def _wait_for_work(self) -> None:
        """Until something is to be sent, or a re-announcement Home Assistant asked for is
        due (then it is marked to be sent)."""
        due = self._announce_at
        if due is None or due > time.monotonic():
            wait = None if due is None else due - time.monotonic()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()
            self._wake.clear()
        due = self._announce_at
        if due is not None and time.monotonic() >= due:
            folded, self.ha_online_folded = self.ha_online_folded, 0
            logger.info(
                "Home Assistant came online: re-announcing discovery%s",
                f" ({folded} more 'online' within {HA_REANNOUNCE_S:g} s folded into it)"
                if folded
                else "",
            )
            self._announce_at = None
            self._ha_announced_at = time.monotonic()
            self._announce = True

    async def _sender(self, client: aiomqtt.Client) -> None:
        while True:
            raise_if_cancelling()  # (aiomqtt waits with wait_for: see firmware_protocol.tasks)
            await self._wait_for_work()
            while self._queue or self._status_dirty or self._announce:
                raise_if_cancelling()
                if self._announce:
                    self._announce = False
                    await self._publish_discovery(client)
                    self._status_dirty = self._status is not None
                if self._queue:
                    message = self._queue[0]
                    try:
                        await client.publish(
                            message.topic, message.payload, qos=message.qos, retain=message.retain
                        )
                    except ValueError as exc:
                        # a message MQTT cannot carry (the reply topic of a 65,535-byte verb
                        # topic is too long): drop it, not the session (it would come back
                        # first after every reconnect)
                        self._drop_unsendable(message, exc)
                        continue
                    # only now is it delivered (PUBACK for QoS 1): drop it from the queue
                    if self._queue and self._queue[0] is message:
                        self._queue.popleft()
                    if message.on_delivered is not None:
                        message.on_delivered()
                    continue
                if self._status_dirty and self._status is not None:
                    self._status_dirty = False
                    payload = self._status
                    try:
                        await client.publish(
                            self.config.topic("status"), payload, qos=1, retain=True
                        )
                    except aiomqtt.MqttError:
                        self._status_dirty = True
                        raise

    def _ignore_retained(self, topic: str) -> None:
        """A command the broker kept (published with retain) and replays at every (re)connect:
        run, it would start or home the robot after each network hiccup. Never run."""
        self.ignored_retained += 1
        shown = shown_text(topic, 80)  # (a newline in a topic must not start a log line)
        logger.warning(
            "MQTT: ignored a retained command on %s (commands are never retained: the broker "
            "replays it at every connect); clear it while the daemon is stopped: "
            "mosquitto_pub -r -n -t '%s'",
            shown,
            shown,
        )

    def _drop_unsendable(self, message: OutMessage, exc: ValueError) -> None:
        if self._queue and self._queue[0] is message:
            self._queue.popleft()
        self.dropped += 1
        self.unsendable += 1
        if self.unsendable % 100 != 1:  # the first and every 100th: a flood is not a line each
            return
        shown = shown_text(message.topic, 80)
        logger.error(
            "MQTT: cannot publish on %s (%d bytes): %s; dropped (%d such so far)",
            shown,
            len(message.topic.encode("utf-8", errors="surrogatepass")),
            exc,
            self.unsendable,
        )

    async def _receiver(self, client: aiomqtt.Client) -> None:
        cmd_prefix = self.config.topic("cmd") + "/"
        ha_status = f"{self.config.mqtt.discovery.prefix}/status"
        async for message in client.messages:
            topic = str(message.topic)
            payload = message.payload if isinstance(message.payload, bytes) else b""
            if topic == ha_status:
                if payload.strip().lower() == b"online":
                    self._ha_online()
                continue
            if topic.startswith(cmd_prefix):
                verb = topic[len(cmd_prefix) :]
                if "/" in verb:
                    continue
                if message.retain:
                    self._ignore_retained(topic)
                    continue
                await self._on_command(verb, payload)
                raise_if_cancelling()

    async def flush(self, timeout_s: float = 5.0) -> bool:
        """Wait until every queued message was delivered (False on timeout)."""
        deadline = time.monotonic() + timeout_s
        while self.pending:
            if time.monotonic() > deadline:
                return False
            self._wake.set()
            await asyncio.sleep(0.02)
        return True

    async def last_words(self, status: dict[str, Any], timeout_s: float = 3.0) -> bool:
        """The daemon is dying of an error: publish its final status and ``offline`` (both
        retained) on a connection of their own (the bridge's task is already cancelled, and
        its clean disconnect would have suppressed the last will). Whether it got through."""
        self._stopping = True
        mq = self.config.mqtt
        tls = self._tls()
        try:
            async with asyncio.timeout(timeout_s):
                async with aiomqtt.Client(
                    self.host,
                    self.port,
                    identifier=f"{self._identifier}-last",
                    username=mq.username or None,
                    password=self.config.mqtt_password(),
                    tls_params=tls,
                    tls_insecure=mq.tls.insecure if tls is not None else None,
                    timeout=timeout_s,
                ) as client:
                    body = _json({**status, "timestamp": timestamp()})
                    await client.publish(self.config.topic("status"), body, qos=1, retain=True)
                    await client.publish(
                        self.config.topic("availability"), b"offline", qos=1, retain=True
                    )
            return True
        except (aiomqtt.MqttError, TimeoutError, OSError) as exc:
            logger.error("MQTT: could not publish the final status and offline: %s", exc)
            return False

    async def close(self, timeout_s: float = 3.0) -> None:
        """Deliver what is queued (bounded), then say "offline" and disconnect cleanly. The
        caller cancels :meth:`run` afterwards."""
        self._stopping = True
        if not self.connected.is_set():
            return
        await self.flush(timeout_s)
        client = self._current
        if client is None:
            return
        try:
            async with asyncio.timeout(timeout_s):
                await client.publish(
                    self.config.topic("availability"), b"offline", qos=1, retain=True
                )
        except (aiomqtt.MqttError, TimeoutError) as exc:
            logger.warning("MQTT: could not publish offline on close: %s", exc)
