"""An oracle's wrong-result finding folder for the unit tests of its reduction: the
finding.json the hunt writes (its compared statements and the oracle's detail) and a
two-statement trace."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

TRACE = ('{"seq": 1, "server": "s0", "conn": 7, "sql": "CREATE TABLE t1 (a INT, b INT)"}\n'
         '{"seq": 2, "server": "s0", "conn": 8, "sql": "INSERT INTO t1 VALUES (1, 2)"}\n')


def oracle_finding(tmp_path: Path, oracle: str, queries: Sequence[str], detail: str,
                   sig: str = "c9e6") -> Path:
    """The folder of a finding of oracle that compared queries (detail: the oracle's own
    words), under tmp_path."""
    folder = tmp_path / f"t0005-1-wrong-result-{sig}"
    folder.mkdir()
    data = {"format": "kewpie-hunt-finding/1", "kind": "wrong-result", "oracle": oracle,
            "signature": {"id": sig, "kind": "wrong-result", "parts": [oracle, "shape"]},
            "title": f"{oracle} | shape", "topology": {"kind": "single", "servers": [{}]},
            "trial": {"options": []},
            "details": {"queries": list(queries), "detail": detail}}
    (folder / "finding.json").write_text(json.dumps(data))
    (folder / "trace.jsonl").write_text(TRACE)
    return folder
