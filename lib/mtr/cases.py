"""Finding mysql-test cases as mysql-test-run does (lib/mtr_cases.pm).

A suite is ``<mtr root>/main`` or ``<mtr root>/suite/<name>`` (tests in ``t/``
or the suite directory, results in ``r/``).  For each test: ``disabled.def``,
the tags and options of the test and of every file it sources (``.opt``,
``-master.opt``, ``-slave.opt``, ``.combinations``; ``big_test.inc``,
``master-slave.inc``), the suite's ``suite.opt`` and ``combinations``, a
test's own ``.cnf`` or the suite's ``my.cnf`` (``rpl``'s for replication
tests, ``include/default_my.cnf`` otherwise), and the result file (the most
specific ``name,comb.result``).  The skip lists of the suites' ``suite.pm``
files are Perl: :mod:`lib.mtr.suite_rules` reads what they decide.  Without a
suite, the suites are mtr's default list (``DEFAULT_SUITES`` and the plugin
suites that say so); combinations are made as mtr's ``make_combinations``
makes them.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Iterable

from ..errors import SuiteError, UsageError
from .cnf import MtrConfig
from ..platform.suite_names import check_suite_name, display_name
from ..servers.requirements import Requirements
from .suite_rules import BuildFacts, default_suites, suite_skip

SOURCE = re.compile(r"^\s*(?:--)?\s*source\s+([^;\s]+)")
TAGS = MappingProxyType({"big_test": "big_test", "master-slave": "rpl_test",
                         "long_test": "long_test"})
TAG_RE = re.compile(r"include/(big_test|master-slave|long_test)\.inc")
RESULT_TAIL = re.compile(r"^((?:,[\w.+-]+)*)\.(rdiff|result)$")
DISABLED_LINE = re.compile(r"^\s*(?:([-0-9A-Za-z_/]+)\.)?([-0-9A-Za-z_#*]+)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class Combination:
    """One ``[name]`` of a .combinations file and its options."""

    name: str
    options: tuple[str, ...]


@dataclass
class MtrCase:
    """One test to run (one combination of it): what it needs and where its files are."""

    suite: str
    name: str
    path: str
    suite_dir: str
    result_file: str | None
    record_file: str
    template: str
    master_opt: list[str] = field(default_factory=list)
    slave_opt: list[str] = field(default_factory=list)
    combinations: tuple[str, ...] = ()
    skip: str = ""
    timezone: str = "DEFAULT"
    rpl_test: bool = False
    big_test: bool = False
    base_result: str | None = None
    scripts: tuple[str, ...] = ()   # <test>-master.sh / -slave.sh, run before servers start
    overlay_dir: str = ""           # an overlay suite's directory (suite_dir: its parent's)

    @property
    def full_name(self) -> str:
        """``suite.test`` plus ``,comb`` for each combination (as mtr accepts names)."""
        return ".".join((self.suite, self.name)) + "".join(f",{c}" for c in self.combinations)

    @property
    def requirements(self) -> Requirements:
        """A key for scheduling: tests with equal keys can share servers (the bot's
        servers are resolved from it by the runner)."""
        opts = (("template", self.template), ("tz", self.timezone),
                ("master", tuple(self.master_opt)), ("slave", tuple(self.slave_opt)))
        # a key only (the runner builds the servers): its "options" are the case's settings
        return Requirements(server_type="mtr", servers=(tuple(opts),))  # type: ignore[arg-type]


# ---------------------------------------------------------------------- files
def opts_from_file(path: str) -> list[str]:
    """The options of an .opt file, split as mtr splits them (quotes keep spaces); bytes
    that are not UTF-8 are kept (as surrogates) and reach the server unchanged."""
    try:
        with open(path, errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    args: list[str] = []
    for line in lines:
        line = line.strip()
        protected = re.sub(r"'([^'\"]*)'", lambda m: "\x0a" + m.group(1).replace(" ", "\x11").replace("\t", "\x11") + "\x0a", line)
        protected = re.sub(r'"([^\'"]*)"', lambda m: "\x0b" + m.group(1).replace(" ", "\x11").replace("\t", "\x11") + "\x0b", protected)
        for arg in re.split(r"[ \t]+", protected):
            arg = arg.replace("\x11", " ").replace("\x0a", "'").replace("\x0b", '"')
            m = re.match(r"^([^'\"]*)'(.*)'([^'\"]*)$", arg) or re.match(r'^([^\'"]*)"(.*)"([^\'"]*)$', arg)
            if m:
                arg = m.group(1) + m.group(2) + m.group(3)
            arg = arg.replace("\\\\", "\\")
            if arg:
                args.append(arg)
    return args


def combinations_from_file(path: str, skips: dict[str, object]) -> list[Combination] | str | None:
    """The combinations of a file; a str is a skip reason for every test using it;
    None when there is no such file (and no skip rule)."""
    rule = skips.get(path)
    if isinstance(rule, str):
        return rule
    if not os.path.isfile(path):
        return None
    config = MtrConfig.read(path)
    skipped = rule if isinstance(rule, (list, tuple)) else ()
    def arg(name: object, value: str | None) -> str:
        """A combination's option as mtr passes it (one leading --)."""
        text = "--" + str(name).lstrip("-")
        return text if value is None else f"{text}={value}"
    combs = [Combination(g.name, tuple(arg(n, v) for n, v in g.options))
             for g in config.groups if g.name not in ("ENV", "OPT") and g.name not in skipped]
    if not combs:
        return "Requires: " + os.path.basename(path).removesuffix(".combinations")
    return combs


