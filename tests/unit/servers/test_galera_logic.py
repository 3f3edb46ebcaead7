"""Pure Galera logic: cluster groups from join_cluster pairs, provider options, grastate.dat.

Covers: lib/servers/galera.py, lib/servers/galera_cluster.py, lib/servers/describe.py,
lib/servers/garbd.py
"""
import grp
import os
import stat

import pytest

from lib.servers.codetree import CodeTree, ServerVersion
from lib.servers.describe import info_block
from lib.servers.galera import (SYNCED_LINE, GaleraServer, GraState, JoinWatch,
                                 merge_provider_options, read_grastate)
from lib.servers.logs import LogWatch
from lib.servers.galera_cluster import cluster_groups
from lib.servers.options import parse_options
from lib.platform.ports import PortLease
from lib.platform.process import group_of
from lib.platform.lifecycle import StopResult
from lib.servers.faultwindows import TARGET
from lib.servers.server import Server, ServerSettings, launch_env, write_files


@pytest.mark.parametrize("count,pairs,expected", [
    (3, ((0, 1), (0, 2)), [[0, 1, 2]]),
    (1, (), [[0]]),
    (3, (), [[0], [1], [2]]),
    (4, ((0, 1), (2, 3)), [[0, 1], [2, 3]]),
    (3, ((0, 2), (0, 1)), [[0, 2, 1]]),          # joiners start in pair order
    (3, ((0, 1), (1, 2)), [[0, 1, 2]]),          # a chain is one cluster
    (4, ((0, 1),), [[0, 1], [2], [3]]),
])
def test_cluster_groups(count, pairs, expected):
    assert cluster_groups(count, pairs) == expected


def test_provider_options_suite_overrides_and_appends():
    ours = ["gmcast.listen_addr=tcp://127.0.0.1:9301", "gcache.size=10M"]
    merged = merge_provider_options(ours, "gcache.size=64M; pc.recovery=false")
    assert merged == "gmcast.listen_addr=tcp://127.0.0.1:9301;gcache.size=64M;pc.recovery=false"
    assert merge_provider_options(ours, None) == ";".join(ours)


def test_grastate_roundtrip(tmp_path):
    state = GraState("e4d0e096-e683-11f1-a4e9-66693e21fe5a", 42)
    path = tmp_path / "grastate.dat"
    path.write_text(state.render())
    assert read_grastate(str(path)) == state
    assert read_grastate(str(tmp_path / "missing")) is None
    path.write_text("garbage\n")
    assert read_grastate(str(path)) is None


def _node(tmp_path, index=0, options=()):
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd"},
                    version=ServerVersion("10.11.19", "-MariaDB", "debian-linux-gnu", "x86_64", "Debian 12"))
    lease = PortLease(first=47300 + 4 * index, size=4, lock_path=str(tmp_path / "l"), fd=-1)
    settings = ServerSettings(user=None, env={}, die_with_parent=True, wsrep_sst_method="rsync")
    return GaleraServer(f"s{index}", index, tree, str(tmp_path / f"var_s{index}"), lease,
                        parse_options(list(options)), settings)


def test_a_clean_stop_opens_a_restart_window_closed_once_synced(tmp_path, monkeypatch):
    node = _node(tmp_path, 1)
    monkeypatch.setattr(Server, "stop", lambda self, timeout=None, clean=True: StopResult.SHUTDOWN)
    node.stop()  # not running: nothing acted on the group
    assert node.fault_windows.all() == [] and node.stop_window is None
    monkeypatch.setattr(GaleraServer, "is_alive", lambda self: True)
    assert node.stop() is StopResult.SHUTDOWN
    (window,) = node.fault_windows.all()
    assert (window.server, window.kind, window.role, window.fault, window.end) == \
        ("s1", "restart", TARGET, "stop s1", None)
    monkeypatch.setattr(node.sql, "ping", lambda: True)
    monkeypatch.setattr(GaleraServer, "is_synced", lambda self, size=None: False)
    assert not node._ready() and window.end is None   # still catching up: still open
    monkeypatch.setattr(GaleraServer, "is_synced", lambda self, size=None: True)
    assert node._ready() and window.end is not None and node.stop_window is None


