"""A noisy serial line between the host link and the emulated board: a relay of two ptys that
flips bits, drops bytes and repeats chunks with seeded probabilities, and can make the host's
port vanish for a while (the path is a symlink that comes back pointing at a new pty)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import tty
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LineFaults:
    flip: float = 0.0  # per byte: one random bit inverted
    drop: float = 0.0  # per byte: lost
    dup: float = 0.0  # per frame: delivered twice


class NoisyLine:
    """``path`` is what the host opens; bytes reach ``board_port`` through the faults."""

    def __init__(self, board_port: str, directory: Path, faults: LineFaults, seed: int) -> None:
        self.board_port = board_port
        self.path = directory / "ttyNOISY0"
        self.faults = faults
        self.rng = random.Random(seed)
        self.mangled = 0
        self._frames: dict[str, bytearray] = {"host": bytearray(), "board": bytearray()}
        self._board = -1
        self._master = -1
        self._slave = -1

    def start(self) -> str:
        self._board = os.open(self.board_port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self._board)
        asyncio.get_running_loop().add_reader(self._board, self._from_board)
        self._open_host_side()
        return str(self.path)

    def _open_host_side(self) -> None:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        tmp = self.path.with_suffix(".tmp")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(os.ttyname(self._slave))
        tmp.replace(self.path)
        asyncio.get_running_loop().add_reader(self._master, self._from_host)

    def _close_host_side(self) -> None:
        if self._master >= 0:
            asyncio.get_running_loop().remove_reader(self._master)
            os.close(self._master)
            os.close(self._slave)
            self._master = self._slave = -1
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def vanish(self, seconds: float) -> None:
        """Unplug the host's port, wait, plug a new one in at the same path."""
        self._close_host_side()
        await asyncio.sleep(seconds)
        self._open_host_side()

    def close(self) -> None:
        self._close_host_side()
        if self._board >= 0:
            asyncio.get_running_loop().remove_reader(self._board)
            os.close(self._board)
            self._board = -1

    def _mangle(self, data: bytes, direction: str) -> bytes:
        """Flip and drop bytes; after a frame's delimiter, maybe send the whole frame again."""
        out = bytearray()
        frame = self._frames[direction]
        for byte in data:
            if self.rng.random() < self.faults.drop:
                self.mangled += 1
                continue
            if self.rng.random() < self.faults.flip:
                byte ^= 1 << self.rng.randrange(8)
                self.mangled += 1
            out.append(byte)
            frame.append(byte)
            if byte == 0:
                if self.rng.random() < self.faults.dup:
                    self.mangled += 1
                    out += frame
                frame.clear()
        return bytes(out)

    def _relay(self, source: int, sink: int, direction: str) -> None:
        try:
            data = os.read(source, 4096)
        except BlockingIOError:
            return
        except OSError:  # the host closed its end (EIO): look again in a moment
            loop = asyncio.get_running_loop()
            loop.remove_reader(source)
            loop.call_later(0.01, self._watch_again, source)
            return
        if sink < 0 or not data:
            return
        with contextlib.suppress(BlockingIOError, OSError):  # a full line loses bytes
            os.write(sink, self._mangle(data, direction))

    def _watch_again(self, source: int) -> None:
        if source == self._master:
            asyncio.get_running_loop().add_reader(source, self._from_host)

    def _from_host(self) -> None:
        self._relay(self._master, self._board, "host")

    def _from_board(self) -> None:
        self._relay(self._board, self._master, "board")
