"""kewpie's servers for pytest: fixtures, the ``kewpie`` marker and options (docs/pytest.md).

``plugin`` is what pytest loads (entry point ``pytest11``, name ``kewpie``; or
``-p lib.pytest_plugin.plugin``); ``options`` makes the RunConfig;
``collection`` finds the tests kewpie serves; ``marker`` turns a marker into
Requirements; ``session`` runs one pytest process's bot over a
RunEnvironment; ``helper`` is the object tests get (a ClusterTestCase).
"""
