"""The command line's option helpers the modes share with lib/cli.py."""
from __future__ import annotations

import argparse
from typing import Sequence


class OnOff(argparse.BooleanOptionalAction):
    """``--X`` / ``--no-X``: every on/off option can be undone on the command line
    (a config file may have turned it on), with its help text as written."""

    def __init__(self, option_strings: Sequence[str], dest: str, default: bool = False,
                 help: str | None = None) -> None:  # noqa: A002 - argparse's name
        super().__init__(option_strings, dest, default=default, help=help)
        self.help = help  # no automatic "(default: False)"


def split(values: list[str] | None) -> list[str]:
    """Comma lists given once or more (``--suite a,b --suite c``), in order."""
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out
