"""`python -m engine`: the command-line interface (see engine/cli/main.py)."""

import sys

from engine.cli.main import main

sys.exit(main())
