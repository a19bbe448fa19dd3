"""``python -m solver.engines.twophase.tables build GROUP CACHE_DIR``: see :mod:`.worker`."""

import sys

from solver.engines.twophase.tables.worker import main

sys.exit(main(sys.argv[1:]))
