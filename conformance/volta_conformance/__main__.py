"""``python -m volta_conformance``: the same as the ``volta-conformance`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
