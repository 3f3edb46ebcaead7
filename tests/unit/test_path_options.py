"""Every option that takes a path is classified (trusted input, trusted output, plain data
or a folder with its own check) in the table of its way in, and the checks run over those
tables: lib/cli.py's PATH_TABLE (build_parser), the pytest plugin's
(lib/pytest_plugin/options.py) and ``kewpie history``'s (lib/history/commands.py).

An option is taken to hold a path when its metavar (or, without one, its name) says
DIR, PATH, FILE or OUT, or a grammar's ``.yy``/``.zz``; a new option of that kind
missing from its table fails here, as does a table entry no parser has.

Covers: lib/cli.py, lib/platform/pathoptions.py, lib/pytest_plugin/options.py,
lib/history/commands.py, lib/platform/trustedpath.py, lib/platform/safewrite.py
"""
from __future__ import annotations

import argparse
import os
import re

import pytest
from _pytest.config.argparsing import Parser

from lib.cli import PATH_TABLE, build_parser, config_from_args, path_values
from lib.errors import KewpieError
from lib.history.commands import PATH_TABLE as HISTORY_TABLE
from lib.history.commands import build_parser as history_parser
from lib.platform.pathoptions import PathRole
from lib.platform.safewrite import UnsafeOutputError
from lib.platform.trustedpath import UntrustedPathError
from lib.pytest_plugin.options import PATH_TABLE as PLUGIN_TABLE
from lib.pytest_plugin.options import add_options

NOBODY = 65534
PATHISH = re.compile(r"DIR|PATH|FILE|OUT|\.yy|\.zz")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")


def _argparse_paths(parser: argparse.ArgumentParser) -> dict[str, str]:
    """name -> metavar of every action of parser (and its subcommands') that takes a
    path: long options by their name without dashes, positionals by their metavar."""
    found: dict[str, str] = {}
    for action in parser._actions:  # noqa: SLF001 - argparse's one list of its options
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                found.update(_argparse_paths(sub))
            continue
        if isinstance(action, argparse._HelpAction) or action.nargs == 0:  # noqa: SLF001
            continue
        metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
        longs = [o for o in action.option_strings if o.startswith("--")]
        name = longs[0][2:] if longs else metavar
        if PATHISH.search(metavar) or (not longs and name in PATH_TABLE):
            found[name] = metavar
    return found


def _names(parser: argparse.ArgumentParser) -> set[str]:
    """Every option name (no dashes) and positional metavar of parser and its subcommands."""
    out: set[str] = set()
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                out |= _names(sub)
            continue
        out |= {o[2:] for o in action.option_strings if o.startswith("--")}
        if not action.option_strings:
            out.add(action.metavar if isinstance(action.metavar, str) else action.dest)
    return out


def test_every_path_option_of_the_command_line_is_classified():
    found = _argparse_paths(build_parser())
    assert {"suitepath", "basedir", "workdir", "junit-xml", "reduce-out", "grammar",
            "known-bugs", "config", "trust"} <= set(found)  # the heuristic sees them
    missing = sorted(set(found) - set(PATH_TABLE))
    assert not missing, f"path options of lib/cli.py missing from PATH_TABLE: {missing}"
    stale = sorted(set(PATH_TABLE) - _names(build_parser()))
    assert not stale, f"PATH_TABLE names options build_parser does not have: {stale}"


def test_every_path_option_of_kewpie_history_is_classified():
    found = _argparse_paths(history_parser())
    assert {"history", "workdir", "config", "OUT", "FILE"} <= set(found)
    missing = sorted(set(found) - set(HISTORY_TABLE))
    assert not missing, f"path options of kewpie history missing from its PATH_TABLE: {missing}"
    assert not sorted(set(HISTORY_TABLE) - _names(history_parser()))


def test_every_path_option_of_the_pytest_plugin_is_classified():
    parser = Parser(_ispytest=True)
    add_options(parser)
    found = {}
    for option in parser.getgroup("kewpie").options:
        name = [n for n in option.names() if n.startswith("--")][0][2:]
        attrs = option.attrs()
        if attrs.get("action") in ("store_true", "store_false"):
            continue
        metavar = attrs.get("metavar") or attrs.get("dest", name).upper()
        if PATHISH.search(metavar):
            found[name] = metavar
    assert {"kewpie-workdir", "kewpie-basedir", "kewpie-lock-dir", "kewpie-trust"} <= set(found)
    assert sorted(set(found) - set(PLUGIN_TABLE)) == []
    assert sorted(set(PLUGIN_TABLE) - set(found)) == []


def test_every_input_and_output_of_the_table_names_where_its_check_is():
    for table in (PATH_TABLE, PLUGIN_TABLE, HISTORY_TABLE):
        for option, spec in table.items():
            if spec.role in (PathRole.input, PathRole.output):
                assert spec.fields or spec.note, option  # checked over fields, or says where
            if spec.role is PathRole.own:
                assert spec.note, option


# ---------------------------------------------------------------- the checks use the table

@pytest.fixture
def foreign(tmp_path):
    """A folder of nobody's (0755) holding a file of nobody's, a grammar and a folder."""
    folder = tmp_path / "theirs"
    folder.mkdir()
    for name in ("file.txt", "g.yy", "g.zz", "sweep.json"):
        (folder / name).write_text("x\n")
    (folder / "tree").mkdir()
    (folder / "tree" / "include").mkdir()
    (folder / "tree" / "include" / "default_my.cnf").write_text("")
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames + [""]:
            os.chown(os.path.join(dirpath, name), NOBODY, NOBODY)
    return folder


