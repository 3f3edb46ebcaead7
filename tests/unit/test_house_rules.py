"""House rules: public classes and functions have docstrings and type hints; no sys.exit in lib/."""
import ast
import os

import pytest

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
    tree = ast.parse(open(path).read(), path)
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
    tree = ast.parse(open(path).read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "exit" and \
                isinstance(node.value, ast.Name) and node.value.id == "sys":
            pytest.fail(f"{path}:{node.lineno}: sys.exit below the command-line layer")
