"""The web page's view of a running daemon (a :class:`~robot.web.server.WebBackend`).

Everything comes from the daemon itself: its status, its command path (:meth:`Daemon.submit`,
the validation every MQTT command gets), its journal for the history, and the frames of its
last scan, annotated with the located sticker grid on demand. A command from the page is
stamped ``source: "web"`` here, on the server, whatever the page sent.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from robot.daemon import Daemon
from robot.safejson import PayloadError, parse_object
from vision.errors import VisionError

__all__ = ["DaemonBackend"]

logger = logging.getLogger(__name__)


class DaemonBackend:
    """Adapts a :class:`~robot.daemon.Daemon` to what :class:`~robot.web.WebServer` needs."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self._frames_of: int | None = None
        self._frames: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def status(self) -> dict[str, Any]:
        status = dict(self.daemon.status())
        status["colour_scheme"] = self.daemon.config.colours.scheme
        return status

    async def submit(self, verb: str, payload: bytes) -> dict[str, Any]:
        try:
            data = parse_object(payload)
        except PayloadError:
            return await self.daemon.submit(verb, payload)  # the daemon's own malformed reply
        data["source"] = "web"
        # compact and UTF-8 as it came: ASCII escapes made a body of 6 kB one of 18 kB, refused
        # for a size the page never sent
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return await self.daemon.submit(verb, text.encode())

    async def history(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        journal = self.daemon.journal
        records = await journal.call(journal.sync.jobs, limit, offset)
        total = await journal.call(journal.sync.job_count)
        jobs = [
            {
                "id": r.id,
                "kind": r.kind,
                "outcome": str(r.state),
                "error": None if r.error_code is None else str(r.error_code),
                "moves": f"{r.executed}/{r.total_moves}",
                "started": _clock(r.created_at),
                "seconds": _seconds(r.created_at, r.finished_at),
            }
            for r in records
        ]
        return jobs, total

    async def live_frames(self) -> dict[str, bytes]:
        """Frames captured now, with the calibrated sticker grid drawn (calibration view)."""
        cameras = self.daemon.pipeline.cameras
        if cameras is None:
            return {}
        if self.daemon.intake.busy:  # a capture now could take the camera from the job's scan
            raise web.HTTPConflict(text="a job is running: the live view captures between jobs")
        from robot.web.calibrate import live_frames

        try:
            return await asyncio.to_thread(live_frames, cameras)
        except VisionError as exc:  # a camera unplugged or refusing: say so, not HTTP 500
            raise web.HTTPServiceUnavailable(text=f"cannot capture the live view: {exc}") from None

    async def save_calibration(self) -> dict[str, Any]:
        cameras = self.daemon.pipeline.cameras
        if cameras is None:
            return {"ok": False, "error": {"code": "no_cameras", "message": "no cameras"}}
        if self.daemon.intake.busy:
            return {
                "ok": False,
                "error": {"code": "busy", "message": "a job is running: calibrate between jobs"},
            }
        from robot.web.calibrate import save

        try:
            report = await asyncio.to_thread(save, self.daemon.config, cameras)
        except VisionError as exc:
            return {"ok": False, "error": {"code": "camera", "message": f"cannot capture: {exc}"}}
        return {"ok": any(r.get("saved") for r in report.values()), "cameras": report}

    def frames(self) -> dict[str, bytes]:
        """The last scan's frames as PNGs with the sticker grid and colours drawn (cached per
        scan; empty before the first scan)."""
        scan = self.daemon.ctx.last_scan
        if scan is None:
            return {}
        with self._lock:
            if self._frames_of != id(scan):
                self._frames = _annotated(*scan)
                self._frames_of = id(scan)
            return dict(self._frames)


def _annotated(frames: Mapping[str, Any], result: Any) -> dict[str, bytes]:
    import cv2

    from vision.annotate import annotate_view

    out: dict[str, bytes] = {}
    for view, image in frames.items():
        try:
            ok, png = cv2.imencode(".png", annotate_view(image, view, result))
        except Exception:  # a frame the annotator cannot draw on: show it plain
            logger.warning("web: cannot annotate view %s; showing it plain", view, exc_info=True)
            ok, png = cv2.imencode(".png", image)
        if ok:
            out[str(view)] = png.tobytes()
    return out


def _seconds(started: float, finished: float | None) -> float | None:
    return None if finished is None else round(finished - started, 1)


def _clock(epoch: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))
