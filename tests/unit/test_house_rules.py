"""The house rules that docs/architecture.md states, checked over lib/ (and tests/,
and the suites' imports).

Covers: lib/ (every module), tests/unit/, tests/integration/, lib/__init__.py (the public
API), percona_tests/, examples/

1. Every module has a docstring; public classes and functions have a docstring
   and type hints (arguments and return).
2. No ``sys.exit`` below ``lib/cli.py``.
3. A package docstring that lists its modules lists them all.
4. Processes only through ``lib/platform/``: no ``subprocess``,
   ``multiprocessing``, ``pty``, ``os.fork``/``os.system``/``os.popen``/
   ``os.spawn*``/``os.exec*`` elsewhere in lib/ (``PIPE``, ``DEVNULL``,
   ``STDOUT`` and ``Popen`` come from ``lib.platform.process``).
5. No import cycle among modules (imports that run, in functions too); no
   cycle among packages, counting imports under ``if TYPE_CHECKING:`` too.
6. No module-level (or class-level) mutable state.
7. Only lib/kewpie2012/ touches kewpie 2012's test-context globals.
8. Inside the package, imports are relative (the package is ``lib`` in a
   checkout and ``kewpie`` installed).
9. Layers: a module imports only from its own layer or the layers below it
   (LAYERS; ``TYPE_CHECKING`` imports count), and a layer is whole packages:
   no module is placed apart from its package.
10. Tests are findable: every test file's docstring has a ``Covers:`` line
    naming the files it tests, each of which exists, at least one in lib/
    (or a tool in bench/ or scripts/).
11. Suites (percona_tests/, examples/) import kewpie's public API -- the
    package itself, ``from lib import KewpieTestCase`` -- or kewpie 2012's
    API (``lib.util.*``, ``lib.kewpie2012.*``), never another module of it.

Each rule that parses code is shown catching planted source in a test of its own.
"""
import ast
import os
import re

import pytest

from tests.parsed import parsed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(ROOT, "lib")


def _modules():
    for dirpath, _, files in os.walk(LIB):
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(dirpath, name)


