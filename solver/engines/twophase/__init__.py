"""Kociemba's two-phase engine: :mod:`.coord` (integer coordinates), :mod:`.tables` (move and
pruning tables, built on first use and cached), :mod:`.settings` (the engine's options, checked),
:mod:`.engine` (the search front end) and the C kernel ``_twophase`` (IDA* over the tables, GIL
released)."""
