"""The paths a user trusts on purpose: ``safe-directories`` in their own kewpie config.

The file is ``$XDG_CONFIG_HOME/kewpie/config.toml``, else
``~/.config/kewpie/config.toml`` (``~``: ``$HOME``, the invoking user's; under
sudo, whichever home sudo kept).  It is the user's own, never a file of the
folder being trusted: kewpie.toml files (the checkout's, a suite tree's) cannot
trust anything.  The file itself must pass the trust rule
(lib/platform/trustedpath.py): a config that another user could write would let
them trust their own folders.  Its one setting::

    safe-directories = ["/srv/qa/suites", "~/findings"]

Each entry is a path (absolute, or under ``~``) accepted as it is, with
everything under it, like ``--trust PATH`` on the command line.  It is the file's
only key: a run's settings, the results history's DSN among them, are a
kewpie.toml's (lib/run/configfile.py), and a kewpie.toml cannot say
``safe-directories``.
"""
from __future__ import annotations

import os

from ..errors import UsageError
from .trustedpath import check_input

CONFIG_ENV = "XDG_CONFIG_HOME"
SAFE_DIRECTORIES = "safe-directories"


def user_config_path() -> str:
    """Where the invoking user's own kewpie config is (it may not exist)."""
    base = os.environ.get(CONFIG_ENV) or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "kewpie", "config.toml")


def safe_directories(path: str | None = None) -> tuple[str, ...]:
    """The paths ``safe-directories`` of the user's config lists (absolute); () when there
    is no such file.  UsageError (one line) for a file that is not trusted, not TOML, or
    whose setting is not a list of absolute or ``~`` paths."""
    path = path or user_config_path()
    if not os.path.lexists(path):
        return ()
    check_input(path, "your kewpie config", None)  # never trusted by what it says itself
    import tomllib  # only when the file exists
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read your kewpie config: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(k for k in data if k != SAFE_DIRECTORIES)
    if unknown:
        raise UsageError(f"{path}: unknown key {unknown[0]!r}: your kewpie config has "
                         f"{SAFE_DIRECTORIES} = [\"/path\", ...] only; a run's settings "
                         f"(history-dsn among them) go in a kewpie.toml, the store's "
                         f"password in KEWPIE_HISTORY_DSN (docs/configuration.md)")
    value = data.get(SAFE_DIRECTORIES, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{path}: {SAFE_DIRECTORIES} must be an array of paths")
    out = []
    for entry in value:
        expanded = os.path.expanduser(entry)
        if not os.path.isabs(expanded):
            raise UsageError(f"{path}: {SAFE_DIRECTORIES} entry {entry!r} must be an absolute "
                             f"path (or start with ~)")
        out.append(os.path.normpath(expanded))
    return tuple(out)
