"""The solving engines, each behind ``solver.api.solve(state, engine=...)``.

* :mod:`~solver.engines.twophase`: Kociemba's two-phase search (coordinates, cached tables, the
  C kernel), the default 3x3 engine.
* :mod:`~solver.engines.lbl` and :mod:`~solver.engines.cfop`: the human methods of seed 004.
* :mod:`~solver.engines.trace`: cycle tracing and the blindfold-style solver of seed 002.
* :mod:`~solver.engines.common`: what more than one engine needs (stage search, case tables,
  the F2L pieces, stage assembly).

Rule (checked by ``tests/test_architecture.py``): an engine imports the cube model, the shared
top-level modules of :mod:`solver` (errors, solution, cost, optimize) and
:mod:`solver.engines.common`, never another engine.
"""
