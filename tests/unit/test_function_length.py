"""House rule: no function over 60 lines (issue 44), unless EXCEPTIONS names it with a
reason.

A function's length is its lines from ``def`` to its last line, docstring and nested
functions included, decorators not (``end_lineno - lineno + 1`` of the ast node, as
issue 44's before/after figures count it).  Every function and method of
``lib/`` and ``kewpie.py`` is measured, nested ones too; each is named
``path:qualified.name`` (``lib/run/bots.py:BotPool.run``).

The rule fails naming every long function that EXCEPTIONS does not list, and every
stale exception: one whose function no longer exists or is now short enough (the list
only shrinks).  An exception needs a real reason -- a flat table that reads best whole
-- not "too much work to split"; keep them few.  Each check is shown catching planted
source in a test of its own.

Covers: lib/ (every module, every function), kewpie.py
"""
import ast
import functools
import os

from tests.parsed import parsed

ROOT = os.path.dirname(os.path.abspath(__file__))
while not os.path.isfile(os.path.join(ROOT, "pyproject.toml")):  # the checkout's root
    ROOT = os.path.dirname(ROOT)

LIMIT = 60

# "path:qualified.name" -> why it reads best whole (none today: every long function of
# issue 44's review was split)
EXCEPTIONS: dict[str, str] = {}


def _sources(root):
    """The measured files under root: kewpie.py and every module of lib/."""
    top = os.path.join(root, "kewpie.py")
    if os.path.isfile(top):
        yield top
    for dirpath, dirnames, files in os.walk(os.path.join(root, "lib")):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(dirpath, name)


def _functions(tree, prefix=""):
    """(qualified name, length) of every function under tree, nested ones too."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            yield name, node.end_lineno - node.lineno + 1
            yield from _functions(node, name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, prefix + node.name + ".")
        else:
            yield from _functions(node, prefix)


def function_lengths(root):
    """"path:qualified.name" -> lines, for every function measured under root (a name
    defined twice in one scope counts its longest)."""
    lengths = {}
    for path in _sources(root):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        tree = parsed(path)
        for name, length in _functions(tree):
            key = f"{rel}:{name}"
            lengths[key] = max(length, lengths.get(key, 0))
    return lengths


def too_long(lengths, exceptions, limit=LIMIT):
    """The problems: each function over limit lines that exceptions does not list."""
    return [f"{key} is {length} lines (limit {limit}): split it into functions with one "
            f"job each, or list it in EXCEPTIONS with the reason it reads best whole"
            for key, length in sorted(lengths.items())
            if length > limit and key not in exceptions]


def stale(lengths, exceptions, limit=LIMIT):
    """The problems: each exception without a reason, whose function is gone, or that
    is short enough now."""
    problems = []
    for key, reason in sorted(exceptions.items()):
        if not reason.strip():
            problems.append(f"{key}: an exception needs its reason")
        if key not in lengths:
            problems.append(f"{key}: listed in EXCEPTIONS but no such function (renamed or "
                            f"removed? delete the entry)")
        elif lengths[key] <= limit:
            problems.append(f"{key}: listed in EXCEPTIONS but now {lengths[key]} lines "
                            f"(delete the entry)")
    return problems


@functools.lru_cache(maxsize=1)
def _here():
    """This checkout's function lengths (read once for both tests)."""
    return function_lengths(ROOT)


def test_no_function_over_60_lines():
    problems = too_long(_here(), EXCEPTIONS)
    assert not problems, "functions over the limit:\n" + "\n".join(problems)


def test_no_stale_exception():
    problems = stale(_here(), EXCEPTIONS)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- planted source
def _plant(tmp_path, text, name="lib/planted.py"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    (tmp_path / "pyproject.toml").write_text("")


def _body(lines):
    return "".join("    x = 1\n" for _ in range(lines))


def test_planted_long_functions_are_named_with_their_length(tmp_path):
    _plant(tmp_path,
           "def short():\n" + _body(59)                      # 60 lines: allowed
           + "def long():\n" + _body(60)                     # 61 lines
           + "class C:\n    @staticmethod\n    def method():\n" + "".join(
               "        x = 1\n" for _ in range(61))          # 62 lines, decorator not counted
           + "def outer():\n    def inner():\n" + "".join(
               "        x = 1\n" for _ in range(60)))        # inner 61, outer 62
    _plant(tmp_path, "def main():\n" + _body(70), name="kewpie.py")
    lengths = function_lengths(str(tmp_path))
    assert lengths["lib/planted.py:short"] == 60
    problems = too_long(lengths, {})
    assert [p.split(" is ")[0] for p in problems] == [
        "kewpie.py:main", "lib/planted.py:C.method", "lib/planted.py:long",
        "lib/planted.py:outer", "lib/planted.py:outer.inner"]
    assert problems[2].startswith("lib/planted.py:long is 61 lines (limit 60)")
    assert too_long(lengths, {key: "a table" for key in lengths}) == []


def test_planted_stale_exceptions_are_named(tmp_path):
    _plant(tmp_path, "def long():\n" + _body(61) + "def short():\n    pass\n")
    lengths = function_lengths(str(tmp_path))
    problems = stale(lengths, {"lib/planted.py:long": "an argparse table",
                               "lib/planted.py:short": "was long once",
                               "lib/planted.py:gone": "renamed since",
                               "lib/other.py:long": ""})
    assert problems == [
        "lib/other.py:long: an exception needs its reason",
        "lib/other.py:long: listed in EXCEPTIONS but no such function (renamed or removed? "
        "delete the entry)",
        "lib/planted.py:gone: listed in EXCEPTIONS but no such function (renamed or "
        "removed? delete the entry)",
        "lib/planted.py:short: listed in EXCEPTIONS but now 2 lines (delete the entry)"]
