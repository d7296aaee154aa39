"""Userinfo (``user:password@``) in URLs and in text that quotes them: found, shown as
``****@``, or left out. Regular expressions only.

Kept apart from :mod:`resolver_hook.ground.credentials` (which keeps what it splits off,
and imports ``urllib.parse``, ``ipaddress`` and ``threading`` for it, ~3 ms): a replayed
install (:mod:`resolver_hook._plancache`) only asks whether a text holds credentials.
"""

from __future__ import annotations

import re

__all__ = ["has_credentials", "redact", "redact_text", "without_credentials"]

# scheme "://" userinfo "@": the userinfo ends at the last "@" before the path (a
# password may hold an unencoded "@", as urllib.parse reads it).
# Compiled when first used (re's cache): a text is first looked through for _AFTER_SCHEME.
_USERINFO = r"([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\s]*)@"
_SHOWN = r"\1****@"
# What every match of _USERINFO holds: looked for first, as a text without it has no
# userinfo. _USERINFO tries a scheme at each letter and backs off through every word
# (quadratic in a sha256 or a long path: ~0.1 ms for a plan's output); this one starts
# only at a "://".
_AFTER_SCHEME = re.compile(r"://[^/?#\s]*@")


def redact(url: str) -> str:
    """``url`` with any ``user:password@`` shown as ``****@`` (safe to print)."""
    if "@" not in url:
        return url  # no userinfo (most URLs a plan names), no search
    return re.sub(_USERINFO, _SHOWN, url, count=1)


def redact_text(text: str) -> str:
    """``text`` with the userinfo of every URL in it shown as ``****@``."""
    if not _AFTER_SCHEME.search(text):
        return text
    return re.sub(_USERINFO, _SHOWN, text)


def without_credentials(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with the userinfo of every URL in it left out (not shown as ``****``: a
    line that is still a working URL for whoever has their own credentials), and the
    hosts it was left out for."""
    hosts: dict[str, None] = {}

    def drop(m: re.Match[str]) -> str:
        hosts.setdefault(re.split(r"[/?#\s]", text[m.end() :], maxsplit=1)[0])
        return m.group(1)

    return re.sub(_USERINFO, drop, text), tuple(hosts)


def has_credentials(text: str) -> bool:
    """Whether any URL in ``text`` carries a userinfo (``user:password@``) not shown as
    ``****`` already (ours, or pip's ``user:****``)."""
    if not _AFTER_SCHEME.search(text):
        return False
    return any(
        m.group(2) != "****" and not m.group(2).endswith(":****")
        for m in re.finditer(_USERINFO, text)
    )
