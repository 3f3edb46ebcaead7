"""Unit tests for lib/run/configfile.py: kewpie.toml's keys and types, finding the files,
and the merge (defaults < [defaults] < [profiles.NAME] < command line).

Covers: lib/run/configfile.py
"""
import argparse
import os

import pytest

from lib.errors import UsageError
from lib.run.configfile import (COMMAND_LINE, CONFIG_NAME, ConfigFile, Kind, Setting,
                                find_config_files, format_settings, option_specs,
                                read_config_file, resolve)


def _parser():
    p = argparse.ArgumentParser()
    p.add_argument("tests", nargs="*")
    p.add_argument("--suite", action="append")
    p.add_argument("--suitepath", action="append")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--test-timeout", type=float, default=0.0)
    p.add_argument("--mode", default="native", choices=["native", "mtr"])
    p.add_argument("--workdir", default="/w")
    p.add_argument("--randgen-seed", default="1")
    p.add_argument("--force", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--shm", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--profile", default="")
    return p


SPECS = option_specs(_parser(), not_in_files={"profile"}, paths={"workdir", "suitepath"},
                     comma_lists={"suitepath"})


def _write(tmp_path, text, name=CONFIG_NAME):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _read(tmp_path, text):
    return read_config_file(_write(tmp_path, text), SPECS)


# ---------------------------------------------------------------- option kinds

def test_specs_name_keys_by_long_option():
    assert SPECS["repeat"].kind is Kind.value and SPECS["repeat"].value_type is int
    assert SPECS["test-timeout"].dest == "test_timeout" and SPECS["test-timeout"].value_type is float
    assert SPECS["mode"].choices == ("native", "mtr")
    assert SPECS["suite"].kind is Kind.values and not SPECS["suite"].path
    assert SPECS["suitepath"].path and SPECS["suitepath"].comma_list
    assert SPECS["force"].kind is Kind.flag and not SPECS["force"].negated
    assert SPECS["no-shm"].negated and SPECS["no-shm"].dest == "shm"
    assert "profile" not in SPECS and "tests" not in SPECS and "help" not in SPECS


def test_specs_refuse_an_option_kind_they_cannot_read():
    p = argparse.ArgumentParser()
    p.add_argument("--odd", action="count")
    with pytest.raises(ValueError, match="--odd"):
        option_specs(p)


# ---------------------------------------------------------------- reading a file

def test_read_defaults_and_profiles_by_dest(tmp_path):
    config = _read(tmp_path, """
        [defaults]
        repeat = 2
        suite = "main,replication_basic"
        no_shm = true

        [profiles.ci]
        test_timeout = 30
        force = true
        "--mode" = "mtr"
    """.replace("\n        ", "\n"))
    assert config.defaults["repeat"].value == 2
    assert config.defaults["suite"].value == ["main,replication_basic"]
    assert config.defaults["shm"].value is False
    assert config.defaults["shm"].source == f"{config.path}: [defaults] no_shm"
    ci = config.profiles["ci"]
    assert ci["test_timeout"].value == 30.0 and isinstance(ci["test_timeout"].value, float)
    assert ci["force"].value is True and ci["mode"].value == "mtr"
    assert ci["force"].from_file


def test_a_number_is_the_text_of_a_string_option(tmp_path):
    assert _read(tmp_path, "[defaults]\nrandgen-seed = 7\n").defaults["randgen_seed"].value == "7"


def test_relative_paths_are_taken_from_the_files_folder(tmp_path):
    config = _read(tmp_path, '[defaults]\nworkdir = "wd"\nsuitepath = ["s1,/abs/s2", "~/s3"]\n')
    assert config.defaults["workdir"].value == str(tmp_path / "wd")
    assert config.defaults["suitepath"].value == [
        str(tmp_path / "s1"), "/abs/s2", os.path.expanduser("~/s3")]
    assert _read(tmp_path, '[defaults]\nworkdir = "/abs"\n').defaults["workdir"].value == "/abs"


def test_an_empty_array_clears_a_list(tmp_path):
    assert _read(tmp_path, "[profiles.p]\nsuite = []\n").profiles["p"]["suite"].value == []


