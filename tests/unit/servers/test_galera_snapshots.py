"""Cluster snapshots, the one store: which mysql-test cases may run on a set formed from
one, the key that lets two bots (and two runs) share an mtr set's snapshot, the saved
positions of its joiners, and pruning (least recently used first, never one in use).

Covers: lib/servers/galera_snapshots.py, lib/mtr/galera.py (formation_key, joiner_seqnos,
formation_sensitive)
"""
import fcntl
import os
import time
from types import SimpleNamespace

from lib.mtr import galera as snaps
from lib.servers.galera_snapshots import SnapshotStore
from lib.servers.options import Option


def test_cases_that_read_error_logs_or_name_sst_are_formed_as_mtr_forms_them(tmp_path):
    plain = tmp_path / "plain.test"
    plain.write_text("--source include/galera_cluster.inc\nSELECT 1;\n")
    grep = tmp_path / "grep.test"
    grep.write_text("--let $assert_file = $MYSQLTEST_VARDIR/log/mysqld.2.err\n"
                    "--source include/assert_grep.inc\n")
    sst = tmp_path / "sst.test"
    sst.write_text("--let $wait_condition = SELECT 1 # after the node's SST\n")
    assert not snaps.formation_sensitive(str(plain))
    assert snaps.formation_sensitive(str(grep))
    assert snaps.formation_sensitive(str(sst))
    assert snaps.formation_sensitive(str(tmp_path / "missing.test"))  # unknown: careful


class FakeServer:
    """A server with options, a tree and nothing else."""

    def __init__(self, options, basedir="/usr"):
        self.options = options
        self.user_options = options
        self.tree = SimpleNamespace(binary_fingerprint=lambda: "fp", basedir=basedir)

    def effective_options(self):
        return self.options


def node_options(bot_dir, first_port):
    return [Option("datadir", f"{bot_dir}/mysqld.1/data"), Option("port", str(first_port)),
            Option("wsrep_provider_options",
                   f"base_port={first_port + 4};gcache.size=10M;pc.weight=3"),
            Option("wsrep_cluster_address", "gcomm://"),
            Option("innodb-buffer-pool-size", "24M")]


def manager(tmp_path, bot, first_port):
    cache_dir = tmp_path / "cache" / "bootstrap"
    leases = [SimpleNamespace(ports=tuple(range(first_port, first_port + 10)))]
    return SimpleNamespace(leases=leases, bot_dir=f"/dev/shm/kw/wd-1/{bot}",
                           settings=SimpleNamespace(user="mysql"),
                           cache=SimpleNamespace(cache_dir=str(cache_dir)),
                           pristine_template=lambda server: str(cache_dir / "k1" / "data"))


def test_two_bots_on_other_ports_and_paths_share_a_key(tmp_path):
    m0, m1 = manager(tmp_path, "bot0", 16000), manager(tmp_path, "bot1", 16020)
    s0 = FakeServer(node_options(m0.bot_dir, 16000))
    s1 = FakeServer(node_options(m1.bot_dir, 16020))
    assert snaps.formation_key(m0, [s0]) == snaps.formation_key(m1, [s1])
    args = snaps.normalized_args(s1, m1.bot_dir, {p: f"@P0.{i}@" for i, p in
                                                 enumerate(m1.leases[0].ports)})
    assert "--datadir=@BOT@/mysqld.1/data" in args and "--port=@P0.0@" in args
    assert any("base_port=@P0.4@;gcache.size=10M" in a for a in args)


def test_other_options_a_tree_or_a_number_that_is_no_port_give_another_key(tmp_path):
    m0 = manager(tmp_path, "bot0", 16000)
    base = snaps.formation_key(m0, [FakeServer(node_options(m0.bot_dir, 16000))])
    other = node_options(m0.bot_dir, 16000)[:-1] + [Option("innodb-buffer-pool-size", "32M")]
    assert snaps.formation_key(m0, [FakeServer(other)]) != base
    assert snaps.formation_key(
        m0, [FakeServer(node_options(m0.bot_dir, 16000), basedir="/opt/tree")]) != base
    number = node_options(m0.bot_dir, 16000) + [Option("max-connections", "20001")]
    assert snaps.formation_key(m0, [FakeServer(number)]) != snaps.formation_key(
        m0, [FakeServer(node_options(m0.bot_dir, 16000) + [Option("max-connections", "20002")])])


def test_provider_identity_names_the_library_and_its_file(tmp_path):
    lib = tmp_path / "libgalera_smm.so"
    lib.write_bytes(b"x" * 10)
    ident = snaps.provider_identity([f"--wsrep_provider={lib}", "--port=1"])
    assert ident.startswith(f"{lib}|10|")
    assert snaps.provider_identity(["--port=1"]) == ""


def make_snapshot(root, name, used):
    path = root / name
    path.mkdir(parents=True)
    (path / "meta.json").write_text("{}")
    os.utime(path / "meta.json", (used, used))
    return path


def test_prune_keeps_the_most_recently_used_and_any_in_use(tmp_path):
    store = SnapshotStore(SimpleNamespace(cache_dir=str(tmp_path / "bootstrap")), keep=1)
    root = tmp_path / "galera"
    assert store.root == str(root)
    now = time.time()
    old, held, new = (make_snapshot(root, n, now - age)
                      for n, age in (("old", 300), ("held", 200), ("new", 10)))
    fd = os.open(str(held) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)   # another run copies from it
    try:
        store.prune()
    finally:
        os.close(fd)
    assert new.exists() and held.exists() and not old.exists()
    assert store.available("new") and not store.available("old")


def test_prune_removes_the_former_store_of_mtr_clusters(tmp_path):
    store = SnapshotStore(SimpleNamespace(cache_dir=str(tmp_path / "bootstrap")))
    former = tmp_path / "mtr-clusters"
    make_snapshot(former, "k1", time.time())
    (former / "k1.lock").write_text("")
    store.prune()
    assert not former.exists()


def test_each_joiner_is_saved_at_the_position_of_the_group_it_joins():
    """The bootstrap node's new component takes seqno + 1, each join one more: the k-th
    joiner (in launch order: the config's, bootstrap nodes aside) is saved at seqno + k."""
    assert snaps.joiner_seqnos(3, [True, False, False]) == [3, 4, 5]
    assert snaps.joiner_seqnos(7, [False, True, False]) == [8, 7, 9]
    assert snaps.joiner_seqnos(2, [True]) == [2]
    # a formation that counted no configuration changes (Galera 3): all at its seqno
    assert snaps.joiner_seqnos(0, [True, False, False]) == [0, 0, 0]