def _public_defs(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not node.name.startswith("_"):
                yield node


@pytest.mark.parametrize("path", list(_modules()), ids=lambda p: os.path.relpath(p, ROOT))
def test_public_api_documented_and_typed(path):
    tree = parsed(path)
    assert ast.get_docstring(tree), f"{path}: module docstring missing"
    problems = []
    for node in _public_defs(tree):
        if not ast.get_docstring(node):
            problems.append(f"{node.name}:{node.lineno} has no docstring")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = [a for a in node.args.args + node.args.kwonlyargs if a.arg not in ("self", "cls")]
            missing = [a.arg for a in args if a.annotation is None]
            if missing:
                problems.append(f"{node.name}:{node.lineno} arguments without type hints: {missing}")
            if node.returns is None and node.name != "__init__":
                problems.append(f"{node.name}:{node.lineno} has no return type")
    assert not problems, f"{os.path.relpath(path, ROOT)}: " + "; ".join(problems)


@pytest.mark.parametrize("path", list(_modules()), ids=lambda p: os.path.relpath(p, ROOT))
def test_no_sys_exit_below_cli(path):
    if path.endswith(os.path.join("lib", "cli.py")):
        return
    tree = parsed(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "exit" and \
                isinstance(node.value, ast.Name) and node.value.id == "sys":
            pytest.fail(f"{path}:{node.lineno}: sys.exit below the command-line layer")


# ---------------------------------------------------------------- package docstrings

def _packages():
    return sorted(os.path.dirname(p) for p in _modules() if p.endswith("__init__.py"))


def _listed_modules(doc, package, modules):
    """Which of modules (names) doc names, as ``name`` or :mod:`lib.<package>.name`."""
    return {m for m in modules
            if f"``{m}``" in doc or re.search(rf":mod:`(lib\.)?{re.escape(package)}\.{m}`", doc)}


@pytest.mark.parametrize("package", _packages(), ids=lambda p: os.path.relpath(p, ROOT))
def test_a_package_docstring_that_lists_modules_lists_them_all(package):
    """A package docstring naming three or more of its modules is its map: it names
    every module (a new module is added to the list, a deleted one taken out)."""
    modules = sorted(name[:-3] for name in os.listdir(package)
                     if name.endswith(".py") and name != "__init__.py")
    doc = ast.get_docstring(parsed(os.path.join(package, "__init__.py"))) or ""
    listed = _listed_modules(doc, os.path.basename(package), modules)
    if len(listed) < 3:
        return
    missing = sorted(set(modules) - listed)
    assert not missing, f"{os.path.relpath(package, ROOT)}/__init__.py lists modules but not {missing}"


def test_listed_modules_reads_both_forms():
    doc = "Modules: ``grammar`` (parser), :mod:`lib.backup.take`, ``grammar_extra``."
    assert _listed_modules(doc, "backup", ["grammar", "take", "tool"]) == {"grammar", "take"}


# ---------------------------------------------------------------- processes

PLATFORM_PACKAGE = os.path.join(LIB, "platform") + os.sep
PROCESS_MODULES = frozenset({"subprocess", "multiprocessing", "pty", "_posixsubprocess"})
OS_PROCESS_CALLS = re.compile(r"^(fork|forkpty|system|popen|posix_spawnp?|spawn\w*|exec\w*)$")
PROCESS_NAMES = frozenset({"ProcessPoolExecutor", "create_subprocess_exec",
                           "create_subprocess_shell"})

# Modules outside lib/platform/ allowed to start processes themselves, as
# "lib/path.py": reason.  Empty: every process goes through lib/platform/.
PROCESS_ALLOWED: dict[str, str] = {}


def _process_uses(tree):
    """(what, line) for each way tree starts a process without lib/platform/."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((f"import {a.name}", node.lineno) for a in node.names
                         if a.name.split(".")[0] in PROCESS_MODULES)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            if top in PROCESS_MODULES:
                found.append((f"from {node.module} import", node.lineno))
            elif top == "os":
                found.extend((f"from os import {a.name}", node.lineno) for a in node.names
                             if OS_PROCESS_CALLS.match(a.name))
            found.extend((f"from {node.module} import {a.name}", node.lineno)
                         for a in node.names if a.name in PROCESS_NAMES)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and OS_PROCESS_CALLS.match(node.attr):
                found.append((f"os.{node.attr}", node.lineno))
            elif node.value.id in PROCESS_MODULES:
                found.append((f"{node.value.id}.{node.attr}", node.lineno))
        if isinstance(node, ast.Attribute) and node.attr in PROCESS_NAMES:
            found.append((node.attr, node.lineno))
    return found


def _outside_platform(path):
    return not path.startswith(PLATFORM_PACKAGE)


@pytest.mark.parametrize("path", [p for p in _modules() if _outside_platform(p)],
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_processes_only_through_platform(path):
    """Only lib/platform/ forks, execs or imports subprocess/multiprocessing.

    Everything else starts a program with ``lib.platform.process.spawn`` or
    ``lib.platform.tools.run_tool`` (own session, parent-death signal, tags,
    one stop policy) and forks a worker with ``lib.platform.workers``.
    """
    rel = os.path.relpath(path, ROOT)
    if rel in PROCESS_ALLOWED:
        return
    uses = _process_uses(parsed(path))
    assert not uses, f"{rel}: " + ", ".join(f"{what} (line {line})" for what, line in uses) + \
        " -- go through lib/platform/ (spawn, run_tool, workers)"


def test_process_rule_catches_the_forms():
    planted = os.path.join(LIB, "run", "planted.py")
    assert _outside_platform(planted)
    assert not _outside_platform(os.path.join(LIB, "platform", "process.py"))
    tree = ast.parse("import subprocess\nimport multiprocessing.connection\n"
                     "from subprocess import PIPE\nfrom os import fork\n"
                     "from concurrent.futures import ProcessPoolExecutor\n"
                     "os.system('x')\nos.execvp('a', [])\nos.popen('x')\npty.fork()\n"
                     "os.spawnlp(0, 'a')\nasyncio.create_subprocess_exec('a')\n"
                     "os.getpid()\nfrom ..platform.process import PIPE, spawn\n")
    found = sorted({what for what, _ in _process_uses(tree)})
    assert found == sorted({
        "import subprocess", "import multiprocessing.connection", "from subprocess import",
        "from os import fork", "from concurrent.futures import ProcessPoolExecutor",
        "os.system", "os.execvp", "os.popen", "pty.fork", "os.spawnlp",
        "create_subprocess_exec"}), found
    assert not PROCESS_ALLOWED or all(PROCESS_ALLOWED.values())  # each entry says why


# ---------------------------------------------------------------- import graph

def _module_name(path):
    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


LIB_MODULES = {_module_name(p): p for p in _modules()}


def _is_type_checking(node):
    test = node.test
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _absolute(node, module):
    """The absolute module name of an ImportFrom (relative ones resolved against module,
    a dotted name such as ``lib.run.cli``; a package's ``__init__`` is named as the package)."""
    if node.level == 0:
        return node.module
    is_package = LIB_MODULES.get(module, "").endswith("__init__.py")
    parts = module.split(".") if is_package else module.split(".")[:-1]
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imported_lib_modules(tree, module="lib", type_checking=False):
    """lib modules a module imports, at module level or inside functions (both run);
    with type_checking, also those imported under ``if TYPE_CHECKING:``."""
    found = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not type_checking:
                for other in child.orelse:
                    visit_node(other)
                continue
            visit_node(child)

    def visit_node(node):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in LIB_MODULES)
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            source = _absolute(node, module)
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in LIB_MODULES:
                    found.add(full)
                elif source in LIB_MODULES:
                    found.add(source)
        visit(node)

    visit(tree)
    return found


def _import_graph(type_checking=False):
    return {name: _imported_lib_modules(parsed(path), name, type_checking)
            for name, path in LIB_MODULES.items()}


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan), as frozensets."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


# Known module cycles (frozensets of module names), each on its way out; add one
# only with a comment saying why and what removes it.  Empty: none is known.
KNOWN_IMPORT_CYCLES: frozenset = frozenset()


def test_no_import_cycle_among_lib_modules():
    """No lib module imports itself through others.

    Edges are ``import lib.x`` and ``from lib.x import y`` (to ``lib.x.y`` when
    that is a module, else to ``lib.x``), at module level *and* inside
    functions: a deferred import is still a dependency, and hiding a cycle in
    a function is what this rule is against.  Imports under ``if
    TYPE_CHECKING:`` do not count (they never run).  Importing ``lib.x.y``
    does not count as importing the package ``lib.x`` itself.
    """
    cycles = [c for c in _cycles(_import_graph()) if c not in KNOWN_IMPORT_CYCLES]
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in cycles)


