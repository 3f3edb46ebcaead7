"""The modes: a folder each (``native``, ``mtr``, ``hunt``, ``reduce``, ``replay``,
``sweep``, ``cleanup``), each owning its options, its section of the configuration and its run
function, registered in ``table.py``'s one table that the command line and ``dispatch.py``
are built from; ``spec.py``: what a mode is to them; ``onoff.py``: option helpers.  A mode
never imports another (docs/architecture.md, "Where new things plug in": a new mode)."""
