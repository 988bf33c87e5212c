"""Redaction: secret-shaped text in what the cluster says, replaced before anyone sees it.

Pure. Log lines, Event messages and condition messages all pass `redact` as they are read
(`bot.diagnostics.evidence`, `bot.diagnostics.pods`, `bot.diagnostics.assemble`), so a token a
crashing container printed never reaches a Slack channel. Shapes, not values: a secret printed
in a shape it does not know is shown (docs/security.md).
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"

# Token-shaped strings: credentials that look like what they are (Slack, GitHub, GitLab, AWS,
# JWTs, bearer tokens, PEM keys), secrets after a telling key, and long opaque mixed strings.
_SECRETS = (
    re.compile(r"\bx(?:ox[abposr]|app)-[A-Za-z0-9-]{10,}"),
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[\w-]{20,})"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]{4,}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*"),
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[\w.~+/=-]{8,}")
# `Authorization: Token abc…` (any scheme), and the credential after the header alone.
_AUTHORIZATION = re.compile(r"(?i)\b(authorization\"?\s*[:=]\s*\"?(?:[A-Za-z]+\s+)?)([^\s\"',;}]+)")
# `DB_PASS=hunter2`: PASS as a key's last word (not "bypass=").
_PASS_KEY = re.compile(r"(?i)\b((?:[\w.]*[_.-])?pass)(\"?\s*[:=]\s*\"?)([^\s\"',;}&]+)")
# `--password hunter2`, `client_secret abc…`: a secret after its name and a space (a bare
# "Secret" names the kind in Kubernetes' own messages: `Secret default/db not found`).
_SPACED = re.compile(
    r"(?i)((?:--?[\w-]*(?:token|pass|api[_-]?key|credential)s?)|"
    r"\b(?:[\w.-]*[_.-]secret|[\w.-]*(?:passw(?:or)?d|pwd))s?)(\s+)"
    r"(?!(?:in|is|was|of|for|not|from|to|and|or|the|a|an)\b)([^\s\"',;}&-][^\s\"',;}&]*)"
)
# `mysql -u root -phunter2`: the password glued to -p.
_GLUED_P = re.compile(r"(?<![\w-])-p(?=[^\s-])\S+")
_KEYED = re.compile(
    r"(?i)\b([\w.-]*(?:token|secret|passw(?:or)?d|pwd|api[_-]?key|credential)s?)"
    r"(\"?\s*[:=]\s*\"?)([^\s\"',;}&]+)"
)
_URL_PASSWORD = re.compile(r"(://[^/\s:@]+:)[^@\s/]+@")
_OPAQUE = re.compile(r"\b(?=[\w+/=-]*[A-Z])(?=[\w+/=-]*[a-z])(?=[\w+/=-]*\d)[\w+/=-]{40,}")


def redact(line: str) -> str:
    """`line` with every token-shaped string replaced by `[redacted]`."""
    for pattern in _SECRETS:
        line = pattern.sub(REDACTED, line)
    line = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", line)
    line = _AUTHORIZATION.sub(lambda m: f"{m.group(1)}{REDACTED}", line)
    for keyed in (_KEYED, _PASS_KEY, _SPACED):
        line = keyed.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", line)
    line = _GLUED_P.sub(f"-p{REDACTED}", line)
    line = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}@", line)
    return _OPAQUE.sub(REDACTED, line)
