"""``python -m srcgrad`` runs the command line (see :mod:`srcgrad.cli`)."""

import sys

from .cli import main

sys.exit(main())