def parse_disabled(path: str, suite: str) -> dict[str, str]:
    """``disabled.def``: {suite.test or suite.wild*card: reason}."""
    out: dict[str, str] = {}
    try:
        with open(path, errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return out
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = DISABLED_LINE.match(line)
        if m:
            out[f"{m.group(1) or suite}.{m.group(2)}"] = m.group(3)
    return out


@dataclass
class Scan:
    """Tags, options and combinations of one file and everything it sources."""

    tags: set[str] = field(default_factory=set)
    master: list[str] = field(default_factory=list)
    slave: list[str] = field(default_factory=list)
    combinations: list[list[Combination] | str] = field(default_factory=list)
    in_overlay: bool = False   # something of it comes from an overlay's directory


class Scanner:
    """Scans test files recursively, each file once (as mtr's get_tags_from_file).

    overlay: (overlay directory, parent suite directory) when scanning for an overlay
    suite -- a file of either then looks for its includes, options and combinations in
    the overlay first, as mtr's does."""

    def __init__(self, mtr_root: str, skips: dict[str, object],
                 overlay: tuple[str, str] | None = None) -> None:
        self.mtr_root = mtr_root
        self.skips = skips
        self.overlay = overlay
        self.cache: dict[str, Scan] = {}

    def _twins(self, path: str) -> list[str]:
        """path and its overlay twin: [overlay's, parent's] for a file of either, else [path]."""
        if self.overlay is None:
            return [path]
        for top in self.overlay:
            if path.startswith(top + os.sep):
                rel = os.path.relpath(path, top)
                return [os.path.join(self.overlay[0], rel), os.path.join(self.overlay[1], rel)]
        return [path]

    def scan(self, path: str, suite_dir: str) -> Scan:
        """Tags, options, combinations of path (test or include file)."""
        if path in self.cache:
            return self.cache[path]
        result = Scan()
        self.cache[path] = result  # a file sourcing itself ends here
        try:
            with open(path, errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return result
        twins = self._twins(path)
        bases = [os.path.dirname(t) for t in twins] + [suite_dir, *(self.overlay or ()),
                                                      self.mtr_root]
        result.in_overlay = self.overlay is not None and path.startswith(self.overlay[0] + os.sep)
        for line in lines:
            if line.startswith("#"):
                continue
            if "source" not in line:
                continue
            tag = TAG_RE.search(line)
            if tag:
                result.tags.add(TAGS[tag.group(1)])
            m = SOURCE.match(line)
            if m:
                include = m.group(1)
                for base in bases:
                    candidate = os.path.join(base, include)
                    if candidate != path and os.path.exists(candidate):
                        sub = self.scan(candidate, suite_dir)
                        result.tags |= sub.tags
                        result.master += sub.master
                        result.slave += sub.slave
                        result.combinations += sub.combinations
                        result.in_overlay |= sub.in_overlay
                        break
        stems = [t.rsplit(".", 1)[0] for t in twins]
        for suffix in (".opt", "-master.opt", "-slave.opt"):
            opts = [o for stem in reversed(stems) for o in opts_from_file(stem + suffix)]
            if len(stems) > 1 and os.path.isfile(stems[0] + suffix):
                result.in_overlay = True
            if "slave" not in suffix:
                result.master += opts
            if "master" not in suffix:
                result.slave += opts
        found = [c for c in (combinations_from_file(stem + ".combinations", self.skips)
                             for stem in stems) if c is not None]
        if len(stems) > 1 and os.path.isfile(stems[0] + ".combinations"):
            result.in_overlay = True
        if found:   # the overlay's and the parent's (a skip reason of either wins)
            reason = next((c for c in found if isinstance(c, str)), None)
            result.combinations.append(reason if reason is not None else [
                c for group in found if not isinstance(group, str) for c in group])
        # mtr stores a file's lists through 'sort ::uniq(@combinations)': uniq there is
        # sort's comparison sub, which always answers 'greater', so the lists come out
        # reversed (the file's own last-read list first), duplicates kept
        result.combinations.reverse()
        return result


# ---------------------------------------------------------------------- suites
@dataclass
class MtrSuite:
    """A suite's directories and suite-wide settings."""

    name: str
    dir: str
    tdir: str
    rdir: str
    opts: list[str]
    combinations: list[Combination] | str | None
    disabled: dict[str, str]
    skip: str = ""   # why its suite.pm skips every test of it ('' = it runs)
    parent: MtrSuite | None = None   # an overlay's suite (mtr's 'archive-test_sql_discovery')
    all_in_overlay: bool = False      # the overlay has its own suite.opt: all its tests count

    def results_for(self, test: str) -> list[str]:
        """Paths of the result-dir files whose name starts with test (listed once; an
        overlay's own first, then its parent's)."""
        if self.parent is not None:
            own = self._own_results(test) if self.rdir else []
            return own + self.parent.results_for(test)
        return self._own_results(test)

    def _own_results(self, test: str) -> list[str]:
        if not hasattr(self, "_results"):
            by_first: dict[str, list[str]] = {}
            try:
                names = os.listdir(self.rdir)
            except OSError:
                names = []
            for name in names:
                if name.endswith((".result", ".rdiff")):
                    by_first.setdefault(re.split(r"[,.]", name, maxsplit=1)[0], []).append(name)
            self._results = by_first
        return [os.path.join(self.rdir, n) for n in self._results.get(test, [])]

    def test_names(self) -> list[str]:
        """Every ``*.test`` in the test directory (an overlay's and its parent's), sorted."""
        names = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(self.tdir, "*.test"))} \
            if self.tdir else set()
        if self.parent is not None:
            names |= set(self.parent.test_names())
        return sorted(names)

    def find(self, name: str) -> str:
        """A file of the test directory: the overlay's own, else its parent's ('' if none)."""
        for tdir in (self.tdir, self.parent.tdir if self.parent else ""):
            if tdir and os.path.isfile(os.path.join(tdir, name)):
                return os.path.join(tdir, name)
        return ""


