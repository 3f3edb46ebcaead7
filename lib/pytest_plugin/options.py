"""The plugin's options: ``--kewpie-<name>`` on the command line, ``kewpie_<name>`` in
the ini file, turned into the run's RunConfig (RunConfig's defaults otherwise).  The
results history's DSN also comes from ``KEWPIE_HISTORY_DSN``, the one place besides a
private ini file where its password may be (docs/pytest.md)."""
from __future__ import annotations

import os
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Mapping

import pytest

from ..platform.pathoptions import PathOption, PathRole, PathShape, check_paths
from ..platform.trustedpath import Trust

if TYPE_CHECKING:  # imported when the run starts: pytest's start-up stays light
    from ..config import RunConfig

SCOPE_CHOICES = ("function", "class", "module", "package", "session")
# The plugin's options that take a path, by what they are to kewpie (as lib/cli.py's
# PATH_TABLE; tests/unit/test_path_options.py): checked before any server starts.
PATH_TABLE: Mapping[str, PathOption] = MappingProxyType({
    "kewpie-workdir": PathOption(PathRole.own, note="lib/platform/workdir.py"),
    "kewpie-basedir": PathOption(PathRole.input, PathShape.path, ("servers.basedir",),
                                 "its programs where the tree is found (lib/servers/codetree.py)"),
    "kewpie-known-bugs": PathOption(PathRole.input, PathShape.path, ("reporting.known_bugs",)),
    "kewpie-lock-dir": PathOption(PathRole.own, note="lib/platform/ports.py"),
    "kewpie-trust": PathOption(PathRole.data, note="names what is trusted; reads nothing"),
})


def add_options(parser: pytest.Parser) -> None:
    """kewpie's options (each also an ini setting ``kewpie_<name>``)."""
    group = parser.getgroup("kewpie", "kewpie's MySQL-family servers (docs/pytest.md)")

    def add(name: str, help_text: str, **kwargs: Any) -> None:
        """One --kewpie-<name> option and its kewpie_<name> ini setting."""
        group.addoption(f"--kewpie-{name}", dest=f"kewpie_{name.replace('-', '_')}",
                        help=help_text, **kwargs)
        kind: Literal["bool", "string"] = "bool" if kwargs.get("action") == "store_true" \
            else "string"
        parser.addini(f"kewpie_{name.replace('-', '_')}", help_text, type=kind)

    add("workdir", "kewpie's workdir: vardirs, logs, failed/ evidence (default: <rootdir>/workdir)",
        metavar="DIR")
    add("basedir", "code tree to test (default: /usr)", metavar="DIR")
    add("base-port", "where the search for free port blocks starts (default: 9300)",
        metavar="PORT")
    add("keep-failed", "stop at the first failing test and leave its servers running after "
        "pytest ends (stop them with ./kewpie.py --mode=cleanup --workdir=...)",
        action="store_true", default=None)
    add("scope", "how long tests with equal requirements share servers without the reuse "
        "rule in between: function (default), class, module, package, session",
        choices=SCOPE_CHOICES)
    add("no-shm", "keep vardirs on disk instead of /dev/shm", action="store_true", default=None)
    add("lock-dir", "directory of port lease locks (default: /tmp/kewpie-locks-<uid>)",
        metavar="DIR")
    add("wsrep-sst-method", "how Galera joiners get a full state transfer: rsync (default) or "
        "mariabackup", choices=("rsync", "mariabackup"))
    add("max-save-datadir", "keep the datadirs of at most N failed tests in workdir/failed "
        "(default: 3)", metavar="N")
    add("verbose", "debug lines in kewpie's log (workdir/kewpie.log) and reset reasons",
        action="store_true", default=None)
    add("test-timeout", "seconds a test's call may take: then its servers are killed and it "
        "fails as timed out (default: 0, no limit)", metavar="SECONDS")
    add("known-bugs", "a known-bugs file (kewpie's format; repeatable, or space-separated in "
        "the ini file); a known_bugs.txt beside a test file counts too", metavar="FILE",
        action="append")
    add("allow-known", "a test whose servers all died of known open bugs is an expected "
        "failure (xfail), not a failure", action="store_true", default=None)
    add("no-check-warnings", "new [ERROR]/[Warning] lines in the servers' error logs do not "
        "fail a test", action="store_true", default=None)
    add("history-dsn", "the results history in a MariaDB/MySQL server: "
        "mysql://user@host:port/database (default: the workdir's history.sqlite); a DSN "
        "with a password only in KEWPIE_HISTORY_DSN, or in an ini file only you can read",
        metavar="DSN")
    group.addoption("--kewpie-trust", dest="kewpie_trust", action="append", default=[],
                    metavar="PATH", help="accept PATH as code although another user owns it "
                    "or others may write it (repeatable; command line only, as "
                    "safe-directories in your ~/.config/kewpie/config.toml)")


def setting(config: pytest.Config, name: str) -> Any:
    """An option's value: the command line's, else the ini file's (None: not given)."""
    value = config.getoption(f"kewpie_{name}", None)
    if value is None or value == "":
        value = config.getini(f"kewpie_{name}")
        if value in ("", [], False):
            return None
        if name in ("workdir", "basedir", "lock_dir") and isinstance(value, str):
            return os.path.join(str(config.rootpath), value)
    return value


