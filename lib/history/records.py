"""What the history stores: a run (:class:`RunInfo`), its results (:class:`ResultRecord`)
and a hunt's findings (:class:`FindingRecord`),
with the pure helpers that fill them: test names split from their combination, the
first lines of a failure, the CI context (Jenkins' variables, ``--label k=v``) and an
evidence path turned into its Jenkins artifact URL."""
from __future__ import annotations

import hashlib
import os
import platform as pyplatform
import re
import uuid
from urllib.parse import quote
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping

from .errors import HistoryUsageError

STATUSES = ("pass", "flaky", "fail", "skipped", "timeout")
FAILING = ("fail", "timeout", "flaky")  # statuses whose first attempt failed
FAILURE_LINES = 12
FAILURE_CHARS = 2000
SIGNATURE_CHARS = 255
LABEL_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
# labels that set a run's own fields instead of going to its labels
RUN_FIELD_LABELS = ("branch", "revision", "job", "build", "build_url", "platform")
EXCEPTION_LINE = re.compile(r"^[\w.]*(Error|Exception|Failure|Timeout|Interrupt)\b[^:]*: ")
NATIVE_COMBINATION = re.compile(r"^(?P<test>\S+) '(?P<combination>[^']*)'$")


def utcnow() -> datetime:
    """Now, in UTC, without a time zone (how the store keeps times)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


@dataclass
class RunInfo:
    """One run of kewpie (or one pytest session) as the history keeps it."""

    uuid: str
    started_at: datetime = field(default_factory=utcnow)
    host: str = ""
    platform: str = ""
    kewpie_version: str = ""
    mode: str = ""
    selection: str = ""
    shard: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    tree_version: str = ""
    tree_path: str = ""
    trees: list[dict[str, str]] = field(default_factory=list)
    branch: str = ""
    revision: str = ""
    job: str = ""
    build: int | None = None
    build_url: str = ""
    labels: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The run as plain JSON values (for the spool file)."""
        data = asdict(self)
        data["started_at"] = self.started_at.isoformat()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RunInfo":
        """The run a spool file recorded."""
        values = dict(data)
        values["started_at"] = datetime.fromisoformat(str(values["started_at"]))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in values.items() if k in known})


@dataclass
class ResultRecord:
    """One test's result in a run: status, time, attempts, the start of its failure, the
    finding's signature, where its evidence is."""

    test: str
    status: str
    duration_ms: int = 0
    combination: str = ""
    attempts: int = 1
    failure: str = ""
    signature: str = ""
    evidence: str = ""
    bot: str = ""
    seq: int = 0
    finished_at: datetime = field(default_factory=utcnow)

    def __post_init__(self) -> None:
        self.status = str(self.status)
        if self.status not in STATUSES:
            raise HistoryUsageError(f"result status {self.status!r} is not one of "
                                    f"{', '.join(STATUSES)}")
        self.failure = first_lines(self.failure)
        self.signature = self.signature[:SIGNATURE_CHARS]

    @property
    def failing(self) -> bool:
        """The test failed (or timed out) at least once: a finished failure or a flake."""
        return self.status in FAILING

    def to_json(self) -> dict[str, Any]:
        """The result as plain JSON values (for the spool file)."""
        data = asdict(self)
        data["finished_at"] = self.finished_at.isoformat()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ResultRecord":
        """The result a spool file recorded."""
        values = dict(data)
        values["finished_at"] = datetime.fromisoformat(str(values["finished_at"]))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in values.items() if k in known})


@dataclass
class FindingRecord:
    """One finding a hunt wrote (a folder): its signature (the id, text and a crash's
    UniqueID), kind, oracle, tag and bug, the trial and seed, where it was found (the
    machine and code tree: the run's unless given) and its folder (or its URL)."""

    signature: str
    kind: str
    oracle: str = ""
    signature_text: str = ""
    unique_id: str = ""
    title: str = ""
    tag: str = "new"
    bug_id: str = ""
    trial: int = 0
    seed: int = 0
    bot: str = ""
    machine: str = ""
    tree: str = ""
    folder: str = ""
    summary: str = ""
    seq: int = 0
    found_at: datetime = field(default_factory=utcnow)

    def to_json(self) -> dict[str, Any]:
        """The finding as plain JSON values (for the spool file)."""
        data = asdict(self)
        data["found_at"] = self.found_at.isoformat()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "FindingRecord":
        """The finding a spool file recorded."""
        values = dict(data)
        values["found_at"] = datetime.fromisoformat(str(values["found_at"]))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in values.items() if k in known})


def machine_of(run: RunInfo) -> str:
    """Where a run ran, as the findings name it: the CI agent (``--label node=``,
    Jenkins' NODE_NAME, a buildbot worker's name) or the host."""
    return str(run.labels.get("node") or run.host)


def split_name(name: str) -> tuple[str, str]:
    """(test, combination) of a name as rows show it: ``suite.test 'combo'`` (a kewpie
    suite's combination), ``suite.test,c1,c2`` (mysql-test's), else (name, '')."""
    match = NATIVE_COMBINATION.match(name)
    if match:
        return match.group("test"), match.group("combination")
    if "[" not in name and " " not in name and "," in name:  # a pytest parameter keeps its commas
        test, _, combination = name.partition(",")
        return test, combination
    return name, ""


