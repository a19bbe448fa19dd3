"""End to end through real ptys: ``cuberobot send`` → a man in the middle → the simulated
firmware. The man in the middle passes every byte on and, after the third EXECUTED, injects
random valid frames (valid checksums, built with the real codec) and one forged EXECUTED with
``last_executed = 0xFFFFFF00``. ``send`` must report no more moves than the firmware ran and
exit 1 with a message that names the forged value."""

from __future__ import annotations

import contextlib
import os
import random
import re
import select
import signal
import threading
import tty
from collections.abc import Iterator

from firmware_protocol.codec import Frame, FrameDecoder, encode_frame
from firmware_protocol.messages import Executed, MessageType, encode_message

from .test_cli import firmware_sim, send

FORGED = 0xFFFFFF00
MOVES = "R U F D L B R' U' F' D' L' B' R2 U2 F2 D2 L2 B2 R U F D L"  # 23 moves
#: types a random frame may have: unknown ones, host → firmware ones, ERROR and NAK
RANDOM_TYPES = (0x00, 0x01, 0x02, 0x13, 0x7F, 0x80, 0x83, 0x86, 0x87, 0xC4, 0xFF)


class ManInTheMiddle:
    """A pty for the host, relaying to and from the firmware's pty, forging on the way back."""

    def __init__(self, firmware_port: str, seed: int = 7) -> None:
        self._rng = random.Random(seed)
        self._host, host_slave = os.openpty()
        tty.setraw(host_slave)
        self.path = os.ttyname(host_slave)
        self._host_slave = host_slave
        self._fw = os.open(firmware_port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self._fw)
        self.executed_seen = 0
        self.injected = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ManInTheMiddle:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        for fd in (self._host, self._host_slave, self._fw):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        pending = b""
        while not self._stop.is_set():
            ready, _, _ = select.select([self._host, self._fw], [], [], 0.05)
            if self._host in ready:
                with contextlib.suppress(OSError):
                    os.write(self._fw, os.read(self._host, 4096))
            if self._fw in ready:
                with contextlib.suppress(BlockingIOError):
                    pending += os.read(self._fw, 4096)
                while b"\x00" in pending:
                    body, pending = pending.split(b"\x00", 1)
                    self._to_host(body + b"\x00")

    def _to_host(self, frame: bytes) -> None:
        os.write(self._host, frame)
        decoded = [f for f in FrameDecoder().feed(frame) if isinstance(f, Frame)]
        if not decoded or decoded[0].type != MessageType.EXECUTED:
            return
        self.executed_seen += 1
        if self.executed_seen == 3:
            for _ in range(40):
                self._inject(self._random_frame())
            self._inject(encode_message(Executed(FORGED, FORGED, 16), decoded[0].seq + 1))
        elif self.executed_seen > 3:
            self._inject(self._random_frame())

    def _random_frame(self) -> bytes:
        rng = self._rng
        payload = rng.randbytes(rng.choice([0, 1, 7, 8, 9, 28, 31]))
        return encode_frame(Frame(rng.choice(RANDOM_TYPES), rng.randrange(0x10000), payload))

    def _inject(self, data: bytes) -> None:
        os.write(self._host, data)
        self.injected += 1


@contextlib.contextmanager
def sim_behind_a_mitm() -> Iterator[tuple[ManInTheMiddle, list[str]]]:
    """The simulated firmware on a pty, the man in the middle in front of it; the list gets
    the firmware's final report line once the block ends."""
    final: list[str] = []
    with firmware_sim("--pty", "--speed", "5") as (port, proc):
        with ManInTheMiddle(os.path.realpath(port)) as mitm:
            yield mitm, final
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0 and proc.stderr is not None
        final.append(proc.stderr.read())


def test_a_forged_executed_frame_is_not_believed_by_send() -> None:
    with sim_behind_a_mitm() as (mitm, final):
        done = send(mitm.path, MOVES)
        injected = mitm.injected
    (ran,) = [int(m) for m in re.findall(r"(\d+) moves executed", final[0])]
    reported = done.stdout.splitlines()
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert injected >= 41
    assert 3 <= len(reported) <= ran < 23  # never more than ran; the firmware was stopped early
    numbers = [line.split()[0] for line in reported]
    assert numbers == [f"{k}/23" for k in range(1, len(reported) + 1)]
    assert "cannot trust" in done.stderr and f"{FORGED:#x}" in done.stderr
    assert "re-scan the cube" in done.stderr
