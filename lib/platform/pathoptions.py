"""What each option that takes a path is to kewpie, and the check each kind gets.

Every way in declares a table of its path options (lib/cli.py ``PATH_TABLE``,
lib/pytest_plugin/options.py, lib/history/commands.py), option name to
:class:`PathOption`, and runs :func:`check_paths` over it before anything runs:

- ``input``: code, configuration or a tree to run (a suite folder, a config
  file, a code tree, a grammar): the trust rule (lib/platform/trustedpath.py
  ``check_input``), the path alone or the whole tree under it;
- ``output``: a folder or file kewpie writes (lib/platform/safewrite.py: its
  way checked now, written without following links later);
- ``data``: read or written as data only, never run (a timings file, the
  history's SQLite store, the trust list itself);
- ``own``: a folder with a check of its own that already follows the same
  rule (the workdir: lib/platform/workdir.py; the lock directory:
  lib/platform/ports.py).

tests/unit/test_path_options.py lists every option of the three parsers that
takes a path and fails when one is missing from its table.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Iterable, Mapping

from .safewrite import check_output
from .trustedpath import Trust, check_input


class PathRole(StrEnum):
    """What a path option is to kewpie (the module docstring)."""

    input = "input"
    output = "output"
    data = "data"
    own = "own"


class PathShape(StrEnum):
    """What the check looks at."""

    path = "path"      # the path and the way to it (a file, or a folder whose parts
                       # are checked where they are used: a code tree's programs)
    tree = "tree"      # the folder and everything under it
    folder = "folder"  # an output folder (made fresh, or kewpie's from before)
    file = "file"      # an output file


@dataclass(frozen=True)
class PathOption:
    """One option that takes a path: its role, its shape and where its value lives
    (the field of the settings; '' when the option's check lives elsewhere)."""

    role: PathRole
    shape: PathShape = PathShape.path
    fields: tuple[str, ...] = ()
    note: str = ""
    what: str = ""  # its name in messages ('' = --<option>)


INPUT_PATH = PathOption(PathRole.input)
INPUT_TREE = PathOption(PathRole.input, PathShape.tree)
OUTPUT_FOLDER = PathOption(PathRole.output, PathShape.folder)
OUTPUT_FILE = PathOption(PathRole.output, PathShape.file)
DATA = PathOption(PathRole.data)
OWN = PathOption(PathRole.own)


def check_paths(table: Mapping[str, PathOption], values: Mapping[str, Iterable[str]],
                trust: Trust) -> None:
    """Check every value of the table's options (values: option name -> its paths, as
    absolute paths): inputs with the trust rule, outputs' ways and what is there;
    UntrustedPathError or UnsafeOutputError (one line) for the first that fails."""
    for option, spec in table.items():
        for path in values.get(option, ()):
            if not path:
                continue
            what = spec.what or f"--{option}"
            if spec.role is PathRole.input:
                check_input(path, what, trust, tree=spec.shape is PathShape.tree)
            elif spec.role is PathRole.output:
                check_output(path, what, trust, folder=spec.shape is not PathShape.file)
