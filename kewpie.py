#!/usr/bin/env python3
"""kewpie: run unittest suites against MySQL-family servers. See README.md."""
import os
import sys

_root = os.path.dirname(os.path.abspath(__file__))
_venv_python = os.path.join(_root, ".venv", "bin", "python")
if os.path.exists(_venv_python) and os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(_root, ".venv")) \
        and not os.environ.get("KEWPIE_NO_VENV"):
    os.execv(_venv_python, [_venv_python, os.path.abspath(__file__), *sys.argv[1:]])
sys.path.insert(0, _root)

try:
    from lib.cli import main  # noqa: E402
except ImportError as exc:
    sys.stderr.write(f"kewpie: {exc}; run scripts/setup.sh (or scripts/run-main) first\n")
    sys.exit(2)
except KeyboardInterrupt:  # Ctrl-C before any server exists
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(main())
