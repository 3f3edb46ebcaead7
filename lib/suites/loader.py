"""Find suites, read their suite_config.py, load their *_test.py modules.

A suite is a directory ``<suitepath>/<suite>/`` holding ``suite_config.py``
(``server_requirements``, optional ``server_requests``, ``server_type``,
``kept_processes``...)
and test modules named ``*_test.py``.  A test module may override the
suite's ``server_requirements``/``server_requests`` with its own globals, as
kewpie's did.  A test base class may declare options its tests' servers start
with (``kewpie_server_defaults``: kewpie 2012's ``mysqlBaseTestCase`` gives
2012's binlog and latin1 defaults so); the declared options win over them.

Before a suite's modules import, ``percona_tests.<suite>`` is made that suite's
folder (:mod:`lib.suites.suite_imports`), whichever suite path it came from;
:attr:`SuiteConfig.shadows` names the other folders of the same name, unused.
Whether the servers' new error-log lines fail a module's tests or are only
reported is :func:`warnings_fail` (``TestSpec.check_warnings``).
"""
from __future__ import annotations

import importlib.util
import inspect
import os
import re
import sys
import traceback
import unittest
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from ..aliases import enable_lib_alias
from ..errors import SuiteError, UsageError
from ..servers.options import Option, merge, parse_options, reject_owned
from ..servers.requirements import Requirements
from .combinations import Combination, parse_combinations
from .disabled import read_disabled
from .suite_imports import shadowed_by, use_suites
from ..platform.suite_names import check_suite_name, display_name

TEST_SUFFIX = "_test.py"
KNOWN_REQUESTS = ("join_cluster", "arbitrator")
STORAGE_CHOICES = ("default", "disk")
NETWORK_CHOICES = ("loopback", "namespaces")
DEFAULTS_ATTRIBUTE = "kewpie_server_defaults"  # on a test class: option strings
WARNINGS_ATTRIBUTE = "kewpie_check_warnings"  # on a test class: False = report, not fail


@dataclass
class SuiteConfig:
    """A suite's declared requirements."""

    name: str
    path: str
    server_requirements: list[list[Option]] = field(default_factory=lambda: [[]])
    server_requests: dict[str, Any] = field(default_factory=dict)
    server_type: str | None = None
    storage: str = "default"
    network: str = "loopback"
    combinations: tuple[Combination, ...] = ()
    disabled: dict[str, str] = field(default_factory=dict)  # test module name -> reason
    suppressions: tuple[str, ...] = ()  # error-log regexes that do not fail a test
    server_basedirs: list[str] = field(default_factory=list)
    kept_processes: tuple[str, ...] = ()  # process names a test may leave running on purpose
    check_warnings: bool | None = None  # error-log lines fail (True) or are reported (False)
    shadows: tuple[str, ...] = ()  # other suite folders of the same name, not used


@dataclass
class TestSpec:
    """One selected test: a module of unittest cases plus its requirements."""

    suite: SuiteConfig
    name: str
    path: str
    module: ModuleType
    requirements: Requirements
    load_error: str = ""
    combination: str = ""  # the suite's combination this run uses ('' = none)
    disabled: str = ""  # why disabled.txt disables it ('' = enabled)
    check_warnings: bool = True  # its servers' new error-log lines fail it (else reported)

    @property
    def broken(self) -> bool:
        """True when the module could not be imported (``load_error`` says why, in one
        line): the test fails on its own, the others run."""
        return bool(self.load_error)

    @property
    def full_name(self) -> str:
        """``suite.test`` (``suite.test 'combination'``) as shown in rows and JUnit."""
        base = f"{self.suite.name}.{self.name}"
        return f"{base} '{self.combination}'" if self.combination else base


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path
    except ValueError:
        return path


def _exec_file(path: str) -> dict[str, Any]:
    """Execute a config file in a fresh namespace; SuiteError on any failure."""
    try:
        with open(path) as fh:
            source = fh.read()
        code = compile(source, path, "exec")
    except SyntaxError as exc:
        raise SuiteError(f"{_short(path)}:{exc.lineno}: syntax error: {exc.msg}") from None
    except OSError as exc:
        raise SuiteError(f"cannot read {_short(path)}: {exc.strerror}") from None
    namespace: dict[str, Any] = {"__file__": path, "__name__": "suite_config"}
    try:
        exec(code, namespace)  # noqa: S102 - suite configs are trusted project files
    except Exception as exc:  # noqa: BLE001
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        line = frames[-1].lineno if frames else "?"
        raise SuiteError(f"{_short(path)}:{line}: {type(exc).__name__}: {exc}") from None
    return namespace


