"""``python -m robot.cli``: the same as the ``cuberobot`` console script."""

import sys

from robot.cli import main

sys.exit(main())