def overlay_dirs(mtr_root: str, name: str, own_dir: str) -> list[tuple[str, str]]:
    """(plugin, directory) of every overlay of suite name: ``plugin/<plugin>/<name>``
    directories other than the suite's own (mtr's ``main-``, ``archive-`` take them)."""
    own = os.path.realpath(own_dir)
    return [(os.path.basename(os.path.dirname(d)), d)
            for d in sorted(glob.glob(os.path.join(glob.escape(mtr_root), "plugin", "*", name)))
            if os.path.isdir(d) and os.path.realpath(d) != own]


def load_overlay(parent: MtrSuite, plugin: str, directory: str, skips: dict[str, object],
                 facts: BuildFacts | None) -> MtrSuite:
    """Overlay suite ``<parent>-<plugin>`` (mtr's process_suite with a parent): its test
    and result directories are the parent's, moved into the overlay (when there);
    suite.opt and combinations add to the parent's."""
    def moved(path: str) -> str:
        """path of the parent's tree, inside the overlay ('' when not there)."""
        rel = os.path.relpath(path, parent.dir)
        target = directory if rel == "." else os.path.join(directory, rel)
        return target if os.path.isdir(target) else ""
    name = f"{parent.name}-{plugin}"
    disabled = parse_disabled(os.path.join(directory, "disabled.def"), name)
    disabled.update(parse_disabled(os.path.join(directory, "t", "disabled.def"), name))
    own_opts = opts_from_file(os.path.join(directory, "suite.opt"))
    own = combinations_from_file(os.path.join(directory, "combinations"), skips)
    combinations: list[Combination] | str | None = parent.combinations
    if isinstance(own, str) or (own and not isinstance(parent.combinations, list)):
        combinations = own
    elif own:
        assert isinstance(parent.combinations, list)
        combinations = parent.combinations + own
    skip = suite_skip(directory, facts) if facts is not None else ""
    return MtrSuite(name, directory, moved(parent.tdir), moved(parent.rdir),
                    parent.opts + own_opts, combinations, disabled, skip or parent.skip,
                    parent=parent, all_in_overlay=bool(own_opts))


