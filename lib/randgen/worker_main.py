"""``python -m lib.randgen.worker_main``: one worker process of a run (see :mod:`lib.randgen.workers`)."""
from __future__ import annotations

import json
import sys
import threading

from .cmdline import RandgenOptions
from .connection import ConnectionSpec
from .executor import RandgenRun


def serve() -> int:
    """The worker process: read the spec, run the threads, print the result."""
    spec = json.loads(sys.stdin.readline())
    opts = RandgenOptions(**spec["options"])
    opts = opts.with_changes(start_dirty=True, reporters=list(spec["reporters"]))
    conn = ConnectionSpec(**spec["conn"])
    compare = [ConnectionSpec(**c) for c in spec["compare"]]
    run = RandgenRun(opts, conn, spec["log"], None, spec["base_dir"], compare=compare,
                     thread_ids=spec["thread_ids"], deadline_wall=spec["deadline"])

    def _watch_stdin() -> None:
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        run.stop()

    threading.Thread(target=_watch_stdin, daemon=True).start()
    result = run.run()
    sys.stdout.write(json.dumps(result.to_json()) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(serve())
