"""The dependency rules of docs/architecture.md, checked on the source.

* Between packages: solver ← vision ← robot, firmware_protocol ← robot; solver imports numpy only.
* Inside ``solver``: the cube model (``solver.cube``) never imports an engine; an engine
  (``solver.engines.<name>``) never imports another engine, only ``solver.engines.common``,
  the model and the top-level shared modules of ``solver``.
"""

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


def _modules(path: Path) -> set[str]:
    """Every absolute module name ``path`` imports (``from a.b import c`` gives ``a.b`` and
    ``a.b.c``: ``c`` may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _imports(path: Path) -> set[str]:
    return {name.split(".")[0] for name in _modules(path)}


def _engine_of(module: str) -> str | None:
    """``solver.engines.twophase.coord`` -> ``twophase``; ``common`` and non-engines -> None."""
    parts = module.split(".")
    if parts[:2] != ["solver", "engines"] or len(parts) < 3 or parts[2] == "common":
        return None
    return parts[2]


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


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


def test_cube_model_never_imports_an_engine() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {sorted(bad)}"
        for path in sorted((ROOT / "solver" / "cube").rglob("*.py"))
        if (bad := {m for m in _modules(path) if m.startswith("solver.engines")})
    ]
    assert not offenders, offenders


def test_engines_never_import_each_other() -> None:
    offenders = []
    for path in sorted((ROOT / "solver" / "engines").rglob("*.py")):
        own = _engine_of(_module_name(path))
        others = {e for m in _modules(path) if (e := _engine_of(m)) is not None and e != own}
        if others:
            offenders.append(f"{path.relative_to(ROOT)} imports engines {sorted(others)}")
    assert not offenders, offenders


def test_engine_rule_sees_a_violation(tmp_path: Path) -> None:
    """The rule above can fail: an engine importing another one is named."""
    fake = tmp_path / "fake.py"
    fake.write_text("from solver.engines.cfop import plan_cfop\nfrom solver.engines import lbl\n")
    found = {e for m in _modules(fake) if (e := _engine_of(m)) is not None}
    assert found == {"cfop", "lbl"}
