"""Unit tests for the unsafe server option check: name resolution as mysqld does it,
the refused classes (listeners beyond loopback or the lease, paths outside the
vardir), the cached option catalog, and a cross-check against the real server.

Covers: lib/servers/option_safety.py, lib/servers/option_names.py,
lib/servers/option_values.py, lib/servers/option_catalog.py
"""
import json
import os
import shutil
import subprocess
import time

import pytest

from lib.errors import SuiteError, UnsafeOptionError
from lib.servers.option_names import resolve
from lib.servers.option_safety import check_server_options
from lib.servers.option_values import address_problem, path_problem, split_address
from lib.servers.options import parse_options
from lib.servers.option_catalog import OptionCatalog, cache_path, load_catalog, parse_help

MARIADBD = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
HAVE_SERVER = os.access(MARIADBD, os.X_OK)
needs_server = pytest.mark.skipif(not HAVE_SERVER, reason="no mariadbd installed")

# A slice of MariaDB 10.11's option names: enough for prefixes to collide as they do there.
NAMES = frozenset({
    "bind-address", "port", "port-open-timeout", "extra-port", "extra-max-connections",
    "general-log", "general-log-file", "log-bin", "log-bin-index", "log-basename",
    "log-bin-trust-function-creators", "skip-networking", "skip-name-resolve",
    "skip-grant-tables", "socket", "tmpdir", "datadir", "secure-file-priv", "relay-log",
    "relay-log-index", "innodb-file-per-table", "innodb-data-home-dir", "innodb-data-file-path",
    "innodb-buffer-pool-size", "wsrep-provider", "wsrep-provider-options",
    "wsrep-cluster-address", "wsrep-node-address", "wsrep-node-incoming-address",
    "wsrep-sst-receive-address", "wsrep-sst-auth", "max-connections", "init-file",
    "plugin-load-add", "debug", "slow-query-log-file", "ssl-ca", "sync-binlog", "plugin-dir",
})
CATALOG = OptionCatalog(server="/usr/sbin/mariadbd", names=NAMES)