def test_known_import_cycles_still_exist():
    """The allow-list shrinks: an entry whose cycle is gone must be deleted."""
    current = set(_cycles(_import_graph()))
    assert not [c for c in KNOWN_IMPORT_CYCLES if c not in current]


def test_import_graph_sees_function_level_imports():
    tree = ast.parse("def f():\n    from lib.backup.tool import BackupTool\n"
                     "if TYPE_CHECKING:\n    import lib.servers.server\n")
    assert _imported_lib_modules(tree) == {"lib.backup.tool"}
    tree = ast.parse("from ..backup.tool import BackupTool\nfrom . import manager\n"
                     "from .. import errors\n")
    assert _imported_lib_modules(tree, "lib.servers.server") == {
        "lib.backup.tool", "lib.servers.manager", "lib.errors"}
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [frozenset({"a", "b"})]


# ---------------------------------------------------------------- module-level state

MUTABLE_CALLS = frozenset({
    "list", "dict", "set", "bytearray", "defaultdict", "OrderedDict", "deque", "Counter",
    "ChainMap", "Lock", "RLock", "Event", "Condition", "Semaphore", "BoundedSemaphore", "local",
    "Queue", "SimpleQueue", "LifoQueue", "PriorityQueue", "WeakValueDictionary",
    "WeakKeyDictionary", "WeakSet", "SyncManager", "Manager",
})
MUTABLE_LITERALS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)

# Known exceptions, as "path:NAME" (none left: add one only with a reason).
KNOWN_MUTABLE_STATE: frozenset = frozenset()


