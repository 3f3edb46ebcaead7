"""A server started for mysql-test cases: its options in mysql-test-run's order.

mysqld applies options in the order it reads them, and some depend on that
order (``log-basename`` sets the default log names, so a ``log-error`` after
it wins).  kewpie's own servers merge the suite's options into kewpie's
(first position kept); a mysql-test server takes kewpie's base options only
where the test's config says nothing, then every option of the config and
command line in mtr's order.
"""
from __future__ import annotations

from lib.servers.options import Option
from lib.servers.server import Server


class MtrServer(Server):
    """A plain server whose user options keep their own order (``mtr`` server kind)."""

    server_type = "mtr"

    def effective_options(self) -> list[Option]:
        """kewpie's base options the config does not set, then the config's, in its order."""
        own = {o.name for o in self.user_options}
        base = [o for o in [*self.base_options(), *self.settings.extra_defaults,
                            *self.harness_options] if o.name not in own]
        return base + list(self.user_options)
