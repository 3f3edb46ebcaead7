"""kewpie's built-in randgen engine: grammars (.yy), gendata (.zz), loads, results.

Modules, by job (tests/unit/test_house_rules.py checks that each is listed):

- grammar and sentences: ``grammar`` (the parser), ``combinations``
  (redefine-only grammar files and their base grammar), ``generator``
  (sentences, per thread), ``builtins`` (values and the PRNG), ``words``
  (dictionary word lists), ``perl_subset`` (native Perl blocks),
  ``perl_coprocess`` (the rest, in perl; ``coprocess.pl``), ``splitter``
  (statements), ``metadata`` (tables and columns), ``offline`` (no server).
- data: ``gendata`` (``.zz`` specifications), ``gendata_simple`` (the data
  set of ``--gendata`` without a file).
- running: ``api`` (one entry point: the built-in engine or a Perl checkout),
  ``executor`` (threads, statistics, status), ``workers`` and
  ``worker_main`` (a run's threads spread over worker processes),
  ``channel`` (the connection a thread's statements go through),
  ``colocate`` (a one-thread run's client and server thread on one CPU),
  ``trace`` (every statement sent, per connection, with its result),
  ``connection`` (DSNs), ``validators``, ``transformers`` (RQG's Transform
  rewrites, which the Transformer validator runs), ``reporters`` and
  ``run_checks`` (the Perl tool's ``--validators``/``--reporters``),
  ``result``, ``errors``.
- command lines: ``cmdline`` (gentest.pl options), ``perl_randgen`` (a Perl
  randgen checkout), ``shipped`` (the project's grammars), ``cli`` and
  ``__main__`` (``python -m lib.randgen``).

See docs/randgen.md.
"""
