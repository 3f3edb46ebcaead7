"""kewpie 2012's API: the names a 2012 suite imports, over the modern harness.

Its 2012 name, ``lib.util``, still imports these modules (``from
lib.util.mysqlBaseTestCase import mysqlBaseTestCase``, ``kewpie.util`` when
installed): :mod:`lib.aliases` answers the old name with the modules of this
folder, never a second copy.  docs/writing-tests.md lists what is here.
"""
