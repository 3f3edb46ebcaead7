"""Bug hunting: random loads in trials, oracles, signatures, known bugs, findings.

The tool-layer parts of ``--mode=hunt`` (the mode itself is
``lib/modes/hunt/run.py``; docs/hunting.md).  Modules, by job:

- a trial: ``trial`` (one load with its seed on a set of servers, then the
  oracles, then the findings written), ``topology`` (which servers),
  ``randopts`` (random server options per trial), ``pquery`` (the
  pquery-style loads: a mysql-test corpus or SQL file mined, filtered and
  replayed in random order), ``surface`` (a schema and statements over
  MariaDB's SQL surface, generated: the ``--sql-file=surface`` load and the
  oracles' queries), ``budget`` (``--duration`` over the trials' loads and
  checks);
- oracles: ``crash`` (with ``crashreport``, mariadbd's own report, and
  ``demangle``; ``dying``: a server's health after a load settled, a dying
  one's core given time -- trials, reductions and replays alike), ``hang``, ``logcheck`` (the error log), ``divergence``,
  ``wrong`` (the wrong-result oracles in a trial, and a compared load's
  differences), ``wrongresult`` (the NoREC, TLP and differential oracles
  over generated SELECTs);
- signatures and bugs: ``signature``, ``uniqueid`` (MariaDB QA's UniqueID of
  a crash), ``knownbugs`` (new / known / known-fixed; kewpie's format and
  ``known_bugs.strings``), ``kbstrings`` (``known_bugs.strings`` read as
  published), ``bugmatch`` (a UniqueID matched exactly, then by
  similarity), ``symbols`` (can gdb name more frames than the crash report:
  debug symbols installed, a report that stopped short);
- results: ``finding`` (finding folders), ``summary`` (the table,
  summary.json, JUnit), ``errors``.
"""
