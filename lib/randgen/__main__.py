"""``python -m lib.randgen``: see :mod:`lib.randgen.cli`."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
