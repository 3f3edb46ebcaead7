"""Unit tests for the pytest plugin's pure logic: the kewpie marker into Requirements
(as suite_config.py), names of bots and evidence, and the workdir shared by the
processes of one pytest-xdist run (Workdir.join).

Covers: lib/pytest_plugin/marker.py, lib/pytest_plugin/session.py, lib/platform/workdir.py
(Workdir.join)
"""
import os

import pytest

from lib.errors import SuiteError, UsageError
from lib.platform import workdir as wd
from lib.pytest_plugin.marker import CLUSTER, REPLICATION, SINGLE, declare, shape_of
from lib.pytest_plugin.session import bot_name, evidence_name
from lib.servers.options import parse_options


def _opts(*items):
    return tuple(parse_options(list(items)))


def test_shapes_default_to_one_server_primary_and_two_replicas_three_nodes():
    single = declare(SINGLE, {}, "function", "t.py::t").requirements
    assert (single.server_type, single.count, single.pairs) == ("mysql", 1, ())
    repl = declare(REPLICATION, {}, "function", "t.py::t").requirements
    assert (repl.server_type, repl.count, repl.pairs) == ("mysql", 3, ((0, 1), (0, 2)))
    cluster = declare(CLUSTER, {}, "function", "t.py::t").requirements
    assert (cluster.server_type, cluster.count, cluster.pairs) == ("galera", 3, ((0, 1), (0, 2)))


def test_marker_mirrors_suite_config():
    declared = declare(SINGLE, {"server_requirements": [["--innodb-file-per-table"], "--a=1 --b=2"],
                                "server_requests": {"join_cluster": [(0, 1)]},
                                "storage": "disk", "scope": "module"}, "function", "t")
    reqs = declared.requirements
    assert reqs.servers == (_opts("--innodb-file-per-table"), _opts("--a=1", "--b=2"))
    assert reqs.pairs == ((0, 1),) and reqs.on_disk and declared.scope == "module"


def test_sizes_and_options_for_every_server():
    reqs = declare(REPLICATION, {"replicas": 1, "options": ["--max-connections=77"]}, "function",
                   "t").requirements
    assert reqs.servers == (_opts("--max-connections=77"),) * 2 and reqs.pairs == ((0, 1),)
    reqs = declare(CLUSTER, {"nodes": 2}, "function", "t").requirements
    assert reqs.count == 2 and reqs.pairs == ((0, 1),)
    # server_requirements without server_requests: a shaped fixture joins all to server 0
    reqs = declare(REPLICATION, {"server_requirements": [[], ["--x=1"]]}, "function", "t").requirements
    assert reqs.pairs == ((0, 1),)


def test_equal_declarations_are_equal_requirements():
    """The reuse rule compares Requirements: the marker and the defaults must agree."""
    assert declare(SINGLE, {}, "function", "a").requirements == \
        declare(SINGLE, {"server_requirements": [[]]}, "module", "b").requirements


@pytest.mark.parametrize("shape, values, words", [
    (SINGLE, {"server_requirement": [[]]}, "unknown kewpie marker argument"),
    (SINGLE, {"server_type": "oracle"}, "server_type must be one of"),
    (REPLICATION, {"server_type": "galera"}, "kewpie_replication starts mysql"),
    (CLUSTER, {"server_requirements": [[]], "nodes": 3}, "either server_requirements or"),
    (REPLICATION, {"replicas": 0}, "replicas must be a whole number of at least 1"),
    (SINGLE, {"server_requirements": []}, "server_requirements must be a non-empty list"),
    (SINGLE, {"server_requirements": [[], []], "server_requests": {"join_cluster": [(0, 2)]}},
     "does not name two of the 2 servers"),
    (SINGLE, {"server_requirements": [["--port=3306"]]}, "port"),
    (SINGLE, {"storage": "ram"}, "storage must be one of"),
    (SINGLE, {"scope": "forever"}, "scope must be one of"),
    (SINGLE, {"options": [1]}, "options must be a list of option strings"),
])
def test_bad_markers_name_the_test(shape, values, words):
    with pytest.raises(SuiteError) as err:
        declare(shape, values, "function", "examples/t.py::test_x")
    assert str(err.value).startswith("examples/t.py::test_x") and words in str(err.value)


def test_shape_of_fixtures():
    assert shape_of(["tmp_path"], "t") is None
    assert shape_of(["kewpie", "kewpie_server"], "t") == SINGLE
    assert shape_of(["kewpie", "kewpie_cluster"], "t") == CLUSTER
    with pytest.raises(SuiteError, match="a test gets one"):
        shape_of(["kewpie_replication", "kewpie_cluster"], "t")


def test_bot_and_evidence_names():
    assert [bot_name(None), bot_name("gw0"), bot_name("gw12"), bot_name("master")] == \
        ["bot0", "bot0", "bot12", "bot0"]
    assert evidence_name("examples/pytest/test_a.py::test_x") == "test_a.test_x"
    assert evidence_name("t/test_a.py::TestK::test_x[1-a/b c]") == "test_a.TestK.test_x[1-a_b_c]"


@pytest.fixture
def workdir_path(tmp_path, monkeypatch):
    root = tmp_path / "shm"
    root.mkdir()
    os.chmod(root, 0o1777)
    monkeypatch.delenv(wd.SHM_ROOT_ENV, raising=False)
    monkeypatch.setattr(wd, "SHM_ROOT", str(root))
    path = tmp_path / "wd"
    wd.Workdir(str(path)).create()
    return str(path)


def test_join_lets_one_session_in_and_keeps_others_out(workdir_path):
    first, sibling = wd.Workdir(workdir_path), wd.Workdir(workdir_path)
    try:
        assert first.join("s1") is True  # does the fresh start, then shares
        with pytest.raises(UsageError, match="in use by another kewpie run"):
            sibling.join("s1", wait=0.2)  # waits while the first holds it alone
        first.share()
        assert sibling.join("s1") is False
        with pytest.raises(UsageError, match="in use by another kewpie run"):
            wd.Workdir(workdir_path).lock()  # a kewpie run
        with pytest.raises(UsageError, match="session s1"):
            wd.Workdir(workdir_path).join("s2", wait=0.2)  # another pytest-xdist run
    finally:
        first.unlock()
        sibling.unlock()
    late = wd.Workdir(workdir_path)
    try:  # a late worker of the same run: not first (no second fresh start)
        assert late.join("s1") is False
    finally:
        late.unlock()
    other = wd.Workdir(workdir_path)
    try:  # a new run after that one ended
        assert other.join("s3") is True
    finally:
        other.unlock()
    run = wd.Workdir(workdir_path)
    run.lock()
    run.unlock()
