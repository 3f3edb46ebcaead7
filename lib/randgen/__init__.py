"""kewpie's built-in randgen engine: grammars (.yy), gendata (.zz), loads, results.

Modules: ``grammar`` (parser), ``generator`` (sentences), ``builtins``
(values and the PRNG), ``perl_subset`` (native Perl blocks),
``perl_coprocess`` (the rest, in perl), ``splitter`` (statements),
``metadata`` (tables and columns), ``gendata``/``gendata_simple`` (data),
``executor`` (threads, statistics, status), ``result``, ``cmdline``
(gentest.pl options), ``connection`` (DSNs), ``api`` (one entry point),
``perl_randgen`` (a Perl randgen checkout), ``offline`` (no server),
``shipped`` (the project's grammars), ``cli`` (``python -m lib.randgen``).
See docs/randgen.md.
"""