def suite_dir(mtr_root: str, name: str, suitepaths: Iterable[str] = ()) -> str:
    """Where suite name lives, as mysql-test-run looks (``main``, ``suite/<name>`` --
    ``compat/oracle`` included --, ``plugin/*/<name>``), then in the --suitepath
    directories; a path only when it is a directory given through --suitepath
    (:mod:`lib.platform.suite_names`).  UsageError naming the places searched."""
    paths = list(suitepaths)
    given = check_suite_name(name, paths, nested=True)
    if given is not None:
        return given
    candidates = [os.path.join(mtr_root, "main")] if name == "main" else [
        os.path.join(mtr_root, "suite", name),
        *sorted(glob.glob(os.path.join(glob.escape(mtr_root), "plugin", "*", name))),
        os.path.join(mtr_root, "plugin", name), *(os.path.join(p, name) for p in paths)]
    for candidate in candidates:
        if candidate and os.path.isdir(candidate):
            return os.path.abspath(candidate)
    raise UsageError(f"mtr suite {name!r} not found under {mtr_root} (looked in main/, "
                     f"suite/{name} and plugin/*/{name}) or the --suitepath directories; "
                     f"see --mtr-root")


def load_suite(mtr_root: str, name: str, skips: dict[str, object],
               suitepaths: Iterable[str] = (), facts: BuildFacts | None = None) -> MtrSuite:
    """A suite's directories, suite.opt, combinations and disabled tests, and why its
    suite.pm skips it (with facts)."""
    directory = suite_dir(mtr_root, name, suitepaths)
    tdir = os.path.join(directory, "t")
    tdir = tdir if os.path.isdir(tdir) else directory
    rdir = os.path.join(directory, "r")
    rdir = rdir if os.path.isdir(rdir) else tdir
    short = display_name(name)
    disabled = parse_disabled(os.path.join(directory, "disabled.def"), short)
    disabled.update(parse_disabled(os.path.join(directory, "t", "disabled.def"), short))
    skip = suite_skip(directory, facts) if facts is not None else ""
    combinations = None if skip else combinations_from_file(
        os.path.join(directory, "combinations"), skips)
    return MtrSuite(short, directory, tdir, rdir, opts_from_file(os.path.join(directory, "suite.opt")),
                    combinations, disabled, skip)


