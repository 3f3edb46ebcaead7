"""docs/architecture.md, the map, says only what is true: its concrete claims are computed.

1. Length: a map read in ten minutes (at most MAX_LINES lines).
2. Paths: every backticked path of the checkout exists (a folder ``lib/x/``, a file,
   ``tests/...py::test_name`` a test function of that file); a bare ``name.py`` exists
   under a folder the same bullet, row, paragraph or heading names; every link to a
   doc (and its ``#anchor``) resolves, and every ``architecture.md, "Section"``
   reference in the checkout names a heading of the map (of docs/security.md and
   docs/startup.md too, where the map's security model and start-up notes moved).
3. Names: a backticked ``lib.x.y`` imports; a backticked class, constant or
   snake_case name (``Class.attr`` too) is defined (or used) in lib/; a backticked
   option (``--x``) is an option of the command line, ``kewpie history`` or the pytest
   plugin.
4. "Only" and "never": a bullet, row or paragraph that says either names the test
   that keeps it true (a ``tests/`` path, checked by 2).
5. Tables: the layers are the layer rule's own LAYERS (tests/unit/test_house_rules.py),
   in order; the configuration's sections, their classes and field counts are
   RunConfig's; the modes, in order, are lib/modes/table.py's MODES, each with its
   section's class and field count.
6. Counts and lists written in prose: RunConfig's own fields, the public API's names,
   the ``# type: ignore`` comments (each naming its code) and their files, mypy's
   strictness, the house rules, the caps (15 fields, 25 public names), the oracles,
   the empty ALLOWED_IMPORTS, one Galera and one my.cnf model, the sweeps' tables
   declared only in lib/history/.

Covers: docs/architecture.md, docs/security.md, docs/startup.md, lib/ (the names and
paths the map cites), tests/unit/test_house_rules.py (its LAYERS)
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import os
import re
import tomllib
from collections.abc import Iterator
from functools import cache

import pytest
from _pytest.config.argparsing import Parser

import lib
from lib.cli import build_parser
from lib.config import MAX_FIELDS, RunConfig
from lib.history.commands import build_parser as history_parser
from lib.modes.table import MODES
from lib.pytest_plugin.options import add_options as plugin_options

from tests.conftest import ROOT
from tests.parsed import parsed

from .servers.test_server_api_size import MAX_SERVER_NAMES
from .test_house_rules import ALLOWED_IMPORTS, LAYERS

LIB = os.path.join(ROOT, "lib")
DOCS = os.path.join(ROOT, "docs")
DOC = os.path.join(DOCS, "architecture.md")
MAX_LINES = 400

# Top-level folders of the checkout: a backticked token starting with one is a path.
CHECKOUT_ROOTS = ("lib/", "tests/", "docs/", "bench/", "scripts/", "percona_tests/",
                  "examples/")
# Names in the map that are examples of what a newcomer would add, not kewpie's.
HYPOTHETICAL = frozenset({"replay", "lib/modes/replay/", "ReplayOptions", "run_replay", "--heaptrack"})
# Names of other programs the map cites (not kewpie's code).
NOT_OURS = frozenset({
    "suite_config.py",   # a suite's file (docs/writing-tests.md)
    "safe.directory",    # git's setting the trust rule follows
})
SAYS_ONLY = re.compile(r"\b(only|never)\b", re.IGNORECASE)
TOKEN = re.compile(r"`([^`]+)`")
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


# ---------------------------------------------------------------- reading the doc

def _text() -> str:
    with open(DOC, encoding="utf-8") as f:
        return f.read()


@dataclasses.dataclass
class Unit:
    """A bullet, a table row or a paragraph, with the heading it sits under."""

    heading: str
    text: str


def _units(text: str) -> list[Unit]:
    """The doc cut into bullets, numbered items, table rows and paragraphs (code blocks
    left out)."""
    units: list[Unit] = []
    heading, current, fenced = "", [], False

    def flush() -> None:
        if current:
            units.append(Unit(heading, "\n".join(current)))
            current.clear()

    for line in text.splitlines():
        if line.startswith("```"):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("#"):
            flush()
            heading = line.lstrip("#").strip()
        elif not line.strip():
            flush()
        elif line.startswith("|") or re.match(r"^(- |\d+\. )", line):
            flush()
            current.append(line)
            if line.startswith("|"):
                flush()
        else:
            current.append(line)
    flush()
    return units


def _tokens(text: str) -> list[str]:
    return [" ".join(t.split()) for t in TOKEN.findall(text)]


def _section(title: str) -> str:
    """The text under the heading ``## title`` (to the next heading of its level)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", _text(), re.S | re.M)
    assert match, f"docs/architecture.md has no section '## {title}'"
    return match.group(1)


