"""kewpie 2012's ``test_executor.matrix_manager``: the ``--opt-matrix`` option set.

``--opt-matrix k1=v1,k2=v2`` gives tests ``matrix_manager.option_matrix``
(``{'k1': 'v1', 'k2': 'v2'}``); ``matrix_check_req(['k1'])`` raises KeyError
naming an option a test needs that the run did not give.
"""
from __future__ import annotations

from ..errors import UsageError


def parse_opt_matrix(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` as a dict; UsageError for an entry without ``=`` or a name."""
    matrix: dict[str, str] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--opt-matrix {text}: {item!r} is not name=value "
                             f"(e.g. --opt-matrix innodb_page_size=4K,compression=zlib)")
        matrix[key.strip()] = value.strip()
    return matrix


class matrixManager:  # noqa: N801 - the 2012 name
    """The option matrix of the run."""

    def __init__(self, option_matrix: dict[str, str]) -> None:
        self.option_matrix = dict(option_matrix)

    def matrix_check_req(self, matrix_reqlist: list[str]) -> None:
        """KeyError naming the first required option missing from --opt-matrix."""
        for name in matrix_reqlist:
            if not self.option_matrix.get(name):
                raise KeyError(f"The required option {name} missing from opt-matrix")
