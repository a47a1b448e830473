"""Keep secrets out of anything that is shown, logged or written (probe evidence, files).

The one redactor of the project: probe evidence and verdicts, ``probe --json`` and
``--record-site`` files, launch_config.json, the server's endpoint, the widgets and the
doctor's findings all pass through :func:`redact` (or :func:`redact_tree`).

Secrets are found three ways:

- by the environment: values of secret-named variables (``OPENAI_API_KEY``, ``SLURM_DB_PASS``,
  ``PGPASSWORD``, ``MYSQL_PWD``...) are replaced wherever they appear;
- by name in the text: ``NAME=value``, ``NAME: value``, ``"name": "value"``, ``--name value``
  whose name looks secret, also nested (``X=token=...``);
- by value, whatever the name: credentials in URLs (``https://user:pw@host``, ``?api_key=``),
  ``Authorization: Bearer ...``, netrc ``password ...``, and known token shapes (``sk-``,
  ``ghp_``, ``github_pat_``, ``glpat-``, ``AIza``, ``AKIA``, JWTs, private-key blocks, the keys
  of the providers LiteLLM reaches: Groq ``gsk_``, Perplexity ``pplx-``, Replicate ``r8_``,
  Fireworks ``fw_``, Cerebras ``csk-``...), and a quoted key after "Invalid key".
"""
from __future__ import annotations

import functools
import re
from typing import Any, Mapping

MASK = "***"

# A name is secret when one of its underscore-separated words (or a trailing pair) says so.
_SECRET_WORDS = frozenset(
    {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "APIKEY",
     "PASS", "PWD", "AUTHORIZATION", "COOKIE", "SESSIONID", "PRIVATEKEY", "ACCESSKEY",
     "SECRETKEY", "AUTHTOKEN", "CLIENTSECRET"}
)
# Glued forms: PGPASSWORD, DBPASS, MYTOKEN, APISECRET.
_SECRET_ENDINGS = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "APIKEY")
_SECRET_SUFFIXES = ("_API_KEY", "_KEY", "_PRIVATE_KEY", "_ACCESS_KEY")
_NOT_SECRET = frozenset({"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "XAUTHORITY", "KEYTAB", "PWD",
                         "OLDPWD", "PASS_MAX_DAYS", "PASS_MIN_DAYS", "PASS_WARN_AGE"})
_NOT_SECRET_ENDINGS = ("_FILE", "_PATH", "_DIR", "_SOCK", "_CMD", "_COMMAND", "_URL_FILE")

