"""The plugin's options: ``--kewpie-<name>`` on the command line, ``kewpie_<name>`` in
the ini file, turned into the run's RunConfig (RunConfig's defaults otherwise)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

import pytest

if TYPE_CHECKING:  # imported when the run starts: pytest's start-up stays light
    from ..config import RunConfig

SCOPE_CHOICES = ("function", "class", "module", "package", "session")


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


def run_config(config: pytest.Config) -> RunConfig:
    """The RunConfig of this pytest run's options (RunConfig's own defaults otherwise)."""
    from ..config import Debugging, Reporting, RunConfig, Servers
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
                     debugging=debugging)
