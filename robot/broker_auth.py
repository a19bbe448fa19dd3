"""The embedded broker's login check, an amqtt authentication plugin (see robot/broker.py).

Imported by amqtt by its dotted name when a broker with credentials starts, never at daemon
import time.
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass

from amqtt.plugins.base import BaseAuthPlugin
from amqtt.session import Session

__all__ = ["CredentialsAuthPlugin"]

logger = logging.getLogger(__name__)


class CredentialsAuthPlugin(BaseAuthPlugin):  # type: ignore[misc]  # amqtt is untyped
    """amqtt authentication: accept only the configured username and password."""

    @dataclass
    class Config:
        username: str = ""
        password: str = ""

    async def authenticate(self, *, session: Session) -> bool | None:
        expected_user = str(self._get_config_option("username", ""))
        expected_password = str(self._get_config_option("password", ""))
        if not expected_user:
            return False  # misconfigured: refuse rather than admit everyone
        given_user = session.username or ""
        given_password = session.password or ""
        ok = hmac.compare_digest(given_user.encode(), expected_user.encode()) and (
            hmac.compare_digest(given_password.encode(), expected_password.encode())
        )
        if not ok:
            logger.warning(
                "embedded MQTT broker: refused client %r (user %r): wrong or missing credentials",
                session.client_id,
                given_user or None,
            )
        return ok
