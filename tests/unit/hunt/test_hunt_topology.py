"""A hunt's servers (topologies from the command line or a suite's requirements) and the
random options each trial draws from its seed.

Covers: lib/hunt/topology.py, lib/hunt/randopts.py
"""
import pytest

from lib.hunt.errors import HuntError
from lib.hunt.randopts import pick_options, read_option_list
from lib.hunt.topology import Topology, parse_topology
from lib.servers.options import parse_options
from lib.servers.requirements import Requirements


def test_command_line_topologies():
    single = parse_topology("single")
    assert (single.kind, single.count, single.replicated) == ("single", 1, False)
    repl = parse_topology("replication:2")
    assert repl.requirements.pairs == ((0, 1), (0, 2)) and repl.replicated
    galera = parse_topology("galera")
    assert galera.requirements.server_type == "galera" and galera.count == 3
    compare = parse_topology("compare", ["--optimizer-switch=index_merge=off"], "10.11.18")
    assert compare.count == 2 and not compare.requirements.pairs
    assert compare.requirements.basedirs == ("", "10.11.18")
    assert compare.describe()["servers"][1]["options"] == ["--optimizer-switch=index_merge=off"]


@pytest.mark.parametrize("spec,words", [
    ("ring", "unknown --topology"), ("replication:x", "must be a number"),
    ("galera:1", "2 to 9 nodes"), ("single:2", "takes no count"),
])
def test_bad_topologies(spec, words):
    with pytest.raises(HuntError, match=words):
        parse_topology(spec)


def test_compare_options_need_compare():
    with pytest.raises(HuntError, match="need --topology compare"):
        parse_topology("single", ["--x=1"])


def test_suite_requirements():
    repl = Requirements.declared("mysql", [[], [], []], [(0, 1), (0, 2)])
    assert Topology.from_requirements(repl, "suite x").kind == "replication"
    assert Topology.from_requirements(Requirements.declared("galera", [[], []], [(0, 1)]),
                                      "s").kind == "galera"
    assert Topology.from_requirements(Requirements.declared("mysql", [[], []]), "s").kind == "compare"
    assert Topology.from_requirements(Requirements.declared("mysql", [[]]), "s").kind == "single"


def test_random_options_are_added_to_every_server():
    topology = parse_topology("replication:1")
    reqs = topology.with_options(parse_options(["--innodb-flush-log-at-trx-commit=2"]))
    assert all(opts[-1].name == "innodb-flush-log-at-trx-commit" for opts in reqs.servers)
    assert topology.with_options(()) is topology.requirements


def test_random_option_file_and_draws(tmp_path):
    path = tmp_path / "opts.txt"
    path.write_text("# choices\n--innodb-flush-method=fsync\n--innodb-flush-method=O_DIRECT\n"
                    "--query-cache-type=1   # on\n--join-cache-level=4\n\n")
    options = read_option_list(str(path))
    assert len(options) == 4
    draws = [pick_options(options, seed, 3) for seed in range(50)]
    assert draws[7] == pick_options(options, 7, 3)  # the same seed, the same options
    assert all(1 <= len(d) <= 3 for d in draws)
    assert all(len({o.name for o in d}) == len(d) for d in draws)  # one value per option
    assert len({d for d in draws}) > 3
    assert pick_options((), 1, 3) == () and pick_options(options, 1, 0) == ()


@pytest.mark.parametrize("text,words", [("innodb-flush-method=fsync\n", "one --name"),
                                        ("# nothing\n", "lists no option"),
                                        ("--a=1 --b=2\n", "one --name")])
def test_bad_random_option_files(tmp_path, text, words):
    path = tmp_path / "opts.txt"
    path.write_text(text)
    with pytest.raises(HuntError, match=words):
        read_option_list(str(path))
    with pytest.raises(HuntError, match="cannot read"):
        read_option_list(str(tmp_path / "missing.txt"))
