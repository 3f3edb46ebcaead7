"""Secrets: which option names hold one (the declared lists), the one redaction (free
text, structures, DSNs), the LIKE patterns a store's scrub reads rows by, children's
environments, and the outputs that go through it: log lines, JUnit (both dialects), the
rows a store is written, the spool (its folder's name, its files).

Covers: lib/platform/secrets.py, lib/history/dsn.py, lib/platform/logsetup.py,
lib/platform/process.py (child_environment), lib/run/junit.py, lib/run/mtr_junit.py,
lib/history/writes.py, lib/history/spool.py
"""
from __future__ import annotations

import io
import json
import logging
import re

import pytest

from lib.history.dsn import has_password, password_on_command_line, redact
from lib.platform.secrets import (HISTORY_DSN_ENV, MASK, NOT_SECRET, SECRET_ENVIRONMENT,
                                  SECRET_OPTIONS, SECRET_WORDS, child_environment,
                                  has_url_password, is_secret_option, readers,
                                  redact as redact_value,
                                  redact_text, secret_like_patterns)

PW = "Zq9-s3cr3t"

# The server's (10.11) and its tools' option names near a secret word, and what they are.
SECRET_NAMES = (
    "wsrep-sst-auth", "wsrep_sst_auth", "--loose-wsrep-sst-auth", "WSREP_SST_AUTH",
    "report-password", "report_password", "file-key-management-filekey",
    "hashicorp-key-management-token", "password", "--password", "mysql-password",
    "pgsql-password", "encrypt-key", "transition-key", "passwd", "my-secret", "auth",
    "maximum-report-password",
)
PLAIN_NAMES = (
    "default-password-lifetime", "disconnect-on-expired-password", "max-password-errors",
    "old-passwords", "strict-password-validation", "simple-password-check-minimal-length",
    "cracklib-password-check-dictionary", "password-reuse-check-interval", "secure-auth",
    "ssl-key", "des-key-file", "innodb-ft-min-token-size", "key-buffer-size",
    "show-slave-auth-info", "wsrep-provider-options", "server-wrapper", "mysqld",
    "history-dsn", "history_dsn", "innodb-encryption-rotate-key-age", "delay-key-write",
)


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_option_names(name):
    assert is_secret_option(name), name


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_plain_option_names(name):
    assert not is_secret_option(name), name


def test_the_declared_lists_are_consistent():
    # every exception names an option a secret word would otherwise make secret
    for name in NOT_SECRET:
        assert any(word in name for word in SECRET_WORDS), name
        assert name == name.lower() and "_" not in name
    assert not SECRET_OPTIONS & NOT_SECRET
    for name in SECRET_OPTIONS:  # spelt as the server compares them
        assert name == name.lower() and "_" not in name and not name.startswith("-")
    assert SECRET_ENVIRONMENT == {HISTORY_DSN_ENV}


@pytest.mark.parametrize("text,shown", [
    (f"mysql://hist:{PW}@127.0.0.1:3306/kewpie_history",
     "mysql://hist:***@127.0.0.1:3306/kewpie_history"),
    (f"store mysql://u:{PW}@db/h unreachable", "store mysql://u:***@db/h unreachable"),
    (f"--mysqld=--wsrep-sst-auth=u:{PW}", "--mysqld=--wsrep-sst-auth=***"),
    (f"--mysqld=--loose_wsrep_sst_auth='u {PW}' --x=1", "--mysqld=--loose_wsrep_sst_auth=*** --x=1"),
    (f"sysbench --mysql-password={PW} --threads=4", "sysbench --mysql-password=*** --threads=4"),
    (f"dbi:mysql:host=h:password={PW}:database=test", "dbi:mysql:host=h:password=***"),
    (f"wsrep_sst_auth={PW}", "wsrep_sst_auth=***"),
    (f"mysql://u:p@ss{PW}@h:1/db", "mysql://u:***@h:1/db"),  # a raw @ in the password
    # not secrets: left as they are
    ("--wsrep-provider-options=socket.ssl_password_file=/etc/p;gmcast.x=1",
     "--wsrep-provider-options=socket.ssl_password_file=/etc/p;gmcast.x=1"),
    ("--default-password-lifetime=30", "--default-password-lifetime=30"),
    ("http://jenkins:8080/job/x@2/12/artifact/y", "http://jenkins:8080/job/x@2/12/artifact/y"),
    ("mysql://root@127.0.0.1:9300/h", "mysql://root@127.0.0.1:9300/h"),
    ("mysql://u:@h/db", "mysql://u:@h/db"),
    ("Access denied for user 'h'@'localhost' (using password: YES)",
     "Access denied for user 'h'@'localhost' (using password: YES)"),
    ("", ""),
])
def test_redact_text(text, shown):
    assert redact_text(text) == shown
    assert has_url_password(text) == (text != shown and "://" in text)


