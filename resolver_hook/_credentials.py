"""Credentials in URLs: split off where a URL enters the tool, kept in memory, never shown.

A URL may carry ``user:password@`` (a manifest's page, a mirror, a lock file's pin, an
index URL on the installer's command line). Where such a URL enters resolver-hook (the
manifest loader, the mirror list, the index client, a lock read by ``sync``) it passes
:func:`keep`: the credentials are kept in this process's memory for their host (as
pip's session keeps the ones it has seen, by host) and the URL goes on without them,
so what is printed, cached, stored or locked never holds them. The index client sends
what is kept for a host when it reads from it (:mod:`resolver_hook.index.fetch`).

The installer is never handed them by resolver-hook: it gets credentials the way the
user gave them to it (its own command line and environment, netrc, keyring).
:func:`kept_hosts` says which hosts had credentials that only resolver-hook saw, for
the warning printed before an installer runs.

Text that may quote a URL someone else wrote (an installer's argument, an error) goes
through :func:`redact_text` before it is printed or stored.
"""

from __future__ import annotations

import re
import threading
import urllib.parse

__all__ = [
    "forget",
    "has_credentials",
    "keep",
    "kept",
    "kept_hosts",
    "redact",
    "redact_text",
    "split_credentials",
]

# scheme "://" userinfo "@": the userinfo ends at the last "@" before the path (a
# password may hold an unencoded "@", as urllib.parse reads it).
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\s]*)@")
_SHOWN = r"\1****@"

_LOCK = threading.Lock()
_KEPT: dict[str, tuple[str, str]] = {}  # host[:port], lower case -> (user, password)


def redact(url: str) -> str:
    """``url`` with any ``user:password@`` shown as ``****@`` (safe to print)."""
    return _USERINFO.sub(_SHOWN, url, count=1)


def redact_text(text: str) -> str:
    """``text`` with the userinfo of every URL in it shown as ``****@``."""
    return _USERINFO.sub(_SHOWN, text)


def has_credentials(text: str) -> bool:
    """Whether any URL in ``text`` carries a userinfo (``user:password@``) not shown as
    ``****`` already (ours, or pip's ``user:****``)."""
    return any(
        m.group(2) != "****" and not m.group(2).endswith(":****") for m in _USERINFO.finditer(text)
    )


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``(url without userinfo, (user, password) or None)``."""
    if "@" not in url:
        return url, None  # no userinfo (a page's thousands of links, most often)
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return redact(url).replace("****@", "", 1), None
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    clean = urllib.parse.urlunsplit(parts._replace(netloc=host))
    return clean, (urllib.parse.unquote(user), urllib.parse.unquote(password))


def _host(url: str) -> str:
    try:
        return urllib.parse.urlsplit(url).netloc.rpartition("@")[2].lower()
    except ValueError:
        return ""


def keep(url: str) -> str:
    """``url`` without its credentials, which are kept (in memory) for its host."""
    clean, creds = split_credentials(url)
    if creds is not None and creds != ("", ""):
        host = _host(clean)
        if host:
            with _LOCK:
                _KEPT[host] = creds
    return clean


def kept(url: str) -> tuple[str, str] | None:
    """The credentials kept for the host of ``url``, if any."""
    host = _host(url)
    with _LOCK:
        return _KEPT.get(host)


def kept_hosts() -> tuple[str, ...]:
    """The hosts (``host[:port]``) that credentials were kept for, sorted."""
    with _LOCK:
        return tuple(sorted(_KEPT))


def forget() -> None:
    """Drop every kept credential (tests; a long-lived caller between commands)."""
    with _LOCK:
        _KEPT.clear()
