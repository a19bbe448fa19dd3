"""The embedded broker's login and access rules, amqtt plugins (see robot/broker.py).

Imported by amqtt by their dotted names when a broker with credentials starts, never at daemon
import time.

* :class:`CredentialsAuthPlugin`: a client must log in as one of the configured users, with its
  password (compared in constant time); anonymous clients and wrong passwords are refused.
* :class:`ReadOnlyUsersPlugin`: the configured read-only users (a dashboard's "viewer" login) may
  subscribe but never publish, so they cannot send commands to the robot.
* A read-only user's last will is dropped at CONNECT (:class:`CredentialsAuthPlugin`, which
  is given the same users): amqtt publishes a will when its client goes without a DISCONNECT,
  without the topic check its publishes get, so a will on ``<base>/<id>/cmd/home`` was a
  command from a login that may not send one.
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass, field

from amqtt.contexts import Action
from amqtt.plugins.base import BaseAuthPlugin, BaseTopicPlugin
from amqtt.session import Session

__all__ = ["CredentialsAuthPlugin", "ReadOnlyUsersPlugin"]

logger = logging.getLogger(__name__)


class CredentialsAuthPlugin(BaseAuthPlugin):  # type: ignore[misc]  # amqtt is untyped
    """amqtt authentication: accept only the configured users and their passwords."""

    @dataclass
    class Config:
        users: dict[str, str] = field(default_factory=dict)
        #: users whose last will is dropped (they may not publish)
        read_only: list[str] = field(default_factory=list)

    async def authenticate(self, *, session: Session) -> bool | None:
        users: dict[str, str] = dict(self._get_config_option("users", {}) or {})
        if not users:
            return False  # misconfigured: refuse rather than admit everyone
        given_user = session.username or ""
        given_password = (session.password or "").encode()
        ok = False
        for user, password in users.items():  # every user compared: no timing hint of names
            same_user = hmac.compare_digest(given_user.encode(), user.encode())
            ok |= same_user and hmac.compare_digest(given_password, password.encode())
        if not ok:
            logger.warning(
                "embedded MQTT broker: refused client %r (user %r): wrong or missing credentials",
                session.client_id,
                given_user or None,
            )
        elif session.will_flag and given_user in (self._get_config_option("read_only", []) or []):
            logger.warning(
                "embedded MQTT broker: read-only user %r may not publish, so the last will of "
                "its client %r (topic %r) is dropped",
                given_user,
                session.client_id,
                session.will_topic,
            )
            session.will_flag = session.will_retain = False
            session.will_topic = session.will_message = None
        return ok


class ReadOnlyUsersPlugin(BaseTopicPlugin):  # type: ignore[misc]  # amqtt is untyped
    """amqtt topic check: read-only users may not publish (so no commands)."""

    @dataclass
    class Config:
        read_only: list[str] = field(default_factory=list)

    async def topic_filtering(
        self,
        *,
        session: Session | None = None,
        topic: str | None = None,
        action: Action | None = None,
    ) -> bool | None:
        read_only = set(self._get_config_option("read_only", []) or [])
        user = session.username if session is not None else None
        if action is Action.PUBLISH and user in read_only:
            logger.warning(
                "embedded MQTT broker: read-only user %r may not publish to %r", user, topic
            )
            return False
        return True