def test_redact_walks_structures_and_leaves_them_unchanged():
    options = {"history_dsn": f"mysql://h:{PW}@127.0.0.1:1/h", "wsrep_sst_auth": f"u:{PW}",
               "mysqld_options": [f"--report-password={PW}", "--max-connections=9"],
               "compare_mysqld": (f"--wsrep_sst_auth=a:{PW}",), "old_passwords": True,
               "report_password": "", "repeat": 3, "nested": {"password": 1234}}
    before = json.dumps(options)
    clean = redact_value(options)
    assert json.dumps(options) == before  # a copy
    assert PW not in json.dumps(clean) and "1234" not in json.dumps(clean)
    assert clean["history_dsn"] == "mysql://h:***@127.0.0.1:1/h"
    assert clean["wsrep_sst_auth"] == MASK and clean["nested"] == {"password": MASK}
    assert clean["mysqld_options"] == ["--report-password=***", "--max-connections=9"]
    assert clean["compare_mysqld"] == ("--wsrep_sst_auth=***",)
    assert clean["old_passwords"] is True and clean["report_password"] == ""
    assert clean["repeat"] == 3
    assert redact_value(None) is None and redact_value(7) == 7


def test_dsns_are_shown_without_their_password():
    assert redact(f"mysql://u:{PW}@h:3306/db") == "mysql://u:***@h:3306/db"
    assert redact(f"mysql://u:pa/{PW}@h/db") == "mysql://u:***@h/db"  # what a parser misreads
    assert redact("mysql://u@h/db") == "mysql://u@h/db"
    assert has_password(f"mysql://u:{PW}@h/db") and not has_password("mysql://u@h/db")
    assert not has_password("mysql://u:@h/db")
    message = password_on_command_line("--history-dsn", f"mysql://u:{PW}@h:1/db")
    assert PW not in message and "mysql://u:***@h:1/db" in message
    assert HISTORY_DSN_ENV in message and "ps" in message


def _like(pattern: str, text: str) -> bool:
    rx = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, text, re.S | re.I) is not None


def test_every_text_the_redaction_changes_matches_a_scrub_pattern():
    texts = [f"x --{name}={PW} y" for name in SECRET_NAMES] + \
            [f"{name.lstrip('-').upper()}={PW}" for name in SECRET_NAMES] + [f"see mysql://a:{PW}@b/c"]
    for text in texts:
        assert redact_text(text) != text, text
        assert any(_like(p, text) for p in secret_like_patterns()), text
    for name in SECRET_NAMES:  # a JSON key
        text = json.dumps({name: PW})
        assert redact_value(json.loads(text)) != json.loads(text), text
        assert any(_like(p, text) for p in secret_like_patterns()), text


def test_children_never_inherit_the_secrets_environment():
    ours = {"PATH": "/bin", HISTORY_DSN_ENV: f"mysql://u:{PW}@h/db"}
    assert child_environment(None, ours) == {"PATH": "/bin"}
    assert child_environment(None, {"PATH": "/bin"}) is None  # inherit: nothing to drop
    assert child_environment(ours, {}) == {"PATH": "/bin"}


