"""systemd's service notifications (``Type=notify``): readiness and the watchdog, no dependency.

When systemd starts the daemon with ``NOTIFY_SOCKET`` set, :func:`notify` sends it datagrams such
as ``READY=1`` (the robot takes commands), ``STATUS=…`` (shown by ``systemctl status``),
``WATCHDOG=1`` (alive; with ``WatchdogSec=`` systemd restarts a daemon that stops sending it)
and ``STOPPING=1``. Without ``NOTIFY_SOCKET`` every call does nothing, so the same code runs
outside systemd.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

__all__ = ["notify", "watchdog", "watchdog_interval_s"]

logger = logging.getLogger(__name__)


def _address() -> str | None:
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return None
    return "\0" + address[1:] if address.startswith("@") else address


def notify(*lines: str) -> bool:
    """Send ``lines`` (``KEY=value``) to systemd; whether there was a socket to send to."""
    address = _address()
    if address is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.connect(address)
            sock.sendall("\n".join(lines).encode())
    except OSError as exc:
        logger.warning("systemd notification %s failed: %s", lines, exc)
        return False
    return True


def watchdog_interval_s() -> float | None:
    """Half of systemd's watchdog timeout (``WATCHDOG_USEC``) for this process, or None."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return max(0.5, int(usec) / 2e6)
    except ValueError:
        return None


async def watchdog() -> None:
    """Send ``WATCHDOG=1`` every half timeout while the event loop runs (a blocked loop stops
    it, and systemd restarts the daemon); returns at once without a watchdog."""
    interval = watchdog_interval_s()
    if interval is None:
        return
    while True:
        notify("WATCHDOG=1")
        await asyncio.sleep(interval)