INPUTS = {  # option -> the arguments giving it a foreign path (f: the foreign folder)
    "suitepath": ["--suitepath={f}/tree"],
    "config": ["--config={f}/file.txt"],
    "basedir": ["--basedir={f}/tree"],
    "randgen-path": ["--randgen-path={f}/tree"],
    "mtr-root": ["--mode=mtr", "--mtr-root={f}/tree"],
    "grammar": ["--mode=hunt", "--grammar={f}/g.yy"],
    "redefine": ["--mode=hunt", "--grammar=x.yy", "--redefine={f}/g.yy"],
    "sql-file": ["--mode=hunt", "--sql-file={f}/tree"],
    "gendata": ["--gendata={f}/g.zz"],
    "known-bugs": ["--known-bugs={f}/file.txt"],
    "random-options": ["--mode=hunt", "--grammar=x.yy", "--random-options={f}/file.txt"],
    "sweep-file": ["--mode=sweep", "--sweep-file={f}/sweep.json"],
    "wsrep-provider-path": ["--wsrep-provider-path={f}/file.txt"],
    "xtrabackup-path": ["--xtrabackup-path={f}/file.txt"],
    "innobackupex-path": ["--innobackupex-path={f}/file.txt"],
    "TEST": ["--mode=reduce", "{f}/tree"],
}


def test_the_named_sql_sources_are_no_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no file of either name here: the named sources
    config = config_from_args(["--mode=hunt", "--sql-file=mysql-test", "--sql-file=surface",
                               "--sql-file=load.sql"])
    assert config.paths_at("hunt.sql_files")[:2] == ["mysql-test", "surface"]
    assert path_values(config)["sql-file"] == [str(tmp_path / "load.sql")]


def test_every_input_option_is_in_the_refusal_test():
    inputs = {o for o, s in PATH_TABLE.items() if s.role is PathRole.input}
    assert inputs == set(INPUTS)


@needs_root
@pytest.mark.parametrize("option", sorted(INPUTS))
def test_a_foreign_input_is_refused_and_accepted_when_trusted(option, foreign):
    argv = [a.format(f=foreign) for a in INPUTS[option]]
    with pytest.raises(UntrustedPathError) as refused:
        config_from_args(argv)
    line = str(refused.value)
    assert "\n" not in line and "uid 65534 (nobody)" in line and "mode 0755" in line, line
    assert "--trust" in line and "owned by neither you nor root" in line, line
    what = PATH_TABLE[option].what or f"--{option}"
    assert line.startswith(f"refusing {what} "), line
    try:  # trusted: read (a file that is not what the option wants is another error)
        config_from_args([*argv, f"--trust={foreign}"])
    except KewpieError as exc:
        assert not isinstance(exc, UntrustedPathError), exc


@needs_root
@pytest.mark.parametrize("option, argv", [
    ("junit-xml", ["--junit-xml={f}/r.xml"]),
    ("xml-report", ["--mode=mtr", "--xml-report={f}/r.xml"]),
    ("sweep-out", ["--mode=sweep", "--sweep-file=/etc/hostname", "--sweep-out={f}/out"]),
    ("reduce-out", ["--mode=reduce", "--reduce-out={f}/out", "/nonexistent"]),
    ("history", ["--history={f}/h.sqlite"]),
])
def test_an_output_in_a_foreign_folder_is_refused(option, argv, foreign):
    with pytest.raises(UnsafeOutputError, match=f"refusing to write --{option} .*uid 65534"):
        config_from_args([a.format(f=foreign) for a in argv])


def test_an_output_that_is_a_link_is_refused(tmp_path):
    os.symlink("/etc/passwd", tmp_path / "r.xml")
    with pytest.raises(UnsafeOutputError, match="symbolic link to /etc/passwd"):
        config_from_args([f"--junit-xml={tmp_path / 'r.xml'}"])
    os.symlink("/etc", tmp_path / "out")
    with pytest.raises(UnsafeOutputError, match="symbolic link to /etc"):
        config_from_args(["--mode=reduce", f"--reduce-out={tmp_path / 'out'}", "/nonexistent"])


@needs_root
def test_the_pytest_plugins_basedir_is_checked_over_its_table(foreign):
    from lib.config import RunConfig, Servers
    from lib.pytest_plugin.options import check_path_options
    with pytest.raises(UntrustedPathError, match=f"refusing --kewpie-basedir {foreign}/tree"):
        check_path_options(RunConfig(servers=Servers(basedir=f"{foreign}/tree")))
    check_path_options(RunConfig(servers=Servers(basedir=f"{foreign}/tree"),
                                 trusted=(str(foreign),)))
    check_path_options(RunConfig())


def test_every_field_of_the_tables_is_one_the_configuration_has():
    """A table's field is ``section.field`` of RunConfig, or ``<mode>.field`` of a mode's
    own section: read from a run of that mode, a misspelt one is a KeyError, never empty."""
    import dataclasses
    from lib.config import RunConfig
    from lib.modes.table import MODES
    sections = {f.name for f in dataclasses.fields(RunConfig)} - {"mode_section"}
    modes = {mode.name: mode for mode in MODES}
    for table in (PATH_TABLE, PLUGIN_TABLE):
        for option, spec in table.items():
            for name in spec.fields:
                section, _, key = name.partition(".")
                assert key and (section in sections or section in modes), (option, name)
                if section in modes:
                    args = build_parser().parse_args([])  # the section's defaults
                    config = RunConfig(mode=section, mode_section=modes[section].section(args))
                else:
                    config = RunConfig()
                assert config.paths_at(name) is not None  # KeyError: no such field
    with pytest.raises(KeyError):
        RunConfig().paths_at("servers.basedirs")
