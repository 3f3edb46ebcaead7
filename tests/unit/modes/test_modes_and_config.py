"""House rules of issue 44 items 5 and 6: modes as folders registered in one table, and
a typed configuration in sections.

1. A mode is a folder of lib/modes/ (its ``__init__.py`` gives its ModeSpec) and is in
   lib/modes/table.py's MODES; the command line's ``--mode`` (choices, help, option
   groups) and the dispatch are built from that table.
2. No mode imports another mode (what two modes share lives in lib/run/ or below).
3. The configuration is read typed: no ``getattr`` on an object named like a
   configuration (``config``, ``cfg``, ``settings``...) anywhere in lib/, and no
   parameter, attribute or field holding it is typed ``Any`` (``**kwargs`` aside).
4. Every section of the configuration -- RunConfig's own, each mode's, and the sections
   nested in them -- has at most 15 fields.

Each rule is shown catching planted source.

Covers: lib/modes/, lib/config/, lib/cli.py
"""
import ast
import dataclasses
import os

import pytest

from lib.cli import build_parser
from lib.config import MAX_FIELDS, ModeSection, RunConfig
from lib.modes.spec import ModeSpec
from lib.modes.table import MODES, mode_named
from tests.conftest import ROOT

LIB = os.path.join(ROOT, "lib")
MODES_DIR = os.path.join(LIB, "modes")
CONFIG_NAMES = ("config", "cfg", "conf", "settings", "section")


def _sources(top):
    for folder, _dirs, files in os.walk(top):
        if "__pycache__" in folder:
            continue
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def _mode_folders():
    return sorted(d for d in os.listdir(MODES_DIR)
                  if os.path.isfile(os.path.join(MODES_DIR, d, "__init__.py")))


# ---------------------------------------------------------------- 1: one table

def test_every_mode_folder_is_in_the_table_and_the_other_way_round():
    assert sorted(m.name for m in MODES) == _mode_folders()
    for mode in MODES:
        assert isinstance(mode, ModeSpec) and mode_named(mode.name) is mode


def test_the_command_line_is_built_from_the_table():
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "mode")
    assert list(action.choices) == [m.name for m in MODES]
    for mode in MODES:
        assert f"{mode.name}: {mode.summary}" in action.help


# ---------------------------------------------------------------- 2: no mode imports another

def _mode_of(module):
    """'hunt' for lib.modes.hunt and lib.modes.hunt.run; None for lib.modes.table..."""
    parts = module.split(".")
    if parts[:2] == ["lib", "modes"] and len(parts) > 2 and parts[2] in _mode_folders():
        return parts[2]
    return None


