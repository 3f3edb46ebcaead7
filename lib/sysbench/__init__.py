"""sysbench loads and benchmark sweeps: run, parse, store, plot, compare."""
