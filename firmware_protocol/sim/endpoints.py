"""Where the simulated firmware meets the host: a pseudo-terminal or a TCP port.

:class:`PtyEndpoint` creates a pty pair, puts it in raw mode and exposes the slave through a
stable symbolic link (``<dir>/ttySIM0 → /dev/pts/N``), the way ``/dev/serial/by-id/...`` names a
USB adapter. The host opens that path with pyserial like any serial device. When the ``vanish``
fault fires, the pty is closed and the link removed (the host sees the port disappear: reads fail
with EIO, opening fails with ENOENT); after the outage a new pty is created and the link points to
it again, so a host that reconnects to the same path finds the firmware again.

:class:`TcpEndpoint` listens on ``127.0.0.1:PORT`` for ``socket://127.0.0.1:PORT``; one host at
a time (a new connection replaces the old one); ``vanish`` closes the connection and the listening
socket for the outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import tty
from pathlib import Path

from firmware_protocol.sim.firmware import SimulatedFirmware
from firmware_protocol.tasks import cancel_and_wait

__all__ = ["PtyEndpoint", "TcpEndpoint"]

logger = logging.getLogger(__name__)


class PtyEndpoint:
    """A pseudo-terminal for the simulated firmware, reachable at a stable path."""

    def __init__(self, firmware: SimulatedFirmware, directory: Path | None = None) -> None:
        self.firmware = firmware
        self._own_dir = directory is None
        self._dir = directory or Path(tempfile.mkdtemp(prefix="cuberobot-fwsim-"))
        self.path = str(self._dir / "ttySIM0")
        self._master: int | None = None
        self._slave: int | None = None
        self._reopen: asyncio.TimerHandle | None = None
        self._closed = False
        self.slave_name = ""
        self.write_drops = 0
        self.vanishings = 0

    async def start(self) -> str:
        """Create the pty and the link; return the path the host should open."""
        self._open()
        return self.path

    async def close(self) -> None:
        """Close the pty and remove the link (and the directory if we made it)."""
        self._closed = True
        if self._reopen is not None:
            self._reopen.cancel()
        self._close_pty()
        if self._own_dir:
            with contextlib.suppress(OSError):
                self._dir.rmdir()

    def vanish(self, seconds: float) -> None:
        """Unplug the port for ``seconds`` (:class:`~firmware_protocol.sim.PortControl`)."""
        if self._master is None or self._closed:
            return
        logger.info("pty %s vanishes for %.3f s", self.path, seconds)
        self.vanishings += 1
        self._close_pty()
        self._reopen = asyncio.get_running_loop().call_later(seconds, self._open)

    def _open(self) -> None:
        self._reopen = None
        if self._closed:
            return
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.slave_name = os.ttyname(slave)
        tmp = self.path + ".new"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.symlink(self.slave_name, tmp)
        os.replace(tmp, self.path)
        asyncio.get_running_loop().add_reader(master, self._readable)
        self.firmware.port_attached(self._write, self)
        logger.debug("pty %s → %s", self.path, self.slave_name)

    def _close_pty(self) -> None:
        if self._master is None:
            return
        self.firmware.port_detached()
        asyncio.get_running_loop().remove_reader(self._master)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None

    def _readable(self) -> None:
        if self._master is None:
            return
        try:
            data = os.read(self._master, 4096)
        except BlockingIOError:
            return
        except OSError as err:
            logger.debug("pty read failed: %s", err)
            return
        if data:
            self.firmware.port_bytes(data)

    def _write(self, data: bytes) -> None:
        if self._master is None:
            return
        try:
            written = os.write(self._master, data)
        except (BlockingIOError, OSError):
            written = 0
        if written < len(data):  # nobody reading and the buffer is full: a UART drops bytes
            self.write_drops += len(data) - written


class _TcpClient(asyncio.Protocol):
    def __init__(self, endpoint: TcpEndpoint) -> None:
        self._endpoint = endpoint
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self._endpoint._client_connected(self)

    def data_received(self, data: bytes) -> None:
        if self._endpoint._client is self:
            self._endpoint.firmware.port_bytes(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._endpoint._client_lost(self)


class TcpEndpoint:
    """A TCP port for the simulated firmware (``socket://127.0.0.1:PORT``)."""

    def __init__(self, firmware: SimulatedFirmware, port: int, host: str = "127.0.0.1") -> None:
        self.firmware = firmware
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._client: _TcpClient | None = None
        self._reopen: asyncio.Task[None] | None = None
        self._closed = False
        self.vanishings = 0

    @property
    def path(self) -> str:
        return f"socket://{self.host}:{self.port}"

    async def start(self) -> str:
        """Listen; return the pyserial URL the host should open."""
        await self._listen()
        return self.path

    async def close(self) -> None:
        self._closed = True
        if self._reopen is not None:
            await cancel_and_wait(self._reopen)
        self._drop_client()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    def vanish(self, seconds: float) -> None:
        if self._server is None or self._closed:
            return
        logger.info("tcp %s vanishes for %.3f s", self.path, seconds)
        self.vanishings += 1
        self._drop_client()
        self._server.close()
        self._server = None
        self._reopen = asyncio.get_running_loop().create_task(
            self._listen_later(seconds), name="fwsim-tcp-reopen"
        )

    async def _listen(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _TcpClient(self), self.host, self.port, reuse_address=True
        )
        if self.port == 0:
            self.port = self._server.sockets[0].getsockname()[1]

    async def _listen_later(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        if not self._closed:
            await self._listen()

    def _drop_client(self) -> None:
        client = self._client
        self._client = None
        if client is not None:
            self.firmware.port_detached()
            if client.transport is not None:
                client.transport.abort()

    def _client_connected(self, client: _TcpClient) -> None:
        self._drop_client()
        self._client = client
        transport = client.transport
        assert transport is not None
        self.firmware.port_attached(transport.write, self)

    def _client_lost(self, client: _TcpClient) -> None:
        if self._client is client:
            self._client = None
            self.firmware.port_detached()
