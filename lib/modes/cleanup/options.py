"""--mode=cleanup's options and its section of the configuration (docs/servers.md)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass

from ...config import ModeSection
from ..onoff import OnOff

NAME = "cleanup"


@dataclass
class CleanupOptions(ModeSection):
    """--mode=cleanup: what besides the workdir's servers goes."""

    drop_cache: bool = False    # --drop-cache: empty the cache of templates and snapshots


def add_options(p: argparse.ArgumentParser) -> None:
    """--mode=cleanup: --drop-cache."""
    g = p.add_argument_group("cleanup: with --mode=cleanup, what besides the workdir's "
                             "servers goes")
    g.add_argument("--drop-cache", action=OnOff, default=CleanupOptions.drop_cache,
                   help="also empty kewpie's cache of datadir templates and cluster snapshots "
                        "(in /dev/shm, shared by your workdirs; entries a run uses now stay)")


def misplaced(args: argparse.Namespace) -> str:
    """--drop-cache given to another mode."""
    if args.drop_cache and args.mode != NAME:
        return f"--drop-cache: only with --mode=cleanup; this run is --mode={args.mode}"
    return ""


def section(args: argparse.Namespace) -> CleanupOptions:
    """The cleanup section of the parsed options."""
    return CleanupOptions(drop_cache=bool(args.drop_cache))
