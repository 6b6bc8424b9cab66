"""`python -m tools.classify`."""

import sys

from tools.classify.cli import main

sys.exit(main())
