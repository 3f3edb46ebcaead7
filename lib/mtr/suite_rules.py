"""What mysql-test's ``suite.pm`` files decide for this build, read without Perl.

mysql-test-run (``lib/mtr_cases.pm``) loads a suite's ``suite.pm`` with Perl's
``do``: a top-level ``return "reason"`` skips every test of the suite with that
reason (and the suite is then never in the default list); ``sub is_default``
puts a plugin suite in the default list; ``sub skip_combinations`` names
combinations (``file => [names]``) or whole include files (``file => reason``)
to skip.  kewpie reads the first two from the files (:func:`suite_skip`,
:func:`is_default`): their statements are short conditions over the server's
variables (``$::mysqld_variables{...}``, from ``mariadbd --verbose --help``),
the environment mtr exports (``$ENV{HA_ARCHIVE_SO}``...), the platform
(``IS_WINDOWS``) and mtr's options (none of which kewpie sets:
``$::opt_embedded_server`` is false), which :class:`Condition` evaluates; a
condition it cannot read counts as not met, so such a suite is skipped with its
own reason (``'indexer' binary not found``).  ``skip_combinations`` is code:
:func:`skip_rules` holds, in Python, what each suite's returns on Linux
(the main suite's, mariabackup's, plugins' pam rule, federated's,
encryption's...).
"""
from __future__ import annotations

import os
import re
import shutil
import socket
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

