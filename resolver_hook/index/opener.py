"""The urllib half of fetching: the opener one request goes through, and TLS contexts.

:mod:`~resolver_hook.index.fetch` owns the rules (URL policy, the user's settings,
credentials, deadlines, bounded bodies) and imports this module only when it opens a
connection: ``urllib.request`` brings ``http.client``, ``ssl`` and ``email`` with it, a
sixth of the start-up of a plan that a warm page cache answers without a socket.

Owns: :class:`PolicyRedirects` (the URL policy on every redirect), the handler that adds
credentials to every request, :func:`build` (the opener for one URL: its proxy, those
two handlers and, for https, the trusted certificates), :func:`ssl_context` (made
once per process per CA file) and :func:`cause_of` (a failed connection's few words:
it reads ``socket``'s errors, which a warm page cache never imports).
"""

from __future__ import annotations

import importlib
import socket
import ssl
import threading
import urllib.request
from collections.abc import Callable
from typing import Any

from resolver_hook.errors import UsageError

__all__ = ["PolicyRedirects", "build", "cause_of", "ssl_context"]

_USER_AGENT = "resolver-hook"


class PolicyRedirects(urllib.request.HTTPRedirectHandler):
    """Apply the same URL policy to every redirect target (no https -> http downgrade).

    ``check`` raises UsageError for a refused target (the caller's URL policy).
    """

    def __init__(self, check: Callable[[str], None]) -> None:
        super().__init__()
        self.check = check

    # Signature fixed by urllib.request.HTTPRedirectHandler.
    def redirect_request(  # type: ignore[no-untyped-def]  # noqa: PLR0917
        self, req, fp, code, msg, headers, newurl
    ):
        try:
            self.check(newurl)
        except UsageError:
            fp.close()  # urllib closes it only after a redirect it follows
            raise
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _Credentials(urllib.request.BaseHandler):
    """Runs before every request urllib sends for one fetch (redirects too)."""

    def __init__(self, authorize: Callable[[urllib.request.Request], None]) -> None:
        self.authorize = authorize

    def http_request(self, request: urllib.request.Request) -> urllib.request.Request:
        self.authorize(request)
        return request

    https_request = http_request


def request(url: str, headers: dict[str, str]) -> urllib.request.Request:
    """A GET of ``url`` with ``headers`` and the project's User-Agent."""
    return urllib.request.Request(url, headers={"User-Agent": _USER_AGENT, **headers})


def build(
    scheme: str,
    *,
    proxy: str | None,
    check: Callable[[str], None],
    authorize: Callable[[urllib.request.Request], None],
    context: Callable[[], ssl.SSLContext],
) -> urllib.request.OpenerDirector:
    """The opener of one fetch of a ``scheme`` URL: through ``proxy`` (or none), every
    redirect target passed to ``check``, every request to ``authorize``; for https, the
    TLS context ``context`` returns (loopback http in tests does without loading it)."""
    handlers: list[urllib.request.BaseHandler] = [
        urllib.request.ProxyHandler({scheme: proxy} if proxy else {}),
        PolicyRedirects(check),
        _Credentials(authorize),
    ]
    if scheme == "https":
        handlers.append(urllib.request.HTTPSHandler(context=context()))
    return urllib.request.build_opener(*handlers)


_CONTEXTS: dict[tuple[str, str] | None, ssl.SSLContext] = {}
_CONTEXTS_LOCK = threading.Lock()


def ssl_context(cafile: tuple[str, str] | None) -> ssl.SSLContext:
    """The context for https with ``(path, variable)`` as the CA bundle, else the system
    store (made once per process per CA file: loading the store takes a fifth of a
    second)."""
    with _CONTEXTS_LOCK:
        if cafile not in _CONTEXTS:
            _CONTEXTS[cafile] = _make_context(cafile)
        return _CONTEXTS[cafile]


def _make_context(cafile: tuple[str, str] | None) -> ssl.SSLContext:
    if cafile is not None:
        path, var = cafile
        try:
            return ssl.create_default_context(cafile=path)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(
                f"cannot load the certificates of {path} (from {var}): {exc}",
                hint="point it at a PEM bundle of CA certificates, or remove it",
            ) from None
    try:
        truststore: Any = importlib.import_module("truststore")
    except ImportError:
        return ssl.create_default_context()
    context: ssl.SSLContext = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return context


def cause_of(reason: object) -> str:
    """The few words for a connection that failed (urllib's ``URLError.reason``)."""
    if isinstance(reason, socket.gaierror):
        return "name not resolved"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, ConnectionResetError):
        return "connection reset"
    if isinstance(reason, TimeoutError):
        return "no answer in time"
    if type(reason).__module__ == "ssl":
        return "TLS failed"
    return "connection failed" if isinstance(reason, OSError) else ""
