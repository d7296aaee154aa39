"""Credentials in URLs: split off where a URL enters the tool, kept in memory, never shown.

A URL may carry ``user:password@`` (a manifest's page, a mirror, a lock file's pin, an
index URL on the installer's command line). Where such a URL enters resolver-hook (the
manifest loader, the mirror list, the index client, a lock read by ``sync``) it passes
:func:`keep`: the credentials are kept in this process's memory for their host (as
pip's session keeps the ones it has seen, by host) and the URL goes on without them,
so what is printed, cached, stored or locked never holds them. The index client sends
what is kept for a host when it reads from it (:mod:`resolver_hook.index.fetch`).

The installer gets credentials the way the user gave them to it (its own command line
and environment, netrc, keyring); those that only resolver-hook saw (a manifest's page,
a mirror) are handed to it for one run by :func:`installer_netrc`: the text of a netrc
that resolver-hook writes into its private temporary folder (removed when the installer
exits, Ctrl-C too) and names by ``NETRC`` in the installer's environment alone. pip
(through requests) and uv both read ``NETRC``, for every URL of the host, a wheel
pinned by URL included; neither takes credentials for such a URL from any other
variable, and a URL holding them would be on the installer's command line or in the
generated requirement file (docs/facts.md section 3, "Credentials"). A credential a
netrc cannot hold (whitespace, a quote, ``#``, a backslash, an empty login) is refused
before the installer starts.

Text that may quote a URL someone else wrote (an installer's argument, an error) goes
through :func:`resolver_hook.ground.userinfo.redact_text` before it is printed or stored.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Collection, Mapping

from resolver_hook.ground.userinfo import redact

__all__ = ["forget", "installer_netrc", "keep", "kept", "split_credentials"]


_LOCK = threading.Lock()
_KEPT: dict[str, tuple[str, str]] = {}  # host[:port], lower case -> (user, password)


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``(url without userinfo, (user, password) or None)``."""
    if "@" not in url:
        return url, None  # no userinfo (a page's thousands of links, most often)
    import urllib.parse  # (with ipaddress, ~2 ms): only for a URL that may hold userinfo

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
    import urllib.parse

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
    if not _KEPT:  # none at all, as a rule: ``url`` is not parsed (each page read asks)
        return None
    host = _host(url)
    with _LOCK:
        return _KEPT.get(host)


def forget() -> None:
    """Drop every kept credential (tests; a long-lived caller between commands)."""
    with _LOCK:
        _KEPT.clear()


# What a netrc token may hold here: printable ASCII without whitespace, quotes, "#" or
# "\\" (Python's netrc, which pip reads through requests, splits on whitespace and reads
# quotes, comments and escapes; uv's netrc reader is not held to more).
_NETRC_TOKEN = r"[!$-&(-\[\]-~]+"  # compiled when first used: a netrc is rarely written


def _hostname(host: str) -> str:
    """``host[:port]`` as a netrc names it: the host name alone."""
    import urllib.parse

    return urllib.parse.urlsplit(f"//{host}").hostname or host


def installer_netrc(
    env: Mapping[str, str], *, tool: str, given: Collection[str] = ()
) -> tuple[str, tuple[str, ...]] | None:
    """``(text, host names)``: a netrc for ``tool`` with an entry for each host whose
    credentials were kept here, that the user's own netrc (``$NETRC``, else
    ``~/.netrc``) has no entry for and that is not in ``given`` (host names the
    installer is given credentials for itself: its index URL); the user's file follows
    whole, so it still serves every other host. None when no host needs one.
    :class:`~resolver_hook.errors.UsageError` for credentials a netrc cannot hold, or
    two for one host name."""
    from resolver_hook.errors import UsageError

    with _LOCK:
        found = dict(_KEPT)
    if not found:
        return None
    path = env.get("NETRC") or (os.path.join(env["HOME"], ".netrc") if env.get("HOME") else "")
    own, own_hosts = "", set()
    if path and os.path.isfile(path):
        import netrc  # only where credentials were given

        try:
            with open(path, encoding="utf-8") as f:
                own = f.read()
            own_hosts = set(netrc.netrc(path).hosts)
        except (OSError, UnicodeDecodeError, netrc.NetrcParseError):
            own = ""  # the installer would not read it either
    entries: dict[str, tuple[str, str]] = {}
    for host, (user, password) in sorted(found.items()):
        name = _hostname(host)
        if name in own_hosts or name in given:
            continue
        hint = f"give {tool} its own (a netrc entry for {name}, or a keyring)"
        if entries.get(name, (user, password)) != (user, password):
            raise UsageError(
                f"two credentials were given in URLs for hosts named {name}: a netrc, "
                f"the one way to hand them to {tool}, holds one per host name",
                hint=hint,
            )
        if not re.fullmatch(_NETRC_TOKEN, user) or not (
            password == "" or re.fullmatch(_NETRC_TOKEN, password)
        ):
            raise UsageError(
                f"the credentials given in a URL for {name} cannot be handed to {tool}: a "
                "netrc cannot hold an empty login, whitespace, a quote, '#', '\\' or a "
                "character outside printable ASCII",
                hint=hint,
            )
        entries[name] = (user, password)
    if not entries:
        return None
    lines = [
        f"machine {name} login {user}" + (f" password {password}" if password else "")
        for name, (user, password) in entries.items()
    ]
    return "\n".join(lines) + "\n" + own, tuple(entries)