def split_name(text: str) -> tuple[str | None, str, list[str]]:
    """``suite.test,comb`` -> (suite or None, test, combinations)."""
    if text.endswith(".test"):
        text = os.path.basename(text)[:-5]
    base, *combs = text.split(",")
    parts = base.split(".")
    if len(parts) == 1:
        return None, parts[0], combs
    if len(parts) == 2:
        return parts[0], parts[1], combs
    raise UsageError(f"illegal mtr test name {text!r} (expected test, suite.test or "
                     f"suite.test,combination)")


@dataclass
class Collector:
    """Builds MtrCases for tests of suites."""

    mtr_root: str
    skips: dict[str, object]
    big_test: bool = False
    enable_disabled: bool = False
    suitepaths: tuple[str, ...] = ()   # --suitepath: searched after the mtr tree
    facts: BuildFacts | None = None    # for the suite.pm files' conditions

    def __post_init__(self) -> None:
        self.scanner = Scanner(self.mtr_root, self.skips)
        self.scanners: dict[str, Scanner] = {}   # an overlay's own (mtr's local caches)
        self.suites: dict[str, MtrSuite] = {}

    def suite(self, name: str) -> MtrSuite:
        """The suite called name (loaded once); a directory given through --suitepath
        names a suite outside the mtr tree (called by its last component);
        ``<suite>-<plugin>`` is an overlay of suite."""
        short = display_name(name)
        if short not in self.suites:
            base, dash, plugin = short.partition("-")
            if dash and plugin and not self._named_suite(short):
                parent = self.suite(base)
                found = dict(overlay_dirs(self.mtr_root, base, parent.dir))
                if plugin not in found:
                    raise UsageError(f"mtr suite {short!r}: no overlay {plugin!r} of {base!r} "
                                     f"(plugin/{plugin}/{base} under {self.mtr_root})")
                self.suites[short] = load_overlay(parent, plugin, found[plugin], self.skips,
                                                  self.facts)
                self.scanners[short] = Scanner(self.mtr_root, self.skips,
                                               (found[plugin], parent.dir))
            else:
                self.suites[short] = load_suite(self.mtr_root, name, self.skips,
                                                self.suitepaths, self.facts)
        return self.suites[short]

    def _named_suite(self, name: str) -> bool:
        """Whether name is a suite of its own (a name with '-' that is no overlay)."""
        try:
            suite_dir(self.mtr_root, name, self.suitepaths)
        except UsageError:
            return False
        return True

    def expand(self, spec: str) -> list[str]:
        """The suites a suite name stands for, as mtr reads it: ``name``; ``name-``, the
        suite and its overlays (the default list's form); ``name-plugin``, one overlay."""
        base, dash, plugin = spec.partition("-")
        if not dash or self._named_suite(spec):
            return [spec]
        if plugin:
            return [spec]
        parent = self.suite(base)
        return [base, *(f"{base}-{p}" for p, _ in overlay_dirs(self.mtr_root, base,
                                                                parent.dir))]

    def default_suites(self) -> list[str]:
        """mtr's default suite list for this tree and build (``main`` alone without the
        build's facts)."""
        if self.facts is None:
            return ["main"]
        return default_suites(self.mtr_root, self.facts)

    def collect(self, suites: list[str], names: list[str]) -> list[MtrCase]:
        """Cases for names (in the order given) or, without names, every test of suites
        (mtr's default list when none is given).  A name without a suite is looked for
        in every suite, as mtr looks."""
        suites = [self.suite(s).name for spec in (suites or self.default_suites())
                  for s in self.expand(spec)]
        cases: list[MtrCase] = []
        if not names:
            for sname in suites:
                suite = self.suite(sname)
                for tname in suite.test_names():
                    cases += self.one(suite, tname, [])
            return cases
        for text in names:
            named, tname, combs = split_name(text)
            found = False
            for candidate in ([named] if named else suites):
                suite = self.suite(candidate)
                if suite.find(tname + ".test"):
                    cases += self.one(suite, tname, combs)
                    found = True
            if not found:
                raise UsageError(f"mtr test {text!r} not found in suite(s) "
                                 f"{', '.join([named] if named else suites)}")
        return cases

    def one(self, suite: MtrSuite, tname: str, wanted: Iterable[str]) -> list[MtrCase]:
        """The case(s) of one test: one per combination (or one, skipped, with a reason);
        none for a test of an overlay's parent that the overlay does not change."""
        parent = suite.parent
        path = suite.find(tname + ".test")
        rdir = suite.rdir or (parent.rdir if parent else suite.rdir)
        case = MtrCase(suite=suite.name, name=tname, path=path,
                       suite_dir=parent.dir if parent else suite.dir,
                       result_file=None, record_file=os.path.join(rdir, tname + ".result"),
                       template="", master_opt=list(suite.opts), slave_opt=list(suite.opts),
                       overlay_dir=suite.dir if parent else "")
        full = f"{suite.name}.{tname}"
        if parent is not None and not self._in_overlay(suite, tname, path, case.suite_dir):
            return []   # mtr keeps only the cases an overlay changes
        disabled = self._disabled(suite, tname)
        if disabled is not None and not self.enable_disabled:
            case.skip = f"disabled: {disabled}"
            return [case]
        if suite.skip:
            case.skip = suite.skip
            return [case]
        scan = self.scanners.get(suite.name, self.scanner).scan(path, case.suite_dir)
        case.rpl_test = "rpl_test" in scan.tags
        case.big_test = "big_test" in scan.tags
        if case.big_test and not self.big_test:
            case.skip = "Test needs --big-test"
            return [case]
        case.scripts = tuple(p for p in (suite.find(f"{tname}-master.sh"),
                                         suite.find(f"{tname}-slave.sh")) if p)
        case.template = self._template(suite, tname, case.rpl_test)
        _add_scanned_options(case, scan)
        cases = [case]
        forced = {name: 1 for name in wanted}   # mtr's %test_combs: 1 named, 2 used
        for combs in [suite.combinations, *scan.combinations]:
            if combs is None:
                continue
            cases = [c for base in cases for c in make_combinations(base, forced, combs)]
        unused = sorted(name for name, state in forced.items() if state == 1)
        if unused:
            raise UsageError(f"could not run {full} with '{','.join(unused)}' combination(s)")
        for c in cases:
            self._result_file(suite, c)
        return cases

    def _in_overlay(self, suite: MtrSuite, tname: str, path: str, suite_dir: str) -> bool:
        """Whether overlay suite changes its parent's test tname: all its tests do, or it
        has a file of the test's own, or the test includes one of the overlay's files."""
        return bool(suite.all_in_overlay or any(
            suite.tdir and os.path.isfile(os.path.join(suite.tdir, tname + suffix))
            for suffix in (".test", ".cnf", "-master.sh", "-slave.sh"))
            or self.scanners[suite.name].scan(path, suite_dir).in_overlay)

    @staticmethod
    def _disabled(suite: MtrSuite, tname: str) -> str | None:
        """Why the suite's (or its parent's) disabled.def disables tname, if it does (by
        name, then by a pattern with ``*``)."""
        full = f"{suite.name}.{tname}"
        parent = suite.parent
        disabled = suite.disabled.get(full)
        if disabled is None and parent is not None:
            disabled = parent.disabled.get(f"{parent.name}.{tname}")
        if disabled is None:
            for pattern, reason in suite.disabled.items():
                if "*" in pattern and re.match("^" + pattern.replace("*", ".*"), full):
                    disabled = reason
                    break
        return disabled

    def _template(self, suite: MtrSuite, tname: str, rpl_test: bool) -> str:
        """The test's my.cnf template: its own .cnf, else its suite's (or the overlay's
        parent's) my.cnf, else rpl's for a replication test, else the default."""
        parent = suite.parent
        cnf = suite.find(tname + ".cnf")
        suite_cnf = next((os.path.join(d, "my.cnf") for d in (suite.dir, parent.dir if parent
                                                              else "")
                          if d and os.path.isfile(os.path.join(d, "my.cnf"))), "")
        if cnf:
            return cnf
        if suite_cnf:
            return suite_cnf
        if rpl_test:
            return os.path.join(self.mtr_root, "suite", "rpl", "my.cnf")
        return os.path.join(self.mtr_root, "include", "default_my.cnf")

    @staticmethod
    def _result_file(suite: MtrSuite, case: MtrCase) -> None:
        best: tuple[tuple[int, str, int, int], str] | None = None
        combs = set(case.combinations)
        for path in suite.results_for(case.name):
            base = os.path.basename(path)
            m = RESULT_TAIL.match(base[len(case.name):]) if base.startswith(case.name) else None
            if not m:
                continue
            names = [n for n in m.group(1).split(",") if n]
            if not set(names) <= combs:
                continue
            own = 1 if os.path.dirname(path) == (suite.rdir or os.path.dirname(path)) else 2
            key = (99 - len(names), ",".join(sorted(names)), own,
                   1 if m.group(2) == "result" else 2)
            if best is None or key < best[0]:
                best = (key, path)
        if best is None:
            return
        if best[1].endswith(".rdiff"):
            results = sorted((p for p in suite.results_for(case.name) if p.endswith(".result")
                              if set(n for n in os.path.basename(p)[len(case.name):-7].split(",") if n) <= combs),
                             key=lambda p: -p.count(","))
            if not results:
                raise SuiteError(f"{best[1]} has no corresponding .result file")
            case.base_result = results[0]
        case.result_file = best[1]