def test_who_else_may_read_a_file():
    assert [readers(m) for m in (0o600, 0o400, 0o700, 0o620, 0o602)] == [""] * 5
    assert readers(0o640) == "its group" and readers(0o604) == "others"
    assert readers(0o100644) == "its group and others"  # st_mode with the file type


def test_log_lines_show_no_secret():
    from lib.platform.logsetup import configure
    stream = io.StringIO()
    log = configure(stream=stream)
    try:
        log.warning("results history %s unreachable", f"mysql://h:{PW}@127.0.0.1:1/h")
        log.info(f"starting mariadbd --wsrep-sst-auth=u:{PW} --port=1")
        try:
            raise RuntimeError(f"cannot connect to mysql://h:{PW}@db/h")
        except RuntimeError:
            log.error("failed", exc_info=True)
    finally:
        configure()
    text = stream.getvalue()
    assert PW not in text, text
    assert "mysql://h:***@127.0.0.1:1/h unreachable" in text and "--wsrep-sst-auth=*** " in text
    assert re.search(r"^\d{8}-\d{6} WARNING results history", text, re.M)


def test_junit_reports_show_no_secret(tmp_path):
    from lib.run import junit, mtr_junit
    from lib.run.report import Outcome
    from lib.suites.status import TestStatus
    message = f"AssertionError: server mysql://h:{PW}@db/x said --wsrep_sst_auth=u:{PW}"
    outcomes = [Outcome("main.a", TestStatus.FAIL, 10, message=message),
                Outcome("main.b", TestStatus.SKIPPED, 0, message=f"needs --password={PW}")]
    for module in (junit, mtr_junit):
        path = module.write(outcomes, str(tmp_path / f"{module.__name__}.xml"))
        text = open(path, encoding="utf-8").read()
        assert PW not in text and "mysql://h:***@db/x" in text, text


def test_store_rows_and_spool_folders_hold_no_secret(tmp_path):
    from lib.history.records import ResultRecord, RunInfo, new_run_uuid, utcnow
    from lib.history.spool import spool_dir
    from lib.history.target import StoreTarget
    from lib.history.writes import result_row, run_row
    run = RunInfo(new_run_uuid(), options={"history_dsn": f"mysql://h:{PW}@db/x",
                                           "mysqld_options": [f"--wsrep-sst-auth=u:{PW}"]},
                  labels={"build_url": f"https://u:{PW}@ci/job/1"})
    row = run_row(run)
    assert PW not in json.dumps(row, default=str)
    assert json.loads(row["options"])["mysqld_options"] == ["--wsrep-sst-auth=***"]
    result = result_row(1, ResultRecord(test="main.a", status="fail", seq=1,
                                        finished_at=utcnow(), failure=f"--password={PW}"))
    assert result["failure"] == "--password=***"
    one = spool_dir(str(tmp_path), StoreTarget(dsn=f"mysql://h:{PW}@db/x"))
    other = spool_dir(str(tmp_path), StoreTarget(dsn="mysql://h:another@db/x"))
    assert one == other  # the folder names the store, not its password


def test_a_spool_file_holds_no_secret(tmp_path):
    from lib.history.records import ResultRecord, RunInfo, new_run_uuid, utcnow
    from lib.history.spool import Spool, read
    run = RunInfo(new_run_uuid(), options={"mysqld_options": [f"--wsrep-sst-auth=u:{PW}"]},
                  labels={"build_url": f"https://u:{PW}@ci/job/1"})
    spool = Spool(str(tmp_path / "spool"), run)
    spool.add(ResultRecord(test="main.a", status="fail", seq=1, finished_at=utcnow(),
                           failure=f"could not reach mysql://h:{PW}@db/x"))
    spool.end(utcnow(), 1)
    assert PW not in open(spool.path).read()
    kept = read(spool.path)
    assert kept is not None and kept.results[0].failure == "could not reach mysql://h:***@db/x"
    assert kept.run.options["mysqld_options"] == ["--wsrep-sst-auth=***"]
