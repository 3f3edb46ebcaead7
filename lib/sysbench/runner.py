"""Run a sweep: every code tree x variable setting x matrix cell x thread count, repeated.

The order, from the outside in:

1. the variable settings, when one of their variables needs a restart (the
   servers restart with it; the data stays); when all are dynamic, the settings
   take turns with the rest instead (3), set with SET GLOBAL before a run, and
   a run after a change gets its own warm-up first;
2. the thread counts;
3. a warm-up run of every unit (a code tree's servers x a cell of the matrix's
   engine, tables, reconnect and nodes dimensions, x a setting when they take
   turns), then the repeats, in which the units take turns, the order
   alternating between repeats (:func:`lib.sysbench.interleave.turn_order`),
   so load that comes and goes on a shared machine falls on all of them alike.

Every data set (engine x tables, or the TPC-C-like warehouses) lives in its own
database and is prepared once per code tree, before its first run; after the
last run the TPC-C-like consistency check runs on it, then it is dropped.
While a timed run runs, the resource monitors sample the machine and every
server of its set (lib/sysbench/monitor.py).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import QueryError, UsageError
from ..platform.logsetup import get_logger
from ..servers.server import Server
from .engines import Engine, plugin_options, resolve_engine
from .interleave import turn_order
from .matrix import Cell
from .sweep import CheckRecord, RunRecord, SweepResult, SweepSpec
from .tool import RunOutput, Sysbench, Workload

READ_ONLY_VARIABLE = 1238  # ER_INCORRECT_GLOBAL_LOCAL_VAR: needs a restart


def _no_wait() -> None:
    """Nothing to wait for (a single server)."""


@dataclass
class ServerSet:
    """The running servers of one code tree (one server, or a cluster's nodes; the
    first takes the data loads) and how to wait until all of them applied them."""

    basedir: str
    servers: list[Server]
    wait_applied: Callable[[], None] = _no_wait


SetFor = Callable[[str, list[str]], ServerSet]
ServerFor = Callable[[str, list[str]], Server]
Setting = tuple[tuple[str, Any], ...]  # variable settings: (name, value) pairs


@dataclass
class _DataSet:
    """One prepared data set on one server set."""

    name: str
    tool: Sysbench
    engine: Engine | None
    runs: int = 0


@dataclass
class _Unit:
    """What takes turns in a repeat: a server set's runs of one cell."""

    basedir: str
    cell: Cell
    value: Any
    label: str
    data: _DataSet | None = None
    cell_dict: dict[str, Any] = field(default_factory=dict)


def data_set_name(spec: SweepSpec, cell: Cell) -> str:
    """The database of a cell's data set: sbtest (or tpcc_like), with the engine and
    table count when the matrix varies them."""
    name = "tpcc_like" if spec.workload == "tpcc_like" else "sbtest"
    if cell.engine:
        name += "_" + cell.engine.lower()
    if cell.tables:
        name += f"_{cell.tables}t"
    return name


def safe_name(value: Any) -> str:
    """A value as a file-name part."""
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", str(value))


def variable_points(spec: SweepSpec) -> tuple[bool, list[tuple[tuple[str, Any], ...]]]:
    """(legacy, settings): the legacy 'variable' (no matrix) or the matrix's variables."""
    if spec.matrix is None:
        if spec.variable is None:
            return True, [()]
        return True, [((spec.variable, v),) if v is not None else () for v in spec.values]
    return False, spec.grid().variable_points or [()]


def apply_setting(current: ServerSet, setting: tuple[tuple[str, Any], ...],
                  base_options: list[str], set_for: SetFor) -> ServerSet:
    """Set each variable with SET GLOBAL on every server; those that are not dynamic
    restart the servers with the options (a single server only)."""
    restart: list[str] = []
    for name, value in setting:
        for server in current.servers:
            try:
                server.execute(f"SET GLOBAL {name} = %s", (value,))
            except QueryError as exc:
                if exc.code != READ_ONLY_VARIABLE:
                    raise UsageError(f"cannot set {name}={value!r}: {exc.message}") from None
                option = f"--{name.replace('_', '-')}={value}"
                if option not in restart:
                    restart.append(option)
    if not restart:
        return current
    if len(current.servers) > 1:
        raise UsageError(f"sweep variables {', '.join(restart)}: not dynamic, and restarting "
                         f"a cluster's nodes one by one is not supported; put them in "
                         f"'server_options'")
    get_logger().info(f"sweep: {', '.join(restart)} not dynamic; restarting with them")
    return set_for(current.basedir, base_options + restart)


def all_dynamic(server_sets: list[ServerSet],
                settings: list[tuple[tuple[str, Any], ...]]) -> bool:
    """True when every variable of the settings can change without a restart on every
    server set (information_schema.SYSTEM_VARIABLES' READ_ONLY): the settings can then
    take turns like the other dimensions."""
    names = sorted({name for setting in settings for name, _ in setting})
    if not names:
        return False
    marks = ", ".join(["%s"] * len(names))
    for server_set in server_sets:
        rows = server_set.servers[0].execute(
            f"SELECT LOWER(VARIABLE_NAME), READ_ONLY FROM information_schema.SYSTEM_VARIABLES "
            f"WHERE LOWER(VARIABLE_NAME) IN ({marks})", tuple(names))
        writable = {str(name) for name, read_only in rows if str(read_only).upper() == "NO"}
        if writable != set(names):
            return False
    return True


