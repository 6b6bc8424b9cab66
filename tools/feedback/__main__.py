"""`python3 -m tools.feedback` (docs/feedback.md)."""

import sys

from tools.feedback.cli import main

sys.exit(main())