def configured_dsn(config: pytest.Config) -> tuple[str, str]:
    """(the results history's DSN, where it was given) as the command line does it:
    ``--kewpie-history-dsn``, else ``KEWPIE_HISTORY_DSN``, else the ini file's
    ``kewpie_history_dsn``; ('', '') for none.  Nothing is checked here."""
    from ..platform.secrets import HISTORY_DSN_ENV
    given = config.getoption("kewpie_history_dsn", None)
    if given:
        return given, "--kewpie-history-dsn"
    if os.environ.get(HISTORY_DSN_ENV):
        return os.environ[HISTORY_DSN_ENV], HISTORY_DSN_ENV
    ini = config.getini("kewpie_history_dsn")
    return (ini, f"{config.inipath}: kewpie_history_dsn") if ini else ("", "")


def history_dsn(config: pytest.Config) -> str:
    """The results history's DSN ('' for the workdir's SQLite file); pytest.UsageError
    for a malformed one, one with a password on the command line (every user sees it),
    or one with a password in an ini file that its group or others may read."""
    from ..history.dsn import check_dsn, has_password, password_on_command_line
    from ..history.errors import HistoryUsageError
    from ..platform.secrets import HISTORY_DSN_ENV, exposed_secret, readers
    dsn, where = configured_dsn(config)
    if not dsn:
        return ""
    if has_password(dsn) and where == "--kewpie-history-dsn":
        raise pytest.UsageError(password_on_command_line(where, dsn))
    from_ini = where not in ("--kewpie-history-dsn", HISTORY_DSN_ENV)
    if has_password(dsn) and from_ini and config.inipath is not None:
        mode = os.stat(config.inipath).st_mode
        if readers(mode):
            raise pytest.UsageError(exposed_secret(where, str(config.inipath), mode))
    try:
        return check_dsn(dsn, where)
    except HistoryUsageError as exc:
        raise pytest.UsageError(str(exc)) from None


def run_config(config: pytest.Config) -> RunConfig:
    """The RunConfig of this pytest run's options (RunConfig's own defaults otherwise)."""
    from ..config import Debugging, History, Reporting, RunConfig, Servers
    workdir = setting(config, "workdir") or os.path.join(str(config.rootpath), "workdir")

    def number(name: str, default: int) -> int:
        """An integer setting, or default; UsageError when not a number."""
        value = setting(config, name)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise pytest.UsageError(f"--kewpie-{name.replace('_', '-')} must be a number, "
                                    f"not {value!r}") from None

    base_port = number("base_port", Servers.base_port)
    if not 1024 <= base_port <= 64000:
        raise pytest.UsageError("--kewpie-base-port must be between 1024 and 64000")
    timeout = setting(config, "test_timeout")
    try:
        test_timeout = float(timeout) if timeout is not None else 0.0
    except ValueError:
        raise pytest.UsageError(f"--kewpie-test-timeout must be a number of seconds, not "
                                f"{timeout!r}") from None
    known = setting(config, "known_bugs") or []
    if isinstance(known, str):  # the ini file's: space-separated, from the rootdir
        known = [os.path.join(str(config.rootpath), path) for path in known.split()]
    servers = Servers(basedir=setting(config, "basedir") or Servers.basedir, base_port=base_port,
                      use_shm=not setting(config, "no_shm"),
                      lock_dir=setting(config, "lock_dir") or "",
                      wsrep_sst_method=setting(config, "wsrep_sst_method") or Servers.wsrep_sst_method)
    reporting = Reporting(max_save_datadir=number("max_save_datadir", Reporting.max_save_datadir),
                          verbose=bool(setting(config, "verbose")), test_timeout=test_timeout,
                          known_bugs=tuple(os.path.abspath(path) for path in known),
                          allow_known=bool(setting(config, "allow_known")))
    debugging = Debugging(check_warnings=False if setting(config, "no_check_warnings") else None)
    return RunConfig(workdir=os.path.abspath(workdir), servers=servers, reporting=reporting,
                     debugging=debugging, history=History(dsn=history_dsn(config)),
                     trusted=trusted(config))


def trusted(config: pytest.Config) -> tuple[str, ...]:
    """What the user trusts on purpose: --kewpie-trust and their own safe-directories."""
    from ..errors import UsageError
    from ..platform.usertrust import safe_directories
    given = config.getoption("kewpie_trust", None) or []
    try:
        return Trust.of([*(os.path.abspath(p) for p in given), *safe_directories()]).paths
    except UsageError as exc:  # the user's own config is broken or not trusted
        raise pytest.UsageError(f"kewpie: {exc}") from None


def check_path_options(cfg: RunConfig) -> None:
    """The trust rule over the options of PATH_TABLE (UsageError, one line, before any
    server starts)."""
    values = {option: [p for name in spec.fields for p in cfg.paths_at(name)]
              for option, spec in PATH_TABLE.items()}
    check_paths(PATH_TABLE, values, Trust.of(cfg.trusted))
