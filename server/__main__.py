"""``python -m server``: the ``kassign`` command line; with no arguments it serves."""

import sys

from server.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["serve"]))
