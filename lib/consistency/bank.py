"""The bank workload: transfers between accounts must keep the total.

Clients transfer small amounts between random accounts in transactions
(``SELECT ... FOR UPDATE``, two ``UPDATE``s, ``COMMIT``) and read all
balances.  Every read, on every node, must see all accounts and the same
total; no balance may go negative; after the run every node must hold the
same balances.
"""
from __future__ import annotations

from typing import Any

import pymysql.cursors

from .oplog import OK
from .reads import live
from .verdict import Verdict, VerdictStatus
from .workload import Call, Client, Rejected, Workload
from ..servers.server import Server


class Bank(Workload):
    """Accounts ``bank.accounts(id, balance)`` with a fixed total."""

    name = "bank"

    def __init__(self, nodes: list[Server], accounts: int = 8, total: int = 800,
                 clients: int = 4, read_share: float = 0.3, schema: str = "bank",
                 **kwargs: Any) -> None:
        super().__init__(nodes, clients, **kwargs)
        self.accounts = accounts
        self.total = total
        self.read_share = read_share
        self.schema = schema
        self.table = f"`{schema}`.`accounts`"

    def setup(self) -> None:
        """Create the accounts with the total spread evenly (the remainder on account 0)."""
        node = self.create_table(self.schema, "accounts",
                                 "id INT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL")
        each = self.total // self.accounts
        rows = [(i, each + (self.total - each * self.accounts if i == 0 else 0))
                for i in range(self.accounts)]
        node.execute(f"INSERT INTO {self.table} VALUES " + ", ".join(["(%s, %s)"] * len(rows)),
                     [v for row in rows for v in row])

    def step(self, client: Client) -> None:
        """A read of all balances, or a transfer."""
        rng = client.rng
        if rng.random() < self.read_share:
            client.invoke("read", None, self._read, node=rng.choice(self.all_servers))
            return
        src, dst = rng.sample(range(self.accounts), 2)
        amount = rng.randint(1, 5)
        client.invoke("transfer", {"from": src, "to": dst, "amount": amount},
                      lambda cur, call: self._transfer(cur, call, src, dst, amount))

    def _read(self, cur: pymysql.cursors.Cursor, _call: Call) -> dict[str, int]:
        cur.execute(f"SELECT id, balance FROM {self.table}")
        return {str(i): int(b) for i, b in cur.fetchall()}

    def _transfer(self, cur: pymysql.cursors.Cursor, call: Call, src: int, dst: int, amount: int) -> None:
        cur.execute("BEGIN")
        cur.execute(f"SELECT id, balance FROM {self.table} WHERE id IN (%s, %s) FOR UPDATE",
                    (src, dst))
        balances = dict(cur.fetchall())
        if balances.get(src, 0) < amount:
            raise Rejected(f"account {src} has {balances.get(src)} < {amount}")
        cur.execute(f"UPDATE {self.table} SET balance = balance - %s WHERE id = %s", (amount, src))
        cur.execute(f"UPDATE {self.table} SET balance = balance + %s WHERE id = %s", (amount, dst))
        call.committing = True
        cur.execute("COMMIT")

    def final_state(self) -> dict[str, dict[str, int]]:
        """Balances per running node."""
        return {n.name: {str(i): int(b) for i, b in
                         self.final_rows(n, f"SELECT id, balance FROM {self.table}")}
                for n in live(self.all_servers)}

    def check(self, final: dict[str, dict[str, int]]) -> Verdict:
        """Every ok read and every node's final balances hold the total; nodes agree."""
        return check_bank(self.history.client_ops("read", OK), self.accounts, self.total, final,
                          self.history.counts())


def _problem(balances: dict[str, int], accounts: int, total: int) -> str:
    """Why balances break the invariant ('' when they do not)."""
    problems = []
    if len(balances) != accounts:
        problems.append(f"{len(balances)} accounts instead of {accounts}")
    if sum(balances.values()) != total:
        problems.append(f"total {sum(balances.values())} instead of {total}")
    negative = sorted(k for k, v in balances.items() if v < 0)
    if negative:
        problems.append(f"negative balance on account(s) {', '.join(negative)}")
    return "; ".join(problems)


def check_bank(reads: list[Any], accounts: int, total: int,
               final: dict[str, dict[str, int]], counts: Any = None) -> Verdict:
    """The bank checker (see the module docstring)."""
    evidence = []
    bad = []
    for op in reads:
        problem = _problem(op.value, accounts, total)
        if problem:
            bad.append(f"{problem}: read {op.describe()}")
    bad_reads = len(bad)
    for node, balances in sorted(final.items()):
        problem = _problem(balances, accounts, total)
        if problem:
            evidence.append(f"final balances on {node}: {problem}: {balances}")
    if len(final) > 1:
        names = sorted(final)
        ref = final[names[0]]
        for other in names[1:]:
            for acc in sorted(set(ref) | set(final[other]), key=int):
                if ref.get(acc) != final[other].get(acc):
                    evidence.append(f"account {acc}: balance {ref.get(acc)} on {names[0]} but "
                                    f"{final[other].get(acc)} on {other}")
    evidence += bad  # the final state first: it is short and says the most
    if evidence:
        summary = (f"{bad_reads} of {len(reads)} reads broke the invariant (total {total}, "
                   f"{accounts} accounts)" if bad_reads else "the final balances are wrong")
        return Verdict("bank", VerdictStatus.INVALID, summary, evidence, counts)
    if not reads or not final:
        what = "no read succeeded" if not reads else "no server could be read after the run"
        return Verdict("bank", VerdictStatus.UNKNOWN, f"{what}: nothing to judge", [], counts)
    return Verdict("bank", VerdictStatus.VALID,
                   f"all {len(reads)} reads and {len(final)} final states hold the total {total}",
                   [], counts)
