"""`python -m engine`: the command-line interface (see engine/cli.py)."""

import sys

from engine.cli.main import main

sys.exit(main())