def run_matrix(spec: SweepSpec, set_for: SetFor, log_dir: str,
               context: dict[str, Any]) -> SweepResult:
    """Run the sweep (see the module); set_for(basedir, options) returns that code tree's
    running servers with those options (restarted when they change)."""
    matrix = _Matrix(spec, set_for, log_dir, context)
    for group in matrix.setting_groups():
        matrix.run_group(matrix.units(group))
    matrix.finish()
    return matrix.sweep



class _Matrix:
    """One sweep under way: the code trees' server sets, their settings and data sets."""

    def __init__(self, spec: SweepSpec, set_for: SetFor, log_dir: str,
                 context: dict[str, Any]) -> None:
        self.spec, self.set_for, self.log_dir = spec, set_for, log_dir
        self.log = get_logger()
        self.sweep = SweepResult(spec, context)
        self.grid = spec.grid()
        self.legacy, self.settings = variable_points(spec)
        self.engines = {name: resolve_engine(name, None)
                        for name in self.grid.values_of("engine") if name}
        self.options = list(spec.server_options) + [
            o for o in plugin_options(list(self.engines.values()))
            if o not in spec.server_options]
        self.spread = "nodes" in self.grid.given
        self.cells: list[Cell] = []
        for cell in self.grid.cells:
            if all(c.run_key != cell.run_key for c in self.cells):
                self.cells.append(cell)
        self.basedirs = list(spec.basedirs) or [""]
        self.sets = {b: set_for(b, list(self.options)) for b in self.basedirs}
        self.versions = {b: self.sets[b].servers[0].variable("version") or "?"
                         for b in self.basedirs}
        self.data: dict[tuple[str, str], _DataSet] = {}
        self.current: dict[str, Setting | None] = {b: None for b in self.basedirs}

    def setting_groups(self) -> list[list[Setting]]:
        """The settings that take turns: all of them when every variable is dynamic,
        else one at a time (a restart between them)."""
        settings = self.settings
        if len(settings) > 1 and all_dynamic(list(self.sets.values()), settings):
            return [settings]
        return [[setting] for setting in settings]

    def units(self, group: list[Setting]) -> list[_Unit]:
        """The units of a group of settings (every code tree x setting x cell), their
        settings applied (a restart keeps the data), then their data sets prepared."""
        units: list[_Unit] = []
        for b in self.basedirs:
            for setting in group:
                for cell in self.cells:
                    units.append(self._unit(b, cell, setting))
        for unit in units:  # settings first (a restart keeps the data), then the data sets
            self._use_setting(unit.basedir, unit.cell.variables)
        for unit in units:
            unit.data = self._data_set(unit.basedir, unit.cell)
        return units

    def _unit(self, basedir: str, cell: Cell, setting: Setting) -> _Unit:
        """The unit of cell with setting on basedir's servers."""
        full = Cell(cell.engine, cell.tables, cell.reconnect, cell.nodes, setting)
        label = full.label(self.grid.varied
                           + (("variables",) if self.legacy and setting else ()))
        if self.legacy:
            value: Any = setting[0][1] if setting else None
        else:
            value = label or None
        cell_dict = {"engine": cell.engine, "tables": cell.tables,
                     "reconnect": cell.reconnect, "nodes": cell.nodes,
                     "variables": dict(setting)}
        return _Unit(basedir, full, value, label, None, cell_dict)

    def _data_set(self, basedir: str, cell: Cell) -> _DataSet:
        """The cell's data set on basedir's servers, prepared on first use."""
        spec = self.spec
        name = data_set_name(spec, cell)
        key = (basedir, name)
        if key not in self.data:
            tables, size = spec.table_layout(cell.tables)
            engine = self.engines.get(cell.engine) if cell.engine else None
            workload = Workload(spec.workload, tables, size, name,
                                engine.sql_name if engine else None, spec.tpcc_scale(),
                                list(spec.sysbench_options))
            tool = Sysbench(workload, self.log_dir)
            what = (f"{spec.tpcc_scale().get('warehouses', 1)} warehouse(s)" if workload.tpcc_like
                    else f"{tables} x {size} rows")
            self.log.info(f"sweep {spec.name}: preparing {what} in {name} on "
                          f"{self.versions[basedir]}" + (f" ({engine.name})" if engine else ""))
            server = self.sets[basedir].servers[0]
            tool.prepare(server, threads=max(1, min(os.cpu_count() or 1,
                                                    workload.scale.get("warehouses", tables))))
            self.sets[basedir].wait_applied()
            self.data[key] = _DataSet(name, tool, engine)
        return self.data[key]

    def _use_setting(self, basedir: str, setting: Setting) -> bool:
        """Put basedir's servers on setting; True when that changed something."""
        if self.current[basedir] == setting:
            return False
        self.sets[basedir] = apply_setting(self.sets[basedir], setting, self.options,
                                           self.set_for)
        self.current[basedir] = setting
        return bool(setting)

    def _warm(self, unit: _Unit, threads: int) -> None:
        """A warm-up run of the unit (not recorded)."""
        _run(self.spec, self.sets[unit.basedir], unit, threads, self.spec.warmup, self.spread,
             f"warmup-{safe_name(self.versions[unit.basedir])}-{safe_name(unit.value)}-"
             f"{threads}.log", watch=False)

    def run_group(self, units: list[_Unit]) -> None:
        """Every thread count: a warm-up of each unit, then the repeats in turns."""
        spec = self.spec
        for threads in spec.threads:
            if spec.warmup > 0:
                for unit in units:
                    self._use_setting(unit.basedir, unit.cell.variables)
                    self._warm(unit, threads)
            for repeat in range(1, spec.repeats + 1):
                for unit in turn_order(units, repeat):
                    if self._use_setting(unit.basedir, unit.cell.variables) and spec.warmup > 0:
                        self._warm(unit, threads)  # settings take turns: warm up after a change
                    self._timed_run(unit, threads, repeat)

    def _timed_run(self, unit: _Unit, threads: int, repeat: int) -> None:
        """One recorded run of unit, logged and added to the sweep."""
        spec = self.spec
        version = self.versions[unit.basedir]
        log_name = f"run-{safe_name(version)}-{safe_name(unit.value)}-{threads}-{repeat}.log"
        out = _run(spec, self.sets[unit.basedir], unit, threads, spec.duration, self.spread,
                   log_name, watch=spec.monitor)
        r = out.result
        extra = f", tpmC-like {r.tpcc.tpmc_like:.0f}" if r.tpcc else ""
        several = len(self.basedirs) > 1
        self.log.info(f"sweep {spec.name}: {unit.label + ' ' if unit.label else ''}"
                      f"{version if several else ''}"
                      f"{' ' if several else ''}threads={threads} repeat "
                      f"{repeat}: {r.tps:.1f} tps{extra}, p{r.percentile} "
                      f"{r.latency_pct_ms:.2f} ms, {r.errors} errors")
        if out.monitor_error:
            self.log.warning(f"sweep {spec.name}: the resource monitor stopped early: "
                             f"{out.monitor_error}")
        self.sweep.runs.append(RunRecord(unit.basedir, version, unit.value, threads,
                                         repeat, r, unit.cell_dict, out.samples, log_name))

    def finish(self) -> None:
        """The TPC-C-like consistency checks, then every data set dropped."""
        for (basedir, name), ds in self.data.items():
            if ds.tool.workload.tpcc_like and self.spec.consistency_check:
                self.sweep.checks.append(_check(self.sets[basedir], ds, self.versions[basedir]))
            ds.tool.cleanup(self.sets[basedir].servers[0])
            self.sets[basedir].servers[0].execute(f"DROP DATABASE IF EXISTS `{name}`")