# Token shapes that are secret whatever variable they came from, each with a literal piece
# that must occur for the shape to be looked for (a plain text pays for none of them).
_TOKEN_SHAPES = tuple((literal, re.compile(shape)) for literal, shape in (
    ("PRIVATE KEY-----",
     r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
    ("sk-", r"\bsk-[A-Za-z0-9_\-]{16,}"),  # OpenAI / Anthropic style
    ("xai-", r"\bxai-[A-Za-z0-9]{32,}"),  # xAI
    ("_live_", r"\b(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}"),  # Stripe
    ("_test_", r"\b(?:sk|rk|pk)_test_[A-Za-z0-9]{16,}"),
    ("hf_", r"\bhf_[A-Za-z0-9]{20,}"),  # Hugging Face
    ("github_pat_", r"\bgithub_pat_[A-Za-z0-9_]{20,}"),  # GitHub fine-grained
    ("_", r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub
    ("gl", r"\bgl(?:pat|dt|ptt|rt|cbt|oas)-[A-Za-z0-9_\-]{20,}"),  # GitLab
    ("xox", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack
    ("AIza", r"\bAIza[0-9A-Za-z_\-]{35}"),  # Google API key
    ("ya29.", r"\bya29\.[0-9A-Za-z_\-]{20,}"),  # Google OAuth access token
    ("AKIA", r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
    ("ASIA", r"\bASIA[0-9A-Z]{16}\b"),
    ("npm_", r"\bnpm_[A-Za-z0-9]{36}\b"),  # npm
    ("pypi-", r"\bpypi-[A-Za-z0-9_\-]{50,}"),  # PyPI
    ("eyJ", r"(?<![A-Za-z0-9_\-])(?P<lead>(?:(?!\beyJ)[A-Za-z0-9_\-])*+)"  # JWT (once per word,
     r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),  # as _LEAD)
    # The other providers LiteLLM reaches:
    ("gsk_", r"\bgsk_[A-Za-z0-9]{20,}"),  # Groq
    ("pplx-", r"\bpplx-[A-Za-z0-9]{20,}"),  # Perplexity
    ("r8_", r"\br8_[A-Za-z0-9]{20,}"),  # Replicate
    ("fw_", r"\bfw_[A-Za-z0-9]{20,}"),  # Fireworks
    ("csk-", r"\bcsk-[A-Za-z0-9]{20,}"),  # Cerebras
    # A bare quoted key a provider echoes back: "Invalid key 'abc...'" (the quotes go too)
    ("nvalid", r"(?:(?<=[Ii]nvalid key )|(?<=[Ii]nvalid key: )|(?<=[Ii]nvalid key=)"
               r"|(?<=[Ii]nvalid API key )|(?<=[Ii]nvalid API key: ))"
               r"(?P<q>['\"`])[A-Za-z0-9_.\-]{12,}(?P=q)"),
))
# A line is searched for secret pairs only when it holds one of these (lower case).
_LINE_WORDS = ("token", "secret", "pass", "pwd", "key", "auth", "credential", "cookie",
               "session", "bearer", "basic", "digest", "negotiate", "account")

# Only names containing one of these can be secret: the pair patterns skip every other name.
_MAYBE_SECRET = r"(?=[A-Za-z0-9_.\-]*(?i:token|secret|pass|pwd|key|auth|credential|cookie|session))"
# scheme://user:password@host -> scheme://user:***@host (a bare user@host is no secret).
# A name (or a scheme) is looked for once per word: from the word's start, past what cannot
# begin one (``_LEAD``: digits, dots, dashes, letters glued to the one before), to where the
# first could. When that one fails, every later start in the word fails too (the name must reach
# the word's end), and trying each ``.``/``-`` of "a-a-a-a..." again rescanned the rest of the
# word: a quadratic pattern on one long line. What is masked is the same.
_LEAD = r"(?:[0-9.\-]|\B[A-Za-z_])*+"
_URL_CREDENTIALS = re.compile(r"(?P<head>(?<![A-Za-z0-9+.\-])(?:[0-9+.\-]|\B[A-Za-z])*+"
                              r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@\"'<>]*:)"
                              r"(?P<value>[^\s/@\"'<>]+)(?P<at>@)")
_QUERY_SECRET = re.compile(
    r"(?P<head>[?&;](?P<name>[A-Za-z][A-Za-z0-9_.\-]*)=)(?P<value>[^&#\s\"'<>]+)")
_QUERY_NAMES = frozenset({"key", "sig", "signature", "code", "auth", "pwd", "pass", "apikey",
                          "access_token", "refresh_token", "id_token", "client_secret",
                          "x-amz-signature", "x-amz-credential", "x-amz-security-token"})
_AUTH_SCHEME = re.compile(r"(?i)\b(?P<scheme>Bearer|Basic|Digest|Token|Negotiate)\s+"
                          r"(?P<value>[A-Za-z0-9._~+/\-]{6,}=*)")
_ASSIGNMENT = re.compile(r"(?<![A-Za-z0-9_.\-])(?P<lead>" + _LEAD + r")\b" + _MAYBE_SECRET + r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)(?P<sep>\s*[=:]\s*)"
                         r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;]+)")
_PAIR_HEAD = re.compile(_ASSIGNMENT.pattern.split("(?P<value>")[0])
"""``_ASSIGNMENT`` up to its value: a pair inside a value without quotes (see _mask_assignments)."""
_QUOTED_PAIR = re.compile(r"(?P<head>(?P<q>[\"'])" + _MAYBE_SECRET + r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)(?P=q)\s*[:=]\s*)"
                          r"(?P<value>\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')")
