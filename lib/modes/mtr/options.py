"""--mode=mtr's options and its section of the configuration (docs/mtr.md)."""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from types import MappingProxyType

from ...config import ModeSection
from ..onoff import OnOff

NAME = "mtr"
# mariadb-test's protocol modes, passed on as mtr does (flag -> what it does to a statement)
MYSQLTEST_PROTOCOLS = MappingProxyType({
    "--ps-protocol": "as a prepared statement",
    "--sp-protocol": "inside a stored procedure",
    "--view-protocol": "(SELECTs) through a view",
    "--cursor-protocol": "(SELECTs) through a cursor",
    "--non-blocking-api": "through the client's non-blocking API",
})


@dataclass
class MtrOptions(ModeSection):
    """--mode=mtr: the server's own mysql-test suites."""

    root: str = ""              # --mtr-root: the mysql-test directory ('' = the code tree's)
    record: bool = False        # record result files (mtr --record)
    big_test: bool = False      # also run big tests (mtr --big-test)
    protocols: tuple[str, ...] = ()  # e.g. ("--ps-protocol",), in mtr's order
    reorder: bool = True        # group cases by servers (mtr's default; --no-reorder)
    xml_report: str = ""        # --xml-report PATH, mtr's JUnit dialect


def _protocol_dest(flag: str) -> str:
    return flag[2:].replace("-", "_")


def add_options(p: argparse.ArgumentParser) -> None:
    """--mode=mtr: the server's own mysql-test suites (docs/mtr.md)."""
    defaults = MtrOptions()
    g = p.add_argument_group("mtr mode: with --mode=mtr, the server's mysql-test suites "
                             "(docs/mtr.md)")
    g.add_argument("--mtr-root", default=defaults.root, metavar="DIR",
                   help="the mysql-test directory (default: the code tree's, "
                        "e.g. /usr/share/mysql/mysql-test)")
    g.add_argument("--record", action=OnOff,
                   help="write the result files of passing tests (mtr --record)")
    g.add_argument("--big-test", action=OnOff,
                   help="also run tests marked big (mtr --big-test)")
    g.add_argument("--xml-report", default=defaults.xml_report, metavar="PATH",
                   help="also write the report in mysql-test-run's --xml-report JUnit dialect "
                        "(for MariaDB's mtr-log-collector and cross-reference)")
    g.add_argument("--reorder", action=OnOff, default=defaults.reorder,
                   help="group the cases that need the same servers (the default, as mtr); "
                        "--no-reorder runs them in the order given (mtr --no-reorder)")
    for flag, what in MYSQLTEST_PROTOCOLS.items():
        g.add_argument(flag, action=OnOff, dest=_protocol_dest(flag),
                       help=f"mariadb-test runs every statement {what} (mtr {flag})")


def _protocols(args: argparse.Namespace) -> tuple[str, ...]:
    given = vars(args)
    return tuple(f for f in MYSQLTEST_PROTOCOLS if given[_protocol_dest(f)])


def section(args: argparse.Namespace) -> MtrOptions:
    """The mtr section of the parsed options."""
    return MtrOptions(root=os.path.abspath(args.mtr_root) if args.mtr_root else "",
                      record=args.record, big_test=args.big_test, protocols=_protocols(args),
                      reorder=args.reorder,
                      xml_report=os.path.abspath(args.xml_report) if args.xml_report else "")


def misplaced(args: argparse.Namespace) -> str:
    """mtr's options given to another mode."""
    given = [*_protocols(args), *(["--record"] if args.record else []),
             *(["--xml-report"] if args.xml_report else []),
             *(["--big-test"] if args.big_test else []),
             *([] if args.reorder else ["--no-reorder"])]
    if given and args.mode != NAME:
        return (f"{', '.join(given)}: only with --mode=mtr (mysql-test cases); this run is "
                f"--mode={args.mode}")
    return ""
