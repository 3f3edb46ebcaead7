#!/usr/bin/env bash
# Idempotent set-up for kewpie on Debian 12, run as root (or via sudo).
#   - installs the Debian packages kewpie drives, without starting the
#     distribution's own MariaDB service (policy-rc.d exits 101 meanwhile);
#   - creates .venv with the Python packages from pyproject.toml, and byte-compiles lib/.
# A second run checks and returns in about a second.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

log() { printf '%s INFO setup: %s\n' "$(date +%Y%m%d-%H%M%S)" "$*"; }

DEB_PACKAGES=(mariadb-server mariadb-client mariadb-backup galera-4 sysbench
              percona-toolkit libdbd-mysql-perl rsync socat python3-venv procps strace mariadb-test)
DEB_PACKAGES+=(iproute2 nftables)  # network = 'namespaces': ip netns, veth, bridge, nft, tc
# debuggers and wrappers for --valgrind, --rr, --gdb, --manual-gdb, --libeatmydata (docs/debugging.md)
DEB_PACKAGES+=(valgrind rr gdb gdbserver eatmydata)
DEB_PACKAGES+=(patch)  # --mode=mtr applies mysql-test's .rdiff result files with patch
DEB_PACKAGES+=(chromium chromium-driver)  # tests drive the history page in a real browser (docs/history.md)
DEB_PACKAGES+=(galera-arbitrator-4)  # garbd: server_requests arbitrator, mtr's MTR_GARBD_EXE (docs/galera.md)
# mysqlclient (the C client the randgen engine runs its statements through) is built by pip
DEB_PACKAGES+=(libmariadb-dev pkg-config gcc python3-dev)
DEB_PACKAGES+=(mariadb-plugin-rocksdb)  # sweeps: the RocksDB engine (MyRocks; docs/sysbench.md)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install Debian packages: ${missing[*]}" >&2
    exit 2
  fi
  log "installing Debian packages: ${missing[*]}"
  policy=/usr/sbin/policy-rc.d
  had_policy=0
  if [ -e "$policy" ]; then had_policy=1; cp -p "$policy" "$policy.kewpie-saved"; fi
  printf '#!/bin/sh\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  restore_policy() {
    if [ "$had_policy" = 1 ]; then mv -f "$policy.kewpie-saved" "$policy"; else rm -f "$policy"; fi
  }
  trap restore_policy EXIT
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  restore_policy
  trap - EXIT
  # Belt and braces: the distribution's service must not be running.
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet mariadb 2>/dev/null; then
    systemctl stop mariadb || true
  fi
fi

PY="${PYTHON:-python3}"
stamp=.venv/.kewpie-deps
if [ ! -x .venv/bin/python ]; then
  log "creating virtual environment .venv"
  "$PY" -m venv .venv
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] \
   || ! (cd / && "$here/.venv/bin/python" -c 'import kewpie.cli' 2>/dev/null); then
  log "installing Python packages into .venv"
  .venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
  touch "$stamp"
fi
# Bytecode for kewpie's own modules: with PYTHONDONTWRITEBYTECODE set, every command would
# otherwise compile lib/ from source (~60 ms of `./kewpie.py --help`, docs/startup.md).
# compileall writes the .pyc files whatever that variable says, and skips up-to-date ones.
.venv/bin/python -m compileall -q lib

# A second MariaDB code tree beside the installed one, for the suites that run several
# (upgrade, replication_mixed, galera_rolling_upgrade) and version-against-version sweeps:
# the other build bookworm serves (10.11.18 beside the security update 10.11.19), unpacked
# into trees/<version>/ (git-ignored) by scripts/get-tree.  KEWPIE_SECOND_TREE=VERSION
# picks another one; KEWPIE_SECOND_TREE=none skips it.
other_mariadb_version() {
  local installed
  installed="$(dpkg-query -W -f='${Version}' mariadb-server-core 2>/dev/null | sed 's/^[0-9]*://; s/-.*//')"
  apt-cache madison mariadb-server-core 2>/dev/null | awk -F' *[|] *' '{print $2}' \
    | sed 's/^[0-9]*://; s/-.*//' | grep -vx "$installed" | sort -V | head -1
}
second="${KEWPIE_SECOND_TREE:-}"
if [ -z "$second" ]; then
  second="$(other_mariadb_version)"
  if [ -z "$second" ] && [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq >/dev/null 2>&1 || true
    second="$(other_mariadb_version)"
  fi
fi
if [ "$second" = none ]; then
  :
elif [ -n "$second" ]; then
  scripts/get-tree "$second"
else
  log "WARNING: apt offers no other MariaDB build than the installed one: no second code tree (suites upgrade, replication_mixed, galera_rolling_upgrade need one: scripts/get-tree VERSION)"
fi