def test_nodes_share_a_group_when_their_addresses_meet(tmp_path):
    a, b, c = (_node(tmp_path, i) for i in range(3))
    a.cluster_peers = b.cluster_peers = [a.gmcast_address, b.gmcast_address]
    assert a.shares_group(b) and b.shares_group(a) and not a.shares_group(a)
    assert not a.shares_group(c) and not c.shares_group(a)  # c forms its own cluster
    c.cluster_peers = [a.gmcast_address]  # c joins a's cluster
    assert c.shares_group(a)


def test_node_config_ports_and_sst_section(tmp_path):
    node = _node(tmp_path, 1, ["--wsrep-provider-options=gcache.size=32M", "--wsrep-sst-method=mariabackup"])
    node.cluster_peers = ["127.0.0.1:47301", "127.0.0.1:47305"]
    write_files(node)
    text = open(node.paths.cnf_path).read()
    ports = node.describe()
    assert (node.port, ports["galera_listen_port"], ports["galera_recv_port"],
            ports["galera_sst_port"]) == (47304, 47305, 47306, 47307)
    assert node.gmcast_address == "127.0.0.1:47305"
    assert "wsrep-cluster-address=gcomm://127.0.0.1:47301,127.0.0.1:47305" in text
    assert "gmcast.listen_addr=tcp://127.0.0.1:47305" in text and "ist.recv_addr=127.0.0.1:47306" in text
    assert "gcache.size=32M" in text and "gcache.size=10M" not in text
    assert "wsrep-sst-receive-address=127.0.0.1:47307" in text
    assert "wsrep-sst-method=mariabackup" in text
    assert "binlog-format=ROW" in text and "innodb-autoinc-lock-mode=2" in text
    assert "bind-address=127.0.0.1" in text
    assert "[sst]" in text and f"tmpdir={node.sst_dir}" in text
    assert f"sst-log-archive-dir={node.sst_log_dir}" in text
    assert text.count("wsrep-provider-options") == 1


def test_membership_timers_are_short_and_a_suite_can_replace_them(tmp_path):
    # keepalive 0.1 s: nodes that came up in separate views merge within tenths of a
    # second (a warm start); 0.1 s is Galera's lower bound for both periods
    node = _node(tmp_path)
    write_files(node)
    text = open(node.paths.cnf_path).read()
    assert "evs.keepalive_period=PT0.1S" in text and "evs.join_retrans_period=PT0.1S" in text
    assert "evs.suspect_timeout" not in text and "evs.inactive_timeout" not in text
    suite = _node(tmp_path / "b", 1, ["--wsrep-provider-options=evs.suspect_timeout=PT2S;"
                                      "evs.keepalive_period=PT0.5S"])
    write_files(suite)
    text = open(suite.paths.cnf_path).read()
    assert "evs.keepalive_period=PT0.5S" in text and "evs.suspect_timeout=PT2S" in text
    assert text.count("evs.keepalive_period") == 1


def test_start_args_new_cluster_once(tmp_path):
    node = _node(tmp_path)
    node._new_cluster_next_start = True
    assert node._start_args() == ["--wsrep-new-cluster"]
    assert node._start_args() == []


def test_info_block_has_galera_ports(tmp_path):
    block = info_block(_node(tmp_path))
    assert block[:5] == ["NAME: s0", "MASTER_PORT: 47300", "GALERA_LISTEN_PORT: 47301",
                         "GALERA_RECV_PORT: 47302", "GALERA_SST_PORT: 47303"]


# ---------------------------------------------------------------- security issue 12
SST_SCRIPT = "/usr/bin/wsrep_sst_mariabackup"


def test_sst_section_binds_socat_to_loopback(tmp_path):
    node = _node(tmp_path)
    write_files(node)
    text = open(node.paths.cnf_path).read()
    sst = text.split("[sst]", 1)[1].split("\n[", 1)[0]
    assert "sockopt=bind=127.0.0.1" in sst.splitlines()
    assert "sst-initial-timeout=120" in sst.splitlines()


