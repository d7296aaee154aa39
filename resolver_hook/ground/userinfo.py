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
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\s]*)@")
_SHOWN = r"\1****@"


def redact(url: str) -> str:
    """``url`` with any ``user:password@`` shown as ``****@`` (safe to print)."""
    if "@" not in url:
        return url  # no userinfo (most URLs a plan names), no search
    return _USERINFO.sub(_SHOWN, url, count=1)


def redact_text(text: str) -> str:
    """``text`` with the userinfo of every URL in it shown as ``****@``."""
    return _USERINFO.sub(_SHOWN, text)


def without_credentials(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with the userinfo of every URL in it left out (not shown as ``****``: a
    line that is still a working URL for whoever has their own credentials), and the
    hosts it was left out for."""
    hosts: dict[str, None] = {}

    def drop(m: re.Match[str]) -> str:
        hosts.setdefault(re.split(r"[/?#\s]", text[m.end() :], maxsplit=1)[0])
        return m.group(1)

    return _USERINFO.sub(drop, text), tuple(hosts)


def has_credentials(text: str) -> bool:
    """Whether any URL in ``text`` carries a userinfo (``user:password@``) not shown as
    ``****`` already (ours, or pip's ``user:****``)."""
    return any(
        m.group(2) != "****" and not m.group(2).endswith(":****") for m in _USERINFO.finditer(text)
    )
