"""Secrets kewpie is handed, and the one redaction every record, page and log line
goes through (docs/architecture.md, "Security model").

A secret is a password in a URL (``mysql://user:PASSWORD@host:port/database``: the
results history's DSN, a sweep's) or the value of a secret option
(``--wsrep-sst-auth=user:PASSWORD``, ``--mysqld=--report-password=X``, a sysbench
``--mysql-password=X``).  Which option names hold a secret is declared here, once:
a name in :data:`SECRET_OPTIONS`, or one containing a word of :data:`SECRET_WORDS`
that :data:`NOT_SECRET` does not list (``--default-password-lifetime`` is a number).
Names are compared as the server compares them: dashes and underscores alike, any
case, without ``--`` and the ``loose-`` prefix.

:func:`redact` replaces each secret by ``***`` in a value (a string, or lists and
mappings of them: a run's options, a sweep's spec); :func:`redact_text` does it in
free text (a log line, a failure's text).  Over-redaction is the safe side: a value
that only looks like a secret loses its text, a secret never shows.

:data:`SECRET_ENVIRONMENT` names the variables that carry a secret into kewpie
(``KEWPIE_HISTORY_DSN``); :func:`child_environment` keeps them from every process
kewpie starts (servers run as another user, who could read them in
``/proc/PID/environ``); a file holding a secret must have no other :func:`readers`
than its owner.
"""
from __future__ import annotations

import re
import stat
from typing import Any, Mapping

MASK = "***"
HISTORY_DSN_ENV = "KEWPIE_HISTORY_DSN"
SECRET_ENVIRONMENT = frozenset({HISTORY_DSN_ENV})

# Option names whose value is a secret although no word of SECRET_WORDS is in them.
SECRET_OPTIONS = frozenset({
    "wsrep-sst-auth",                   # Galera's SST account, user:password
    "file-key-management-filekey",      # the key that decrypts the encryption keys file
    "hashicorp-key-management-token",   # a Vault token
    "encrypt-key", "transition-key",    # mariadb-backup / xtrabackup encryption keys
    "auth", "pass", "pwd",              # a tool's short spellings (wsrep_sst_* --auth)
})
# Any name containing one of these words holds a secret (unless NOT_SECRET lists it):
# --password, --report-password, sysbench's --mysql-password, --pgsql-password...
SECRET_WORDS = ("password", "passwd", "secret")
# Names with a secret word whose value is no secret (numbers, switches, file paths):
# the server's and its password plugins' options.
NOT_SECRET = frozenset({
    "default-password-lifetime", "disconnect-on-expired-password", "max-password-errors",
    "old-passwords", "strict-password-validation",
    "simple-password-check", "simple-password-check-digits",
    "simple-password-check-letters-same-case", "simple-password-check-minimal-length",
    "simple-password-check-other-characters",
    "cracklib-password-check", "cracklib-password-check-dictionary",
    "password-reuse-check", "password-reuse-check-interval",
})
PREFIXES = ("loose-", "maximum-")

# scheme://[user[:password]@]host...: the authority ends at the first / ? # or space
_URL = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<authority>[^\s/?#]*)")
# NAME= (with or without dashes) not inside another word, a dotted name or a path:
# socket.ssl_password_file=PATH inside wsrep_provider_options is a file, no secret
_NAME_EQ = re.compile(r"(?<![\w./-])-*(?P<name>[A-Za-z][\w-]*)=")
_VALUE = re.compile(r"\"[^\"]*\"|'[^']*'|\S+")


def option_name(name: str) -> str:
    """name as the server compares option names: no leading dashes, no ``loose-`` or
    ``maximum-`` prefix, ``_`` as ``-``, lower case."""
    key = name.lstrip("-").replace("_", "-").lower()
    for prefix in PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix):]
    return key


def is_secret_option(name: str) -> bool:
    """Whether option (or setting) name holds a secret (module docstring)."""
    key = option_name(name)
    if key in SECRET_OPTIONS:
        return True
    return key not in NOT_SECRET and any(word in key for word in SECRET_WORDS)


def _url_password(match: re.Match[str]) -> str:
    authority = match.group("authority")
    userinfo, at, host = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return match.group(0)
    user, _, password = userinfo.partition(":")
    if not password:
        return match.group(0)
    return f"{match.group('scheme')}{user}:{MASK}@{host}"


def has_url_password(text: str) -> bool:
    """Whether text holds a URL with a password (``scheme://user:PASSWORD@host``)."""
    return "://" in text and _URL.sub(_url_password, text) != text


def _secret_options(text: str) -> str:
    """text with the value of every NAME=VALUE whose name is secret masked."""
    out: list[str] = []
    pos = 0
    for match in _NAME_EQ.finditer(text):
        if match.start() < pos or not is_secret_option(match.group("name")):
            continue
        value = _VALUE.match(text, match.end())
        if value is None:
            continue
        out += [text[pos:match.end()], MASK]
        pos = value.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def redact_text(text: str) -> str:
    """text with URL passwords and secret options' values replaced by ``***``."""
    if "=" not in text and "://" not in text:  # the common line: nothing to look at
        return text
    return _secret_options(_URL.sub(_url_password, text))


def redact(value: Any) -> Any:
    """value with its secrets replaced by ``***``: a string as :func:`redact_text`; in
    a mapping, the value of a secret key (``wsrep_sst_auth``) wholly; lists, tuples and
    mappings walked (a copy: value is not changed); anything else as it is."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {key: (MASK if isinstance(key, str) and is_secret_option(key)
                      and isinstance(item, (str, int, float)) and not isinstance(item, bool)
                      and item != "" else redact(item))
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(item) for item in value)
    return value


def secret_like_patterns() -> tuple[str, ...]:
    """SQL LIKE patterns at least one of which every text :func:`redact_text` would
    change matches (a URL with a user, a secret word, a secret option's name, ``_``
    matching its ``-`` or ``_``): a store's scrub reads only the rows that match."""
    names = {name.replace("-", "_") for name in SECRET_OPTIONS}
    return ("%://%@%", *(f"%{word}%" for word in sorted({*SECRET_WORDS, *names})))


def readers(mode: int) -> str:
    """Who besides its owner may read a file of this mode ('its group', 'others', 'its
    group and others'; '' for nobody): a file holding a secret must say ''."""
    return " and ".join(who for bit, who in ((stat.S_IRGRP, "its group"),
                                            (stat.S_IROTH, "others")) if mode & bit)


def exposed_secret(where: str, path: str, mode: int) -> str:
    """Why a secret at ``where`` in the file ``path`` (of this mode, which :func:`readers`
    says others may read) is refused, and the two ways out: the one message of the
    command line's config files and the pytest plugin's ini file."""
    return (f"{where}: holds a password, and {readers(mode)} may read {path} (mode "
            f"{stat.S_IMODE(mode):04o}): make it yours alone (chmod 600 {path}) or give "
            f"the DSN in {HISTORY_DSN_ENV} (docs/configuration.md)")


def child_environment(env: Mapping[str, str] | None,
                      ours: Mapping[str, str]) -> dict[str, str] | None:
    """A child's environment without :data:`SECRET_ENVIRONMENT`: env without them, or
    (env None: the child inherits ours) None when ours has none of them, else a copy of
    ours without them."""
    if env is None:
        if not any(name in ours for name in SECRET_ENVIRONMENT):
            return None
        env = ours
    return {k: v for k, v in env.items() if k not in SECRET_ENVIRONMENT}

