"""Pristine datadir copies made ahead of need, so a reset renames instead of copying.

Right after a set starts, a background thread copies each server's template
(:class:`~lib.servers.bootstrap.BootstrapCache`) into ``<vardir>.spare`` while
the test runs.  When the set is reset, :meth:`SpareDatadirs.take` waits for
that thread (normally long done) and renames the spare into the new
vardir's ``data`` (same filesystem: one ``rename``).  A spare made for
another template (the next test has other bootstrap options) is not used.

Across runs: at a run's end each bot keeps a pristine copy of its first set's datadirs
in the workdir's /dev/shm tree (``spares/<bot>/var_sN``, with ``var_sN.template`` naming
the template it copies, written once the copy is whole), and the next run's first set
renames them in when the templates match: a warm start's datadir copy (~20 ms per server)
leaves the critical path for the previous run's exit.
"""
from __future__ import annotations

import os
import threading

from ..platform import safedirs
from ..platform.logsetup import get_logger
from .bootstrap import BootstrapCache

SPARE_SUFFIX = ".spare"
MARKER_SUFFIX = ".template"   # beside a kept datadir: the template it is a whole copy of


def spare_path(vardir: str) -> str:
    """Where the spare datadir of the server living in vardir is kept."""
    return vardir.rstrip(os.sep) + SPARE_SUFFIX


class SpareDatadirs:
    """The spare datadirs of one bot: made in one background thread, used once each."""

    def __init__(self, cache: BootstrapCache, keep_dir: str | None = None) -> None:
        """keep_dir: where datadirs are kept for the next run (None: not kept)."""
        self.cache = cache
        self.keep_dir = keep_dir
        self._thread: threading.Thread | None = None
        self._made: dict[str, str] = {}  # spare path -> template it copies (the thread's output)
        self._doomed: list[str] = []  # old vardirs renamed away, removed by the thread
        self.log = get_logger()

    def remove_later(self, vardir: str) -> None:
        """Rename an old vardir out of the way now; the next :meth:`prepare` thread
        removes it (a tree of ~45 MB: ~10 ms saved on the reset's critical path)."""
        self.wait()
        doomed = f"{vardir.rstrip(os.sep)}.old{len(self._doomed)}"
        if os.path.lexists(doomed):
            safedirs.remove_tree(doomed)
        os.rename(vardir, doomed)
        self._doomed.append(doomed)

    def prepare(self, wanted: list[tuple[str, str]]) -> None:
        """Start copying each (template, vardir) pair's template into the vardir's spare,
        unless a spare of that template is already there; remove old vardirs too."""
        self.wait()
        todo = [(template, spare_path(vardir)) for template, vardir in wanted
                if self._made.get(spare_path(vardir)) != template]
        doomed, self._doomed = self._doomed, []
        if not todo and not doomed:
            return
        self._thread = threading.Thread(target=self._copy, args=(todo, doomed), daemon=True,
                                        name="kewpie-spare-datadirs")
        self._thread.start()

    def _copy(self, todo: list[tuple[str, str]], doomed: list[str]) -> None:
        for path in doomed:
            safedirs.remove_tree(path, ignore_errors=True)
        for template, spare in todo:
            self._made.pop(spare, None)
            try:
                self.cache.copy_to(template, spare)
            except Exception:  # noqa: BLE001 - a spare is an optimisation: copy at reset instead
                self.log.debug("preparing spare datadir %s failed", spare, exc_info=True)
                safedirs.remove_tree(spare, ignore_errors=True)
                continue
            self._made[spare] = template

    def wait(self) -> None:
        """Block until the copying thread (if any) has finished."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def take(self, template: str, vardir: str, datadir: str) -> bool:
        """Move the spare of vardir into datadir if it copies template; False if there is
        none (the caller copies the template itself)."""
        self.wait()
        spare = spare_path(vardir)
        if self._made.get(spare) != template or not os.path.isdir(spare):
            return self._take_kept(template, vardir, datadir)
        del self._made[spare]
        if os.path.lexists(datadir):
            safedirs.remove_tree(datadir)
        os.rename(spare, datadir)
        return True

    def _kept_path(self, vardir: str) -> str | None:
        """Where the datadir kept for the server living in vardir is."""
        if self.keep_dir is None:
            return None
        return os.path.join(self.keep_dir, os.path.basename(vardir.rstrip(os.sep)))

    def _kept_copy_of(self, kept: str) -> str | None:
        """The template a kept datadir is a whole copy of (None: none, or unfinished)."""
        if not os.path.isdir(kept):
            return None
        text = safedirs.read_small_file(kept + MARKER_SUFFIX)
        return text.strip() if text else None

    def _take_kept(self, template: str, vardir: str, datadir: str) -> bool:
        """Move the datadir an earlier run kept for vardir into datadir if it copies
        template; False otherwise."""
        kept = self._kept_path(vardir)
        if kept is None or self._kept_copy_of(kept) != template:
            return False
        os.unlink(kept + MARKER_SUFFIX)  # used once; this run's end keeps another
        if os.path.lexists(datadir):
            safedirs.remove_tree(datadir)
        try:
            os.rename(kept, datadir)
        except OSError:  # another filesystem: copy as usual
            self.log.debug("renaming kept datadir %s failed", kept, exc_info=True)
            safedirs.remove_tree(kept, ignore_errors=True)
            return False
        self.log.debug("%s: the datadir kept by the last run", datadir)
        return True

    def keep_for_next_run(self, wanted: list[tuple[str, str]]) -> None:
        """End of run: keep a pristine copy of each (template, vardir) pair's template for
        the next run (copied now unless a whole one is kept already); remove the kept
        datadirs of other vardirs.  Failures only cost the next run its copy."""
        if self.keep_dir is None:
            return
        self.wait()
        names = set()
        for template, vardir in wanted:
            kept = self._kept_path(vardir)
            assert kept is not None
            names.add(os.path.basename(kept))
            if self._kept_copy_of(kept) == template:
                continue
            try:
                if os.path.lexists(kept + MARKER_SUFFIX):
                    os.unlink(kept + MARKER_SUFFIX)
                self.cache.copy_to(template, kept)
                safedirs.write_private_file(kept + MARKER_SUFFIX, template + "\n")
            except Exception:  # noqa: BLE001 - an optimisation: the next run copies instead
                self.log.debug("keeping datadir %s failed", kept, exc_info=True)
                safedirs.remove_tree(kept, ignore_errors=True)
        for name in os.listdir(self.keep_dir):
            base = name[:-len(MARKER_SUFFIX)] if name.endswith(MARKER_SUFFIX) else name
            if base not in names:
                safedirs.remove_tree(os.path.join(self.keep_dir, name), ignore_errors=True)

    def discard(self) -> None:
        """Wait for the thread and remove every spare and old vardir (end of run)."""
        self.wait()
        for path in [*self._made, *self._doomed]:
            safedirs.remove_tree(path, ignore_errors=True)
        self._made.clear()
        self._doomed.clear()
