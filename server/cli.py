"""The ``kassign`` command line (filled in by the service work)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("kassign: not built yet", file=sys.stderr)
    return 2