def refusal(text: str, **kwargs: str) -> str:
    with pytest.raises(UnsafeOptionError) as info:
        check_server_options(parse_options(text), CATALOG, where="suite_config.py", **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def accept(text: str, **kwargs: str) -> None:
    check_server_options(parse_options(text), CATALOG, where="suite_config.py", **kwargs)


# ---------------------------------------------------------------- resolution

@pytest.mark.parametrize("written,name,prefixes", [
    ("bind", "bind-address", ()),
    ("BIND_ADDR", "bind-address", ()),
    ("port", "port", ()),                          # exact beats prefix of port-open-timeout
    ("loose-bind", "bind-address", ("loose",)),
    ("skip-loose-log-bin", "log-bin", ("skip", "loose")),
    ("loose-skip-log-bin", "log-bin", ("loose", "skip")),
    ("skip-networking", "skip-networking", ()),      # a real name, not a prefix
    ("disable-skip-networking", "skip-networking", ("disable",)),
    ("skip-net", "skip-networking", ()),
    ("general-log-f", "general-log-file", ()),
    ("maximum-extra-port", "extra-port", ("maximum",)),
])
def test_resolve_like_my_getopt(written, name, prefixes):
    res = resolve(written, NAMES)
    assert (res.name, res.prefixes, res.ambiguous) == (name, prefixes, False)


@pytest.mark.parametrize("written", ["por", "general", "log-b", "skip-n", "loose-general", "skip"])
def test_resolve_ambiguous_prefixes(written):
    res = resolve(written, NAMES)
    assert res.name is None and res.ambiguous


def test_resolve_unknown_keeps_stripped_prefixes():
    res = resolve("loose-handlersocket-port", NAMES)
    assert res.name is None and res.prefixes == ("loose",) and not res.ambiguous


def test_effective_value_of_prefixes():
    assert resolve("skip-extra-port", NAMES).effective_value(None) == "0"
    assert resolve("enable-extra-port", NAMES).effective_value(None) == "1"
    assert resolve("disable-extra-port", NAMES).effective_value("0") == "1"
    assert resolve("maximum-extra-port", NAMES).effective_value("5") is None
    assert resolve("extra-port", NAMES).effective_value("5") == "5"


def test_abbreviated():
    assert resolve("wsrep-provider-o", NAMES).abbreviated
    assert not resolve("loose-wsrep-provider-options", NAMES).abbreviated


# ---------------------------------------------------------------- refused classes

@pytest.mark.parametrize("text,resolved", [
    ("--bind=0.0.0.0", "--bind-address=0.0.0.0"),
    ("--loose-bind_address=::", "--loose-bind-address=::"),
    ("--sock=/tmp/s", "--socket=/tmp/s"),
    ("--tmpd=/tmp", "--tmpdir=/tmp"),
    ("--skip-secure-file-priv", "--skip-secure-file-priv"),
    ("--wsrep-provider=/usr/lib/galera/libgalera_smm.so", "--wsrep-provider="),
    ("--wsrep-sst-receive-address=127.0.0.1:4444", "--wsrep-sst-receive-address="),
])
def test_harness_owned_options_refused_under_any_spelling(text, resolved):
    message = refusal(text)
    assert repr(text) in message and resolved in message and "kewpie sets" in message


@pytest.mark.parametrize("text", ["--plugin-load-add=x=/tmp/evil.so", "--plugin-load=../evil.so",
                                  "--loose-plugin-load-add=a.so;b=/home/u/b.so"])
def test_plugin_libraries_load_from_the_plugin_dir_only(text):
    assert "plugins load from the server's plugin directory only" in refusal(text)


def test_bind_beyond_loopback_says_so():
    assert "0.0.0.0 is not a loopback address" in refusal("--bind=0.0.0.0")


@pytest.mark.parametrize("text", ["--extra-port=3307", "--extra-p=5", "--enable-extra-port",
                                  "--loose-handlersocket-port=9998",
                                  "--plugin-load-add=handlersocket.so"])
def test_unleased_listeners_refused(text):
    refusal(text)


@pytest.mark.parametrize("text", [
    "--wsrep-provider-options=gmcast.listen_addr=tcp://0.0.0.0:4567",
    "--wsrep-provider-options=gcache.size=64M;gmcast.listen_addr=tcp://127.0.0.1:4567",
    "--wsrep-provider-options=ist.recv_addr=10.0.0.1",
    "--wsrep-provider-options=ist.recv_bind=0.0.0.0",
    "--wsrep-provider-options=base_host=192.168.1.1",
    "--wsrep-provider-options=base_port=4567",
    "--wsrep-provider-options=GMCAST.LISTEN_ADDR=tcp://0.0.0.0:4567",
    "--wsrep-provider-options=gcache.dir=/tmp",
    "--wsrep-provider-options=gcache.name=../../galera.cache",
    "--wsrep-provider-o=gcache.size=64M",
    "--wsrep-cluster-address=gcomm://10.0.0.1:4567",
    "--wsrep-cluster-address=gcomm://127.0.0.1:4567?gmcast.listen_addr=tcp://0.0.0.0:4567",
    "--wsrep-node-address=10.0.0.1",
    "--wsrep-node-address=127.0.0.1:4567",
    "--wsrep-node-address=AUTO",
    "--wsrep-node-incoming-address=0.0.0.0:3306",
])
def test_galera_listeners_refused(text):
    assert repr(text) in refusal(text)


@pytest.mark.parametrize("text", [
    "--log-bin=/tmp/x", "--general-log-file=/tmp/y", "--general-log-f=/tmp/y",
    "--loose-general-log-file=/tmp/y", "--relay-log=../../relay", "--slow-query-log-file=~/s",
    "--innodb-data-h=/tmp", "--innodb-data-file-path=/tmp/ibdata1:12M:autoextend",
    "--debug=d:t:o,/tmp/trace", 
    "--loose-server-audit-file-path=/tmp/audit.log", "--loose-some-plugin-dir=/tmp",
])
def test_paths_outside_the_vardir_refused(text):
    message = refusal(text)
    assert "vardir" in message and repr(text) in message


@pytest.mark.parametrize("text", ["--log-b=/tmp/x", "--por=5", "--general=ON", "--skip-n"])
def test_ambiguous_prefixes_refused_naming_the_candidates(text):
    message = refusal(text)
    assert "ambiguous" in message and "write the option name in full" in message


# ---------------------------------------------------------------- what suites do today

@pytest.mark.parametrize("text", [
    "--log-bin=mysql-bin", "--log-bin", "--innodb-file-per-table", "--relay-log=relay-bin",
    "--relay-log=../log/relay", "--skip-networking", "--skip-loose-log-bin", "--extra-port=0",
    "--skip-extra-port", "--innodb-buffer-pool-size=256M", "--sync-binlog=1",
    "--wsrep-sst-auth=kewpie_sst:wrong-password", "--wsrep-provider-options=gcache.size=64M",
    "--wsrep_provider_options=gcache.size=64M", "--loose-wsrep-provider-options=gcs.fc_limit=64",
    "--wsrep-node-address=127.0.0.1", "--wsrep-node-incoming-address=127.0.0.1:3306",
    "--wsrep-cluster-address=gcomm://127.0.0.1:9301,[::1]:9305", "--no-such-option-kewpie=1",
    "--innodb-data-file-path=ibdata1:12M:autoextend", "--max-connections=77",
    "--init-connect=SET NAMES utf8", "--plugin-load-add=server_audit.so",
])
def test_ordinary_options_accepted(text):
    accept(text)


def test_absolute_paths_inside_the_vardir_accepted_at_restart(tmp_path):
    vardir = str(tmp_path / "var_s0")
    datadir = os.path.join(vardir, "data")
    accept(f"--log-bin={vardir}/log/binlog --general-log-file={datadir}/g.log",
           vardir=vardir, datadir=datadir)
    assert "outside" in refusal("--log-bin=/tmp/x", vardir=vardir, datadir=datadir)
    assert "outside" in refusal(f"--log-bin={vardir}/../escape", vardir=vardir, datadir=datadir)


# ---------------------------------------------------------------- values

@pytest.mark.parametrize("text,expected", [
    ("tcp://0.0.0.0:4567", ("0.0.0.0", "4567")), ("127.0.0.1", ("127.0.0.1", None)),
    ("[::1]:4567", ("::1", "4567")), ("::1", ("::1", None)), ("ssl://h:1?x=1", ("h", "1")),
])
def test_split_address(text, expected):
    assert split_address(text) == expected


@pytest.mark.parametrize("addr", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_addresses(addr):
    assert address_problem(addr, port_allowed=False) is None


@pytest.mark.parametrize("addr", ["0.0.0.0", "::", "", "10.0.0.1", "db.example.com", "*"])
def test_non_loopback_addresses(addr):
    assert address_problem(addr, port_allowed=False)


def test_path_problem_relative_to_datadir():
    assert path_problem("mysql-bin") is None
    assert path_problem("../log/x") is None
    assert path_problem("../../x")
    assert path_problem("/abs")


# ---------------------------------------------------------------- catalog

HELP_SAMPLE = """Usage: mariadbd [OPTIONS]
  --allow-suspicious-udfs
                      Allows use of ...
  -P, --port=#        Port number
  --bind-address=name IP address to bind to.
  --log_bin[=name]    Log update queries
""" + "".join(f"  --filler-{i}=#\n" for i in range(60)) + """
Variables (--variable-name=value)
and boolean options {FALSE|TRUE}  Value (after reading options)
--------------------------------- ----
version-comment   Debian
"""


def test_parse_help_reads_option_list_not_variables_table():
    names = parse_help(HELP_SAMPLE)
    assert {"allow-suspicious-udfs", "port", "bind-address", "log-bin"} <= names
    assert "version-comment" not in names


def test_catalog_is_cached_per_binary(tmp_path):
    fake = tmp_path / "mariadbd"
    fake.write_text("#!/bin/sh\ncat <<'EOF'\n" + HELP_SAMPLE + "EOF\n")
    fake.chmod(0o755)
    assert "port" in load_catalog(str(fake), str(tmp_path)).names
    cached = cache_path(str(fake), str(tmp_path))
    data = json.load(open(cached))
    data["names"].append("marker-from-cache")
    json.dump(data, open(cached, "w"))
    assert "marker-from-cache" in load_catalog(str(fake), str(tmp_path)).names
    st = os.stat(fake)
    os.utime(fake, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a "rebuilt" binary
    assert "marker-from-cache" not in load_catalog(str(fake), str(tmp_path)).names


def test_catalog_without_cache_dir_asks_every_time(tmp_path):
    fake = tmp_path / "mariadbd"
    fake.write_text("#!/bin/sh\ncat <<'EOF'\n" + HELP_SAMPLE + "EOF\n")
    fake.chmod(0o755)
    assert "bind-address" in load_catalog(str(fake), None).names
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".json")]


# ---------------------------------------------------------------- the real server

def _server_says(token: str, scratch: str) -> str:
    """What mariadbd makes of one option: 'ambiguous', 'unknown' or the full name (its
    datadir a throwaway one, as kewpie's own probe: nothing in /var/lib/mysql)."""
    proc = subprocess.run([MARIADBD, "--no-defaults", f"--datadir={scratch}", token,
                           "--verbose", "--help"], capture_output=True, text=True, timeout=60)
    err = proc.stderr
    if "ambiguous option" in err or "is not unique" in err:
        return "ambiguous"
    if "unknown variable" in err or "unknown option" in err:
        return "unknown"
    if "full name '" in err:
        return err.split("full name '", 1)[1].split("'", 1)[0].replace("_", "-")
    return "exact"


@needs_server
@pytest.mark.parametrize("token", ["--bind=0.0.0.0", "--BIND_ADDR=1.2.3.4", "--loose-bind=1.1.1.1",
                                   "--por=5", "--general=ON", "--general-log-f=/tmp/y",
                                   "--log-b=/tmp/x", "--extra-p=5", "--skip-n", "--skip-net",
                                   "--skip-loose-log-bin", "--innodb-data-h=/tmp",
                                   "--loose-general=1", "--version-comm=x"])
def test_resolution_matches_the_real_server(token, tmp_path):
    catalog = load_catalog(MARIADBD, str(tmp_path))
    opt = parse_options(token)[0]
    res = resolve(("loose-" if opt.loose else "") + opt.name, catalog.names)
    scratch = tmp_path / "probe"
    scratch.mkdir()
    said = _server_says(token, str(scratch))
    if said == "ambiguous":
        assert res.ambiguous
    elif said == "unknown":
        assert res.name is None and not res.ambiguous
    elif said == "exact":
        assert res.name is not None and not res.abbreviated
    else:
        assert res.name == said and res.abbreviated


@needs_server
def test_real_catalog_cost_and_cache(tmp_path):
    start = time.monotonic()
    first = load_catalog(MARIADBD, str(tmp_path))
    asked = time.monotonic() - start
    start = time.monotonic()
    again = load_catalog(MARIADBD, str(tmp_path))
    cached = time.monotonic() - start
    assert first.names == again.names and len(first.names) > 500
    assert {"bind-address", "log-bin", "wsrep-provider-options", "extra-port"} <= first.names
    assert cached < asked and cached < 0.05


def test_line_break_in_value_refused():
    with pytest.raises(SuiteError, match="line break"):
        parse_options(['--init-connect="x\nbind-address=0.0.0.0"'])  # my.cnf injection


# ---------------------------------------------------------------- Server.restart

class _FakeServer:
    """Just what check_restart_options and Server.restart's first line use."""

    def __init__(self, vardir: str, catalog_dir: str) -> None:
        from types import SimpleNamespace
        self.name = "s0"
        self.paths = SimpleNamespace(vardir=vardir, datadir=os.path.join(vardir, "data"))
        self.tree = SimpleNamespace(server=MARIADBD)
        self.settings = SimpleNamespace(env={"KEWPIE_WORKDIR": catalog_dir})
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


@needs_server
def test_restart_with_unsafe_options_refused_before_the_server_stops(tmp_path):
    from lib.servers.option_safety import check_restart_options
    from lib.servers.server import Server
    fake = _FakeServer(str(tmp_path / "var_s0"), str(tmp_path))
    with pytest.raises(UnsafeOptionError, match=r"^s0 restart: server option '--bind=0.0.0.0'"):
        Server.restart(fake, options=["--bind=0.0.0.0"])
    assert not fake.stopped
    with pytest.raises(UnsafeOptionError, match="general-log-file"):
        check_restart_options(fake, ["--general_log_f=/tmp/y"])
    check_restart_options(fake, [f"--general-log-file={fake.paths.vardir}/log/general.log",
                                 "--max-connections=77"])
    check_restart_options(fake, None)


@pytest.mark.parametrize("text", [
    "--init-file=/etc/x.sql", "--ssl-ca=/etc/ssl/ca.pem", "--plugin-dir=/usr/lib/mysql/plugin",
    "--wsrep-provider-options=socket.ssl_key=/etc/ssl/key.pem",
])
def test_read_only_inputs_may_live_anywhere(text):
    """Files the server only reads (certificates, init scripts, plugins) are not writes."""
    accept(text)