def validate_requirements(value: Any, where: str) -> list[list[Option]]:
    """server_requirements must be a non-empty list with one option list per server."""
    if not isinstance(value, (list, tuple)) or not value:
        raise SuiteError(f"{where}: server_requirements must be a non-empty list with one "
                         f"option list per server, e.g. [[], ['--innodb-file-per-table']]")
    result = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            item = [item]
        if not isinstance(item, (list, tuple)):
            raise SuiteError(f"{where}: server_requirements[{i}] must be a list of option strings")
        try:
            opts = parse_options(list(item))
        except SuiteError as exc:
            raise SuiteError(f"{where}: server_requirements[{i}]: {exc}") from None
        reject_owned(opts, f"{where}: server_requirements[{i}]")
        result.append(merge(opts))
    return result


def validate_requests(value: Any, count: int, where: str) -> dict[str, Any]:
    """server_requests: {'join_cluster': [(0, 1), ...]} with valid server indexes, and
    {'arbitrator': True} (a garbd joins the cluster of server 0: two servers at least)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: server_requests must be a dict such as "
                         f"{{'join_cluster': [(0, 1), (0, 2)]}}")
    result: dict[str, Any] = {}
    for key, pairs in value.items():
        if key not in KNOWN_REQUESTS:
            raise SuiteError(f"{where}: unknown server_requests key {key!r} "
                             f"(known: {', '.join(KNOWN_REQUESTS)})")
        if key == "arbitrator":
            if not isinstance(pairs, bool):
                raise SuiteError(f"{where}: arbitrator must be True or False, got {pairs!r}")
            if pairs and count < 2:
                raise SuiteError(f"{where}: an arbitrator joins a cluster of two servers or "
                                 f"more; server_requirements declares {count}")
            result[key] = pairs
            continue
        if pairs is None:
            pairs = []
        if not isinstance(pairs, (list, tuple)):
            raise SuiteError(f"{where}: {key} must be a list of (source, joiner) index pairs, "
                             f"got {pairs!r}")
        checked = []
        for pair in pairs:
            if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                    or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)):
                raise SuiteError(f"{where}: {key} entries must be (source, joiner) index pairs, "
                                 f"got {pair!r}")
            a, b = pair
            if not (0 <= a < count and 0 <= b < count) or a == b:
                raise SuiteError(f"{where}: {key} pair {pair!r} does not name two of the "
                                 f"{count} servers in server_requirements")
            checked.append((a, b))
        joiners = [b for _, b in checked]
        if len(set(joiners)) != len(joiners):
            raise SuiteError(f"{where}: a server appears twice as a joiner in {key}")
        result[key] = checked
    return result


def load_suite_config(name: str, path: str) -> SuiteConfig:
    """Read and validate ``suite_config.py`` (defaults: one server, no requests)."""
    cfg_path = os.path.join(path, "suite_config.py")
    config = SuiteConfig(name=name, path=path)
    if not os.path.exists(cfg_path):
        return config
    ns = _exec_file(cfg_path)
    where = _short(cfg_path)
    config.server_requirements = validate_requirements(ns.get("server_requirements", [[]]), where)
    config.server_requests = validate_requests(ns.get("server_requests"),
                                               len(config.server_requirements), where)
    server_type = ns.get("server_type") or ns.get("default_server_type")
    if server_type is not None and not isinstance(server_type, str):
        raise SuiteError(f"{where}: server_type must be a string such as 'mysql'")
    config.server_type = server_type
    storage = ns.get("storage", "default")
    if storage not in STORAGE_CHOICES:
        raise SuiteError(f"{where}: storage must be one of {', '.join(map(repr, STORAGE_CHOICES))}"
                         f" ('disk' keeps the vardirs off /dev/shm), got {storage!r}")
    config.storage = storage
    network = ns.get("network", "loopback")
    if network not in NETWORK_CHOICES:
        raise SuiteError(f"{where}: network must be one of {', '.join(map(repr, NETWORK_CHOICES))}"
                         f" ('namespaces' puts each server in its own network namespace), "
                         f"got {network!r}")
    config.network = network
    config.combinations = parse_combinations(ns.get("combinations"),
                                             len(config.server_requirements), where)
    config.suppressions = validate_suppressions(ns.get("suppressions", ()), where)
    config.disabled = read_disabled(path)
    config.server_basedirs = validate_basedirs(ns.get("server_basedirs"),
                                               len(config.server_requirements), where)
    config.kept_processes = validate_kept(ns.get("kept_processes", ()), where)
    check = ns.get("check_warnings")
    if check is not None and not isinstance(check, bool):
        raise SuiteError(f"{where}: check_warnings must be True (new [ERROR]/[Warning] lines "
                         f"in the servers' error logs fail every test) or False (they are "
                         f"reported), got {check!r}")
    config.check_warnings = check
    return config


def validate_kept(value: Any, where: str) -> tuple[str, ...]:
    """``kept_processes``: names of processes (as ``ps -o comm`` shows them, e.g.
    ``['sleep']``) a test may leave running; the run's end stops them."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, str) and v.strip() and "/" not in v for v in value):
        raise SuiteError(f"{where}: kept_processes must be a list of process names such as "
                         f"['sleep']")
    return tuple(v.strip() for v in value)


