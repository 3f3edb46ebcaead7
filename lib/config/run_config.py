"""The one run-config object every part of the harness reads: the sections every run
has, and the chosen mode's own."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TypeVar

from .sections import ROOT, Debugging, History, Reporting, Selection, Servers, Tools


@dataclass
class ModeSection:
    """A mode's own section of the configuration (its folder under lib/modes/ declares
    it, a subclass with at most 15 fields); the plain one: a mode without settings."""


SectionT = TypeVar("SectionT", bound=ModeSection)


@dataclass
class RunConfig:
    """Everything a run was asked to do (built from the command line, a config file,
    or the pytest plugin's options)."""

    mode: str = "native"
    workdir: str = os.path.join(ROOT, "workdir")
    root: str = ROOT
    start_and_exit: bool = False  # leave the first test's servers running, exit
    # what the user trusts on purpose (--trust, safe-directories): lib/platform/trustedpath.py
    trusted: tuple[str, ...] = ()
    selection: Selection = field(default_factory=Selection)
    servers: Servers = field(default_factory=Servers)
    reporting: Reporting = field(default_factory=Reporting)
    debugging: Debugging = field(default_factory=Debugging)
    tools: Tools = field(default_factory=Tools)
    history: History = field(default_factory=History)
    mode_section: ModeSection = field(default_factory=ModeSection)

    def section(self, kind: type[SectionT]) -> SectionT:
        """The mode's section of type kind: the run's, or kind's defaults when the run's
        mode is another (a run of mode M reads only M's section)."""
        if isinstance(self.mode_section, kind):
            return self.mode_section
        return kind()

    def paths_at(self, name: str) -> list[str]:
        """The paths the field name holds, given as ``section.field``: a section every run
        has (``servers.basedir``), or a mode's name for its own section (``hunt.grammars``:
        none when this run is of another mode).  The paths a way in checks over its table
        of path options (lib/platform/pathoptions.py); KeyError for a field the section
        does not have (a renamed field fails, it never reads as empty)."""
        section, _, key = name.partition(".")
        own = vars(self)
        if section in own and section != "mode_section":
            holder = own[section]
        elif section == self.mode:
            holder = self.mode_section
        else:  # another mode's section: not this run's
            return []
        value = vars(holder)[key]
        values = [value] if isinstance(value, str) else list(value)
        return [v for v in values if v]