def join_name(test: str, combination: str, style: str = "native") -> str:
    """The row name of (test, combination): the inverse of :func:`split_name` for a style
    ('native': ``suite.test 'combo'``; 'mtr': ``suite.test,combo``)."""
    if not combination:
        return test
    return f"{test},{combination}" if style == "mtr" else f"{test} '{combination}'"


def first_lines(text: str, lines: int = FAILURE_LINES, chars: int = FAILURE_CHARS) -> str:
    """The first non-empty lines of a failure, cut to chars (what the history keeps; the
    whole text stays in the evidence)."""
    kept = [line.rstrip() for line in text.strip().splitlines()[:lines]]
    out = "\n".join(kept)
    return out if len(out) <= chars else out[:chars - 3] + "..."


def headline(text: str) -> str:
    """The line that says what went wrong: the first exception line (``AssertionError:
    ...``), else the first line that is neither a header (``test:``) nor a traceback's."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if EXCEPTION_LINE.match(line):
            return line
    for line in lines:
        if not line.endswith(":") and not line.startswith(("Traceback", "File ")):
            return line
    return lines[0] if lines else ""


def evidence_gone(link: str) -> bool:
    """True when a result's evidence is a local folder no longer on disk (the run's
    evidence was pruned: kewpie keeps the last runs' in ``workdir/failed/``); a URL
    (a Jenkins artifact) is never said gone."""
    return link.startswith("/") and not os.path.exists(link)


def parse_label(text: str) -> tuple[str, str]:
    """``key=value`` of ``--label``; HistoryUsageError for anything else."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not LABEL_KEY.fullmatch(key):
        raise HistoryUsageError(f"--label {text!r}: expected KEY=VALUE (a key of letters, "
                                f"digits, '_', '.', '-'), e.g. --label platform=debian12")
    return key, value.strip()


def _branch(environ: Mapping[str, str]) -> str:
    """Jenkins' branch: BRANCH_NAME (multibranch) or GIT_BRANCH without its remote."""
    name = environ.get("BRANCH_NAME") or environ.get("GIT_BRANCH") or ""
    for prefix in ("refs/heads/", "origin/"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name


def _build_number(text: str) -> int | None:
    return int(text) if text.strip().isdigit() else None


def default_platform() -> str:
    """This machine as the cross-reference names platforms: ``debian-12-x86_64``."""
    try:
        release = pyplatform.freedesktop_os_release()
        name = f"{release.get('ID', 'linux')}-{release.get('VERSION_ID', '')}".rstrip("-")
    except OSError:
        name = pyplatform.system().lower()
    return f"{name}-{pyplatform.machine()}"


def ci_context(environ: Mapping[str, str], labels: Mapping[str, str]) -> dict[str, Any]:
    """The run's CI fields from Jenkins' environment (JOB_NAME, BUILD_NUMBER, BUILD_URL,
    GIT_BRANCH or BRANCH_NAME, GIT_COMMIT, NODE_NAME), overridden by labels of the same
    names; the other labels (and the agent as ``node``) stay labels."""
    extra = {k: v for k, v in labels.items() if k not in RUN_FIELD_LABELS}
    if environ.get("NODE_NAME") and "node" not in extra:
        extra["node"] = environ["NODE_NAME"]
    build_text = labels.get("build", environ.get("BUILD_NUMBER", ""))
    return {"branch": labels.get("branch", _branch(environ)),
            "revision": labels.get("revision", environ.get("GIT_COMMIT", "")),
            "job": labels.get("job", environ.get("JOB_NAME", "")),
            "build": _build_number(build_text),
            "build_url": labels.get("build_url", environ.get("BUILD_URL", "")),
            "platform": labels.get("platform", "") or default_platform(),
            "labels": extra}


def evidence_link(path: str, environ: Mapping[str, str], base_url: str = "",
                  workdir: str = "") -> str:
    """Where a failure's evidence can be opened: ``base_url/<its path under workdir>``
    (``--evidence-url``: a CI's artifacts of the workdir) when given; else its Jenkins
    artifact URL when it lies in the job's WORKSPACE and the build has a BUILD_URL
    (archive workdir/failed/ with ``archiveArtifacts``); else the path itself."""
    if not path or "://" in path:
        return path
    if base_url and workdir:
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(workdir))
        if not rel.startswith(".."):
            return f"{base_url.rstrip('/')}/{quote(rel)}"
    workspace, build_url = environ.get("WORKSPACE", ""), environ.get("BUILD_URL", "")
    if workspace and build_url:
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(workspace))
        if not rel.startswith(".."):
            return f"{build_url.rstrip('/')}/artifact/{rel}"
    return path


def new_run_uuid(key: str = "") -> str:
    """A run's id across every agent writing to one store: random, or derived from key
    (the processes of one pytest-xdist session share theirs)."""
    if key:
        return hashlib.sha1(key.encode()).hexdigest()[:32]
    return uuid.uuid4().hex
