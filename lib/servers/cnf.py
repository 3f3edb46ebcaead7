"""The one my.cnf model: groups of options, filled in by rule tables, rendered.

As mysql-test-run's ``My::ConfigFactory`` does, what kewpie adds to a server's
option file is written down as tables of :class:`Rule` -- an option's name, its
value (a constant, or a function of what the file is built for), when it
applies -- rather than as code:

* a native server's ``[mysqld]``, ``[client]`` and Galera's ``[sst]``
  (:mod:`lib.servers.cnf_rules`, :mod:`lib.servers.galera`): :func:`run_rules`
  gives the table's options, and the suite's options are layered over them
  (:func:`lib.servers.options.merge`: a later option of the same name wins);
* a mysql-test config's ``[mysqld.N]``, ``[client]`` and ``[mysql_upgrade]``
  groups (:mod:`lib.mtr.config`): :func:`apply_rules` adds each rule's option
  that the test's template does not set, at the end of its :class:`CnfGroup`,
  as ConfigFactory's ``run_rules_for_group`` does (and a rule marked
  ``replace`` sets its value wherever the template has it: kewpie leases the
  ports).

:class:`CnfGroup` is one ``[group]`` as a file holds it (names as spelled, in
order; mtr's ``My::Config`` rules for a repeated option); :func:`render_cnf`
writes a server's file, :func:`write_cnf` writes it privately.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, Sequence, TypeVar

from .layout import write_private_file
from .options import Option

C = TypeVar("C", contravariant=True)
MULTIPART = frozenset({"plugin-load-add", "optimizer-switch"})


@dataclass(frozen=True)
class Rule(Generic[C]):
    """One line of a rule table: an option kewpie sets, for a context of type C.

    value is the option's value, or a function of the context giving it (None:
    a bare option such as ``skip-name-resolve``); when, if given, says whether
    the rule applies to the context; loose writes ``loose-<name>``; replace
    (for :func:`apply_rules`) sets the value even where the group has the option.
    """

    name: str
    value: str | None | Callable[[C], str | None] = None
    when: Callable[[C], bool] | None = None
    loose: bool = False
    replace: bool = False

    def applies(self, context: C) -> bool:
        """Whether the rule gives an option for context."""
        return self.when is None or self.when(context)

    def value_for(self, context: C) -> str | None:
        """The option's value for context."""
        return self.value(context) if callable(self.value) else self.value

    def spelled(self) -> str:
        """The option's name as the file spells it (``loose-`` included)."""
        return ("loose-" if self.loose else "") + self.name


def run_rules(rules: Sequence[Rule[C]], context: C) -> list[Option]:
    """The options the table gives for context, in its order."""
    return [Option(r.name, r.value_for(context), loose=r.loose)
            for r in rules if r.applies(context)]


def apply_rules(group: CnfGroup, rules: Sequence[Rule[C]], context: C) -> None:
    """ConfigFactory's rules for one group: each rule that applies adds its option last
    unless the group holds an option of exactly that spelling (mtr's ``My::Config``
    tells ``server_id`` from ``server-id``: another spelling stays, and this one,
    last, wins); a replace rule's value is set wherever the group has it."""
    for rule in rules:
        if not rule.applies(context):
            continue
        if rule.replace:
            group.insert(rule.spelled(), rule.value_for(context))
        elif not group.has_exact(rule.spelled()):
            group.append(rule.spelled(), rule.value_for(context))


@dataclass
class CnfGroup:
    """One ``[group]``: options in order, each [name as spelled, value or None]."""

    name: str
    options: list[list[str | None]] = field(default_factory=list)

    def find(self, name: str) -> list[str | None] | None:
        """The option named name (``_`` and ``-`` alike), or None."""
        key = name.replace("_", "-")
        for option in self.options:
            if str(option[0]).replace("_", "-") == key:
                return option
        return None

    def insert(self, name: str, value: str | None, if_missing: bool = False) -> None:
        """Set an option: a new one goes last; an existing one takes the value (unless
        if_missing), a multipart one is added again."""
        found = self.find(name)
        if found is not None and name.replace("_", "-") not in MULTIPART:
            if not if_missing:
                found[1] = value
            return
        self.options.append([name, value])

    def insert_missing(self, items: dict[str, str]) -> None:
        """insert(name, value, if_missing=True) for each item, in one pass."""
        present = {str(option[0]).replace("_", "-") for option in self.options}
        for name, value in items.items():
            key = name.replace("_", "-")
            if key in MULTIPART:
                self.insert(name, value, if_missing=True)
            elif key not in present:
                self.options.append([name, value])
                present.add(key)

    def value(self, name: str) -> str | None:
        """The option's value (None when absent or valueless)."""
        found = self.find(name)
        return None if found is None else found[1]

    def has(self, name: str) -> bool:
        """Whether the option is in the group."""
        return self.find(name) is not None

    def has_exact(self, name: str) -> bool:
        """Whether an option of exactly this spelling is in the group."""
        return any(option[0] == name for option in self.options)

    def append(self, name: str, value: str | None) -> None:
        """Add an option last, whatever else the group holds (mysqld applies the last)."""
        self.options.append([name, value])

    def as_options(self) -> list[Option]:
        """The group's options (``#`` lines left out), names normalised (``_`` as ``-``)."""
        return [Option(str(n).replace("_", "-"), v) for n, v in self.options
                if not str(n).startswith("#")]


def render_cnf(sections: dict[str, list[Option]]) -> str:
    """A server's my.cnf text from {section: options} (values quoted where needed)."""
    out = ["# Written by kewpie; options from the suite come after kewpie's own."]
    for section, options in sections.items():
        out.append(f"[{section}]")
        out.extend(o.render() for o in options)
        out.append("")
    return "\n".join(out)


def write_cnf(path: str, sections: dict[str, list[Option]], user: str | None) -> None:
    """Write a server's my.cnf privately (it may hold the SST password): 0640
    root:<user's group> when running as root for a server user (mariadbd and the
    tools read it through the group), else 0600 owned by whoever runs kewpie.  Bytes
    a value holds in another encoding than UTF-8 (kept as surrogates: a mysql-test
    case's .opt) reach the file unchanged."""
    text = render_cnf(sections)
    try:
        text.encode()
    except UnicodeEncodeError:
        write_private_file(path, "", user)
        with open(path, "wb") as fh:  # the file exists with its final mode
            fh.write(text.encode("utf-8", "surrogateescape"))
        return
    write_private_file(path, text, user)