def split_option(option: str) -> str:
    """``name=value`` of an option as mtr's My::Options::_split_option reads it (the last
    ``=`` splits; a bare ``--name`` is ``name=``)."""
    m = re.match(r"^--(.*)=(.*)$", option, re.S) or re.match(r"^--(.*)$", option, re.S) \
        or re.match(r"^\$(.*)$", option, re.S) or re.match(r"^(.*)=(.*)$", option, re.S)
    if not m:
        return option
    return f"{m.group(1)}={m.group(2) if m.lastindex and m.lastindex > 1 else ''}"


def is_subset(options: list[str], subset: Iterable[str]) -> bool:
    """mtr's My::Options::is_subset: every option of subset is among options, by name and
    value."""
    have = {split_option(o) for o in options}
    return all(split_option(o) in have for o in subset)


def _add_scanned_options(case: MtrCase, scan: Scan) -> None:
    """The server options the test's files give (--master-opt and --slave-opt lines):
    appended to the case's, a --timezone option as the case's time zone (as mtr does)."""
    for opts, target in ((scan.master, case.master_opt), (scan.slave, case.slave_opt)):
        for opt in opts:
            if opt.startswith("--timezone="):
                case.timezone = opt[len("--timezone="):]
                continue
            if opt.startswith("--default-time-zone="):
                case.timezone = "GMT-8"
            target.append(opt)