def _table(title: str) -> list[list[str]]:
    """The rows (cells stripped) of the first table of a section, header left out."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in _section(title).splitlines() if line.startswith("|")]
    return [r for r in rows[2:]]


def _claim(pattern: str, text: str | None = None) -> re.Match[str]:
    """The one place the doc states a claim (each must be written exactly once)."""
    flat = " ".join((text if text is not None else _text()).split())  # lines wrap anywhere
    found = list(re.finditer(pattern, flat, re.S))
    assert len(found) == 1, f"docs/architecture.md states {pattern!r} {len(found)} times"
    return found[0]


# ---------------------------------------------------------------- what lib/ defines

def _sources(top: str) -> Iterator[str]:
    for folder, _dirs, files in os.walk(top):
        if "__pycache__" in folder:
            continue
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


@cache
def _trees() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of lib/, parsed once."""
    return tuple((path, parsed(path)) for path in _sources(LIB))


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


@cache
def _known_names() -> frozenset[str]:
    """Every name lib/ (and the house rules) defines or uses: classes, functions,
    assigned names and attributes, fields, attribute reads, and identifiers inside
    string constants that are no docstrings."""
    names: set[str] = set()
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        names.update(re.findall(IDENT, f.read()))  # mypy's settings, the package list
    rules = os.path.join(ROOT, "tests", "unit", "test_house_rules.py")
    for _path, tree in _trees() + ((rules, ast.parse(open(rules, encoding="utf-8").read())),):
        docstrings = _docstring_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in docstrings:
                names.update(re.findall(IDENT, node.value))
    return frozenset(names)


def _defining_module(class_name: str) -> object | None:
    """The class called class_name in lib/ (the first module that defines it)."""
    for path, tree in _trees():
        if any(isinstance(n, ast.ClassDef) and n.name == class_name for n in tree.body):
            rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
            module = importlib.import_module(rel.removesuffix(".__init__"))
            return getattr(module, class_name)
    return None


def _resolves(dotted: str) -> bool:
    """lib.x.y (or kewpie.x.y): the longest importable module, then attributes."""
    parts = ("lib" + dotted[len("kewpie"):] if dotted.startswith("kewpie.") else dotted).split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


# ---------------------------------------------------------------- 1: length

def test_the_map_is_short():
    lines = _text().count("\n")
    assert lines <= MAX_LINES, f"docs/architecture.md has {lines} lines (at most {MAX_LINES}: " \
        "move measurements and history to docs of their own)"


# ---------------------------------------------------------------- 2: paths, links, sections

def _test_function_exists(path: str, name: str) -> bool:
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def test_every_path_exists():
    missing = []
    for token in set(_tokens(_text())):
        if not token.startswith(CHECKOUT_ROOTS) or " " in token or token in HYPOTHETICAL:
            continue
        path, _, function = token.partition("::")
        full = os.path.join(ROOT, path)
        exists = os.path.isdir(full) if path.endswith("/") else os.path.isfile(full)
        if not exists:
            missing.append(token)
        elif function and not _test_function_exists(full, function):
            missing.append(f"{token} (no such test function)")
    assert not missing, f"paths in docs/architecture.md that do not exist: {sorted(missing)}"


