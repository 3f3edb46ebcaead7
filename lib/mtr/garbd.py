"""mysql-test-run's ``MTR_GARBD_EXE`` under kewpie: garbd on the loopback only.

mtr sets ``MTR_GARBD_EXE`` (``suite/wsrep/common.pm``, ``check_garbd_support``)
when a wsrep provider is found and garbd is installed next to it or as
``/usr/bin/garbd``; ``galera_3nodes.galera_garbd`` and ``galera_garbd_backup``
start it themselves (``--exec $MTR_GARBD_EXE --address ... --options
'base_port=...' &``) and skip without it (``have_garbd.inc``).  Started so,
garbd listens on every address (``tcp://0.0.0.0:<base_port>``).  kewpie's
``MTR_GARBD_EXE`` is a small script in the bot's vardir that execs the real
garbd with ``gmcast.listen_addr`` on 127.0.0.1 (a wildcard one narrowed, as a
server's ``bind-address`` is) and its saved state (``base_dir``) in the vardir's
``tmp/``; the rest of its command line is the test's, so the test's own
``pkill -f 'garbd.*<port>'`` still finds it, and what it starts carries the
case's tag like anything else the test starts.
"""
from __future__ import annotations

import os
import shlex
import shutil

from ..servers.garbd import find_garbd

WRAPPER_NAME = "garbd-loopback"

WRAPPER = """#!/bin/sh
# kewpie: mysql-test-run's MTR_GARBD_EXE. Runs {garbd} with the test's arguments,
# its group communication on 127.0.0.1 only and its saved state in {state}.
listen='gmcast.listen_addr=tcp://127.0.0.1'
state={state}
narrow() {{
  opts=${{1%;}}
  case "$opts" in
    *gmcast.listen_addr=*) opts=$(printf '%s' "$opts" | sed -e \\
        's#\\(gmcast\\.listen_addr=[a-z]*://\\)0\\.0\\.0\\.0#\\1127.0.0.1#g' -e \\
        's#\\(gmcast\\.listen_addr=[a-z]*://\\)\\[::\\]#\\1[::1]#g') ;;
    *) opts="$opts;$listen" ;;
  esac
  case "$opts" in
    *base_dir=*) ;;
    *) opts="$opts;base_dir=$state" ;;
  esac
  printf '%s' "${{opts#;}}"
}}
count=$#
found=""
prev=""
for arg do
  case "$prev" in
    --options|-o) arg=$(narrow "$arg"); found=1 ;;
  esac
  case "$arg" in
    --options=*) arg="--options=$(narrow "${{arg#--options=}}")"; found=1 ;;
  esac
  set -- "$@" "$arg"
  prev=$arg
done
shift "$count"
[ -n "$found" ] || set -- "$@" --options "$(narrow '')"
exec {garbd} "$@"
"""


def garbd_wrapper(directory: str, state_dir: str, provider: str, user: str | None) -> str:
    """Write the ``MTR_GARBD_EXE`` script into directory (garbd's state in state_dir);
    its path, or '' when garbd is not installed (mtr then leaves the variable unset
    and the garbd tests skip: ``Needs garbd``)."""
    garbd = find_garbd(provider) if provider and provider != "none" else ""
    if not garbd:
        return ""
    path = os.path.join(directory, WRAPPER_NAME)
    with open(path, "w") as fh:
        fh.write(WRAPPER.format(garbd=shlex.quote(garbd), state=shlex.quote(state_dir)))
    os.chmod(path, 0o755)
    if user:
        shutil.chown(path, user, user)
    return path