def _called_name(call):
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _mutable_value(value):
    if isinstance(value, MUTABLE_LITERALS):
        return True
    return isinstance(value, ast.Call) and _called_name(value) in MUTABLE_CALLS


def _shared_state(tree):
    """(name, line) of every binding that makes mutable state shared by all users of a
    module: see test_no_module_level_mutable_state."""
    found = []

    def body_of(node):
        for field in ("body", "orelse", "finalbody", "handlers"):
            for child in getattr(node, field, []) or []:
                yield child

    def scan(statements, where):
        for node in statements:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Global):
                        found.extend((f"global {n}", inner.lineno) for n in inner.names)
                continue
            if isinstance(node, ast.ClassDef):
                scan(node.body, f"{node.name}.")
                continue
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if names and _mutable_value(node.value):
                    found.extend((where + n, node.lineno) for n in names)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and not where:
                found.append((node.target.id, node.lineno))
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                scan(list(body_of(node)), where)

    scan(tree.body, "")
    return found


@pytest.mark.parametrize("path", list(_modules()), ids=lambda p: os.path.relpath(p, ROOT))
def test_no_module_level_mutable_state(path):
    """No module or class holds mutable state that every user shares.

    Rejected, at module level and in class bodies (where a default is shared
    by every instance): assignments of list, dict or set literals and
    comprehensions, or of calls to the mutable constructors in MUTABLE_CALLS
    (list(), dict(), defaultdict(), deque(), Lock(), threading.local()...),
    and module-level augmented assignments; in functions, ``global``
    statements (rebinding module state).  Constants must be immutable:
    tuples, frozensets, ``types.MappingProxyType``, strings, numbers, enums;
    typing aliases and other calls are allowed.  Dataclass fields use
    ``field(default_factory=...)``.
    """
    rel = os.path.relpath(path, ROOT)
    problems = [f"{name}:{line}" for name, line in _shared_state(parsed(path))
                if f"{rel}:{name}" not in KNOWN_MUTABLE_STATE]
    assert not problems, f"{rel}: shared mutable state: {', '.join(problems)}"


def test_mutable_state_rule_catches_the_forms():
    tree = ast.parse("A = (1, 2)\nB = {}\nc = []\nD = frozenset()\ne = defaultdict(list)\n"
                     "class K:\n    x: list = []\n    Y = ()\n"
                     "def f():\n    global g\n"
                     "T = MappingProxyType({'a': 1})\n")
    assert [n for n, _ in _shared_state(tree)] == ["B", "c", "e", "K.x", "global g"]


# ---------------------------------------------------------------- test-context globals

COMPAT_PACKAGE = os.path.join(LIB, "kewpie2012") + os.sep
CONTEXT_GLOBALS = frozenset({"servers", "test_executor", "server_manager", "system_manager"})
COMPAT_MODULE_HOLDING_SERVERS = "lib.kewpie2012.mysqlBaseTestCase"
HOLDING_SERVERS_NAMES = (COMPAT_MODULE_HOLDING_SERVERS, "lib.util.mysqlBaseTestCase")  # its 2012 name


def _context_global_reads(tree):
    """(what, line) for each read of a kewpie 2012 test-context global in tree."""
    found = []
    imported_modules = {alias.asname or alias.name.split(".")[0]
                        for node in ast.walk(tree) if isinstance(node, ast.Import)
                        for alias in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module in HOLDING_SERVERS_NAMES
                or any(f"{node.module}.{a.name}" in HOLDING_SERVERS_NAMES for a in node.names)):
            found.append((f"import of {COMPAT_MODULE_HOLDING_SERVERS}", node.lineno))
        elif isinstance(node, ast.Import) and any(
                a.name in HOLDING_SERVERS_NAMES for a in node.names):
            found.append((f"import of {COMPAT_MODULE_HOLDING_SERVERS}", node.lineno))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            if node.attr in ("test_executor", "system_manager", "server_manager", "_outcome"):
                found.append((f".{node.attr}", node.lineno))
            elif (node.attr == "servers" and isinstance(node.value, ast.Name)
                  and (node.value.id in imported_modules or node.value.id in ("module", "mod"))):
                found.append((f"{node.value.id}.servers", node.lineno))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                node.id == "test_executor":
            found.append(("test_executor", node.lineno))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant)
              and node.args[1].value in CONTEXT_GLOBALS | {"_outcome"}):
            found.append((f"{node.func.id}(..., {node.args[1].value!r})", node.lineno))
    return found