def _found_under(name: str, folders: list[str]) -> bool:
    for folder in folders:
        for _dir, _dirs, files in os.walk(os.path.join(ROOT, folder)):
            if name in files:
                return True
    return False


def test_every_module_named_alone_is_in_a_folder_its_context_names():
    lost = []
    for unit in _units(_text()):
        tokens = _tokens(unit.text)
        folders = [t for t in _tokens(unit.heading) + tokens
                   if t.startswith(CHECKOUT_ROOTS) and t.endswith("/")]
        folders += [t.rsplit("/", 1)[0] + "/" for t in _tokens(unit.heading) + tokens
                    if t.startswith("lib/") and t.endswith(".py")]
        for token in tokens:
            if re.fullmatch(r"[\w.]+\.py", token) and token not in NOT_OURS \
                    and not _found_under(token, folders):
                lost.append(f"{token} (under {unit.heading}: {unit.text[:60]!r}...)")
    assert not lost, "modules the map names that are not where it says: " + "; ".join(lost)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _headings(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.lstrip("#").strip() for line in f if re.match(r"#+ ", line)]


def test_every_link_resolves():
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", _text()):
        if "://" in target:
            continue
        path, _, anchor = target.partition("#")
        full = os.path.join(DOCS, path) if path else DOC
        if not os.path.isfile(full):
            broken.append(target)
        elif anchor and anchor not in {_slug(h) for h in _headings(full)}:
            broken.append(f"{target} (no such heading)")
    assert not broken, f"links in docs/architecture.md that lead nowhere: {broken}"


def _checkout_texts() -> Iterator[tuple[str, str]]:
    for top in ("lib", "docs", "tests", "bench", "scripts", "README.md", "pyproject.toml"):
        full = os.path.join(ROOT, top)
        walk = [(os.path.dirname(full), [], [os.path.basename(full)])] if os.path.isfile(full) \
            else os.walk(full)
        for folder, _dirs, files in walk:
            for name in files:
                if name.endswith((".py", ".md", ".toml", ".sh")) or top in ("scripts", "bench"):
                    path = os.path.join(folder, name)
                    try:
                        yield path, open(path, encoding="utf-8").read()
                    except (UnicodeDecodeError, IsADirectoryError):
                        continue


@pytest.mark.parametrize("doc", ["architecture.md", "security.md", "startup.md"])
def test_every_reference_to_a_section_of_the_map_names_one(doc):
    """The map and the docs it moved text to: a reference ``doc.md, "Section"`` (or
    ``doc.md#anchor``) anywhere in the checkout names a heading they have."""
    headings = set(_headings(os.path.join(DOCS, doc)))
    slugs = {_slug(h) for h in headings}
    name = re.escape(doc)
    stale = []
    for path, text in _checkout_texts():
        if os.path.samefile(path, __file__):
            continue
        flat = " ".join(text.split())
        for section in re.findall(rf'(?<![\w-]){name}[,;:]? *(?:section )?"([A-Za-z][^"\n]{{0,59}})"', flat):
            if section not in headings:
                stale.append(f"{os.path.relpath(path, ROOT)}: \"{section}\"")
        for anchor in re.findall(rf"(?<![\w-]){name}#([\w-]+)", flat):
            if anchor not in slugs:
                stale.append(f"{os.path.relpath(path, ROOT)}: #{anchor}")
    assert not stale, f"references to sections docs/{doc} does not have: {stale}"


# ---------------------------------------------------------------- 3: names and options

def _code_names(token: str) -> list[str]:
    """The names a token asks to exist: a bare identifier or a dotted one, with any
    call's parentheses dropped; [] for other tokens (text, SQL, paths, files)."""
    bare = re.sub(r"\(.*\)$", "", token)
    if not re.fullmatch(rf"{IDENT}(\.{IDENT})*", bare):
        return []
    if re.search(r"\.(py|md|toml|txt|json|pm|yy|zz|lua)$", bare):
        return []
    return [bare]


