"""kewpie: a Python unittest-based test harness for MySQL-family databases.

One package, two names.  Installed (``pip install kewpie``), it is ``kewpie``;
in a checkout, where ``kewpie.py`` sits beside it, it is the folder ``lib/``
(``import lib``), as kewpie 2012's suites expect.  Modules inside import each
other relatively, so they work under either name, and :mod:`lib.aliases`
makes the other name an alias of the same modules (never a second copy).
"""
from __future__ import annotations

import sys

from .aliases import settle_name

if (_canonical := settle_name(__name__, __path__[0])) is not None:
    sys.modules[__name__] = _canonical  # a checkout imported as "kewpie": it is "lib"
