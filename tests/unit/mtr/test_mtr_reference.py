"""MariaDB's mysql-test-run.pl beside kewpie: its build thread from a leased span, its
temporary files in the caller's folder.

Covers: lib/mtr/reference.py
"""
import pytest

from lib.mtr.reference import (MTR_PORT_GROUP, MTR_PORT_ORIGIN, SPAN_ALIGN,
                               lease_reference_ports, reference_mtr_env)
from lib.platform.ports import BLOCK_SIZE, PortSpan


def test_env_names_the_build_thread_of_the_span_and_tmpdir():
    span = PortSpan(first=MTR_PORT_ORIGIN + 300 * MTR_PORT_GROUP, size=60, blocks=[])
    env = reference_mtr_env(span, "/x/tmp", base={"PATH": "/bin", "MTR_PORT_BASE": "16000"})
    assert env["MTR_BUILD_THREAD"] == "300"
    assert env["MTR_PORT_GROUP_SIZE"] == str(MTR_PORT_GROUP)
    assert env["TMPDIR"] == "/x/tmp" and env["PATH"] == "/bin"
    assert "MTR_PORT_BASE" not in env   # it would override the build thread


def test_env_refuses_a_span_off_mtrs_groups():
    with pytest.raises(ValueError):
        reference_mtr_env(PortSpan(first=MTR_PORT_ORIGIN + 4, size=32, blocks=[]), "/t",
                          base={})


def test_alignment_is_a_group_and_a_block_boundary():
    assert SPAN_ALIGN % MTR_PORT_GROUP == 0 and SPAN_ALIGN % BLOCK_SIZE == 0


def test_leased_span_covers_one_group_per_worker(tmp_path):
    with lease_reference_ports(str(tmp_path / "locks"), parallel=2) as span:
        assert span.size >= 2 * MTR_PORT_GROUP
        assert (span.first - MTR_PORT_ORIGIN) % MTR_PORT_GROUP == 0
        env = reference_mtr_env(span, str(tmp_path), base={})
        thread = int(env["MTR_BUILD_THREAD"])
        assert thread * MTR_PORT_GROUP + MTR_PORT_ORIGIN == span.first