_OPTION = re.compile(r"(?P<head>(?<![\w-])--?" + _MAYBE_SECRET + r"(?P<name>[A-Za-z][A-Za-z0-9_\-]*)(?:=|[ \t]+))"
                     r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'=-][^\s\"']*)")
# curl/wget basic auth on a command line: -u user:password, --user=user:password
_USER_OPTION = re.compile(r"(?P<head>(?<![\w-])(?:-u|--user|--proxy-user|--http-user)(?:=|[ \t]+)"
                          r"[\"']?[^\s:\"']+:)(?P<value>[^\s\"']+)")
_NETRC_LINE = re.compile(r"(?i)\b(?:machine|default|login)\b")
_NETRC_PASSWORD = re.compile(r"(?i)\b(?P<head>(?:password|passwd|account)\s+)(?P<value>\S+)")

# Values shorter than this are not hunted for in free text ("1" would mask every digit).
_MIN_VALUE_LENGTH = 4


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True for variable names that conventionally hold credentials (remembered per name:
    every redaction asks it of every variable of the environment)."""
    upper = name.upper().replace("-", "_").replace(".", "_")
    if upper in _NOT_SECRET or upper.endswith(_NOT_SECRET_ENDINGS):
        return False
    words = [w for w in upper.split("_") if w]
    if any(word in _SECRET_WORDS for word in words):
        return True
    if words and words[-1].endswith(_SECRET_ENDINGS):
        return True
    return upper.endswith(_SECRET_SUFFIXES)


def _mask_value(value: str) -> str:
    """The mask, keeping the quotes a value came in (so JSON and shell text stay well-formed)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return f"{value[0]}{MASK}{value[0]}"
    return MASK


def _is_masked(value: str) -> bool:
    return value.strip("\"'") == MASK


def _mask_assignments(line: str) -> str:
    """``NAME=value`` pairs of ``line`` with a secret name masked; a pair whose name is not
    secret has its value searched for a pair of its own (``X=token=...``), to any depth.

    A loop with a stack of the values being searched, not a recursion: a line of 500 chained
    ``key=`` pairs reached Python's recursion limit. Each value is searched in place, between
    its bounds, which sees what a copy of it would (the value is preceded by its separator,
    which neither begins a name nor makes a word boundary). A value without quotes holds no
    blank, quote, comma or semicolon, so a pair inside it has a value that runs to the same
    end: only the pair's head is looked for there (``_PAIR_HEAD``), not its value read again to
    that end at every depth (quadratic in a chain's length)."""
    out: list[str] = []
    stack = [(_ASSIGNMENT.finditer(line), [0], len(line), False)]
    while stack:
        matches, done, end, plain = stack[-1]
        if plain:  # at most one pair, its value up to ``end``
            stack.pop()
            head = _PAIR_HEAD.search(line, done[0], end)
            if head is None or head.end() == end:  # no pair (an empty value is none either)
                out.append(line[done[0]:end])
                continue
            out.append(line[done[0]:head.end()])
            short = end - head.end() <= len(MASK) + 2
            if short and _is_masked(line[head.end():end]):
                out.append(line[head.end():end])
            elif is_secret_name(head.group("name")):
                out.append(MASK)
            else:
                stack.append((None, [head.end()], end, True))
            continue
        match = next(matches, None)
        if match is None:
            out.append(line[done[0]:end])
            stack.pop()
            continue
        out.append(line[done[0]:match.start()])
        done[0] = match.end()
        value = match.group("value")
        if _is_masked(value):
            out.append(match.group(0))
            continue
        out.append(f"{match.group('lead')}{match.group('name')}{match.group('sep')}")
        if is_secret_name(match.group("name")):
            out.append(_mask_value(value))
        else:  # the value's own pairs, searched before going on after it
            start, stop = match.span("value")
            quoted = value[0] in "\"'"
            stack.append((_ASSIGNMENT.finditer(line, start, stop) if quoted else None,
                          [start], stop, not quoted))
    return "".join(out)


