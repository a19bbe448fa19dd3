"""The solver package stays made of rooms a newcomer can hold: no Python module over
MAX_MODULE_LINES lines (the C kernel, ``_twophase.c``, is exempt)."""

from __future__ import annotations

from pathlib import Path

import solver

MAX_MODULE_LINES = 600
ROOT = Path(solver.__file__).resolve().parent


def _too_long(root: Path) -> list[str]:
    """``path: n lines`` for every Python module under ``root`` over the limit."""
    out = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES:
            out.append(f"{path.relative_to(root)}: {n} lines")
    return out


def test_no_solver_module_is_too_long() -> None:
    assert len(list(ROOT.rglob("*.py"))) > 30  # the whole package is seen
    assert _too_long(ROOT) == []


def test_the_check_sees_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    assert _too_long(tmp_path) == [f"long.py: {MAX_MODULE_LINES + 1} lines"]
