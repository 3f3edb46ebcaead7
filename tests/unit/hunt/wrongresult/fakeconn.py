"""A fake connection for the oracles' unit tests: each query answered by a function of its
SQL text (the cursor protocol run_query uses: execute, description, fetchall, nextset)."""
from __future__ import annotations

from typing import Callable, Sequence


class AnswerCursor:
    """A cursor whose rows for a statement are answer(sql)."""

    def __init__(self, answer: Callable[[str], list[tuple]], columns: Sequence[str]) -> None:
        self.answer = answer
        self.description = tuple((c,) for c in columns)
        self.rows: list[tuple] = []

    def execute(self, sql: str) -> None:
        self.rows = self.answer(sql)

    def fetchall(self) -> list[tuple]:
        return self.rows

    def nextset(self) -> bool:
        return False

    def __enter__(self) -> "AnswerCursor":
        return self

    def __exit__(self, *exc: object) -> bool:
        return False


class AnswerConnection:
    """A connection (autocommit on) whose cursors answer with answer(sql)."""

    columns: Sequence[str] = ("a",)

    def answer(self, sql: str) -> list[tuple]:
        """The rows of sql (a subclass says)."""
        raise NotImplementedError

    def get_autocommit(self) -> bool:
        return True

    def cursor(self) -> AnswerCursor:
        return AnswerCursor(self.answer, self.columns)
