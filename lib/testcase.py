"""The test case classes by their first public path: ``from lib.testcase import
KewpieTestCase`` still works for suites written so.

kewpie's public API is the package itself (``from lib import KewpieTestCase``,
``from kewpie import ...`` installed: lib/__init__.py, docs/writing-tests.md); the
classes live in :mod:`lib.suites.testcase`.
"""
from .suites.testcase import ClusterTestCase, KewpieTestCase

__all__ = ("ClusterTestCase", "KewpieTestCase")
