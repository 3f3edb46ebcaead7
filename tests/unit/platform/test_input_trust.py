"""The trust rule for inputs (issue 43 item 1): files and trees, links in a tree, the
paths a user trusts on purpose (``--trust``, ``safe-directories`` of their own config),
sudo's caller, and the one refusal line.

Covers: lib/platform/trustedpath.py, lib/platform/usertrust.py
"""
from __future__ import annotations

import os

import pytest

from lib.errors import UsageError
from lib.platform import trustedpath as tp
from lib.platform.trustedpath import (Trust, UntrustedPathError, check_input,
                                      find_untrusted, find_untrusted_tree)
from lib.platform.usertrust import safe_directories, user_config_path

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")


def test_a_private_file_and_tree_are_trusted(tmp_path):
    (tmp_path / "s" / "sub").mkdir(parents=True)
    (tmp_path / "s" / "sub" / "m.py").write_text("x")
    os.symlink("sub/m.py", tmp_path / "s" / "link.py")
    assert find_untrusted(str(tmp_path / "s" / "sub" / "m.py"), want="any") == (None, True)
    assert find_untrusted_tree(str(tmp_path / "s")) == (None, True)
    assert find_untrusted_tree(str(tmp_path / "missing")) == (None, False)
    check_input(str(tmp_path / "s"), "--suitepath", tree=True)


def test_a_writable_file_in_a_tree_is_found(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "m.py").write_text("x")
    os.chmod(tmp_path / "s" / "m.py", 0o666)
    found, _ = find_untrusted_tree(str(tmp_path / "s"))
    assert found.path == str(tmp_path / "s" / "m.py") and found.within
    assert "writable by group or others" in found.problem
    with pytest.raises(UntrustedPathError, match=r"m.py \(in it\) is writable .*mode 0666.*"
                                                 r"chmod go-w .*--trust"):
        check_input(str(tmp_path / "s"), "--suitepath", tree=True)
    check_input(str(tmp_path / "s" / "other"), "--suitepath", tree=True)  # missing: passes


def test_a_sticky_writable_folder_inside_a_tree_is_found(tmp_path):
    (tmp_path / "s" / "drop").mkdir(parents=True)
    os.chmod(tmp_path / "s" / "drop", 0o1777)  # anyone may add a module there
    found, _ = find_untrusted_tree(str(tmp_path / "s"))
    assert found.path == str(tmp_path / "s" / "drop") and found.mode == 0o1777


@needs_root
def test_another_users_file_in_a_trusted_folder_is_found(tmp_path):
    (tmp_path / "s" / "evil").mkdir(parents=True)
    (tmp_path / "s" / "evil" / "x_test.py").write_text("x")
    os.chown(tmp_path / "s" / "evil" / "x_test.py", NOBODY, NOBODY)
    found, _ = find_untrusted_tree(str(tmp_path / "s"))
    assert found.path.endswith("evil/x_test.py") and found.uid == NOBODY
    found, _ = find_untrusted(str(tmp_path / "s" / "evil" / "x_test.py"), want="any")
    assert found.last and "owned by neither" in found.problem  # a file given alone


@needs_root
def test_a_link_in_a_tree_is_checked_where_it_leads(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "helper.py").write_text("x")
    os.chown(theirs, NOBODY, NOBODY)
    os.chown(theirs / "helper.py", NOBODY, NOBODY)
    (tmp_path / "s").mkdir()
    os.symlink(str(theirs / "helper.py"), tmp_path / "s" / "helper.py")
    found, _ = find_untrusted_tree(str(tmp_path / "s"))
    assert found.path == str(theirs) and found.within and found.uid == NOBODY
    os.unlink(tmp_path / "s" / "helper.py")
    os.symlink(str(tmp_path / "s"), tmp_path / "s" / "loop")  # a loop is walked once
    assert find_untrusted_tree(str(tmp_path / "s")) == (None, True)


@needs_root
def test_trust_covers_the_path_and_what_is_under_it_as_given(tmp_path):
    theirs = tmp_path / "theirs"
    (theirs / "evil").mkdir(parents=True)
    for path in (theirs, theirs / "evil"):
        os.chown(path, NOBODY, NOBODY)
    with pytest.raises(UntrustedPathError, match="nobody"):
        check_input(str(theirs), "--suitepath", Trust(), tree=True)
    trust = Trust.of([str(theirs)])
    check_input(str(theirs), "--suitepath", trust, tree=True)
    check_input(str(theirs / "evil"), "--suitepath", trust, tree=True)
    assert trust.covers(str(theirs / "evil" / ".." / "evil"))
    assert not trust.covers(str(theirs) + "-other") and not trust.covers(str(tmp_path))
    os.symlink(str(theirs), tmp_path / "link")  # trust is of the path as given, not where it leads
    assert not trust.covers(str(tmp_path / "link"))


def test_sudo_caller_is_trusted_only_when_root(monkeypatch):
    monkeypatch.setenv(tp.SUDO_UID, "1234")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert tp.trusted_uids() == {0, 1234}
    monkeypatch.setenv(tp.SUDO_UID, "not-a-uid")
    assert tp.trusted_uids() == {0}
    monkeypatch.setenv(tp.SUDO_UID, "1234")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert tp.trusted_uids() == {0, 1000}  # SUDO_UID is no one's say for a non-root run


@pytest.mark.parametrize("finding, words", [
    (tp.Finding("/p/s", "is owned by neither you nor root", NOBODY, 0o755, True),
     ["refusing --suitepath /p/s: it is owned by neither", "uid 65534", "mode 0755",
      "make it yours (chown)", "--trust /p/s", "safe-directories"]),
    (tp.Finding("/p", "is writable by group or others", 0, 0o777, False),
     ["/p (on its way) is writable", "reached only through folders"]),
    (tp.Finding("/p/s/x.py", "is writable by group or others", 0, 0o666, True, within=True),
     ["/p/s/x.py (in it)", "chmod go-w /p/s/x.py"]),
])
def test_the_refusal_is_one_line_with_owner_mode_and_how_to_trust(finding, words):
    line = tp.input_refusal("--suitepath", "/p/s", finding)
    assert "\n" not in line
    for word in words:
        assert word in line, line


# ---------------------------------------------------------------- the user's own config

def test_the_user_config_lives_under_xdg_config_home_or_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert user_config_path() == str(tmp_path / "kewpie" / "config.toml")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", "/home/me")
    assert user_config_path() == "/home/me/.config/kewpie/config.toml"


def test_safe_directories_are_read_and_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", "/home/me")
    config = tmp_path / "config.toml"
    assert safe_directories(str(config)) == ()
    config.write_text('safe-directories = ["/srv/suites", "~/findings", "/srv/x/../y"]\n')
    assert safe_directories(str(config)) == ("/srv/suites", "/home/me/findings", "/srv/y")
    for text, error in (('safe-directories = ["relative"]', "must be an absolute path"),
                        ('safe-directories = 3', "must be an array of paths"),
                        ('trust = ["/x"]', "unknown key 'trust'"),
                        ('history-dsn = "mysql://u:pw@h:1/d"',
                         "unknown key 'history-dsn'.*go in a kewpie.toml.*KEWPIE_HISTORY_DSN"),
                        ('safe-directories = [', "not valid TOML")):
        config.write_text(text + "\n")
        with pytest.raises(UsageError, match=error):
            safe_directories(str(config))
    config.write_text('safe-directories = ["/srv"]\n')
    os.chmod(config, 0o666)  # a config others may write trusts nothing
    with pytest.raises(UntrustedPathError, match="refusing your kewpie config .*mode 0666"):
        safe_directories(str(config))
