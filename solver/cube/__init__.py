"""The cube model: what a cube *is*, independent of how it is solved.

One representation per module, conversions at the boundaries:

* :mod:`~solver.cube.geometry`: faces, their frames in space, sticker positions (any N).
* :mod:`~solver.cube.walker`: seed 000's slice walker (the cells a slice turn visits).
* :mod:`~solver.cube.notation`: WCA/SiGN move parsing and formatting, metrics.
* :mod:`~solver.cube.facelets`: the NxN facelet model (``Cube``) and every move as a permutation.
* :mod:`~solver.cube.cubie`: the 3x3 cubie level (CP/CO/EP/EO, seed 001's numbering).
* :mod:`~solver.cube.validate`: which states are possible, each problem named.

Rule (checked by ``tests/test_architecture.py``): nothing here imports :mod:`solver.engines`.
"""
