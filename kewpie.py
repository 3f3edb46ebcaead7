#!/usr/bin/python3 -S
"""kewpie: run unittest suites against MySQL-family servers. See README.md.

Run as a script, this is the command line.  Imported as the module ``kewpie``
from a checkout (its folder on sys.path), it stands for the package ``lib/``,
which an installed kewpie calls ``kewpie`` (see lib/aliases.py).
"""
import os
import sys

_root = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":
    _venv_python = os.path.join(_root, ".venv", "bin", "python")
    if os.path.exists(_venv_python) and not os.environ.get("KEWPIE_NO_VENV") and \
            os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(_root, ".venv")):
        os.execv(_venv_python, [_venv_python, os.path.abspath(__file__), *sys.argv[1:]])
    if sys.flags.no_site:   # the shebang's -S spares the re-exec'd run a site import
        import site         # (~40 ms); without a venv to exec, site's paths are needed
        site.main()
if _root not in sys.path:
    sys.path.insert(0, _root)

if __name__ != "__main__":
    import lib  # noqa: E402
    sys.modules[__name__] = lib
else:
    try:
        from lib.cli import main  # noqa: E402
    except ImportError as exc:
        sys.stderr.write(f"kewpie: {exc}; run scripts/setup.sh (or scripts/run-main) first\n")
        sys.exit(2)
    except KeyboardInterrupt:  # Ctrl-C before any server exists
        sys.exit(130)
    sys.exit(main())
