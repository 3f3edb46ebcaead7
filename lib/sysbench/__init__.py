"""sysbench loads and benchmark sweeps: run, monitor, parse, store, plot, compare.

Modules: ``sweep`` (the sweep file's spec and the results), ``matrix`` (its
dimensions: engine, tables, reconnect, nodes, variables), ``engines`` (which
engines a code tree has), ``runner`` (runs a sweep: data sets, turns, checks),
``interleave`` (the order units take turns in), ``tool`` (sysbench's command
lines: Debian's scripts and kewpie's ``sysbench/*.lua``), ``monitor`` (the
resource monitors), ``overhead`` (their cost measured side by side in one run,
for bench/sweep_overhead.py), ``parse`` (sysbench's output), ``results`` (the results
database), ``outputs`` (tables, CSV, JSON, plots), ``regression`` (the baseline
check).  docs/sysbench.md tells the whole story.
"""