STRING = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""")
TOKEN = re.compile(r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
                   r"""|(?P<num>\d+(?:\.\d+)?)"""
                   r"""|(?P<op>\|\||&&|!|\(|\)|,)"""
                   r"""|(?P<env>\$ENV\{\s*['"]?(?P<envname>\w+)['"]?\s*\})"""
                   r"""|(?P<var>\$::mysqld_variables\{\s*['"]?(?P<varname>[\w-]+)['"]?\s*\})"""
                   r"""|(?P<scalar>\$(?:::)?\w+)"""
                   r"""|(?P<word>[A-Za-z_][\w:]*))""")
WORD_OPS = frozenset({"or", "and", "not", "eq", "ne", "lt", "gt", "le", "ge", "defined",
                      "exists", "unless", "if"})
BLOCK_START = re.compile(r"\s*(?:sub\s|if\b|unless\b|for\b|foreach\b|while\b|\{)")
PLATFORM = MappingProxyType({"IS_WINDOWS": False, "IS_WIN32PERL": False, "IS_CYGWIN": False, "IS_AIX": False})


class Unknown(Exception):
    """A part of a suite.pm condition kewpie cannot evaluate."""


@dataclass(frozen=True)
class BuildFacts:
    """What the conditions of suite.pm files look at, for one code tree."""

    features: Mapping[str, str]            # mariadbd --verbose --help's variables
    env: Mapping[str, str]                 # what mtr exports (<PLUGIN>_SO, XTRABACKUP...)
    user: str | None = None                # who runs the servers (mtr: the user running it)
    plugin_dir: str = ""
    basedir: str = ""
    scalars: Mapping[str, object] = field(default_factory=dict)  # known suite.pm variables

    def wsrep_not_ok(self) -> str | None:
        """suite/wsrep/common.pm's wsrep_not_ok: why Galera suites cannot run (None: they can)."""
        if not self.features.get("wsrep-on"):
            return "WSREP is not compiled in"
        provider = self.env.get("WSREP_PROVIDER", "")
        if not provider or provider == "none" or not os.path.isfile(provider):
            return "No wsrep provider library"
        return None


class Condition:
    """A Perl condition of a suite.pm, parsed and evaluated over BuildFacts (Unknown when
    it uses something else)."""

    def __init__(self, text: str, facts: BuildFacts) -> None:
        self.tokens = tokenize(text)
        self.pos = 0
        self.facts = facts

    def value(self) -> object:
        """The value of the whole expression (Unknown for what cannot be read)."""
        result = self._or()
        if self.pos != len(self.tokens):
            raise Unknown(f"unexpected {self.tokens[self.pos][1]!r}")
        return result

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self, *values: str) -> bool:
        token = self._peek()
        if token is not None and token[1] in values and token[0] in ("op", "word"):
            self.pos += 1
            return True
        return False

    def _or(self) -> object:
        left = self._and()
        while self._take("or", "||"):
            right = self._and()
            left = left if truthy(left) else right
        return left

    def _and(self) -> object:
        left = self._not()
        while self._take("and", "&&"):
            right = self._not()
            left = right if truthy(left) else left
        return left

    def _not(self) -> object:
        if self._take("not", "!"):
            return not truthy(self._not())
        return self._compare()

    def _compare(self) -> object:
        left = self._atom()
        token = self._peek()
        if token is not None and token[0] == "word" and token[1] in ("eq", "ne", "lt", "gt",
                                                                      "le", "ge"):
            self.pos += 1
            right = self._atom()
            a, b = str(left if left is not None else ""), str(right if right is not None else "")
            return {"eq": a == b, "ne": a != b, "lt": a < b, "gt": a > b, "le": a <= b,
                    "ge": a >= b}[token[1]]
        return left

    def _atom(self) -> object:
        token = self._peek()
        if token is None:
            raise Unknown("expression ends early")
        kind, text = token
        self.pos += 1
        if kind == "op" and text == "(":
            inner = self._or()
            if not self._take(")"):
                raise Unknown("unbalanced parentheses")
            return inner
        if kind == "str":
            return unquote(text)
        if kind == "env":
            return self.facts.env.get(text)
        if kind == "var":
            return self.facts.features.get(text)
        if kind == "scalar":
            name = text.replace("$::", "$")
            if name.startswith("$opt_"):
                return None   # kewpie sets none of mtr's options (embedded, valgrind, ssl...)
            if name in self.facts.scalars:
                return self.facts.scalars[name]
            raise Unknown(f"variable {text}")
        if kind == "word":
            if text in ("defined", "exists"):
                parens = self._take("(")
                inner = self._atom()
                if parens and not self._take(")"):
                    raise Unknown("unbalanced parentheses")
                return inner is not None
            if text in PLATFORM:
                return PLATFORM[text]
            if text == "wsrep_not_ok":
                if self._take("("):
                    if not self._take(")"):
                        raise Unknown("wsrep_not_ok with arguments")
                return self.facts.wsrep_not_ok()
        raise Unknown(f"{text!r}")


def tokenize(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens of a condition (Unknown for anything else)."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise Unknown(f"cannot read {text[pos:pos + 20]!r}")
        pos = m.end()
        if m.group("str"):
            tokens.append(("str", m.group("str")))
        elif m.group("num"):
            tokens.append(("str", repr(m.group("num"))))
        elif m.group("op"):
            tokens.append(("op", m.group("op")))
        elif m.group("env"):
            tokens.append(("env", m.group("envname")))
        elif m.group("var"):
            tokens.append(("var", m.group("varname")))
        elif m.group("scalar"):
            tokens.append(("scalar", m.group("scalar")))
        elif m.group("word"):
            tokens.append(("word", m.group("word")))
        text_rest = text[pos:].strip()
        if not text_rest:
            break
    return tokens


def unquote(text: str) -> str:
    """A Perl string literal's text (escapes dropped)."""
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def truthy(value: object) -> bool:
    """Perl's truth: undef, '' and '0' are false."""
    return value not in (None, False, "", "0", 0)


# ---------------------------------------------------------------------- suite.pm
def top_level_statements(text: str) -> list[str]:
    """The statements of a Perl file outside any block (comments, strings and nested
    blocks understood well enough for suite.pm files); a ``sub NAME {...}`` is one."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    i = 0
    quote = ""
    while i < len(text):
        c = text[i]
        if quote:
            current.append(c)
            if c == "\\" and i + 1 < len(text):
                current.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if c in "'\"":
            quote = c
        elif c in "{(":
            depth += 1
        elif c in "})":
            depth = max(0, depth - 1)
            if depth == 0 and c == "}" and BLOCK_START.match("".join(current)) \
                    and not re.match(r"\s*(?:else|elsif)\b", text[i + 1:]):
                current.append(c)   # a block statement ends with its block
                out.append("".join(current).strip())
                current = []
                i += 1
                continue
        if c == ";" and depth == 0:
            out.append("".join(current).strip())
            current = []
            i += 1
            continue
        current.append(c)
        i += 1
    if "".join(current).strip():
        out.append("".join(current).strip())
    return [s for s in out if s]


RETURN = re.compile(r"""^return\s+(?P<value>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|.+?)"""
                    r"(?:\s+(?P<how>if|unless)\s+(?P<cond>.+))?$", re.S)
IS_DEFAULT = re.compile(r"^sub\s+is_default\s*\{(?P<body>.*)\}$", re.S)


def read_suite_pm(suite_dir: str) -> list[str]:
    """The top-level statements of suite_dir/suite.pm ([] without one)."""
    try:
        with open(os.path.join(suite_dir, "suite.pm"), errors="replace") as fh:
            return top_level_statements(fh.read())
    except OSError:
        return []


def suite_skip(suite_dir: str, facts: BuildFacts) -> str:
    """Why suite.pm skips the whole suite ('' when it runs): its first top-level
    ``return`` whose condition holds; one kewpie cannot evaluate counts as holding."""
    for statement in read_suite_pm(suite_dir):
        m = RETURN.match(statement)
        if not m:
            continue
        try:
            value = Condition(m.group("value"), facts).value()
        except Unknown:
            value = unquote(m.group("value")) if STRING.fullmatch(m.group("value")) else "skipped"
        if not truthy(value) and m.group("value").strip().startswith("wsrep_not_ok"):
            continue   # 'return wsrep_not_ok() if wsrep_not_ok()': nothing wrong
        how = m.group("how")
        if how is None:
            if isinstance(value, str) and value:
                return value
            continue
        try:
            met: bool | None = truthy(Condition(m.group("cond"), facts).value())
        except Unknown:
            met = None   # 'unless': a requirement kewpie cannot check is not met
        holds = (not met) if how == "unless" else bool(met)
        if holds:
            return str(value) if truthy(value) else "skipped by suite.pm"
    return ""


def is_default(suite_dir: str, facts: BuildFacts) -> bool:
    """Whether mtr's default list takes the suite (``sub is_default`` true, and the
    suite not skipped as a whole)."""
    if suite_skip(suite_dir, facts):
        return False
    for statement in read_suite_pm(suite_dir):
        m = IS_DEFAULT.match(statement)
        if m:
            try:
                return truthy(Condition(m.group("body").strip().rstrip(";"), facts).value())
            except Unknown:
                return False
    return False


# ---------------------------------------------------------------------- skip_combinations
def owns(path: str, user: str | None) -> bool:
    """Perl's ``-o path`` for user (the current user when None)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if user is None:
        return st.st_uid == os.geteuid()
    import pwd
    try:
        return st.st_uid == pwd.getpwnam(user).pw_uid
    except KeyError:
        return False


def ipv6_ok() -> bool:
    """main's suite.pm ipv6_ok: an IPv6 socket can be bound on ::1."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


def openssl_version(features: Mapping[str, str]) -> str:
    """The OpenSSL version of the server's SSL library ('' for another library or none)."""
    m = re.search(r"OpenSSL (\S+)", features.get("version-ssl-library", ""))
    return m.group(1) if m else ""


def skip_rules(mtr_root: str, features: Mapping[str, str], env: Mapping[str, str],
               optional_plugins: frozenset[str] = frozenset(),
               user: str | None = None) -> dict[str, object]:
    """The ``skip_combinations`` of the suites' suite.pm files for this build:
    {combinations path: reason (skip every test sourcing the file) or [combinations to
    skip]}.  An include file's rule is keyed by its ``.combinations`` twin, as mtr keys it."""
    rules: dict[str, object] = {}

    def add(base: str, rel: str, rule: object) -> None:
        """Rule for base/rel, keyed by the .combinations twin of the file."""
        stem = re.sub(r"\.\w+$", "", rel)
        rules[os.path.join(base, stem + ".combinations")] = rule

    for base_rel, maker in SUITE_SKIPS.items():
        base = os.path.join(mtr_root, base_rel) if base_rel else mtr_root
        for rel, rule in maker(features, env, user).items():
            add(base, rel, rule)
    for rel, rule in known_runtime_skips(features).items():
        add(mtr_root, rel, rule)
    return rules


def known_runtime_skips(features: Mapping[str, str]) -> dict[str, object]:
    """Skips no suite.pm declares, that an include file makes at run time and the build's
    features already decide: kewpie skips the test before starting its servers, with
    the include's own reason.  ``include/have_debug_sync.inc`` skips "debug_sync is not
    available" unless ``debug_sync`` is on; mtr starts every server with
    ``--loose-debug-sync-timeout``, so it is on exactly when the server has that
    option (a build with debug sync compiled in).  A Galera case sourcing it took
    2.3 s of servers to skip (162 cases of the Galera suites do)."""
    skip: dict[str, object] = {}
    if "debug-sync-timeout" not in features:
        skip["include/have_debug_sync.inc"] = "debug_sync is not available"
    return skip


def _main_skips(features: Mapping[str, str], env: Mapping[str, str],
                user: str | None) -> dict[str, object]:
    """mysql-test/suite.pm's skip_combinations, on Linux, with no mtr option set."""
    debug = "debug-dbug" in features
    ssl_lib = features.get("version-ssl-library", "")
    openssl = openssl_version(features)
    skip: dict[str, object] = {
        "include/platform.combinations": ["aix", "win"],
        "include/protocol.combinations": ["ps"],
        "include/maybe_debug.combinations": ["release" if debug else "debug"],
        "include/word_size.combinations": [
            "64bit" if features.get("max-binlog-stmt-cache-size") == "4294963200" else "32bit"],
        "include/check_windows_admin.inc": "Requires admin privileges",
        "include/no_utf8_cli.inc": "Not tested with utf8 command line support",
    }
    if not env.get("DEBUG_KEY_MANAGEMENT_SO"):
        skip["include/innodb_encrypt_log.combinations"] = ["crypt"]
    if not debug:
        skip["include/have_debug.inc"] = "Requires debug build"
    if not env.get("HA_EXAMPLE_SO"):
        skip["include/have_example_plugin.inc"] = "Need example plugin"
    if features.get("innodb") not in (None, "ON"):
        skip["main/plugin_loaderr.test"] = "needs compiled-in innodb"
    if not ipv6_ok():
        skip["include/check_ipv6.inc"] = "No IPv6"
    if not ssl_lib:
        skip["include/have_ssl_communication.inc"] = "Requires SSL"
        skip["include/have_ssl_crypto_functs.inc"] = "Requires SSL"
    if not ("1.0.1d" <= openssl < "1.1.1"):
        skip["main/openssl_6975.test"] = "no or wrong openssl version"
    if not ("WolfSSL" in ssl_lib or openssl >= "1.0.2"):
        skip["main/ssl_7937.combinations"] = ["x509v3"]
    if not ("WolfSSL" in ssl_lib or openssl >= "3.0.0"):
        skip["main/tlsv13.test"] = "does not work with OpenSSL <= 1.1.1"
    if not openssl >= "1.0.2":
        skip["main/ssl_verify_ip.test"] = "x509v3 support required"
    return skip


def _mariabackup_skips(features: Mapping[str, str], env: Mapping[str, str],
                       user: str | None) -> dict[str, object]:
    """suite/mariabackup/suite.pm."""
    skip: dict[str, object] = {}
    if not env.get("FILE_KEY_MANAGEMENT_SO"):
        skip["include/have_file_key_management.inc"] = "needs file_key_management plugin"
    if not shutil.which("qpress"):
        skip["compress_qpress.test"] = "needs qpress executable in PATH"
    return skip


def _plugins_skips(features: Mapping[str, str], env: Mapping[str, str],
                   user: str | None) -> dict[str, object]:
    """suite/plugins/suite.pm: the pam tests need mtr's pam service and a user that owns
    ``$::plugindir/auth_pam_tool_dir`` (the later rule wins, as in the Perl).  mtr sets
    $::plugindir only in its workers, after the tests are collected, so the path it
    looks at is ``/auth_pam_tool_dir``: kewpie looks there too (the server user's)."""
    skip: dict[str, object] = {}
    if not os.path.exists("/etc/pam.d/mariadb_mtr"):
        skip["t/pam_init.inc"] = "No pam setup for mtr"
    if not owns("/auth_pam_tool_dir", user):
        skip["t/pam_init.inc"] = "Not run as user owning auth_pam_tool_dir"
    return skip


def _federated_skips(features: Mapping[str, str], env: Mapping[str, str],
                     user: str | None) -> dict[str, object]:
    """suite/federated/suite.pm: the 'old' and 'X' engines as the build has them."""
    skipped = []
    if not (env.get("HA_FEDERATED_SO") and not features.get("federated")):
        skipped.append("old")
    if not (env.get("HA_FEDERATEDX_SO") or features.get("federated")):
        skipped.append("X")
    return {"combinations": skipped}


def _encryption_skips(name: str) -> Callable[[Mapping[str, str], Mapping[str, str], str | None],
                                             dict[str, object]]:
    """suite/encryption's and suite/binlog_encryption's suite.pm: 'ctr' needs OpenSSL 1.0.1."""
    def skips(features: Mapping[str, str], env: Mapping[str, str],
              user: str | None) -> dict[str, object]:
        """The rule for this suite's combinations file."""
        return {} if openssl_version(features) >= "1.0.1" else {name: ["ctr"]}
    return skips


SUITE_SKIPS: Mapping[str, Callable[[Mapping[str, str], Mapping[str, str], str | None],
                                   dict[str, object]]] = MappingProxyType({
    "": _main_skips,
    "suite/mariabackup": _mariabackup_skips,
    "suite/plugins": _plugins_skips,
    "suite/federated": _federated_skips,
    "suite/encryption": _encryption_skips("include/have_file_key_management_plugin.combinations"),
    "suite/binlog_encryption": _encryption_skips("encryption_algorithms.combinations"),
    "plugin/myisam/mtr2": lambda features, env, user: {"combinations": ["1st"]},
    "plugin/example/mtr": lambda features, env, user: {"t/combs.combinations": ["c1"]},
})


# ---------------------------------------------------------------------- the default list
DEFAULT_QW = re.compile(r"my\s+@DEFAULT_SUITES\s*=\s*qw\s*\((?P<names>[^)]*)\)", re.S)
DEFAULT_STR = re.compile(r"""\$DEFAULT_SUITES\s*=\s*["'](?P<names>[^"']*)["']""")


def listed_default_suites(mtr_root: str) -> list[str]:
    """DEFAULT_SUITES of the tree's mariadb-test-run.pl (mysql-test-run.pl), with mtr's
    overlay marks (``main-``: the suite and its overlays); ['main-'] when the script
    names none."""
    for script in ("mariadb-test-run.pl", "mysql-test-run.pl"):
        try:
            with open(os.path.join(mtr_root, script), errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        m = DEFAULT_QW.search(text) or DEFAULT_STR.search(text)
        if m:
            return [n.strip() for n in re.split(r"[\s,]+", m.group("names")) if n.strip()]
    return ["main-"]


def plugin_suites(mtr_root: str) -> list[tuple[str, str]]:
    """(name, directory) of every suite with a suite.pm under ``plugin/*/``, named as mtr
    names them (the path below the plugin's directory: ``sequence``, ``spider/bugfix``),
    in the order mtr's File::Find walks them."""
    found: list[tuple[str, str]] = []
    root = os.path.join(mtr_root, "plugin")
    try:
        plugins = sorted(os.listdir(root))
    except OSError:
        return found
    for plugin in plugins:
        top = os.path.join(root, plugin)
        if not os.path.isdir(top):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            if dirpath != top and "suite.pm" in filenames:
                found.append((os.path.relpath(dirpath, top), dirpath))
    return found


def default_suites(mtr_root: str, facts: BuildFacts) -> list[str]:
    """mtr's default suite list: DEFAULT_SUITES (``main-``: with its overlays), then the
    plugin suites whose suite.pm says is_default (overlays of a suite of
    mysql-test/suite, and ``main``, left out)."""
    names = listed_default_suites(mtr_root)
    for name, directory in plugin_suites(mtr_root):
        if name == "main" or os.path.isdir(os.path.join(mtr_root, "suite", name)):
            continue
        if name not in names and f"{name}-" not in names and is_default(directory, facts):
            names.append(name)
    return names