def _looks_like_code(name: str) -> bool:
    """A class (CamelCase), a constant (UPPER_CASE) or a snake_case name: what code
    defines; a plain lower-case word (``kewpie``, ``native``) may be prose."""
    return "." in name or "_" in name.strip("_") or bool(re.search(r"[a-z][A-Z]|^[A-Z]", name))


def test_every_dotted_module_name_imports():
    unresolved = [t for t in set(_tokens(_text()))
                  for name in _code_names(t)
                  if name.startswith(("lib.", "kewpie.")) and not _resolves(name)]
    assert not unresolved, f"lib.x names in docs/architecture.md that do not resolve: {unresolved}"


def test_every_code_name_is_defined_in_lib():
    unknown = []
    for token in set(_tokens(_text())):
        for name in _code_names(token):
            if name in HYPOTHETICAL or name in NOT_OURS or name.startswith(("lib.", "kewpie.")) \
                    or not _looks_like_code(name):
                continue
            head, *rest = name.split(".")
            if head[:1].isupper() and rest:  # Class.attr: the class has the attribute
                cls = _defining_module(head)
                if cls is None or not hasattr(cls, rest[0]):
                    unknown.append(name)
            elif any(part not in _known_names() for part in name.split(".")):
                unknown.append(name)
    assert not unknown, f"names in docs/architecture.md that lib/ does not define: {sorted(unknown)}"


def _argparse_options(parser: argparse.ArgumentParser) -> set[str]:
    found: set[str] = set()
    for action in parser._actions:  # noqa: SLF001 - argparse's one list of its options
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                found |= _argparse_options(sub)
        found.update(action.option_strings)
    return found


def _all_options() -> set[str]:
    pytest_parser = Parser(_ispytest=True)
    plugin_options(pytest_parser)
    plugin = {name for group in pytest_parser._groups  # noqa: SLF001 - pytest's option groups
              for option in group.options for name in option.names()}
    return _argparse_options(build_parser()) | _argparse_options(history_parser()) | plugin


def test_every_option_exists():
    options = _all_options()
    unknown = []
    for token in set(_tokens(_text())):
        if not token.startswith("--") or token == "--no-" or "*" in token:
            continue
        option = re.split(r"[ =]", token)[0]
        if option not in options and option not in HYPOTHETICAL:
            unknown.append(option)
    assert not unknown, f"options in docs/architecture.md that no parser has: {sorted(unknown)}"


# ---------------------------------------------------------------- 4: only and never

def test_every_only_and_never_names_the_test_that_keeps_it():
    unbacked = [u.text for u in _units(_text())
                if SAYS_ONLY.search(u.text)
                and not any(t.startswith("tests/") for t in _tokens(u.text))]
    assert not unbacked, "claims of 'only' or 'never' without the test that keeps them: " + \
        " | ".join(unbacked)


def test_the_only_rule_sees_units():
    units = _units("## H\n\nA paragraph that\nsays only this.\n\n- a bullet `tests/x.py`\n"
                   "  never alone\n- another\n| a | b |\n```\nonly code\n```\n")
    assert [u.text for u in units] == ["A paragraph that\nsays only this.",
                                       "- a bullet `tests/x.py`\n  never alone", "- another",
                                       "| a | b |"]


# ---------------------------------------------------------------- 5: tables

def _modules_of(cell: str) -> tuple[str, ...]:
    """`lib/run/`, `lib/cli.py` -> lib.run, lib.cli"""
    return tuple(t.rstrip("/").removesuffix(".py").replace("/", ".") for t in _tokens(cell))


def test_the_layer_table_is_the_layer_rules_own():
    written = [_modules_of(row[1]) for row in _table("The layers")]
    assert written == [tuple(layer) for layer in LAYERS], \
        "the layers table of docs/architecture.md differs from LAYERS in " \
        "tests/unit/test_house_rules.py"


