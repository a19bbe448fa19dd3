"""Fault injection for the simulated firmware, and the model of the serial line itself.

A fault spec is a comma-separated list (``cuberobot firmware-sim --faults SPEC``)::

    flip=P          each byte, either direction, has one bit flipped with probability P
    drop=P          each byte, either direction, is lost with probability P
    dup=P           each frame, either direction, is delivered twice with probability P
    delay=P:MS      each chunk stalls the line for up to MS milliseconds with probability P
    reset@K         the firmware resets halfway through move index K (once)
    wipe@K          as reset@K, and the reset loses the non-volatile memory: the move counters
                    come back at zero (a corrupt EEPROM, a board swapped with power on)
    stall=M@K       motor M (U R F D L B or 0..5) stalls halfway through move index K (once)
    vanish@K:MS     the port disappears when move index K starts, for MS milliseconds (once)

Example: ``flip=1e-3,drop=2e-4,dup=0.01,delay=0.02:30,reset@40,stall=U@7,vanish@20:400``
(``wipe@12``: a reset that loses the counters).
Durations (MS) are finite, 0 .. :data:`MAX_FAULT_MS` (an hour).
All randomness comes from one seeded :class:`random.Random`, so a spec and a seed replay the same
faults byte for byte (given the same traffic).

:class:`SerialLine` is one direction of the wire: it applies the random byte faults and delivers
bytes no faster than the baud rate allows (10 bits a byte, 8N1), in order.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from firmware_protocol.codec import BITS_PER_BYTE

__all__ = ["MAX_FAULT_MS", "FaultSpec", "SerialLine", "parse_fault_spec"]

#: The longest line stall or vanished port a spec may ask for (ms): an hour.
MAX_FAULT_MS = 3_600_000.0

logger = logging.getLogger(__name__)

_FACES = "URFDLB"


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """What to break, and when. The default breaks nothing."""

    flip: float = 0.0
    drop: float = 0.0
    dup: float = 0.0
    delay: float = 0.0
    delay_ms: float = 0.0
    resets: frozenset[int] = field(default_factory=frozenset)
    #: move indices halfway through which a reset also loses the non-volatile memory
    wipes: frozenset[int] = field(default_factory=frozenset)
    stalls: frozenset[tuple[int, int]] = field(default_factory=frozenset)  # (motor, move index)
    vanish: frozenset[tuple[int, float]] = field(default_factory=frozenset)  # (move index, ms)

    def __post_init__(self) -> None:
        for name in ("flip", "drop", "dup", "delay"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"fault {name}={value}: a probability must be within 0..1")
        if self.delay_ms < 0:
            raise ValueError(f"fault delay: {self.delay_ms} ms must be ≥ 0")

    @property
    def byte_faults(self) -> bool:
        return bool(self.flip or self.drop or self.dup or self.delay)

    def __str__(self) -> str:
        parts = []
        for name in ("flip", "drop", "dup"):
            if getattr(self, name):
                parts.append(f"{name}={getattr(self, name):g}")
        if self.delay:
            parts.append(f"delay={self.delay:g}:{self.delay_ms:g}")
        parts += [f"reset@{k}" for k in sorted(self.resets)]
        parts += [f"wipe@{k}" for k in sorted(self.wipes)]
        parts += [f"stall={_FACES[m]}@{k}" for m, k in sorted(self.stalls)]
        parts += [f"vanish@{k}:{ms:g}" for k, ms in sorted(self.vanish)]
        return ",".join(parts) or "none"


def _probability(item: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"fault {item!r}: {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"fault {item!r}: probability {value} is not within 0..1")
    return value


def _index(item: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"fault {item!r}: move index {text!r} is not an integer") from None
    if value < 1:
        raise ValueError(f"fault {item!r}: move indices start at 1")
    return value


def _millis(item: str, text: str) -> float:
    try:
        value = float(text.removesuffix("ms"))
    except ValueError:
        raise ValueError(f"fault {item!r}: {text!r} is not a duration in ms") from None
    if not math.isfinite(value):  # nan slept forever: the firmware went silent
        raise ValueError(f"fault {item!r}: duration must be a finite number of ms")
    if value < 0:
        raise ValueError(f"fault {item!r}: duration must be ≥ 0 ms")
    if value > MAX_FAULT_MS:
        raise ValueError(f"fault {item!r}: duration must be at most {MAX_FAULT_MS:g} ms")
    return value


def parse_fault_spec(text: str) -> FaultSpec:
    """Parse a spec (see the module docstring); ``ValueError`` names the offending item."""
    values: dict[str, float] = {}
    resets: set[int] = set()
    wipes: set[int] = set()
    stalls: set[tuple[int, int]] = set()
    vanish: set[tuple[int, float]] = set()
    for raw in text.split(","):
        item = raw.strip()
        if not item or item == "none":
            continue
        if item.startswith("reset@"):
            resets.add(_index(item, item[6:]))
        elif item.startswith("wipe@"):
            wipes.add(_index(item, item[5:]))
        elif item.startswith("vanish@"):
            where, _, duration = item[7:].partition(":")
            vanish.add((_index(item, where), _millis(item, duration or "500")))
        elif item.startswith("stall="):
            motor_text, at, where = item[6:].partition("@")
            if not at:
                raise ValueError(f"fault {item!r}: write stall=MOTOR@INDEX, e.g. stall=U@7")
            if motor_text.upper() in _FACES and len(motor_text) == 1:
                motor = _FACES.index(motor_text.upper())
            elif motor_text.isdigit() and int(motor_text) < 6:
                motor = int(motor_text)
            else:
                raise ValueError(f"fault {item!r}: motor {motor_text!r} is not U R F D L B or 0..5")
            stalls.add((motor, _index(item, where)))
        elif "=" in item:
            name, _, value = item.partition("=")
            if name == "delay":
                prob, _, ms = value.partition(":")
                values["delay"] = _probability(item, prob)
                values["delay_ms"] = _millis(item, ms or "20")
            elif name in ("flip", "drop", "dup"):
                values[name] = _probability(item, value)
            else:
                raise ValueError(
                    f"fault {item!r}: unknown fault {name!r}; "
                    "known: flip drop dup delay reset@ wipe@ stall= vanish@"
                )
        else:
            raise ValueError(
                f"fault {item!r}: not understood; known: flip=P drop=P dup=P delay=P:MS "
                "reset@K wipe@K stall=M@K vanish@K:MS"
            )
    return FaultSpec(
        flip=values.get("flip", 0.0),
        drop=values.get("drop", 0.0),
        dup=values.get("dup", 0.0),
        delay=values.get("delay", 0.0),
        delay_ms=values.get("delay_ms", 0.0),
        resets=frozenset(resets),
        wipes=frozenset(wipes),
        stalls=frozenset(stalls),
        vanish=frozenset(vanish),
    )


class SerialLine:
    """One direction of a UART at ``baud`` with random byte faults.

    ``send(data)`` returns at once; ``deliver`` is called later, in order, with the bytes that
    survived, each chunk no earlier than the line could have carried it. ``baud=0`` means no
    pacing (bytes are delivered on the next loop iteration).
    """

    def __init__(
        self,
        deliver: Callable[[bytes], None],
        *,
        baud: int,
        faults: FaultSpec,
        rng: random.Random,
        name: str,
    ) -> None:
        self._deliver = deliver
        self._byte_s = BITS_PER_BYTE / baud if baud > 0 else 0.0
        self._faults = faults
        self._rng = rng
        self._name = name
        self._queue: deque[tuple[float, bytes]] = deque()
        self._busy_until = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._partial = bytearray()  # bytes since the last delimiter, for frame duplication
        self.bytes_in = 0
        self.bytes_out = 0
        self.flipped = 0
        self.dropped = 0
        self.duplicated = 0
        self.stalls = 0

    def send(self, data: bytes) -> None:
        """Put ``data`` on the line."""
        if not data:
            return
        self.bytes_in += len(data)
        data = self._mangle(data)
        loop = asyncio.get_running_loop()
        now = loop.time()
        start = max(now, self._busy_until)
        f = self._faults
        if f.delay and self._rng.random() < f.delay:
            start += self._rng.uniform(0.0, f.delay_ms / 1000.0)
            self.stalls += 1
        if not data:
            self._busy_until = start
            return
        # Each frame (up to and including its delimiter) arrives when its own last byte does,
        # not when the whole chunk has crossed the line.
        piece_start = 0
        while piece_start < len(data):
            cut = data.find(b"\x00", piece_start)
            piece_end = len(data) if cut < 0 else cut + 1
            start += (piece_end - piece_start) * self._byte_s
            self._queue.append((start, data[piece_start:piece_end]))
            piece_start = piece_end
        self._busy_until = start
        if self._timer is None:
            self._timer = loop.call_at(self._queue[0][0], self._flush)

    def clear(self) -> None:
        """Forget bytes in flight (the port went away)."""
        self._queue.clear()
        self._partial.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _flush(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        while self._queue and self._queue[0][0] <= now + 1e-6:
            _, data = self._queue.popleft()
            self.bytes_out += len(data)
            self._deliver(data)
        if self._queue:
            self._timer = loop.call_at(self._queue[0][0], self._flush)

    def _mangle(self, data: bytes) -> bytes:
        f = self._faults
        if not f.byte_faults:
            return data
        rng = self._rng
        out = bytearray()
        for byte in data:
            if f.drop and rng.random() < f.drop:
                self.dropped += 1
                continue
            if f.flip and rng.random() < f.flip:
                byte ^= 1 << rng.randrange(8)
                self.flipped += 1
            out.append(byte)
            if f.dup:
                self._partial.append(byte)
                if len(self._partial) > 300:  # noise without delimiters: no frame to duplicate
                    self._partial.clear()
                if byte == 0:
                    if rng.random() < f.dup:
                        out += self._partial
                        self.duplicated += 1
                    self._partial.clear()
        return bytes(out)
