"""The run: config, setup, scheduling and shards, bots, the runner, outcomes and reports."""