def make_combinations(case: MtrCase, forced: dict[str, int],
                      combs: list[Combination] | str) -> list[MtrCase]:
    """mtr's make_combinations: the cases of case under one combinations file.

    A file's skip reason skips the case.  A combination whose options the case already
    has (is_subset) names it alone; a named one (forced, shared by all the cases of the
    test, as mtr's %test_combs is: once used, it is taken for the test's later cases
    too -- binlog's suite and rpl_init's row/stmt/mix give mix,row, row,row and row,stmt)
    runs alone; otherwise one case per combination, its options first."""
    if isinstance(combs, str):
        if not case.skip:
            case.skip = combs
        return [case]
    if not combs:
        return [case]
    chosen = combs
    for comb in combs:
        if comb.options and is_subset(case.master_opt, comb.options) \
                and is_subset(case.slave_opt, comb.options):
            forced[comb.name] = 2
            return [_with_comb(case, comb, prepend=False)]
        if forced.get(comb.name):
            chosen = [comb]
            forced[comb.name] = 2
            break
    if case.skip:
        return [case]
    return [_with_comb(case, comb) for comb in chosen]


def _with_comb(case: MtrCase, comb: Combination, prepend: bool = True) -> MtrCase:
    from dataclasses import replace
    opts = list(comb.options) if prepend else []
    return replace(case, master_opt=opts + case.master_opt, slave_opt=opts + case.slave_opt,
                   combinations=case.combinations + (comb.name,))