def validate_suppressions(value: Any, where: str) -> tuple[str, ...]:
    """A suite's ``suppressions``: regular expressions matched against error-log lines."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise SuiteError(f"{where}: suppressions must be a list of regular expressions")
    for item in value:
        try:
            re.compile(item)
        except (re.error, TypeError) as exc:
            raise SuiteError(f"{where}: suppression {item!r} is not a regular expression: "
                             f"{exc}") from None
    return tuple(value)


def validate_basedirs(value: Any, count: int, where: str) -> list[str]:
    """server_basedirs: one code-tree label per server (``['old', 'new']``), or one
    label for all; [] when not given (every server runs the tree under test)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] * count
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value) \
            or len(value) != count:
        raise SuiteError(f"{where}: server_basedirs must be a list of {count} code-tree "
                         f"labels ('old', 'new', 'default', a version or a path), one per "
                         f"server of server_requirements")
    return list(value)


def find_suite(name: str, suitepaths: list[str]) -> str:
    """The directory of a suite; UsageError naming the paths searched if unknown, or if
    name is a path that is not a directory given through --suitepath (lib/platform/suite_names.py)."""
    given = check_suite_name(name, suitepaths)
    if given is not None:
        return given
    for base in suitepaths:
        path = os.path.join(base, name)
        if os.path.isdir(path):
            return path
    known = sorted(available_suites(suitepaths))
    raise UsageError(f"unknown suite {name!r}: no directory {name} under "
                     f"{', '.join(suitepaths)} (known suites: {', '.join(known) or 'none'})")


def available_suites(suitepaths: list[str]) -> list[str]:
    """Names of every suite under the suite paths."""
    names = set()
    for base in suitepaths:
        if os.path.isdir(base):
            for entry in os.listdir(base):
                full = os.path.join(base, entry)
                if os.path.isdir(full) and not entry.startswith((".", "_")):
                    names.add(entry)
    return sorted(names)


def test_files(suite_path: str) -> list[str]:
    """The suite's test modules, sorted by name."""
    return sorted(f for f in os.listdir(suite_path) if f.endswith(TEST_SUFFIX))


