"""Unit tests for the kewpie 2012 helpers in lib/kewpie2012/mysql_methods.py that need no server.

Covers: lib/kewpie2012/mysql_methods.py
"""
import os

from lib.kewpie2012.mysql_methods import diff_dumpfiles, execute_cmd, filter_data

DUMP = """-- MariaDB dump 10.19  Distrib 10.11.19-MariaDB, for debian-linux-gnu (x86_64)
--
-- Host: 127.0.0.1    Database: test
-- ------------------------------------------------------
-- Server version\t10.11.19-MariaDB-0+deb12u1

CREATE TABLE `t1` (
  `id` int(11) NOT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB;
INSERT INTO `t1` VALUES (1),(2);
-- Dump completed on {stamp}
"""


def write(path, text):
    path.write_text(text)
    return str(path)


# ---------------------------------------------------------------- diff_dumpfiles

def test_diff_dumpfiles_equal(tmp_path):
    a = write(tmp_path / "a.sql", DUMP.format(stamp="2024-01-01  1:00:00"))
    b = write(tmp_path / "b.sql", DUMP.format(stamp="2024-01-01  1:00:00"))
    assert diff_dumpfiles(a, b) == (True, "")


def test_diff_dumpfiles_ignores_dump_completed_lines(tmp_path):
    a = write(tmp_path / "a.sql", DUMP.format(stamp="2024-01-01  1:00:00"))
    b = write(tmp_path / "b.sql", DUMP.format(stamp="2025-12-31 23:59:59"))
    assert diff_dumpfiles(a, b) == (True, "")


def test_diff_dumpfiles_ignores_server_and_host_headers(tmp_path):
    a = write(tmp_path / "a.sql", DUMP.format(stamp="x"))
    other = (DUMP.format(stamp="y")
             .replace("Host: 127.0.0.1", "Host: 127.0.0.1    Database: other")
             .replace("10.11.19-MariaDB-0+deb12u1", "8.0.36")
             .replace("-- MariaDB dump 10.19", "-- MySQL dump 10.13"))
    b = write(tmp_path / "b.sql", other)
    assert diff_dumpfiles(a, b) == (True, "")


def test_diff_dumpfiles_different(tmp_path):
    a = write(tmp_path / "a.sql", DUMP.format(stamp="x"))
    b = write(tmp_path / "b.sql", DUMP.format(stamp="x").replace("(1),(2)", "(1),(3)"))
    same, diff = diff_dumpfiles(a, b)
    assert same is False
    assert f"--- {a}" in diff
    assert f"+++ {b}" in diff
    assert "-INSERT INTO `t1` VALUES (1),(2);" in diff
    assert "+INSERT INTO `t1` VALUES (1),(3);" in diff


def test_diff_dumpfiles_extra_line(tmp_path):
    a = write(tmp_path / "a.sql", "line1\n")
    b = write(tmp_path / "b.sql", "line1\nline2\n")
    same, diff = diff_dumpfiles(a, b)
    assert not same
    assert "+line2" in diff


def test_diff_dumpfiles_empty_files(tmp_path):
    assert diff_dumpfiles(write(tmp_path / "a", ""), write(tmp_path / "b", "")) == (True, "")


# ---------------------------------------------------------------- filter_data

def test_filter_data_drops_matching_lines():
    lines = ["keep me\n", "-- Dump completed on x\n", "also keep\n", "  -- Dump completed  \n"]
    assert filter_data(lines, "Dump completed") == ["keep me\n", "also keep\n"]


def test_filter_data_no_match_and_empty():
    assert filter_data(["a", "b"], "zzz") == ["a", "b"]
    assert filter_data([], "x") == []


def test_filter_data_does_not_mutate_input():
    lines = ["a", "b"]
    filter_data(lines, "a")
    assert lines == ["a", "b"]


# ---------------------------------------------------------------- execute_cmd

def test_execute_cmd_output(tmp_path):
    out = str(tmp_path / "out.txt")
    assert execute_cmd("echo hi", out, get_output=True) == (0, "hi\n")
    with open(out) as fh:
        assert fh.read() == "hi\n"


def test_execute_cmd_without_get_output(tmp_path):
    out = tmp_path / "out.txt"
    assert execute_cmd("echo hi", str(out)) == (0, None)
    assert out.read_text() == "hi\n"


def test_execute_cmd_nonzero_retcode(tmp_path):
    retcode, output = execute_cmd("echo partial; exit 3", str(tmp_path / "o"), get_output=True)
    assert retcode == 3
    assert output == "partial\n"


def test_execute_cmd_captures_stderr(tmp_path):
    retcode, output = execute_cmd("echo oops >&2; false", str(tmp_path / "o"), get_output=True)
    assert retcode == 1
    assert output == "oops\n"


def test_execute_cmd_exec_path(tmp_path):
    workdir = tmp_path / "here"
    workdir.mkdir()
    retcode, output = execute_cmd("pwd", str(tmp_path / "o"), exec_path=str(workdir), get_output=True)
    assert retcode == 0
    assert os.path.realpath(output.strip()) == os.path.realpath(workdir)


def test_execute_cmd_shell_features(tmp_path):
    retcode, output = execute_cmd("printf 'a\\nb\\n' | wc -l", str(tmp_path / "o"), get_output=True)
    assert retcode == 0
    assert output.strip() == "2"


def test_execute_cmd_overwrites_output_file(tmp_path):
    out = str(tmp_path / "o")
    execute_cmd("echo first", out)
    assert execute_cmd("echo second", out, get_output=True) == (0, "second\n")


def test_execute_cmd_to_devnull(tmp_path):
    assert execute_cmd("echo hi", os.devnull) == (0, None)


def test_execute_cmd_stops_a_command_at_its_timeout(tmp_path):
    out = str(tmp_path / "o")
    # 2 s: the shell must have echoed before the timeout fires, even on a loaded machine
    retcode, output = execute_cmd("echo started; exec sleep 30", out, get_output=True,
                                  timeout=2)
    assert retcode < 0
    assert output.startswith("started\n") and "stopped after 2 s" in output


def test_execute_cmd_carries_the_run_tags(tmp_path):
    tags = {"KEWPIE_WORKDIR": "/w", "KEWPIE_RUN": "r1", "KEWPIE_BOT": "r1/bot0", "OTHER": "x"}
    retcode, output = execute_cmd("echo $KEWPIE_WORKDIR $KEWPIE_RUN $KEWPIE_BOT ${OTHER:-none}",
                                  str(tmp_path / "o"), get_output=True, tags_from=tags)
    assert (retcode, output) == (0, "/w r1 r1/bot0 none\n")
