"""Random server options per trial, from a list the user gives (as pquery's
ADD_RANDOM_OPTIONS).

The file holds one option per line (``--innodb-flush-method=fsync``), ``#``
comments and blank lines ignored; several lines may give the same option
different values.  Each trial draws, from its own seed, between 1 and
``most`` lines, at most one per option name, and its servers start with them
(after the topology's own options).  The draw depends on the seed alone, so
a trial repeats with the same options.
"""
from __future__ import annotations

import random
from typing import Sequence

from ..errors import SuiteError
from ..servers.options import Option, parse_option
from .errors import HuntError


def read_option_list(path: str) -> tuple[Option, ...]:
    """The options of a random-options file (HuntError when it cannot be read or a line
    is not an option)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise HuntError(f"--random-options {path}: cannot read it: {reason}") from None
    options: list[Option] = []
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        if not text.startswith("--") or " " in text:
            raise HuntError(f"--random-options {path}:{number}: one --name[=value] option a "
                            f"line, got {line.strip()!r}")
        try:
            options.append(parse_option(text))
        except SuiteError as exc:
            raise HuntError(f"--random-options {path}:{number}: {exc}") from None
    if not options:
        raise HuntError(f"--random-options {path}: the file lists no option")
    return tuple(options)


def pick_options(options: Sequence[Option], seed: int, most: int) -> tuple[Option, ...]:
    """Between 1 and most of options (one per name), drawn from seed; () when none given."""
    if not options or most < 1:
        return ()
    rng = random.Random(f"kewpie-hunt-options-{seed}")
    wanted = rng.randint(1, most)
    chosen: list[Option] = []
    names: set[str] = set()
    for option in rng.sample(list(options), len(options)):
        if option.name in names:
            continue
        chosen.append(option)
        names.add(option.name)
        if len(chosen) == wanted:
            break
    return tuple(chosen)
