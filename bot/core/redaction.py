"""Redaction: secret-shaped text replaced by `[redacted]` before anyone sees it. Pure.

The one redaction of the product. What the cluster says passes it as it is read: log lines a
container printed, Event messages and condition messages (`bot.diagnostics`, the alerts'
roots in `bot.alerts.render`), so a password a crashing container printed never reaches a Slack
channel; and every line the service logs passes it in its log filter (`bot.service.logs`, which
also replaces the configured secrets by value). A table of shapes, tried in order, not of
values: a secret printed in a shape it does not know is shown (docs/security.md). Look-alikes
in Kubernetes' own words stay as written (`secret "db" not found`, `bypass=true`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

REDACTED = "[redacted]"

# A name that says its value is a secret: `DB_PASSWORD`, `client_secret`, `X-Api-Key`,
# `AWS_SECRET_ACCESS_KEY`, `access_token`, `credentials`; `pass` only as a name's last word
# (`DB_PASS`, not `bypass`).
_NAME = (
    r"(?:[\w.-]*(?:passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|apikey|credentials?|"
    r"(?:access|private|secret|signing|encryption|master|auth|client)[_-]?key)s?"
    r"|(?:[\w.-]*[_.-])?pass)"
)
# A value: quoted (its spaces too; `\"…\"` as a JSON log line carries a quoted one), or bare.
_QUOTED = r"""\\"(?:[^"\\\n]|\\[^"\n])*\\"|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'"""
_BARE = r"""[^\s"',;}&]+"""
# Words that follow `password` in prose (`password authentication failed`), never a value.
_PROSE = (
    r"(?:in|is|was|of|for|not|from|to|and|or|the|a|an|authentication|required|must|should|"
    r"will|has|have|with|are|be|expired|incorrect|invalid|mismatch|missing|reset|changed|policy)"
)

RedactionRule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]


def _whole(_: re.Match[str]) -> str:
    return REDACTED


def _value(match: re.Match[str]) -> str:
    """Keep what names the secret (groups 1 and 2), redact the value, keep its quotes."""
    value = match.group(3)
    for quote in ('\\"', '"', "'"):
        if value.startswith(quote):  # the rule took the value whole, its closing quote too
            return f"{match.group(1)}{match.group(2)}{quote}{REDACTED}{quote}"
    return f"{match.group(1)}{match.group(2)}{REDACTED}"


def _after(match: re.Match[str]) -> str:
    """Keep group 1 (the scheme, the name), redact the rest."""
    return f"{match.group(1)}{REDACTED}"


# Credentials that look like what they are, whole: Slack (every token shape, URL-encoded
# cookies too), GitHub, GitLab, AWS key IDs, Google API keys, Stripe, JWTs, PEM private keys,
# and long opaque strings of mixed case and digits (keys, session IDs, base64 secrets).
_TOKENS = (
    r"\b(?:xox[a-z](?:\.xox[a-z])?|xapp)-[A-Za-z0-9%._-]+",
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[\w-]{20,})",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bAIza[\w-]{35}",
    r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{10,}",
    r"\beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]{4,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*",
)
_OPAQUE = r"\b(?=[\w+/=-]*[A-Z])(?=[\w+/=-]*[a-z])(?=[\w+/=-]*\d)[\w+/=-]{40,}"
# A secret after what names it, in order: what names it kept (`_after`: group 1; `_value`:
# groups 1 and 2, and the value's quotes).
_NAMED: tuple[tuple[str, Callable[[re.Match[str]], str]], ...] = (
    # `Bearer abc…`, `Basic abc…`; `Authorization: Token abc…` (any scheme, or none).
    (r"(?i)\b(bearer |basic )[\w.~+/=-]{8,}", _after),
    (r"""(?i)\b(authorization["']?\s*[:=]\s*["']?(?:[A-Za-z]+\s+)?)[^\s"',;}]+""", _after),
    # `password='x'`, `"password": "a b c"`, `DB_PASS=x`, `secret_key = 'x'`, `api-key:'x'`;
    # not a URL's user (`https://x-access-token:…@host`: the URL rule below keeps the host).
    (rf"(?i)(?<![\w./-])({_NAME})([\"']?\s*[:=]\s*)({_QUOTED}|{_BARE})", _value),
    # `--password x`, `client_secret x`, `password 'x'` (a name, a space, a value); a bare
    # `secret` names the kind in Kubernetes' own messages: `secret "db" not found`.
    (
        r"(?i)((?:--?[\w-]*(?:token|pass|api[_-]?key|credential)s?)|"
        r"\b(?:[\w.-]*[_.-]secret|[\w.-]*(?:passw(?:or)?d|passwd|pwd))s?)(\s+)"
        rf"({_QUOTED}|(?!{_PROSE}\b)[^\s\"',;}}&=:-][^\s\"',;}}&]*)",
        _value,
    ),
    # `token 'x'`, `requirepass 'x'`: a bare `token` or `…pass` only before a quoted value.
    (rf"(?i)\b(tokens?|[\w.-]*pass)(\s+)({_QUOTED})", _value),
    # `mysql -u root -phunter2`: the password glued to -p.
    (r"(?<![\w-])(-p)(?=[^\s-])\S+", _after),
    # `redis://:pw@host`, `amqp://user:pa/ss@host`: a URL's password, its user kept.
    (r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/@:]*:)[^\s@]+(?=@)", _after),
)


def _having(*needles: str) -> Callable[[str], bool]:
    """Whether a lowered text holds any of `needles`: what every match of a rule contains, so
    a line without them skips the rule (most lines hold none, and a rule tried at every
    position of a long line costs a thousand times the look)."""
    return lambda lowered: any(needle in lowered for needle in needles)


def _has_long_word(lowered: str) -> bool:
    """Forty characters with no space between them: what a long opaque string needs."""
    return any(len(word) >= 40 for word in lowered.split())


# What each rule needs to match at all (case aside), beside it, in the order they apply.
_NEEDS = (
    _having("xox", "xapp"),
    _having("gh", "github_pat_", "glpat-"),
    _having("akia", "asia"),
    _having("aiza"),
    _having("k_live_", "k_test_"),
    _having("eyj"),
    _having("-----begin"),
    _having("bearer ", "basic "),
    _having("authorization"),
    _having("pass", "pwd", "secret", "token", "key", "credential"),
    _having("pass", "pwd", "secret", "token", "key", "credential"),
    _having("token", "pass"),
    _having("-p"),
    _having("://"),
    _has_long_word,
)
RULES: tuple[RedactionRule, ...] = (
    *((re.compile(token), _whole) for token in _TOKENS),
    *((re.compile(named), keep) for named, keep in _NAMED),
    (re.compile(_OPAQUE), _whole),
)
assert len(_NEEDS) == len(RULES)


def redact(text: str) -> str:
    """`text` with every secret-shaped string replaced by `[redacted]`."""
    lowered = text.lower()
    for needs, (pattern, replace) in zip(_NEEDS, RULES, strict=True):
        if not needs(lowered):
            continue
        redacted = pattern.sub(replace, text)
        if redacted != text:
            text, lowered = redacted, redacted.lower()
    return text