@pytest.mark.skipif(not os.path.exists(SST_SCRIPT), reason="mariadb-backup's SST script not installed")
def test_installed_sst_script_appends_sockopt_to_its_listener():
    """What [sst] sockopt relies on: the script reads it and appends it to TCP-LISTEN."""
    script = open(SST_SCRIPT).read()
    assert "sockopt=$(parse_cnf sst sockopt)" in script
    assert 'sockopt=",$sockopt"' in script
    assert "TCP-LISTEN:$SST_PORT,reuseaddr$sockopt" in script
    assert "stimeout=$(parse_cnf sst 'sst-initial-timeout' 300)" in script


def test_launch_env_keeps_temp_files_in_the_vardir(tmp_path):
    node = _node(tmp_path)
    node.settings.env.update({"TMPDIR": "/tmp", "KEWPIE_RUN": "r1"})
    env = launch_env(node)
    assert env["TMPDIR"] == node.paths.tmpdir and env["TMPDIR"].startswith(node.paths.vardir + os.sep)
    assert env["KEWPIE_NAME"] == node.paths.vardir and env["KEWPIE_RUN"] == "r1"
    assert node.settings.env["TMPDIR"] == "/tmp"  # the run's env is not changed


def test_cnf_with_sst_password_is_private(tmp_path):
    node = _node(tmp_path)
    write_files(node)
    st = os.stat(node.paths.cnf_path)
    assert "kewpie-sst-pw" in open(node.paths.cnf_path).read()
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.geteuid()
    write_files(node)  # rewritten in place: still private, no temp file left
    assert stat.S_IMODE(os.stat(node.paths.cnf_path).st_mode) == 0o600
    assert [n for n in os.listdir(node.paths.vardir) if n.startswith(".my.cnf")] == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_cnf_is_root_and_server_group_readable_when_root(tmp_path):
    try:
        gid = grp.getgrnam(group_of("mysql")).gr_gid
    except KeyError:
        pytest.skip("no mysql user")
    node = _node(tmp_path)
    node.settings.user = "mysql"
    node.paths.make_dirs()
    open(node.paths.cnf_path, "w").close()
    os.chmod(node.paths.cnf_path, 0o644)  # an old world-readable file is replaced
    write_files(node)
    st = os.stat(node.paths.cnf_path)
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o640, 0, gid)


def test_scripts_export_tmpdir_and_cluster_json_is_private(tmp_path):
    from lib.servers.describe import write_description
    node = _node(tmp_path)
    node.tree.tools.update(client="/usr/bin/mariadb", admin="/usr/bin/mariadb-admin")
    node.settings.env["KEWPIE_WORKDIR"] = str(tmp_path)
    node.paths.make_dirs()
    path = write_description(str(tmp_path / "cluster.json"), [node], {"id": "r"}, None)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    start = open(os.path.join(node.paths.vardir, "start")).read()
    assert f"TMPDIR={node.paths.tmpdir}" in start and f"KEWPIE_NAME={node.paths.vardir}" in start
    assert f"TMPDIR={node.paths.tmpdir}" in open(os.path.join(node.paths.vardir, "use")).read()


def test_arbitrator_listens_on_the_loopback_and_keeps_its_state_in_its_vardir(tmp_path):
    from lib.servers.garbd import Arbitrator
    lease = PortLease(first=47400, size=4, lock_path=str(tmp_path / "l"), fd=-1)
    settings = ServerSettings(user=None, env={}, die_with_parent=True)
    garbd = Arbitrator("garbd", str(tmp_path / "var_garbd"), lease, settings,
                       ["127.0.0.1:47301", "127.0.0.1:47305"], garbd="/usr/bin/garbd")
    argv = garbd.argv()
    assert argv[:3] == ["/usr/bin/garbd", "--address", "gcomm://127.0.0.1:47301,127.0.0.1:47305"]
    options = dict(o.split("=", 1) for o in argv[argv.index("--options") + 1].split(";"))
    assert options["gmcast.listen_addr"] == "tcp://127.0.0.1:47400"
    assert options["base_port"] == "47400"
    assert options["base_dir"] == str(tmp_path / "var_garbd")
    assert "gcache.size" not in options
    assert garbd.describe()["type"] == "garbd" and garbd.describe()["pid"] is None


