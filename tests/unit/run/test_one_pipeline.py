"""House rule: one judging pipeline (issue 44).  A test is judged and checked in one
place, lib/run/attempt.py, whichever way it came in.

1. Only the pipeline imports the judging and post-check functions (a dead server's
   report, the known-bugs lookup, the warnings check, valgrind and gdb, the leftover
   sweep, the watchdog), besides the modules that define them, and only it applies the
   reuse rule (``after_test``) or saves a test's evidence (``evidence.save``); a hunt's
   trial and a reduction's check, which are no tests, apply the reuse rule themselves
   (REUSE_ALLOWED says why).
2. The three ways in -- kewpie's suites (lib/run/runner.py), mysql-test cases
   (lib/modes/mtr/run.py) and the pytest plugin (lib/pytest_plugin/session.py) -- each
   make their attempts of the pipeline; the native and mtr bodies are TestBodys the
   pipeline runs (under its watchdog), and the pytest plugin puts pytest's call under
   the attempt's watchdog itself.

Each rule is shown catching planted source.

Covers: lib/run/attempt.py, lib/run/runner.py, lib/modes/mtr/run.py, lib/modes/mtr/lane.py,
lib/pytest_plugin/session.py, lib/pytest_plugin/plugin.py
"""
import ast
import os

import pytest

from tests.conftest import ROOT
from tests.parsed import parsed

LIB = os.path.join(ROOT, "lib")
PIPELINE = "lib.run.attempt"

# module -> the names only the pipeline uses (the defining module may use its own)
PIPELINE_ONLY = {
    "lib.run.deadreport": {"dead_server_report"},
    "lib.run.knownfailures": {"KnownFailures"},
    "lib.run.postchecks": {"warnings_problem", "warnings_fail", "warnings_note",
                           "forget_fault_windows", "debugger_problems", "valgrind_problem"},
    "lib.run.leftovers": {"collect_leftovers", "leftover_report"},
    "lib.run.watchdog": {"TestWatchdog"},
}
# names no other module defines: an attribute of that name is the pipeline's function
UNIQUE = {name for names in PIPELINE_ONLY.values() for name in names} - {"warnings_fail"}
REUSE_ALLOWED = {
    "lib.modes.hunt.run": "a hunt's trial is no test: its load ran, its findings are its "
                         "verdict, and its servers serve the next trial when it found nothing",
    "lib.reduce.check": "a reduction's check replays a candidate, no test: a candidate that "
                        "did not reproduce leaves its servers for the next one",
    "lib.replay.execute": "a replay's reproducer is no test: it is classified by the "
                          "replay's own outcomes (crash, hang, error log, timeout, none), and "
                          "a server it left healthy serves the next reproducer",
}
WAYS_IN = {"lib.run.runner": "kewpie's suites", "lib.modes.mtr.run": "mysql-test cases",
           "lib.pytest_plugin.session": "the pytest plugin"}
BODIES = ("lib.run.runner", "lib.modes.mtr.lane")


def _modules():
    for dirpath, _, files in os.walk(LIB):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                yield rel[:-len(".__init__")] if rel.endswith(".__init__") else rel, path


MODULES = dict(_modules())


def _tree(module):
    return parsed(MODULES[module])


def _absolute(node, module):
    """The module an ImportFrom names, absolute (lib.x.y); module is the importer's name
    (a package's own, for its __init__.py)."""
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    is_package = MODULES.get(module, "").endswith("__init__.py")
    base = parts[:len(parts) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _called_attributes(tree):
    """(attribute, the name or attribute it is taken from, line) of every call."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            owner_name = owner.attr if isinstance(owner, ast.Attribute) else \
                owner.id if isinstance(owner, ast.Name) else ""
            yield node.func.attr, owner_name, node.lineno


def pipeline_bypasses(tree, module):
    """What module does that only the pipeline may: (what, line) for each."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, module)
            names = PIPELINE_ONLY.get(source, set())
            found += [(f"imports {a.name} from {source}", node.lineno)
                      for a in node.names if a.name in names and source != module]
        elif isinstance(node, ast.Attribute) and node.attr in UNIQUE:
            found.append((f"uses .{node.attr}", node.lineno))
    for attr, owner, line in _called_attributes(tree):
        if attr == "after_test" and module not in REUSE_ALLOWED:
            found.append(("applies the reuse rule (after_test)", line))
        elif attr == "save" and owner == "evidence":
            found.append(("saves a test's evidence (evidence.save)", line))
    return found


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != PIPELINE))
def test_only_the_pipeline_judges_and_checks(module):
    found = pipeline_bypasses(_tree(module), module)
    assert not found, (f"{MODULES[module]}: " + "; ".join(f"{what} (line {line})"
                                                          for what, line in found)
                       + " -- tests are judged and checked in lib/run/attempt.py only")