def _imports(tree, module, is_package):
    """The lib modules a module's source imports (relative imports resolved)."""
    package = module if is_package else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append(target)
            found.extend(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
    return found


def _cross_mode_imports(sources):
    """'importer -> imported' for every import of one mode's module by another mode's."""
    bad = []
    for module, (source, is_package) in sorted(sources.items()):
        mine = _mode_of(module)
        if mine is None:
            continue
        for target in _imports(ast.parse(source), module, is_package):
            theirs = _mode_of(target)
            if theirs is not None and theirs != mine:
                bad.append(f"{module} -> {target}")
    return bad


def _lib_sources():
    sources = {}
    for path in _sources(MODES_DIR):
        rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
        is_package = rel.endswith(".__init__")
        sources[rel.removesuffix(".__init__")] = (open(path).read(), is_package)
    return sources


def test_no_mode_imports_another():
    assert not _cross_mode_imports(_lib_sources())


def test_the_cross_mode_rule_catches_a_planted_import():
    planted = {"lib.modes.reduce.run": ("from ..hunt.options import HuntOptions\n", False),
               "lib.modes.hunt": ("from ..mtr import MODE\n", True),
               "lib.modes.table": ("from . import hunt, mtr\n", False)}
    assert _cross_mode_imports(planted) == ["lib.modes.hunt -> lib.modes.mtr",
                                            "lib.modes.hunt -> lib.modes.mtr.MODE",
                                            "lib.modes.reduce.run -> lib.modes.hunt.options",
                                            "lib.modes.reduce.run -> lib.modes.hunt.options"
                                            ".HuntOptions"]


# ---------------------------------------------------------------- 3: read typed

def _named_like_config(node):
    """The expression is a configuration by its name: config, self.config, env.config..."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return any(part in name.lower() for part in CONFIG_NAMES) and name != "workerinput"


def _untyped_reads(source):
    """Lines of getattr on a configuration and of configurations typed Any."""
    lines = []
    tree = ast.parse(source)
    spread = {id(a.kwarg) for a in ast.walk(tree) if isinstance(a, ast.arguments) and a.kwarg}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "getattr" and node.args and _named_like_config(node.args[0])):
            lines.append(node.lineno)
        annotation, name = None, ""
        if isinstance(node, ast.arg) and id(node) not in spread:  # **settings: Any is no config
            annotation, name = node.annotation, node.arg
        elif isinstance(node, ast.AnnAssign):
            annotation, target = node.annotation, node.target
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if annotation is not None and name and any(p in name.lower() for p in CONFIG_NAMES):
            text = ast.unparse(annotation)
            if text in ("Any", "'Any'", '"Any"') or text.startswith(("Any |", "Optional[Any]")):
                lines.append(node.lineno)
    return sorted(set(lines))


# pytest's own Config (a plugin reads pytest-xdist's worker attributes off it): not ours
PYTEST_CONFIG = {os.path.join(LIB, "pytest_plugin", "plugin.py")}


@pytest.mark.parametrize("path", [p for p in _sources(LIB) if p not in PYTEST_CONFIG],
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_no_getattr_or_any_on_configuration(path):
    lines = _untyped_reads(open(path).read())
    assert not lines, f"{os.path.relpath(path, ROOT)}: configuration read untyped at {lines}"


def test_pytests_own_config_is_the_only_getattr_left_in_the_plugin():
    """pytest-xdist sets workerinput/workeroutput on pytest's Config when it has them."""
    source = open(next(iter(PYTEST_CONFIG))).read()
    calls = [ast.unparse(n.args[1]) for n in ast.walk(ast.parse(source))
             if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "getattr"
             and n.args and _named_like_config(n.args[0])]
    assert calls and set(calls) <= {"'workerinput'", "'workeroutput'"}, calls


def test_the_typed_read_rule_catches_planted_source():
    planted = ("def f(config, run_config: Any, settings: Any | None = None, **conf: Any):\n"
               "    x = getattr(config, 'hunt_trials', 0)\n"
               "    y = getattr(self.config, 'verbose')\n"
               "    z = getattr(server, 'pid', None)\n"
               "class C:\n"
               "    config: Any = None\n")
    assert _untyped_reads(planted) == [1, 2, 3, 6]


# ---------------------------------------------------------------- 4: small sections

def _sections():
    """Every section class: RunConfig's, each mode's, and those nested in them."""
    found, todo = [], [RunConfig, *ModeSection.__subclasses__()]  # the table imported each
    seen = set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        found.append(cls)
        for f in dataclasses.fields(cls):
            default = (f.default_factory() if f.default_factory is not dataclasses.MISSING
                       else f.default)
            if dataclasses.is_dataclass(default):
                todo.append(type(default))
    return found


def test_each_section_has_at_most_15_fields():
    sections = _sections()
    names = {cls.__name__ for cls in sections}
    assert {"RunConfig", "Selection", "Servers", "Reporting", "Debugging", "Tools", "History",
            "MtrOptions", "HuntOptions", "OracleOptions", "ReduceOptions",
            "SweepOptions"} <= names
    too_big = {cls.__name__: len(dataclasses.fields(cls)) for cls in sections
               if len(dataclasses.fields(cls)) > MAX_FIELDS}
    assert not too_big, too_big


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_a_mode_reads_its_own_section(mode):
    """RunConfig.section gives the run's mode its section and any other its defaults."""
    argv = {"hunt": ["--grammar=x.yy"], "sweep": ["--sweep-file=s.json"]}.get(mode.name, [])
    from lib.cli import config_from_args
    config = config_from_args([f"--mode={mode.name}", *argv])
    assert isinstance(config.mode_section, ModeSection)
    for kind in ModeSection.__subclasses__():
        got = config.section(kind)
        assert isinstance(got, kind)
        assert (got is config.mode_section) == isinstance(config.mode_section, kind)