def test_find_garbd_looks_where_mtr_looks(tmp_path):
    from lib.servers.garbd import find_garbd
    provider = tmp_path / "lib" / "libgalera_smm.so"
    garb = tmp_path / "lib" / "garb" / "garbd"
    garb.parent.mkdir(parents=True)
    garb.write_text("#!/bin/sh\n")
    garb.chmod(0o755)
    assert find_garbd(str(provider)) == str(garb)


def test_log_watch_finds_a_line_from_its_mark_across_reads(tmp_path):
    log = tmp_path / "error.log"
    log.write_bytes(b"old WSREP: Synchronized with group\n")   # before the mark: ignored
    watch = LogWatch(str(log), SYNCED_LINE, log.stat().st_size)
    assert not watch.seen()
    with open(log, "ab") as fh:
        fh.write(b"2026-11-26 10:19:36 2 [Note] WSREP: Synchro")   # the line half written
    assert not watch.seen()
    with open(log, "ab") as fh:
        fh.write(b"nized with group, ready for connections\n")
    assert watch.seen() and watch.seen()


def test_a_starting_node_gets_no_sql_before_its_log_says_synced(tmp_path, monkeypatch):
    node = _node(tmp_path)
    os.makedirs(os.path.dirname(node.paths.error_log), exist_ok=True)
    with open(node.paths.error_log, "w") as fh:
        fh.write("an earlier start\n")
    node.joining = JoinWatch(node.paths.error_log, os.path.getsize(node.paths.error_log))
    probes = []
    monkeypatch.setattr(node.sql, "ping", lambda: probes.append("ping") or True)
    monkeypatch.setattr(node, "is_synced", lambda size=None: True)
    with open(node.paths.error_log, "a") as fh:
        fh.write("[Note] WSREP: Receiving IST... 100.0% (5/5 events) complete.\n"
                 "[Note] WSREP: Shifting JOINER -> JOINED (TO: 6)\n")
    assert not node._ready() and probes == []
    with open(node.paths.error_log, "a") as fh:
        fh.write("[Note] WSREP: Synchronized with group, ready for connections\n")
    assert node._ready() and probes == ["ping"]


def test_a_node_whose_log_kewpie_cannot_watch_is_probed_over_sql(tmp_path, monkeypatch):
    node = _node(tmp_path)
    node.joining = JoinWatch(str(tmp_path / "elsewhere.err"), 0)
    monkeypatch.setattr(node.sql, "ping", lambda: True)
    monkeypatch.setattr(node, "is_synced", lambda size=None: True)
    assert node.joining.synced() and node._ready()


def test_the_watch_sees_the_group_the_failure_and_waits_for_its_gate(tmp_path):
    log = tmp_path / "error.log"
    log.write_text("")
    gate = []
    watch = JoinWatch(str(log), 0, gate=lambda: bool(gate))
    assert watch.readable() and not watch.synced() and not watch.in_group()
    log.write_text("[Note] WSREP: gcomm: connected\n[Note] WSREP: Synchronized with group\n")
    assert watch.in_group() and not watch.synced()   # its log says ready only later
    gate.append(True)
    assert watch.synced() and not watch.failed()
    with open(log, "a") as fh:
        fh.write("[ERROR] WSREP: Receiving IST failed, node restart required: ...\n")
    assert watch.failed()


def test_log_watch_reads_a_truncated_log_from_its_start(tmp_path):
    log = tmp_path / "error.log"
    log.write_bytes(b"x" * 100)
    watch = LogWatch(str(log), SYNCED_LINE, 100)
    log.write_bytes(b"[Note] WSREP: Synchronized with group\n")   # replaced, shorter
    assert watch.seen()
