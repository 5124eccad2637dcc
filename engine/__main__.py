"""`python -m engine`: the command-line interface (see engine/cli.py)."""

import sys

from engine.cli import main

sys.exit(main())
