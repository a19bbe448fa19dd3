"""Opening a session: HELLO with a fresh nonce, retried with back-off until the IDENT that
answers it (same nonce) arrives. Pure: time is an argument."""

from __future__ import annotations

from firmware_protocol.errors import ProtocolVersionError
from firmware_protocol.link.data import LinkConfig
from firmware_protocol.messages import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Hello,
    Ident,
    encode_message,
)

__all__ = ["Handshake", "check_version"]


class Handshake:
    """One HELLO (its sequence number and nonce fixed) and its retries."""

    def __init__(self, config: LinkConfig, seq: int, nonce: int, now: float) -> None:
        self.config = config
        self.nonce = nonce
        self.data = encode_message(Hello(nonce, config.watchdog_ms), seq)
        self.attempts = 1
        self._timeout = config.hello_timeout_s
        self.deadline = now + self._timeout

    def answers(self, ident: Ident) -> bool:
        """Whether ``ident`` answers this HELLO (a boot announcement has nonce 0)."""
        return ident.nonce != 0 and ident.nonce == self.nonce

    @property
    def exhausted(self) -> bool:
        return self.attempts >= self.config.hello_retries

    def retry(self, now: float) -> bytes:
        """The deadline passed and attempts remain: back off, return the HELLO to send again."""
        self.attempts += 1
        self._timeout = min(self._timeout * 2, self.config.max_backoff_s)
        self.deadline = now + self._timeout
        return self.data


def check_version(ident: Ident, port: str) -> ProtocolVersionError | None:
    """The error if the firmware speaks another protocol version, or announces what no firmware
    of this version can be: a move queue of 0 moves (no move could ever be sent: an execution
    waited for room for ever, silently) or no motor."""
    if ident.protocol_version not in SUPPORTED_VERSIONS:
        spoken = ", ".join(f"v{v}" for v in SUPPORTED_VERSIONS)
        return ProtocolVersionError(
            f"firmware on {port} speaks protocol v{ident.protocol_version}, this host speaks "
            f"{spoken} (v{PROTOCOL_VERSION} best); flash matching firmware or upgrade cuberobot",
            port,
        )
    for field, value in (("queue_depth", ident.queue_depth), ("motor_count", ident.motor_count)):
        if value == 0:
            return ProtocolVersionError(
                f"firmware on {port} announced {field} 0 in its IDENT: it could never run a "
                "move; flash matching firmware (firmware_protocol/PROTOCOL.md, IDENT)",
                port,
            )
    return None
