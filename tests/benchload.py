"""Loading a script of ``bench/`` as a module, for the tests of its parts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(stem: str) -> ModuleType:
    """``bench/<stem>.py`` executed as the module ``<stem>_bench`` (registered in
    ``sys.modules``: the dataclasses of a script look their module up).

    ``bench/`` goes on ``sys.path`` for the scripts' helper modules (``bench/_args.py``), at
    the END: first, ``bench/vision.py`` would shadow the project's ``vision`` package. A script
    that drops ``bench/`` from ``sys.path`` when it loads (chaos.py, vision.py) has imported
    its helpers by then; the next load puts it back."""
    if str(BENCH) not in sys.path:
        sys.path.append(str(BENCH))
    spec = importlib.util.spec_from_file_location(f"{stem}_bench", BENCH / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    return bench
