"""`python -m tools.gpu_assign [--gpus N] [--vram-gb G] [--contiguous] -- CMD...` (see run_under)."""

import sys

from tools.gpu_assign.run_under import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
