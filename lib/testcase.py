"""The public test API for suites: ``from lib.testcase import KewpieTestCase``.

Suites import from here; the classes live in :mod:`lib.suites.testcase`, so
kewpie's own packages may move without breaking anyone's tests.
"""
from .suites.testcase import ClusterTestCase, KewpieTestCase

__all__ = ("ClusterTestCase", "KewpieTestCase")
