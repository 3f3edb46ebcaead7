"""The run's configuration, typed in sections (issue 44): what a run was asked to do.

:class:`RunConfig` holds the sections every run has -- :class:`Selection` (which tests),
:class:`Servers` (the code tree and how servers run), :class:`Reporting` (the run's pace,
verdicts and reports), :class:`Debugging`, :class:`Tools` (programs and kewpie 2012's
options) and :class:`History` -- and the chosen mode's own section (a
:class:`ModeSection` its folder under ``lib/modes/`` declares), read with
:meth:`RunConfig.section`.  Each section holds at most 15 fields and is typed: no layer
reads the configuration through ``Any`` or ``getattr`` with a default (a house rule).

This package is in the bottom layer (it imports only :mod:`lib.home` and
:mod:`lib.platform.portbase`), so every layer may type what it reads with it; it is light
to import: ``kewpie.py --help`` reads its defaults from here.
"""
from __future__ import annotations

from .run_config import ModeSection, RunConfig
from .sections import (MAX_FIELDS, ROOT, Debugging, History, Reporting, Selection, Servers,
                       Tools)

__all__ = ("MAX_FIELDS", "ROOT", "Debugging", "History", "ModeSection", "Reporting",
           "RunConfig", "Selection", "Servers", "Tools")
