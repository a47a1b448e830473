"""Keep secrets out of anything that is shown, logged or written (probe evidence, files).

Command output and environment dumps can carry API keys (``OPENAI_API_KEY``, ``HF_TOKEN``...).
Two defences: values of secret-looking variables in the given environment are replaced
wherever they appear, and ``NAME=value`` pairs whose name looks secret are masked even when
the value is not in the environment we know about.
"""
from __future__ import annotations

import re
from typing import Mapping

MASK = "***"

# A name is secret when one of its underscore-separated words (or a trailing pair) says so.
_SECRET_WORDS = frozenset(
    {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "APIKEY"}
)
_SECRET_SUFFIXES = ("_API_KEY", "_KEY", "_PRIVATE_KEY", "_ACCESS_KEY")
_NOT_SECRET = frozenset({"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "XAUTHORITY", "KEYTAB"})

# Token shapes that are secret whatever variable they came from.
_TOKEN_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),  # OpenAI / Anthropic style
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),  # Hugging Face
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
)
_ASSIGNMENT = re.compile(r"(?P<name>\b[A-Za-z_][A-Za-z0-9_]*)(?P<sep>\s*[=:]\s*)(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;]+)")

# Values shorter than this are not hunted for in free text ("1" would mask every digit).
_MIN_VALUE_LENGTH = 4


def is_secret_name(name: str) -> bool:
    """True for variable names that conventionally hold credentials."""
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    words = upper.split("_")
    if any(word in _SECRET_WORDS for word in words):
        return True
    return upper.endswith(_SECRET_SUFFIXES)


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with secret values from ``env``, secret assignments and known tokens masked."""
    if not text:
        return text
    if env:
        values = sorted(
            {v for k, v in env.items() if v and len(v) >= _MIN_VALUE_LENGTH and is_secret_name(k)},
            key=len,
            reverse=True,
        )
        for value in values:
            text = text.replace(value, MASK)

    def _mask_assignment(match: re.Match[str]) -> str:
        if not is_secret_name(match.group("name")) or match.group("value") == MASK:
            return match.group(0)
        return f"{match.group('name')}{match.group('sep')}{MASK}"

    text = _ASSIGNMENT.sub(_mask_assignment, text)
    for pattern in _TOKEN_PATTERNS:
        text = pattern.sub(MASK, text)
    return text


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` fit for display: secret-named variables keep their name, lose the value."""
    return {k: (MASK if is_secret_name(k) and v else v) for k, v in env.items()}
