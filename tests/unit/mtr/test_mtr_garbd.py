"""mtr mode's MTR_GARBD_EXE: the script that runs garbd with the test's arguments, its
group communication on 127.0.0.1 and its state in the vardir.

Covers: lib/mtr/garbd.py
"""
import os
import subprocess

import pytest

from lib.mtr import garbd


@pytest.fixture
def wrapper(tmp_path, monkeypatch):
    """The script written for a fake garbd that prints its arguments, one a line."""
    fake = tmp_path / "garbd"
    fake.write_text('#!/bin/sh\nfor a do printf "%s\\n" "$a"; done\n')
    fake.chmod(0o755)
    monkeypatch.setattr(garbd, "find_garbd", lambda provider: str(fake))
    path = garbd.garbd_wrapper(str(tmp_path), "/var/x/tmp", "/usr/lib/galera/libgalera_smm.so",
                               None)
    assert os.access(path, os.X_OK)

    def run(*args):
        """The arguments the fake garbd got."""
        return subprocess.run([path, *args], capture_output=True, text=True,
                              check=True).stdout.splitlines()
    return run


def test_the_tests_options_gain_a_loopback_listener_and_a_state_dir(wrapper):
    # as galera_3nodes.galera_garbd starts it
    assert wrapper("--address", "gcomm://127.0.0.1:16001", "--group", "my_wsrep_cluster",
                   "--options", "base_port=16011") == [
        "--address", "gcomm://127.0.0.1:16001", "--group", "my_wsrep_cluster", "--options",
        "base_port=16011;gmcast.listen_addr=tcp://127.0.0.1;base_dir=/var/x/tmp"]


def test_a_wildcard_listener_is_narrowed_and_a_given_state_dir_kept(wrapper):
    assert wrapper("--options=gmcast.listen_addr=tcp://0.0.0.0:7;base_dir=/d;") == [
        "--options=gmcast.listen_addr=tcp://127.0.0.1:7;base_dir=/d"]
    assert wrapper("-o", "gmcast.listen_addr=ssl://[::]:7") == [
        "-o", "gmcast.listen_addr=ssl://[::1]:7;base_dir=/var/x/tmp"]


def test_without_options_they_are_added(wrapper):
    assert wrapper("--address", "a b") == [
        "--address", "a b", "--options", "gmcast.listen_addr=tcp://127.0.0.1;base_dir=/var/x/tmp"]


def test_no_garbd_no_variable(tmp_path, monkeypatch):
    monkeypatch.setattr(garbd, "find_garbd", lambda provider: "")
    assert garbd.garbd_wrapper(str(tmp_path), "/t", "/usr/lib/galera/libgalera_smm.so", None) == ""
    assert garbd.garbd_wrapper(str(tmp_path), "/t", "none", None) == ""