@pytest.mark.parametrize("path", [p for p in _modules() if not p.startswith(COMPAT_PACKAGE)],
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_no_test_context_global_read_outside_compat(path):
    """Only lib/kewpie2012/ (the kewpie 2012 compatibility package) touches the 2012 test globals.

    Elsewhere in lib/: no ``.test_executor``, ``.system_manager`` or
    ``.server_manager`` attribute reads, no ``test_executor`` name, no
    ``<module>.servers``, no import of lib.kewpie2012.mysqlBaseTestCase (which holds
    the ``servers`` global), no ``getattr``/``hasattr``/``setattr`` by those
    names, and no unittest private ``_outcome``.  Code reads the TestContext.
    """
    rel = os.path.relpath(path, ROOT)
    reads = _context_global_reads(parsed(path))
    assert not reads, f"{rel}: " + ", ".join(f"{what} (line {line})" for what, line in reads)


def test_context_global_rule_catches_the_forms():
    tree = ast.parse("import lib.kewpie2012.mysqlBaseTestCase as compat\n"
                     "from lib.util import mysqlBaseTestCase\n"
                     "x = compat.servers\ny = self.test_executor.logdir\n"
                     "z = getattr(self, '_outcome', None)\nmodule.servers = []\n")
    assert sorted(w for w, _ in _context_global_reads(tree)) == sorted([
        f"import of {COMPAT_MODULE_HOLDING_SERVERS}", f"import of {COMPAT_MODULE_HOLDING_SERVERS}",
        "compat.servers", ".test_executor",
        "getattr(..., '_outcome')"])


# ---------------------------------------------------------------- layers
# Data flows one way (docs/architecture.md): the command line drives the run,
# the run loads suites and drives servers and tools, tools work over servers,
# and everything may use the platform and lib.errors.  A package may import
# from its own layer or any layer below it (later in LAYERS), never above; a
# layer is whole packages (or top-level modules), with no module placed apart
# from its package.
LAYERS = (
    ("lib.cli",),
    ("lib.modes",),
    ("lib.pytest_plugin",),
    ("lib.run",),
    ("lib.kewpie2012",),
    ("lib.suites", "lib.testcase"),
    ("lib.consistency", "lib.backup", "lib.randgen", "lib.sysbench", "lib.checks", "lib.data",
     "lib.mtr", "lib.hunt", "lib.reduce", "lib.replay",
     "lib.history"),
    ("lib.servers",),
    ("lib.platform", "lib.config", "lib.errors", "lib.home", "lib.aliases"),
)

# Imports against the flow (or closing a package cycle) that are known and on
# their way out, as (importer, imported): reason.  Each entry must still exist
# (test_allowed_imports_still_exist) and is deleted with the import.
ALLOWED_IMPORTS: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("path", list(_modules()), ids=lambda p: os.path.relpath(p, ROOT))
def test_imports_inside_lib_are_relative(path):
    """Inside the package, modules import each other relatively (``from ..servers import
    x``): the package is ``lib`` in a checkout and ``kewpie`` installed (lib/aliases.py)."""
    tree = parsed(path)
    absolute = [node.lineno for node in ast.walk(tree)
                if (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                    and node.module.split(".")[0] in ("lib", "kewpie"))
                or (isinstance(node, ast.Import)
                    and any(a.name.split(".")[0] in ("lib", "kewpie") for a in node.names))]
    assert not absolute, f"{os.path.relpath(path, ROOT)}: absolute package imports at lines {absolute}"


def _layer_of(module):
    best = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (index, len(prefix))
    return None if best is None else best[0]


def _layer_violations(graph):
    """"importer -> imported" for every edge of graph that goes up the layers."""
    problems = []
    for module, targets in graph.items():
        mine = _layer_of(module)
        if mine is None:
            continue
        for target in targets:
            theirs = _layer_of(target)
            if theirs is not None and theirs < mine and (module, target) not in ALLOWED_IMPORTS:
                problems.append(f"{module} -> {target}")
    return sorted(problems)


def test_imports_flow_one_way():
    """No module imports from a layer above its own; an import under ``if
    TYPE_CHECKING:`` counts too (the type belongs in a lower layer)."""
    problems = _layer_violations(_import_graph(type_checking=True))
    assert not problems, "imports against the flow: " + "; ".join(problems)


def test_layer_rule_catches_a_planted_violation():
    graph = {"lib.servers.planted": _imported_lib_modules(ast.parse(
        "from ..platform.process import spawn\nfrom ..run.report import Outcome\n"), "lib.servers.planted"),
        "lib.backup.planted": _imported_lib_modules(ast.parse(
            "if TYPE_CHECKING:\n    from ..suites.context import TestContext\n"),
            "lib.backup.planted", type_checking=True),
        "lib.run.planted": _imported_lib_modules(ast.parse(
            "from ..suites.loader import TestSpec\n"), "lib.run.planted")}
    assert _layer_violations(graph) == ["lib.backup.planted -> lib.suites.context",
                                        "lib.servers.planted -> lib.run.report"]


def test_every_lib_module_has_a_layer():
    """A new package must be placed in LAYERS (and in docs/architecture.md)."""
    unplaced = sorted(m for m in LIB_MODULES if m != "lib" and _layer_of(m) is None)
    assert not unplaced, f"modules in no layer: {unplaced}"


def test_a_layer_is_whole_packages():
    """LAYERS names packages and top-level modules only: a module that belongs to
    another layer than its package's moves to a package of that layer."""
    nested = [p for layer in LAYERS for p in layer if p.count(".") > 1]
    assert not nested, f"modules placed apart from their package: {nested}"
    for layer in LAYERS:
        for prefix in layer:
            assert prefix in LIB_MODULES, f"LAYERS names {prefix}, which is no lib module"


def _package(module):
    return ".".join(module.split(".")[:2])


def _package_graph(graph):
    """The import graph between packages (lib.run, lib.servers...), without ALLOWED_IMPORTS."""
    packages = {}
    for module, targets in graph.items():
        edges = packages.setdefault(_package(module), set())
        edges.update(_package(t) for t in targets
                     if _package(t) != _package(module) and (module, t) not in ALLOWED_IMPORTS)
    return packages


def test_no_import_cycle_among_lib_packages():
    """No package imports itself through others, counting ``if TYPE_CHECKING:``
    imports: a type two packages share lives in the lower one."""
    cycles = _cycles(_package_graph(_import_graph(type_checking=True)))
    assert not cycles, "package cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in cycles)


def test_package_cycle_rule_sees_type_only_imports():
    suites = ast.parse("if TYPE_CHECKING:\n    from ..kewpie2012.context import TestExecutor\n")
    compat = ast.parse("from ..suites.context import TestContext\n")
    graph = {"lib.suites.loader": _imported_lib_modules(suites, "lib.suites.loader"),
             "lib.kewpie2012.context": _imported_lib_modules(compat, "lib.kewpie2012.context")}
    assert _cycles(_package_graph(graph)) == []  # the type-only import does not run...
    graph["lib.suites.loader"] = _imported_lib_modules(suites, "lib.suites.loader",
                                                       type_checking=True)
    assert _cycles(_package_graph(graph)) == [frozenset({"lib.suites", "lib.kewpie2012"})]  # ...but counts


def test_allowed_imports_still_exist():
    """The allow-list shrinks: an entry whose import is gone must be deleted."""
    graph = _import_graph(type_checking=True)
    assert not [edge for edge in ALLOWED_IMPORTS if edge[1] not in graph.get(edge[0], ())]


# ---------------------------------------------------------------- findable tests
# Every test file says what it covers, in its docstring: a line "Covers: a, b, c"
# (continued up to a blank line) naming files or folders of the checkout, each
# optionally followed by a note in parentheses.  `grep -r "Covers:.*lib/run/bots.py"
# tests/` finds the tests of a module.
TEST_DIRS = (os.path.join(ROOT, "tests", "unit"), os.path.join(ROOT, "tests", "integration"))
COVERED_ROOTS = ("lib/", "bench/", "scripts/")  # at least one entry is code of these


def _test_files():
    """Every test file under TEST_DIRS, in their subfolders too (tests/unit/ mirrors lib/)."""
    for folder in TEST_DIRS:
        for dirpath, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.startswith("test_") and name.endswith(".py"):
                    yield os.path.join(dirpath, name)


def _covers(doc):
    """The entries of a docstring's Covers: paragraph (None when it has none)."""
    match = re.search(r"^Covers:(.*?)(?:\n\s*\n|\Z)", doc or "", re.S | re.M)
    if match is None:
        return None
    text = " ".join(match.group(1).split())
    entries, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            entries.append(current)
            current = ""
        else:
            current += char
    entries.append(current)
    return [e.strip().split(" ")[0].rstrip(".") for e in entries if e.strip()]


@pytest.mark.parametrize("path", list(_test_files()), ids=lambda p: os.path.relpath(p, ROOT))
def test_every_test_file_says_what_it_covers(path):
    """A test file's docstring names what it covers (docs/architecture.md, "Tests")."""
    rel = os.path.relpath(path, ROOT)
    covers = _covers(ast.get_docstring(parsed(path)))
    assert covers, f"{rel}: no 'Covers: lib/...' line in the module docstring"
    missing = [c for c in covers if not os.path.exists(os.path.join(ROOT, c))]
    assert not missing, f"{rel}: covers what does not exist: {missing}"
    assert any(c.startswith(COVERED_ROOTS) for c in covers), \
        f"{rel}: covers nothing under {', '.join(COVERED_ROOTS)}: {covers}"


def test_covers_reads_entries_with_notes():
    doc = ("What it does.\n\nCovers: lib/run/bots.py, pyproject.toml (packages, data),\n"
           "lib/suites/ (the loader).\n\nMore text, lib/nothing.py")
    assert _covers(doc) == ["lib/run/bots.py", "pyproject.toml", "lib/suites/"]
    assert _covers("Tests for lib/run/bots.py.") is None


# ---------------------------------------------------------------- the public API
# A suite imports what lib/__init__.py exports (docs/writing-tests.md, "The public
# API") or kewpie 2012's API, so that every other module may move.
SUITE_DIRS = ("percona_tests", "examples")
API_2012 = ("util", "kewpie2012")  # lib.util is its 2012 name (lib/aliases.py)


def _suite_files():
    for top in SUITE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            yield from (os.path.join(dirpath, n) for n in sorted(files) if n.endswith(".py"))


def _internal_imports(tree, public):
    """(what, line) for each import in tree of a module of the package that is neither
    the package (names of ``public`` only) nor kewpie 2012's API."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] not in ("lib", "kewpie"):
                continue
            if len(parts) == 1:
                found += [(f"{node.module}.{a.name}", node.lineno) for a in node.names
                          if a.name not in public and a.name not in API_2012]
            elif parts[1] not in API_2012:
                found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names
                      if a.name.split(".")[0] in ("lib", "kewpie") and "." in a.name
                      and a.name.split(".")[1] not in API_2012]
    return found


@pytest.mark.parametrize("path", list(_suite_files()), ids=lambda p: os.path.relpath(p, ROOT))
def test_suites_import_only_the_public_api(path):
    """A suite's test imports the package's public API or kewpie 2012's, nothing else."""
    import lib
    found = _internal_imports(parsed(path), set(lib.__all__))
    assert not found, f"{os.path.relpath(path, ROOT)} imports internal modules: " + ", ".join(
        f"{what} (line {line})" for what, line in found) + "; import them from lib (its __all__)"


def test_public_api_rule_catches_the_forms():
    tree = ast.parse("from lib import KewpieTestCase, servers\n"
                     "from lib.testcase import KewpieTestCase\n"
                     "from kewpie.consistency import Bank\nimport lib.servers.server\n"
                     "from lib.util.mysqlBaseTestCase import mysqlBaseTestCase\n"
                     "from lib.util import crashme_methods\nimport lib.kewpie2012.context\n"
                     "import lib\nfrom percona_tests.main import suite_config\n")
    assert _internal_imports(tree, {"KewpieTestCase"}) == [
        ("lib.servers", 1), ("lib.testcase", 2), ("kewpie.consistency", 3),
        ("lib.servers.server", 4)]
