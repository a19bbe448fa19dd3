"""Loading a script of ``bench/`` as a module, for the tests of its parts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(stem: str) -> ModuleType:
    """``bench/<stem>.py`` executed as the module ``<stem>_bench`` (registered in
    ``sys.modules``: the dataclasses of a script look their module up)."""
    spec = importlib.util.spec_from_file_location(f"{stem}_bench", BENCH / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    return bench