def _mask_pair(match: re.Match[str]) -> str:
    if not is_secret_name(match.group("name")) or _is_masked(match.group("value")):
        return match.group(0)
    return match.group("head") + _mask_value(match.group("value"))


def _mask_shape(match: re.Match[str]) -> str:
    """A token shape's match masked; what a shape reads before the token to look for it once per
    word (its ``lead``, see ``_LEAD``) is kept."""
    return (match.groupdict().get("lead") or "") + MASK


def _mask_query(match: re.Match[str]) -> str:
    name = match.group("name")
    if name.lower() not in _QUERY_NAMES and not is_secret_name(name):
        return match.group(0)
    return match.group("head") + MASK


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with secret values from ``env``, secret-named pairs and known shapes masked."""
    if not text or not isinstance(text, str):
        return text
    if env:
        values = sorted(
            {v for k, v in env.items() if isinstance(v, str) and v and len(v) >= _MIN_VALUE_LENGTH
             and is_secret_name(k)},
            key=len,
            reverse=True,
        )
        for value in values:
            text = text.replace(value, MASK)
    for literal, shape in _TOKEN_SHAPES:
        if literal in text:
            text = shape.sub(_mask_shape, text)
    if "://" in text and "@" in text:
        text = _URL_CREDENTIALS.sub(lambda m: m.group("head") + MASK + m.group("at"), text)
    if "=" in text and ("?" in text or "&" in text):
        text = _QUERY_SECRET.sub(_mask_query, text)
    if "-u" in text or "-user" in text:
        text = _USER_OPTION.sub(lambda m: m.group("head") + MASK, text)
    lowered = text.lower()
    present = [word for word in _LINE_WORDS if word in lowered]
    if not present:
        return text
    if len(lowered) != len(text):  # lower() changed the length ('İ'): go line by line
        return "\n".join(_redact_line(line, line.lower()) for line in text.split("\n"))
    spans: set[tuple[int, int]] = set()
    for word in present:
        at = lowered.find(word)
        while at != -1:
            start = lowered.rfind("\n", 0, at) + 1
            end = lowered.find("\n", at)
            end = len(text) if end == -1 else end
            spans.add((start, end))
            at = lowered.find(word, end)
    pieces, done = [], 0
    for start, end in sorted(spans):
        pieces += [text[done:start], _redact_line(text[start:end], lowered[start:end])]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def _redact_line(line: str, lowered: str) -> str:
    """The pair patterns, on one line that names something secret-sounding."""
    line = _AUTH_SCHEME.sub(lambda m: f"{m.group('scheme')} {MASK}", line)
    line = _QUOTED_PAIR.sub(_mask_pair, line)
    line = _OPTION.sub(_mask_pair, line)
    if ("pass" in lowered or "account" in lowered) and _NETRC_LINE.search(line):
        line = _NETRC_PASSWORD.sub(lambda m: m.group("head") + MASK, line)
    return _mask_assignments(line)


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` fit for display: secret-named variables keep their name, lose the
    value; every other value is redacted by value (``HTTPS_PROXY=http://u:pw@proxy``)."""
    return {k: (MASK if is_secret_name(k) and v else redact(v, env)) for k, v in env.items()}


def redact_tree(value: Any, env: Mapping[str, str] | None = None) -> Any:
    """``value`` (nested dicts, lists, strings) with every string redacted; the values of
    secret-named keys masked whole."""
    if isinstance(value, str):
        return redact(value, env)
    if isinstance(value, dict):
        return {k: (MASK if isinstance(k, str) and is_secret_name(k) and isinstance(v, str) and v
                    else redact_tree(v, env)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_tree(v, env) for v in value)
    return value
