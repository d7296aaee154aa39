"""Mirrors: ``UPSTREAM=MIRROR`` URL prefixes, applied to every URL the client reads.

A company proxy of ``https://download.pytorch.org/whl`` is named once
(``RESOLVER_HOOK_MIRRORS``: space-separated pairs; a command's ``--mirror`` flags: one
pair each, added after the variable's) and every page, metadata file and link under the
upstream prefix is read from, and pinned as, the mirror's URL. A prefix matches at a
path boundary (``.../whl`` covers ``.../whl/cu130/`` but not ``.../whlx``); the longest
matching upstream wins. Credentials in either URL (``https://user:pw@mirror/...``) are
split off here, where the URL enters the tool, and sent only by the index client to that
host: no page-cache key, plan line, lock or stored plan holds them. The mirror obeys the
URL policy (https; loopback http only with ``--allow-insecure-urls``); the upstream need
only be a URL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from resolver_hook.errors import UsageError
from resolver_hook.ground.credentials import keep
from resolver_hook.ground.userinfo import redact
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.limits import MAX_MIRRORS
from resolver_hook.manifest.urls import INSECURE_FLAG, url_problem

__all__ = ["MIRRORS_ENV", "Mirror", "apply_mirrors", "mirrors_from", "upstream_of"]

MIRRORS_ENV = "RESOLVER_HOOK_MIRRORS"


@valueclass(kw_only=False)
class Mirror:
    upstream: str  # without a trailing slash
    mirror: str


def _pair(text: str, where: str, allow_insecure: bool) -> Mirror:
    upstream, sep, mirror = text.partition("=")
    if not sep or not upstream or not mirror:
        raise UsageError(
            f"{where} {redact(text)!r}: expected UPSTREAM=MIRROR",
            hint="e.g. https://download.pytorch.org/whl=https://mirror.example/pytorch",
        )
    from urllib.parse import urlsplit  # (with ipaddress, ~2 ms): where mirrors are given

    try:
        scheme = urlsplit(upstream).scheme.lower()
    except ValueError:
        scheme = ""
    if scheme not in ("http", "https", "file"):
        raise UsageError(f"{where} {redact(upstream)!r}: the upstream is not a URL")
    problem = url_problem(redact(mirror), allow_insecure=allow_insecure)
    if problem is not None:
        hint = f"add {INSECURE_FLAG} for a local mirror" if INSECURE_FLAG in problem else None
        raise UsageError(f"{where}: mirror {problem}", hint=hint)
    # The mirror's credentials are kept for its host (resolver_hook.ground.credentials): the
    # URLs read from it, and pinned, never hold them. The upstream is matched as a prefix
    # of URLs written the usual way: its scheme and host in lower case, no default port.
    return Mirror(_usual(keep(upstream)).rstrip("/"), keep(mirror).rstrip("/"))


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _usual(url: str) -> str:
    """``url`` with its scheme and host in lower case and without the scheme's default
    port (RFC 3986, 6.2.2.1 and 6.2.3: the same URL); as given when it has no host."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return url
    if not host:
        return url
    scheme = parts.scheme.lower()
    shown = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        shown += f":{port}"
    return urlunsplit(parts._replace(scheme=scheme, netloc=shown))


def mirrors_from(
    env: Mapping[str, str], flags: Iterable[str] = (), *, allow_insecure: bool = False
) -> tuple[Mirror, ...]:
    """The mirrors of ``RESOLVER_HOOK_MIRRORS`` in ``env`` and of ``--mirror`` flags."""
    found = [_pair(t, MIRRORS_ENV, allow_insecure) for t in env.get(MIRRORS_ENV, "").split()]
    found += [_pair(t, "--mirror", allow_insecure) for t in flags]
    if len(found) > MAX_MIRRORS:
        raise UsageError(f"more than {MAX_MIRRORS} mirrors given")
    return tuple(found)


def apply_mirrors(url: str, mirrors: Iterable[Mirror]) -> str:
    """``url`` read through the mirror of its longest matching upstream prefix."""
    return _moved(url, ((m.upstream, m.mirror) for m in mirrors))


def upstream_of(url: str, mirrors: Iterable[Mirror]) -> str:
    """The upstream URL a mirrored ``url`` stands for (the longest matching mirror
    prefix); ``url`` itself when no mirror covers it."""
    return _moved(url, ((m.mirror, m.upstream) for m in mirrors))


def _moved(url: str, prefixes: Iterable[tuple[str, str]]) -> str:
    """``url`` with the longest of the ``(old, new)`` prefixes it starts with (a whole
    path segment) replaced by its new one; the first of equal length wins."""
    best: tuple[int, str] | None = None
    for old, new in prefixes:
        if (url == old or url.startswith(old + "/")) and (best is None or len(old) > best[0]):
            best = (len(old), new + url[len(old) :])
    return best[1] if best else url