def test_the_rule_catches_planted_source():
    planted = ast.parse(
        "from .postchecks import warnings_problem, load_gendata\n"
        "from ..run.deadreport import dead_server_report\n"
        "from . import leftovers\n"
        "leftovers.collect_leftovers('tag')\n"
        "self.manager.after_test(True)\n"
        "self.evidence.save(name, message, servers, None)\n"
        "from ..suites.loader import warnings_fail\n")
    found = [what for what, _ in pipeline_bypasses(planted, "lib.run.other")]
    assert found == ["imports warnings_problem from lib.run.postchecks",
                     "imports dead_server_report from lib.run.deadreport",
                     "uses .collect_leftovers", "applies the reuse rule (after_test)",
                     "saves a test's evidence (evidence.save)"]
    assert pipeline_bypasses(ast.parse("self.manager.after_test(True)"), "lib.modes.hunt.run") == []
    assert pipeline_bypasses(ast.parse("from .postchecks import forget_fault_windows"),
                             "lib.run.postchecks") == []


def test_allowed_reuse_rule_callers_still_call_it():
    for module in REUSE_ALLOWED:
        assert any(attr == "after_test" for attr, _, _ in _called_attributes(_tree(module))), \
            f"{module} no longer applies the reuse rule: delete it from REUSE_ALLOWED"


def makes_attempts(tree, module):
    """Whether module imports the pipeline and makes attempts of it (``pipeline.attempt``)."""
    imports = any(isinstance(n, ast.ImportFrom) and _absolute(n, module) == PIPELINE
                  for n in ast.walk(tree))
    calls = any(attr == "attempt" and owner == "pipeline"
                for attr, owner, _ in _called_attributes(tree))
    return imports and calls


@pytest.mark.parametrize("module", sorted(WAYS_IN))
def test_every_way_in_makes_attempts_of_the_pipeline(module):
    assert makes_attempts(_tree(module), module), \
        f"{WAYS_IN[module]} ({MODULES[module]}) must run its tests as attempts of lib/run/attempt.py"


def test_the_attempt_rule_catches_planted_source():
    good = ast.parse("from .attempt import Rules\nattempt = self.pipeline.attempt(n, m, r)\n")
    assert makes_attempts(good, "lib.run.runner")
    assert not makes_attempts(ast.parse("attempt = self.pipeline.attempt(n, m, r)\n"),
                              "lib.run.runner")
    assert not makes_attempts(ast.parse("from .attempt import Rules\nself._judge(r)\n"),
                              "lib.run.runner")


def _bodies(tree):
    return [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(isinstance(b, ast.Name) and b.id == "TestBody" for b in node.bases)]


@pytest.mark.parametrize("module", BODIES)
def test_native_and_mtr_tests_are_bodies_the_pipeline_runs(module):
    tree = _tree(module)
    assert _bodies(tree), f"{MODULES[module]} defines no TestBody"
    assert all(isinstance(n, ast.ImportFrom) and _absolute(n, module) == PIPELINE
               for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               and any(a.name == "TestBody" for a in n.names))


def test_the_pytest_call_runs_under_the_attempts_watchdog():
    calls = _called_attributes(_tree("lib.pytest_plugin.plugin"))
    assert any(attr == "watching" for attr, _, _ in calls)


def test_bodies_are_found():
    assert _bodies(ast.parse("class B(TestBody):\n    pass\nclass C(object):\n    pass\n")) == ["B"]