def test_no_import_against_the_flow_is_allowed():
    _claim(r"`ALLOWED_IMPORTS`,\s+the list of imports against the flow, is empty")
    assert ALLOWED_IMPORTS == {}


def _sections_of(config: object) -> dict[str, type]:
    return {f.name: type(getattr(config, f.name)) for f in dataclasses.fields(config)
            if dataclasses.is_dataclass(getattr(config, f.name)) and f.name != "mode_section"}


def test_the_configuration_table_is_runconfigs_sections():
    written = {row[0].strip("`"): (row[1].strip("`"), int(row[2]))
               for row in _table("The configuration (`lib/config/`)")}
    actual = {name: (cls.__name__, len(dataclasses.fields(cls)))
              for name, cls in _sections_of(RunConfig()).items()}
    assert written == actual


def test_runconfigs_own_fields():
    match = _claim(r"its own fields\s+\(((?:`\w+`(?:,\s+)?)+):")
    own = [f.name for f in dataclasses.fields(RunConfig)
           if f.name != "mode_section" and not dataclasses.is_dataclass(getattr(RunConfig(), f.name))]
    assert _tokens(match.group(1)) == own


def test_the_field_cap_is_the_rules_own():
    match = _claim(r"A section has at most (\d+) fields")
    assert int(match.group(1)) == MAX_FIELDS


def _mode_sections() -> dict[str, type]:
    args = build_parser().parse_args([])
    return {mode.name: type(mode.section(args)) for mode in MODES}


def test_the_modes_table_is_the_table_of_modes():
    rows = _table("Modes (`lib/modes/`)")
    assert [row[0].strip("`") for row in rows] == [mode.name for mode in MODES], \
        "the modes of docs/architecture.md are not lib/modes/table.py's MODES, in order"
    sections = _mode_sections()
    for row in rows:
        cls = sections[row[0].strip("`")]
        fields = dataclasses.fields(cls)
        if row[1] == "none":
            assert not fields, f"{row[0]} has a section: {cls.__name__}"
        else:
            assert row[1].strip("`") == cls.__name__
        assert int(row[2]) == len(fields), f"{cls.__name__} has {len(fields)} fields"
        for nested, count in re.findall(r"`(\w+)`: (\d+) fields", row[3]):
            kinds = [type(getattr(cls(), f.name)).__name__ for f in fields]
            assert nested in kinds, f"{cls.__name__} has no {nested}"
            inner = next(type(getattr(cls(), f.name)) for f in fields
                         if type(getattr(cls(), f.name)).__name__ == nested)
            assert int(count) == len(dataclasses.fields(inner))


# ---------------------------------------------------------------- 6: counts and lists

def test_the_public_api_count():
    match = _claim(r"`EXPORTS` lists (\d+) names")
    assert int(match.group(1)) == len(lib.EXPORTS)


def _type_ignores() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in _sources(LIB):
        count = len(re.findall(r"#\s*type:\s*ignore", open(path, encoding="utf-8").read()))
        if count:
            found[os.path.relpath(path, ROOT)] = count
    return found


def test_the_type_ignore_count_and_files():
    match = _claim(r"there are (\d+) in `lib/`, in ((?:`[^`]+`(?:,| and)?\s*)+)")
    found = _type_ignores()
    assert int(match.group(1)) == sum(found.values()), found
    assert sorted(_tokens(match.group(2))) == sorted(found), found


def test_every_type_ignore_names_its_code():
    bare = [f"{os.path.relpath(path, ROOT)}:{number}" for path in _sources(LIB)
            for number, line in enumerate(open(path, encoding="utf-8"), 1)
            if re.search(r"#\s*type:\s*ignore(?!\[[\w-]+(,\s*[\w-]+)*\])", line)]
    assert not bare, f"# type: ignore without its error code: {bare}"


def test_mypy_is_strict_and_relaxes_no_module():
    _claim(r"mypy runs at `strict = true` with `warn_unreachable`")
    _claim(r"no module relaxed")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        mypy = tomllib.load(f)["tool"]["mypy"]
    assert mypy["strict"] is True and mypy["warn_unreachable"] is True
    assert "overrides" not in mypy and "untyped_calls_exclude" in mypy


