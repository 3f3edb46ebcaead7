"""Suite options that would listen beyond loopback or write outside the vardir are
refused before any server starts: exit 2, one ERROR line naming the option, no
server left (the kewpie fixture checks), and nothing written to /tmp.

Covers: lib/servers/option_safety.py, lib/servers/option_catalog.py
"""
import os
import uuid

import pytest

TEST_MODULE = """from lib.testcase import KewpieTestCase


class Never(KewpieTestCase):
    def test_never(self):
        self.fail("servers should not have started")
"""


def _error_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if " ERROR " in line]


def _write_suite(root, name: str, suite_lines: list[str], module_lines: tuple[str, ...] = ()) -> None:
    suite = root / name
    suite.mkdir(parents=True)
    (suite / "suite_config.py").write_text("\n".join(suite_lines) + "\n")
    (suite / "never_test.py").write_text("\n".join(module_lines) + "\n" + TEST_MODULE)


def _stray(tag: str) -> str:
    return f"/tmp/kw-unsafe-{tag}-{uuid.uuid4().hex[:8]}"


CASES = {
    "bind": ("mysql", "--bind=0.0.0.0", "--bind-address=0.0.0.0"),
    "galera_listen": ("galera", "--wsrep-provider-options=gmcast.listen_addr=tcp://0.0.0.0:4567",
                      "gmcast.listen_addr"),
    "log_bin": ("mysql", "--log-bin={stray}", "outside the server's vardir"),
    "general_log": ("mysql", "--general-log-file={stray}", "outside the server's vardir"),
    "loose": ("mysql", "--loose-general_log_file={stray}", "--loose-general-log-file="),
    "abbreviated": ("mysql", "--general-log-f={stray}", "--general-log-file="),
    "ambiguous": ("mysql", "--log-b={stray}", "ambiguous"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unsafe_suite_option_refused_before_any_server(kewpie, tmp_path, case):
    server_type, option, expected = CASES[case]
    stray = _stray(case)
    option = option.format(stray=stray)
    _write_suite(tmp_path / "suites", f"unsafe_{case}",
                 [f"server_type = {server_type!r}", f"server_requirements = [[{option!r}]]"])
    proc = kewpie.run(f"--suitepath={tmp_path / 'suites'}", f"--suite=unsafe_{case}", timeout=120)
    errors = _error_lines(proc.stdout)
    assert proc.returncode == 2, proc.stdout
    assert len(errors) == 1, proc.stdout
    assert repr(option) in errors[0] and expected in errors[0]
    assert "unsafe_" in errors[0] and "suite_config.py" in errors[0]
    assert "[ fail ]" not in proc.stdout and "[ pass ]" not in proc.stdout
    assert not os.path.exists(stray) and not os.path.exists(stray + ".index")


def test_unsafe_option_in_a_test_module_is_refused_naming_the_module(kewpie, tmp_path):
    _write_suite(tmp_path / "suites", "unsafe_module", ["server_requirements = [[]]"],
                 ("server_requirements = [['--extra-p=3307']]",))
    proc = kewpie.run(f"--suitepath={tmp_path / 'suites'}", "--suite=unsafe_module", timeout=120)
    errors = _error_lines(proc.stdout)
    assert proc.returncode == 2 and len(errors) == 1, proc.stdout
    assert "never_test.py" in errors[0] and "--extra-port=3307" in errors[0]


def test_start_and_exit_refuses_too(kewpie, tmp_path):
    _write_suite(tmp_path / "suites", "unsafe_sae", ["server_requirements = [['--bind=0.0.0.0']]"])
    proc = kewpie.run(f"--suitepath={tmp_path / 'suites'}", "--suite=unsafe_sae",
                      "--start-and-exit", timeout=120)
    errors = _error_lines(proc.stdout)
    assert proc.returncode == 2 and len(errors) == 1, proc.stdout
    assert "--bind-address=0.0.0.0" in errors[0]