@pytest.mark.parametrize("text, message", [
    ("[defaults]\nrepeat = \n", "not valid TOML: .*line 2"),
    ("[defaults]\nrepaet = 2\n", r"\[defaults\] repaet: unknown key.*did you mean 'repeat'"),
    ("[defaults]\nprofile = 'x'\n", r"\[defaults\] profile: unknown key"),
    ("[defaults]\nsafe-directories = ['/x']\n",
     r"\[defaults\] safe-directories: trust is never taken from a kewpie.toml.*--trust"),
    ("[profiles.p]\ntrust = '/x'\n", r"\[profiles.p\] trust: trust is never taken from"),
    ("[profiles.p]\nrepeat = '2'\n", r"\[profiles.p\] repeat = \"2\": must be a whole number"),
    ("[defaults]\nrepeat = 2.5\n", r"repeat = 2.5: must be a whole number"),
    ("[defaults]\nrepeat = true\n", r"repeat = true: must be a whole number"),
    ("[defaults]\ntest-timeout = 'long'\n", r"test-timeout = \"long\": must be a number"),
    ("[defaults]\nworkdir = 3.5\n", r"workdir = 3.5: must be a string"),
    ("[defaults]\nforce = 'yes'\n", r"force = \"yes\": must be true or false"),
    ("[defaults]\nsuite = [1, 2]\n", r"suite = \[1, 2\]: must be a string or an array"),
    ("[defaults]\nmode = 'bogus'\n", r"mode = \"bogus\": must be one of native, mtr"),
    ("[defaults]\nforce = true\nno-force = true\n", r"no-force: sets the same option as 'force'"),
    ("repeat = 2\n", r"unknown key 'repeat' at the top level; put settings under \[defaults\]"),
    ("[other]\n", r"unknown key 'other' at the top level"),
    ("defaults = 3\n", r"defaults must be a table"),
    ("[profiles]\np = 3\n", r"profiles.p must be a table"),
])
def test_a_bad_file_is_one_line_naming_file_and_key(tmp_path, text, message):
    with pytest.raises(UsageError, match=message) as info:
        _read(tmp_path, text)
    assert str(info.value).startswith(str(tmp_path / CONFIG_NAME) + ": ")
    assert "\n" not in str(info.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(UsageError, match="no such config file"):
        read_config_file(str(tmp_path / "nope.toml"), SPECS)


# ---------------------------------------------------------------- which files

def test_files_root_then_suitepaths_first_suitepath_strongest(tmp_path):
    root, a, b, c = (tmp_path / n for n in ("root", "a", "b", "c"))
    for folder in (root, a, b, c):
        folder.mkdir()
    for folder in (root, a, c):
        (folder / CONFIG_NAME).write_text("")
    found = find_config_files("", [str(a), str(b), str(c)], str(root))
    assert found == [str(root / CONFIG_NAME), str(c / CONFIG_NAME), str(a / CONFIG_NAME)]
    assert find_config_files("", [str(root)], str(root)) == [str(root / CONFIG_NAME)]


def test_explicit_file_replaces_the_search_and_no_config_reads_none(tmp_path):
    (tmp_path / CONFIG_NAME).write_text("")
    assert find_config_files("other.toml", [], str(tmp_path)) == [os.path.abspath("other.toml")]
    assert find_config_files("", [], str(tmp_path), read_none=True) == []


# ---------------------------------------------------------------- the merge

def _file(path, defaults=None, **profiles):
    def table(name, values):
        return {dest: Setting(v, f"{path}: [{name}] {dest}") for dest, v in values.items()}
    return ConfigFile(path, table("defaults", defaults or {}),
                      {n: table(f"profiles.{n}", v) for n, v in profiles.items()})


DEFAULTS = {"repeat": 1, "force": False, "mode": "native", "workdir": "/w"}


def test_profile_over_defaults_and_command_line_over_both():
    f = _file("/c/kewpie.toml", {"repeat": 2, "mode": "mtr"}, p={"repeat": 3, "force": True})
    plain = resolve(DEFAULTS, {}, [f], None).settings
    assert plain["repeat"].value == 2 and plain["force"].value is False
    assert plain["force"].source == "default" and plain["mode"].source.endswith("[defaults] mode")
    picked = resolve(DEFAULTS, {}, [f], "p").settings
    assert picked["repeat"].value == 3 and picked["repeat"].source == "/c/kewpie.toml: [profiles.p] repeat"
    assert picked["mode"].value == "mtr"
    cli = resolve(DEFAULTS, {"repeat": 1, "force": False}, [f], "p")
    assert cli.settings["repeat"] == Setting(1, COMMAND_LINE)
    assert cli.settings["force"] == Setting(False, COMMAND_LINE)
    assert cli.namespace().repeat == 1 and cli.namespace().mode == "mtr"
    assert cli.files == ("/c/kewpie.toml",) and cli.profile == "p"


def test_later_file_wins_and_any_profile_beats_any_defaults():
    root = _file("/root/kewpie.toml", {"repeat": 2, "mode": "mtr"}, p={"force": True})
    suites = _file("/suites/kewpie.toml", {"repeat": 5}, p={"mode": "native"})
    settings = resolve(DEFAULTS, {}, [root, suites], "p").settings
    assert settings["repeat"].value == 5      # the suite path's [defaults] over the root's
    assert settings["mode"].value == "native"  # a profile over every [defaults]
    assert settings["force"].value is True     # the profile merges across files


def test_unknown_profile_names_the_files_and_their_profiles():
    f = _file("/c/kewpie.toml", p={}, q={})
    with pytest.raises(UsageError, match=r"--profile x: no \[profiles.x\] in /c/kewpie.toml "
                                         r"\(profiles: p, q\)"):
        resolve(DEFAULTS, {}, [f], "x")
    with pytest.raises(UsageError, match="--profile x: no config file was read"):
        resolve(DEFAULTS, {}, [], "x")


def test_format_settings_shows_value_and_source():
    f = _file("/c/kewpie.toml", {"repeat": 2})
    resolved = resolve(DEFAULTS, {"mode": "mtr"}, [f], None)
    text = format_settings(resolved, [("the run", [("--repeat", "repeat"), ("--mode", "mode"),
                                                   ("--force", "force")])])
    lines = text.splitlines()
    assert "# config files (weakest first): /c/kewpie.toml" in lines
    assert "the run:" in lines
    row = {line.split()[0]: line.split(None, 2)[1:] for line in lines if line.startswith("  ")}
    assert row["--repeat"] == ["2", "/c/kewpie.toml: [defaults] repeat"]
    assert row["--mode"] == ['"mtr"', "command line"]
    assert row["--force"] == ["false", "default"]
