"""Shared fixtures of the vision tests: where the real data lives, and how to skip without it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

#: ``shared/vision-data`` beside the clone (CI lays a copy of shared/ there); override with
#: CUBEROBOT_VISION_DATA.
_DEFAULT = Path(__file__).resolve().parents[2].parent / "shared" / "vision-data"


def vision_data_dir() -> Path:
    return Path(os.environ.get("CUBEROBOT_VISION_DATA", str(_DEFAULT)))


@pytest.fixture(scope="session")
def vision_data() -> Path:
    path = vision_data_dir()
    if not (path / "rgb-scans" / "MANIFEST.json").is_file():
        pytest.skip(
            f"real vision data not found at {path} (expected shared/vision-data beside the repo; "
            "set CUBEROBOT_VISION_DATA to its folder)"
        )
    return path


def rgb_manifest() -> dict[str, Any]:
    path = vision_data_dir() / "rgb-scans" / "MANIFEST.json"
    if not path.is_file():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def photo_manifest() -> dict[str, Any]:
    path = vision_data_dir() / "photos" / "MANIFEST.json"
    if not path.is_file():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