def test_the_house_rules_are_counted_and_listed():
    match = _claim(r"checks these (\d+) over every module of `lib/` \(its docstring lists them[^:]*\):(.*?)\. Beside it")
    rules = re.findall(r"^\d+\. ", _house_rules_docstring(), re.M)
    assert int(match.group(1)) == len(rules)
    assert len(match.group(2).split(";")) == len(rules), "the map names each rule once"


def _house_rules_docstring() -> str:
    path = os.path.join(ROOT, "tests", "unit", "test_house_rules.py")
    return ast.get_docstring(ast.parse(open(path, encoding="utf-8").read())) or ""


def test_the_server_cap_is_the_tests_own():
    match = _claim(r"`Server` has at most (\d+) public names")
    assert int(match.group(1)) == MAX_SERVER_NAMES


def test_the_oracles_named_are_the_registered_ones():
    from lib.hunt.wrong import NAMES
    from lib.hunt.wrongresult.registry import ORACLES
    from lib.modes.hunt.run import BUILTIN_ORACLES
    match = _claim(r"the others \(((?:`\w+`,?\s*(?:and\s*)?)+)\) are `BUILTIN_ORACLES`")
    assert tuple(_tokens(match.group(1))) == BUILTIN_ORACLES
    assert tuple(ORACLES) == NAMES  # "registered by name in ORACLES ... and in NAMES"


def test_one_galera_and_one_cnf_model():
    from lib.mtr.galera import MtrFormation
    from lib.mtr.server import MtrGaleraServer
    from lib.servers.galera import GaleraServer
    from lib.servers.galera_cluster import ClusterFormation, NativeFormation
    _claim(r"\*\*One Galera\.\*\*")
    assert issubclass(MtrGaleraServer, GaleraServer)
    assert {c.__name__ for c in ClusterFormation.__subclasses__()} == \
        {NativeFormation.__name__, MtrFormation.__name__}
    defined: dict[str, list[str]] = {}
    for path, tree in _trees():
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                defined.setdefault(node.name, []).append(os.path.relpath(path, ROOT))
    for name in ("GaleraServer", "ClusterFormation", "SnapshotStore", "GaleraJoinError",
                 "wait_cluster", "form_galera_set", "CnfGroup", "run_rules", "apply_rules"):
        assert len(defined.get(name, [])) == 1, f"{name} is defined in {defined.get(name)}"
    _claim(r"\*\*One my\.cnf model\.\*\*")
    config = open(os.path.join(LIB, "mtr", "config.py"), encoding="utf-8").read()
    assert re.search(r"from \.\.servers\.cnf import", config), "mtr's configs use lib/servers/cnf.py"


def test_the_sweeps_tables_are_declared_in_the_history_store_only():
    from lib.history.schema import metadata
    _claim(r"The sweeps' tables are declared in `lib/history/schema.py`")
    assert {"kewpie_sweeps", "kewpie_run_details", "kewpie_sweep_checks"} <= set(metadata.tables)
    declaring = [os.path.relpath(p, ROOT) for p in _sources(LIB)
                 if not p.startswith(os.path.join(LIB, "history") + os.sep)
                 and re.search(r"CREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?\W?kewpie_|Table\(\s*.kewpie_",
                               open(p, encoding="utf-8").read(), re.I)]
    assert not declaring, f"the store's tables declared outside lib/history/: {declaring}"


@pytest.mark.parametrize("token,names", [
    ("lib.run.attempt", ["lib.run.attempt"]), ("Attempt.start", ["Attempt.start"]),
    ("config.section(HuntOptions)", ["config.section"]), ("kewpie.toml", []),
    ("[mysqld]", []), ("--trust PATH", []), ("lib/run/", [])])
def test_code_names_are_read_from_tokens(token, names):
    assert _code_names(token) == names
