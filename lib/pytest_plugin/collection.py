"""Which collected tests kewpie serves, and what they declare: the ``kewpie`` marker or
an indirect parameter, or a KewpieTestCase module's suite_config.py and globals; and the
unit (scope) within which tests share servers."""
from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from ..home import PACKAGE

FIXTURES = ("kewpie", "kewpie_server", "kewpie_replication", "kewpie_cluster", "_kewpie_run")


def uses_ours(item: pytest.Item, name: str, module: str) -> bool:
    """True when item's fixture name resolves to the plugin's, defined in module (a
    conftest may shadow it)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.get(name) if info is not None else None
    if not defs:
        return False
    return bool(getattr(defs[-1].func, "__module__", "") == module)


def is_kewpie_testcase(item: pytest.Item) -> bool:
    """A KewpieTestCase (unittest style) collected by pytest."""
    cls = getattr(item, "cls", None)
    module = sys.modules.get(f"{PACKAGE}.suites.testcase")
    return cls is not None and module is not None and issubclass(cls, module.KewpieTestCase)


def declared_values(item: pytest.Item) -> dict[str, Any]:
    """The marker's keyword arguments, then an indirect parameter of a kewpie fixture."""
    values: dict[str, Any] = {}
    marker = item.get_closest_marker("kewpie")
    if marker is not None:
        if marker.args:
            raise pytest.UsageError(f"{item.nodeid}: the kewpie marker takes keyword "
                                    f"arguments only, e.g. kewpie(server_requirements=[[]])")
        values.update(marker.kwargs)
    callspec = getattr(item, "callspec", None)
    for name in FIXTURES:
        param = callspec.params.get(name) if callspec is not None else None
        if param is None:
            continue
        if not isinstance(param, dict):
            raise pytest.UsageError(f"{item.nodeid}: a parameter of {name} must be a dict of "
                                    f"kewpie marker arguments, got {param!r}")
        values.update(param)
    return values


def module_values(item: pytest.Item) -> dict[str, Any] | None:
    """For a KewpieTestCase module without a marker: its suite_config.py and module
    globals, as kewpie reads them (None when it declares nothing)."""
    from ..suites.loader import load_suite_config
    module = getattr(item, "module", None)
    path = str(item.path)
    suite_dir = os.path.dirname(path)
    has_config = os.path.exists(os.path.join(suite_dir, "suite_config.py"))
    if not has_config and not getattr(module, "server_requirements", None):
        return None
    suite = load_suite_config(os.path.basename(suite_dir), suite_dir)
    values: dict[str, Any] = {
        "server_requirements": [[str(o) for o in opts] for opts in suite.server_requirements],
        "server_requests": suite.server_requests, "storage": suite.storage}
    if suite.server_type:
        values["server_type"] = suite.server_type
    if module is not None and getattr(module, "server_requirements", None):
        values["server_requirements"] = module.server_requirements
        values["server_requests"] = getattr(module, "server_requests", None)
    elif module is not None and getattr(module, "server_requests", None):
        values["server_requests"] = module.server_requests
    if module is not None and getattr(module, "server_type", None):
        values["server_type"] = module.server_type
    values["scope"] = "module"  # a kewpie test module's methods share its servers
    return values


def scope_unit(item: pytest.Item, scope: str, nodeid: str) -> str:
    """The unit of item (collected as nodeid) within which tests share servers without the
    reuse rule."""
    if scope == "session":
        return ""
    if scope == "package":
        return str(item.path.parent)
    if scope == "module":
        return str(item.path)
    if scope == "class":
        parent = item.getparent(pytest.Class)
        return parent.nodeid if parent is not None else str(item.path)
    return nodeid
