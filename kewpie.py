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
    _venv = os.path.join(_root, ".venv")
    _venv_python = os.path.join(_venv, "bin", "python")
    # the venv's python run with -S (below) has the base prefix until we set it
    _in_venv = os.path.realpath(sys.prefix) == os.path.realpath(_venv) or \
        (sys.flags.no_site and os.path.abspath(sys.executable) == _venv_python)
    if os.path.exists(_venv_python) and not os.environ.get("KEWPIE_NO_VENV") and not _in_venv:
        os.execv(_venv_python, [_venv_python, "-S", os.path.abspath(__file__), *sys.argv[1:]])
    if sys.flags.no_site:   # the shebang's -S spares the first run a site import
        import site
        if _in_venv:        # what site.main() does in this venv, without its .pth files
            # (an editable install's finder imports pathlib & co., ~20 ms; a checkout
            # needs none of them: kewpie.py is the package's alias, lib/ is beside it)
            sys.prefix = sys.exec_prefix = _venv
            sys.path.extend(p for p in site.getsitepackages([_venv]) if os.path.isdir(p))
            site.setquit()
            site.sethelper()
        else:               # without a venv to exec, site's paths are needed
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
