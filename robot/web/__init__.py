"""The robot's web page (served by the daemon when the profile's ``[web]`` enables it)."""

from robot.web.server import WebBackend, WebServer

__all__ = ["WebBackend", "WebServer"]