def _run(spec: SweepSpec, server_set: ServerSet, unit: _Unit, threads: int, seconds: float,
         spread: bool, log_name: str, watch: bool) -> RunOutput:
    """One sysbench run of a unit (over its nodes), with the monitors when watch."""
    assert unit.data is not None
    nodes = server_set.servers[:unit.cell.nodes or 1]
    return unit.data.tool.run(nodes, threads, seconds, log_name=log_name,
                              reconnect=unit.cell.reconnect,
                              tcp=spread or spec.protocol == "tcp",
                              watch=server_set.servers if watch else None)


def _check(server_set: ServerSet, ds: _DataSet, version: str) -> CheckRecord:
    """The TPC-C-like consistency check of one data set (skipped on engines without
    transactions, where the workload's rollbacks cannot undo anything)."""
    log = get_logger()
    if ds.engine is not None and not ds.engine.transactional:
        why = (f"skipped: {ds.engine.name} has no transactions, so the 1% of New-Orders "
               f"that roll back leave their rows")
        log.info(f"TPC-C-like consistency of {ds.name} on {version}: {why}")
        return CheckRecord(version, ds.name, None, why)
    server_set.wait_applied()
    passed, text = ds.tool.check(server_set.servers[0])
    summary = next((line.strip() for line in text.splitlines()
                    if line.startswith("consistency:")), "")
    log.info(f"TPC-C-like consistency of {ds.name} on {version}: {summary}")
    return CheckRecord(version, ds.name, passed, text)


def run_sweep(spec: SweepSpec, server_for: ServerFor, log_dir: str,
              context: dict[str, Any]) -> SweepResult:
    """run_matrix over one server per code tree: server_for(basedir, options) returns it
    running with those options (restarting it when they change)."""
    def set_for(basedir: str, options: list[str]) -> ServerSet:
        """The one server as a set."""
        return ServerSet(basedir, [server_for(basedir, options)])
    return run_matrix(spec, set_for, log_dir, context)