def load_test_module(suite: SuiteConfig, filename: str) -> ModuleType:
    """Import a test module under a private name; SuiteError with file:line if broken."""
    path = os.path.join(suite.path, filename)
    enable_lib_alias()  # suites write "from lib.testcase import ..." (kewpie 2012's name)
    modname = f"kewpie_suites.{suite.name}.{filename[:-3]}"
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None or spec.loader is None:
        raise SuiteError(f"cannot load {_short(path)}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[modname]
        raise SuiteError(f"{_short(path)}:{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001
        del sys.modules[modname]
        tb = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        line = tb[-1].lineno if tb else "?"
        raise SuiteError(f"{_short(path)}:{line}: {type(exc).__name__}: {exc}") from None
    return module


def class_server_defaults(module: ModuleType, where: str = "") -> list[Option]:
    """The options the test classes of module (those holding tests) declare for their
    servers in ``kewpie_server_defaults`` (usually inherited from a base class);
    SuiteError naming where for a bad one."""
    loader = unittest.TestLoader()
    texts: list[str] = []
    for obj in vars(module).values():
        if inspect.isclass(obj) and issubclass(obj, unittest.TestCase) and \
                loader.getTestCaseNames(obj):
            texts += [t for t in getattr(obj, DEFAULTS_ATTRIBUTE, ()) if t not in texts]
    try:
        return parse_options(texts)
    except SuiteError as exc:
        raise SuiteError(f"{where}: {DEFAULTS_ATTRIBUTE}: {exc}") from None


def warnings_fail(suite: SuiteConfig, module: ModuleType) -> bool:
    """Whether new [ERROR]/[Warning] lines of the servers' error logs fail module's tests
    (else they are reported): the suite's ``check_warnings`` when suite_config.py sets
    it; otherwise False when a test class of module declares ``kewpie_check_warnings =
    False`` (kewpie 2012's mysqlBaseTestCase does: 2012 judged only the unittest
    result), True for every other module."""
    if suite.check_warnings is not None:
        return suite.check_warnings
    loader = unittest.TestLoader()
    for obj in vars(module).values():
        if inspect.isclass(obj) and issubclass(obj, unittest.TestCase) and \
                loader.getTestCaseNames(obj) and getattr(obj, WARNINGS_ATTRIBUTE, True) is False:
            return False
    return True


def requirements_for(suite: SuiteConfig, module: ModuleType, default_type: str,
                     where: str) -> Requirements:
    """Combine suite and module declarations into Requirements."""
    reqs = suite.server_requirements
    requests = suite.server_requests
    if "server_requirements" in vars(module) and module.server_requirements:
        reqs = validate_requirements(module.server_requirements, where)
        requests = validate_requests(getattr(module, "server_requests", None), len(reqs), where)
    elif getattr(module, "server_requests", None):
        requests = validate_requests(module.server_requests, len(reqs), where)
    server_type = getattr(module, "server_type", None) or suite.server_type or default_type
    pairs = requests.get("join_cluster", [])
    arbitrator = check_arbitrator(requests, server_type, where)
    defaults = class_server_defaults(module, where)  # e.g. kewpie 2012's, for its tests
    if defaults:
        reqs = [merge(defaults, opts) for opts in reqs]
    basedirs = suite.server_basedirs
    if getattr(module, "server_basedirs", None) is not None:
        basedirs = validate_basedirs(module.server_basedirs, len(reqs), where)
    elif len(basedirs) != len(reqs):
        basedirs = []  # the module declared other servers: they run the tree under test
    return Requirements.declared(server_type, reqs, pairs, on_disk=suite.storage == "disk",
                                 network=suite.network, basedirs=basedirs,
                                 arbitrator=arbitrator)


def check_arbitrator(requests: dict[str, Any], server_type: str, where: str) -> bool:
    """Whether the requests ask for an arbitrator (SuiteError unless the servers are
    Galera nodes)."""
    wanted = bool(requests.get("arbitrator"))
    if wanted and server_type != "galera":
        raise SuiteError(f"{where}: server_requests 'arbitrator' needs Galera nodes "
                         f"(server_type = 'galera'), not {server_type!r}")
    return wanted


def _matches(test_names: list[str], suite: str, filename: str) -> bool:
    """Whether a test file is asked for by one of the names (all when none given)."""
    if not test_names:
        return True
    stem = filename[:-3]
    for name in test_names:
        suite_part, _, test_part = name.rpartition(".")
        if (not suite_part or suite_part == suite) and test_part in (stem, stem[:-len("_test")]):
            return True
    return False


def _spec_for(suite: SuiteConfig, filename: str, default_type: str) -> TestSpec:
    """Import one test module; a module that does not import becomes a broken spec
    (its suite's requirements, the error line) instead of stopping the run."""
    path = os.path.join(suite.path, filename)
    try:
        module = load_test_module(suite, filename)
    except SuiteError as exc:
        module = ModuleType(f"kewpie_suites.{suite.name}.{filename[:-3]}")
        module.__file__ = path
        reqs = requirements_for(suite, module, default_type, _short(path))
        return TestSpec(suite=suite, name=filename[:-3], path=path, module=module,
                        requirements=reqs, load_error=str(exc))
    reqs = requirements_for(suite, module, default_type, _short(path))
    return TestSpec(suite=suite, name=filename[:-3], path=path, module=module, requirements=reqs,
                    check_warnings=warnings_fail(suite, module))


def select_tests(suite_names: list[str], test_names: list[str], suitepaths: list[str],
                 default_type: str) -> list[TestSpec]:
    """Load the chosen suites and pick the named tests (all when none named).

    Only the chosen modules are imported.  One that fails to import (a syntax
    error, an exception at import) is returned with ``load_error`` set: its
    test fails with that line while the others run.
    """
    wanted_suites = list(dict.fromkeys(suite_names))
    for name in test_names:
        if "." in name and name.split(".", 1)[0] not in wanted_suites and not suite_names:
            wanted_suites.append(name.split(".", 1)[0])
    if not wanted_suites:
        wanted_suites = ["main"]
    candidates: list[tuple[SuiteConfig, str]] = []
    chosen: dict[str, str] = {}
    for suite_name in wanted_suites:
        path = find_suite(suite_name, suitepaths)
        name = display_name(suite_name)
        if os.path.realpath(chosen.setdefault(name, path)) != os.path.realpath(path):
            raise UsageError(f"two suites called {name} ({chosen[name]}, {path}): their "
                             f"modules' percona_tests.{name} would be ambiguous; run them "
                             f"in separate runs")
        suite = load_suite_config(name, path)
        suite.shadows = tuple(shadowed_by(name, path, suitepaths))
        candidates.extend((suite, f) for f in test_files(path))
    use_suites(suitepaths, chosen)  # percona_tests.<suite>: these folders, before any import
    if test_names:
        for name in test_names:
            if not any(_matches([name], s.name, f) for s, f in candidates):
                raise UsageError(f"unknown test {name!r} in suite(s) {', '.join(wanted_suites)}; "
                                 f"use --list to see the tests")
        ordered: list[tuple[SuiteConfig, str]] = []
        for name in test_names:  # in the order asked for
            ordered.extend(c for c in candidates if _matches([name], c[0].name, c[1])
                           and c not in ordered)
        candidates = ordered
    loaded = [_spec_for(suite, filename, default_type) for suite, filename in candidates]
    specs: list[TestSpec] = []
    for suite_name in dict.fromkeys(spec.suite.name for spec in loaded):
        mine = [spec for spec in loaded if spec.suite.name == suite_name]
        # combination by combination: tests of one combination can share servers
        for combination in mine[0].suite.combinations or (None,):
            for spec in mine:
                specs.append(replace(
                    spec, disabled=spec.suite.disabled.get(spec.name, ""),
                    combination=combination.name if combination else "",
                    requirements=with_combination(spec.requirements, combination)))
    return specs


def with_combination(reqs: Requirements, combination: Combination | None) -> Requirements:
    """reqs with a combination's options merged into every server's list."""
    if combination is None:
        return reqs
    servers = combination.apply([list(opts) for opts in reqs.servers])
    return replace(reqs, servers=tuple(tuple(opts) for opts in servers))


def declared_in(spec: TestSpec) -> str:
    """The file that declared a test's servers (its module, or its suite_config.py),
    relative to the current directory when below it."""
    path = spec.path if vars(spec.module).get("server_requirements") else \
        os.path.join(spec.suite.path, "suite_config.py")
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def suite_requirements(suite_name: str, suitepaths: list[str], default_type: str) -> Requirements:
    """The servers a suite's suite_config.py declares (for --start-and-exit without tests)."""
    suite = load_suite_config(display_name(suite_name), find_suite(suite_name, suitepaths))
    server_type = suite.server_type or default_type
    return Requirements.declared(server_type, suite.server_requirements,
                                 suite.server_requests.get("join_cluster", []),
                                 on_disk=suite.storage == "disk", network=suite.network,
                                 basedirs=suite.server_basedirs,
                                 arbitrator=check_arbitrator(suite.server_requests, server_type,
                                                             suite.path))
