"""Pristine datadirs kept from one run for the next (lib/servers/spare.py).

Covers: lib/servers/spare.py (SpareDatadirs.keep_for_next_run, take)
"""
import os
import shutil

from lib.servers.spare import MARKER_SUFFIX, SpareDatadirs


class CopyingCache:
    """Stands for BootstrapCache: copy_to copies a template directory."""

    def __init__(self):
        self.copies = []

    def copy_to(self, template, datadir):
        self.copies.append(datadir)
        if os.path.lexists(datadir):
            shutil.rmtree(datadir)
        shutil.copytree(template, datadir)


def _template(tmp_path, name):
    path = tmp_path / "cache" / name / "data"
    path.mkdir(parents=True)
    (path / "ibdata1").write_text(name)
    return str(path)


def _setup(tmp_path):
    keep = tmp_path / "spares" / "bot0"
    keep.mkdir(parents=True)
    bot = tmp_path / "bot0"
    bot.mkdir()
    return str(keep), str(bot)


def test_the_next_run_renames_what_the_last_one_kept(tmp_path):
    keep, bot = _setup(tmp_path)
    template = _template(tmp_path, "t1")
    vardir = os.path.join(bot, "var_s0")
    cache = CopyingCache()
    SpareDatadirs(cache, keep).keep_for_next_run([(template, vardir)])
    kept = os.path.join(keep, "var_s0")
    assert open(kept + MARKER_SUFFIX).read().strip() == template
    assert open(os.path.join(kept, "ibdata1")).read() == "t1"

    nxt = SpareDatadirs(CopyingCache(), keep)            # the next run
    datadir = os.path.join(vardir, "data")
    os.makedirs(vardir)
    assert nxt.take(template, vardir, datadir)
    assert open(os.path.join(datadir, "ibdata1")).read() == "t1"
    assert os.listdir(keep) == []                          # used once: marker gone too
    assert not nxt.take(template, vardir, datadir + "2")   # nothing left to take


def test_a_kept_datadir_of_another_template_is_not_used_and_is_replaced(tmp_path):
    keep, bot = _setup(tmp_path)
    t1, t2 = _template(tmp_path, "t1"), _template(tmp_path, "t2")
    vardir = os.path.join(bot, "var_s0")
    SpareDatadirs(CopyingCache(), keep).keep_for_next_run([(t1, vardir)])
    spares = SpareDatadirs(CopyingCache(), keep)
    assert not spares.take(t2, vardir, os.path.join(vardir, "data"))
    spares.keep_for_next_run([(t2, vardir)])
    assert open(os.path.join(keep, "var_s0", "ibdata1")).read() == "t2"


def test_an_unfinished_copy_is_never_taken(tmp_path):
    keep, bot = _setup(tmp_path)
    template = _template(tmp_path, "t1")
    vardir = os.path.join(bot, "var_s0")
    os.makedirs(os.path.join(keep, "var_s0"))             # copy killed before its marker
    assert not SpareDatadirs(CopyingCache(), keep).take(template, vardir,
                                                       os.path.join(vardir, "data"))


def test_a_whole_kept_copy_is_not_copied_again_and_others_are_removed(tmp_path):
    keep, bot = _setup(tmp_path)
    template = _template(tmp_path, "t1")
    pairs = [(template, os.path.join(bot, f"var_s{i}")) for i in range(2)]
    SpareDatadirs(CopyingCache(), keep).keep_for_next_run(pairs)
    cache = CopyingCache()
    SpareDatadirs(cache, keep).keep_for_next_run(pairs[:1])
    assert cache.copies == []                               # var_s0's copy was whole
    assert sorted(os.listdir(keep)) == ["var_s0", "var_s0" + MARKER_SUFFIX]


def test_nothing_is_kept_without_a_place(tmp_path):
    cache = CopyingCache()
    spares = SpareDatadirs(cache)
    spares.keep_for_next_run([(_template(tmp_path, "t1"), str(tmp_path / "var_s0"))])
    assert cache.copies == []
    assert not spares.take("t1", str(tmp_path / "var_s0"), str(tmp_path / "data"))
