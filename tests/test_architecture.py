"""The dependency direction of DESIGN.md, checked on the source: solver ← vision ← robot,
firmware_protocol ← robot; solver imports numpy only."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    "solver": {"vision", "robot", "firmware_protocol", "cv2", "serial", "aiomqtt"},
    "vision": {"robot", "firmware_protocol", "serial", "aiomqtt"},
    "firmware_protocol": {"solver", "vision", "robot", "cv2"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_graph(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = _imports(path) & FORBIDDEN[package]
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not offenders, offenders


@pytest.mark.parametrize("package", ["solver", "vision", "firmware_protocol", "robot"])
def test_public_names_exist(package: str) -> None:
    """Every name a module lists in ``__all__`` exists (the public surface is real)."""
    pkg = importlib.import_module(package)
    modules = [pkg] + [
        importlib.import_module(f"{package}.{info.name}")
        for info in pkgutil.iter_modules(pkg.__path__)
        if not info.name.startswith("_")
    ]
    for module in modules:
        for name in getattr(module, "__all__", []):
            assert hasattr(module, name), f"{module.__name__}.__all__ lists missing {name!r}"
