"""``python -m kassign.cli``: the ``kassign`` command line; with no arguments it serves."""

import sys

from kassign.cli.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["serve"]))
