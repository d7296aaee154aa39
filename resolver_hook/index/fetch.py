"""Fetching one URL under the project's rules: the only place resolver-hook opens a socket.

Every request, and every redirect it follows, passes the one URL policy
(:func:`resolver_hook.manifest.urls.url_problem`: https; loopback http and ``file:``
only with ``--allow-insecure-urls``). A page is read within one total deadline
(connecting, redirects, headers, every byte: a socket timeout bounds one read only) and
streamed against ``MAX_PAGE_BYTES`` (a declared or actual body past it stops the read;
no more than the bound plus one chunk is ever held). Failures are one
:class:`~resolver_hook.index.errors.PageError` in words a person can act on.

The user's settings, read from the environment the command runs in:

- pip's ``proxy`` setting (``--proxy`` in the installer's arguments, then
  ``PIP_PROXY``, then its configuration files): every request goes through it, as pip
  sends them (docs/facts.md section 3, "pip's proxy and cert options"); else
  ``https_proxy`` / ``http_proxy`` (``all_proxy`` for a scheme without one) /
  ``no_proxy``, as pip reads them (section 3, "Proxies as pip reads them"): either
  case, lower case wins, an empty lower-case variable turns that proxy off;
  ``NO_PROXY`` entries may be IPv4 networks (``10.0.0.0/8``); an error reaching the
  proxy names the proxy and where it was set;
- pip's ``cert`` setting (``--cert`` in the installer's arguments, then ``PIP_CERT``,
  then its configuration files: :mod:`~resolver_hook.index.pipconfig`), else
  ``SSL_CERT_FILE``: the CA bundle to trust; otherwise ``truststore`` (the system
  certificate store, as pip uses it) when it is installed, else Python's default store;
- credentials: ``user:password@`` in a URL (split off where the URL entered the tool
  and kept for its host: :mod:`resolver_hook.ground.credentials`), else the host's entry in
  ``$NETRC`` or ``~/.netrc``. They are sent as HTTP Basic auth to that host only (an
  ``unredirected`` header, so a redirect to another host never carries them), never
  shown (:func:`redact` replaces them in every message) and never part of a cache key.

Why the standard library (``urllib.request``/``http.client``) and not an HTTP library:
resolver-hook runs inside every ``pip install`` the hook wraps, and its runtime
dependencies are kept to what it cannot do without; urllib already honours the proxy
variables and tunnels https through a proxy, ``ssl`` takes a CA file or truststore's
context, and the pages read per command are few and fetched concurrently
(:mod:`resolver_hook.index.client`), so connection reuse would save one handshake per
page, not the seconds a library would cost in start-up and upkeep. Those modules (and
``netrc``) are imported only when a connection is opened
(:mod:`~resolver_hook.index.opener` holds the urllib side): a plan that the page cache
answers never loads them, nor reads pip's configuration.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import SplitResult, unquote, urlsplit

from resolver_hook.ground.credentials import keep, kept, split_credentials
from resolver_hook.ground.userinfo import redact
from resolver_hook.ground.valueclass import field, valueclass
from resolver_hook.index.errors import PageError, TooLarge
from resolver_hook.index.pipconfig import Given
from resolver_hook.limits import MAX_PAGE_BYTES, MIN_DOWNLOAD_RATE, NETWORK_DEADLINE
from resolver_hook.manifest.urls import check_read_url

if TYPE_CHECKING:
    import netrc
    import ssl
    import urllib.request
    from pathlib import Path  # imported where a path is made: a local page, the netrc

__all__ = [
    "Given",
    "Response",
    "Settings",
    "Transport",
    "read_local",
    "redact",
    "split_credentials",
]

_READ_CHUNK = 64 << 10
T = TypeVar("T")


def read_local(location: str) -> tuple[bytes, str]:
    """``(bytes, file: URL)`` of a local page given as a path or ``file:`` URL, bounded."""
    from pathlib import Path

    is_file_url = urlsplit(location).scheme == "file"
    path = Path(unquote(urlsplit(location).path) if is_file_url else location)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_PAGE_BYTES + 1)
    except OSError as exc:
        raise PageError(f"{location}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_PAGE_BYTES:
        raise PageError(f"{location}: larger than {MAX_PAGE_BYTES} bytes")
    return raw, path.resolve().as_uri()


@valueclass(kw_only=False)
class Response:
    """One answer: the final URL (credentials removed), status 200 or 304, the body."""

    url: str
    status: int
    body: bytes
    content_type: str = ""  # the media type, lower case ("" when not sent)
    charset: str | None = None
    etag: str | None = None
    last_modified: str | None = None

    def text(self) -> str:
        try:
            return self.body.decode(self.charset or "utf-8", "replace")
        except (LookupError, UnicodeError):
            # An unknown label, or a codec that is not a text encoding (hex, idna): read
            # as UTF-8, as browsers fall back.
            return self.body.decode("utf-8", "replace")


def _env_value(env: Mapping[str, str], name: str) -> tuple[str, str] | None:
    """``(value, variable)`` of ``name`` in lower case, else upper case, empty as unset
    (requests' order for ``no_proxy``)."""
    for var in (name.lower(), name.upper()):
        if env.get(var):
            return env[var], var
    return None


def _proxy_variables(env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Scheme -> ``(proxy URL, variable)``, by urllib's ``getproxies_environment`` (which
    pip's requests uses): any case first, then lower case again, where an empty value
    removes that scheme's proxy; under CGI (``REQUEST_METHOD``) ``HTTP_PROXY`` is a
    request header, so only a lower-case ``http_proxy`` counts."""
    found: dict[str, tuple[str, str]] = {}
    for var, value in env.items():
        if value and var.lower().endswith("_proxy"):
            found[var.lower()[:-6]] = (value, var)
    if "REQUEST_METHOD" in env:
        found.pop("http", None)
    for var, value in env.items():
        if var.endswith("_proxy"):
            if value:
                found[var.lower()[:-6]] = (value, var)
            else:
                found.pop(var.lower()[:-6], None)
    return found


_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")  # NO_PROXY holds for these


@valueclass
class Settings:
    """The user's network settings, read once from an environment."""

    proxies: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # scheme -> (url, var)
    no_proxy: str = ""
    cafile: tuple[str, str] | None = None  # (path, variable)
    netrc_path: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str], given: Given | None = None) -> Settings:
        from pathlib import Path

        from resolver_hook.index.pipconfig import pip_settings  # configparser: when needed

        given = given or Given()
        # pip's files read once for both, and not for what pip's own arguments gave.
        pip = pip_settings(
            env,
            *(n for n, g in (("proxy", given.proxy), ("cert", given.cert)) if not g),
            isolated=given.isolated,
        )
        variables = _proxy_variables(env)
        # all_proxy serves a scheme that has none of its own (requests' select_proxy).
        proxies: dict[str, tuple[str, str]] = {
            scheme: found
            for scheme in ("https", "http")
            if (found := variables.get(scheme, variables.get("all"))) is not None
        }
        no = _env_value(env, "no_proxy")
        pip_proxy = given.proxy or pip.get("proxy")
        if pip_proxy is not None:  # for every scheme and host, no_proxy unread, as pip does
            value, where = pip_proxy
            value = value if "://" in value else f"http://{value}"
            proxies, no = {"https": (value, where), "http": (value, where)}, None
        # What pip trusts first (the hook's pages are read for pip), then OpenSSL's own.
        cafile = (
            given.cert
            or pip.get("cert")
            or ((env["SSL_CERT_FILE"], "SSL_CERT_FILE") if env.get("SSL_CERT_FILE") else None)
        )
        if env.get("NETRC"):
            netrc_path: Path | None = Path(env["NETRC"])
        else:
            netrc_path = Path(env["HOME"]) / ".netrc" if env.get("HOME") else None
        return cls(proxies=proxies, no_proxy=no[0] if no else "", cafile=cafile,
                   netrc_path=netrc_path)  # fmt: skip

    def proxy_for(self, url: str) -> tuple[str, str] | None:
        """``(proxy URL, variable)`` that a request for ``url`` goes through, or None."""
        parts = urlsplit(url)
        found = self.proxies.get(parts.scheme.lower())
        if found is None:
            return None
        if self.no_proxy and _bypass(parts.hostname or "", _port(parts), self.no_proxy):
            return None
        return found


class Transport:
    """Reads URLs with the user's settings and the project's URL policy; thread-safe."""

    def __init__(
        self,
        *,
        allow_insecure: bool = False,
        timeout: float = NETWORK_DEADLINE,
        env: Mapping[str, str] | None = None,
        given: Given | None = None,
    ) -> None:
        self.allow_insecure = allow_insecure
        self.timeout = timeout
        self._env = os.environ if env is None else env
        self._given = given
        self.notes: list[str] = []
        self._lock = threading.Lock()
        self._netrc: netrc.netrc | None = None
        self._netrc_read = False

    # --- settings --------------------------------------------------------------------

    @functools.cached_property
    def settings(self) -> Settings:
        """The user's network settings, read when first needed (a request, a note on a
        failed one): a command the page cache answers reads no pip configuration."""
        return Settings.from_env(self._env, self._given)

    def _note(self, text: str) -> None:
        with self._lock:
            if text not in self.notes:
                self.notes.append(text)

    def ssl_context(self) -> ssl.SSLContext:
        """The context for https (made once per process per CA file: loading the
        store takes a fifth of a second)."""
        from resolver_hook.index import opener  # connecting: urllib and ssl (see above)

        return opener.ssl_context(self.settings.cafile)

    def say_given(self, url: str) -> None:
        """Note it when credentials for ``url``'s host came only in a URL (a manifest's
        page, a mirror): what is pinned or locked there carries none, and the installer
        is never handed them, so it needs its own; said before it runs (a 401 later
        would not say why), whether the page is read or served from the cache."""
        if kept(url) is None or self.netrc_auth(url) is not None:
            return
        parts = urlsplit(url)
        self._note(
            f"{parts.netloc}: the credentials given in a URL (a manifest's page, a mirror) "
            "are sent by resolver-hook only: the URLs it prints, pins and locks there "
            "hold none; 'resolver-hook pip|uv install' hands them to the installer for "
            "its run, anything else (a lock installed later) needs its own "
            f"(a netrc entry for {parts.hostname}, or a keyring)"
        )

    def netrc_auth(self, url: str) -> tuple[str, str] | None:
        """The login and password of ``url``'s host in the user's netrc, if any."""
        parts = urlsplit(url)
        with self._lock:
            if not self._netrc_read:
                self._netrc_read = True
                path = self.settings.netrc_path
                if path is not None and path.is_file():
                    import netrc  # only once a request is sent

                    try:
                        self._netrc = netrc.netrc(str(path))
                    except (OSError, netrc.NetrcParseError) as exc:
                        # The message may quote the file: only its line number is shown.
                        line = getattr(exc, "lineno", None)
                        where = f" (line {line})" if line else ""
                        self.notes.append(f"{path} not read: not a valid netrc file{where}")
            entry = self._netrc.authenticators(parts.hostname or "") if self._netrc else None
            if entry is None:
                return None
            login, _account, password = entry
            return login, password or ""

    # --- requests --------------------------------------------------------------------

    def authorize(self, request: urllib.request.Request) -> None:
        """Add the credentials of ``request``'s host, if any, to it: on every request,
        redirects included, each for its own host only (an ``unredirected`` header,
        which urllib does not copy onto the next request)."""
        if request.has_header("Authorization"):
            return
        # Those of a URL the user gave first (resolver_hook.ground.credentials).
        auth = kept(request.full_url) or self.netrc_auth(request.full_url)
        if auth is not None:
            import base64  # a request with credentials (a plan from the cache sends none)

            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
            request.add_unredirected_header("Authorization", f"Basic {token}")

    def _open(self, url: str, headers: Mapping[str, str], what: str) -> Any:
        """The response to a GET of ``url``: through its proxy, every redirect target
        under the URL policy (refused: ``what: ...``), credentials on every request."""
        from resolver_hook.index import opener  # connecting: urllib and ssl (see above)

        proxy = self.settings.proxy_for(url)
        return opener.build(
            urlsplit(url).scheme.lower(),
            proxy=proxy[0] if proxy else None,
            check=lambda target: check_read_url(
                target, allow_insecure=self.allow_insecure, what=what
            ),
            authorize=self.authorize,
            context=self.ssl_context,
        ).open(opener.request(url, dict(headers)), timeout=self.timeout)

    def _unreachable(self, url: str, exc: BaseException, doing: str) -> PageError:
        """Words for a connection that failed: the proxy's fault named as the proxy's."""
        from resolver_hook.index.opener import cause_of  # loaded by _open already

        reason = getattr(exc, "reason", exc)
        cause = cause_of(reason)
        shown = redact(url)
        proxy = self.settings.proxy_for(url)
        if isinstance(reason, TimeoutError) and proxy is None:
            # A read that outlived the deadline: the same words as the deadline itself.
            return PageError(
                f"{shown}: no complete answer within {self.timeout:g} s",
                hint="the server is slow or stalled; try again or raise --timeout",
                cause=cause,
            )
        if proxy is not None and isinstance(reason, OSError | str):
            where = f"the proxy {redact(proxy[0])} (from {proxy[1]})"
            also = " (and NO_PROXY)" if proxy[1].lower() in _PROXY_VARIABLES else ""
            if str(reason).startswith("Tunnel connection failed"):
                return PageError(f"{shown}: {where} did not connect: {reason}", cause="proxy")
            return PageError(
                f"{shown}: cannot reach {where}: {reason}",
                hint=f"check {proxy[1]}{also}, or unset it",
                cause="proxy",
            )
        return PageError(f"{shown}: {doing}: {reason}", cause=cause)

    def get(
        self,
        url: str,
        *,
        accept: str = "text/html",
        headers: Mapping[str, str] | None = None,
        max_bytes: int = MAX_PAGE_BYTES,
    ) -> Response:
        """GET ``url`` within one total deadline (``self.timeout``), body bounded.

        ``headers`` may carry ``If-None-Match`` / ``If-Modified-Since``: a 304 answer is
        a :class:`Response` with status 304 and no body. The URL passes the URL policy
        first (UsageError); every other failure is a PageError.
        """
        url = keep(url)  # its credentials kept (in memory) for its host
        check_read_url(url, allow_insecure=self.allow_insecure)
        all_headers = {"Accept": accept, **(headers or {})}
        deadline = time.monotonic() + self.timeout
        return _within(
            self.timeout,
            lambda: self._download(url, all_headers, max_bytes, deadline),
            f"{redact(url)}: no complete answer within {self.timeout:g} s",
        )

    def _download(
        self, url: str, headers: Mapping[str, str], max_bytes: int, deadline: float
    ) -> Response:
        import http.client  # loaded by the opener already: for the failures below
        import urllib.error

        shown = redact(url)
        try:
            with self._open(url, headers, "redirect") as response:
                declared = response.headers.get("Content-Length")
                size = declared.strip()[:20] if declared else ""
                if size.isdigit() and int(size) > max_bytes:
                    raise PageError(f"{shown}: larger than {max_bytes} bytes")
                chunks: list[bytes] = []
                got = 0
                while True:
                    if time.monotonic() > deadline:
                        raise PageError(
                            f"{shown}: no complete answer within {self.timeout:g} s",
                            cause="no answer in time",
                        )
                    chunk = response.read1(_READ_CHUNK)
                    if not chunk:
                        break
                    got += len(chunk)
                    if got > max_bytes:
                        raise PageError(f"{shown}: larger than {max_bytes} bytes")
                    chunks.append(chunk)
                final = response.geturl()
                info = response.headers
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code == 304:
                etag = exc.headers.get("ETag") if exc.headers else None
                modified = exc.headers.get("Last-Modified") if exc.headers else None
                return Response(url=url, status=304, body=b"", etag=etag, last_modified=modified)
            raise PageError(
                f"{shown}: HTTP {exc.code} {exc.reason}", cause=f"HTTP {exc.code}"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise self._unreachable(url, exc, "cannot fetch") from None
        except http.client.HTTPException as exc:  # BadStatusLine, IncompleteRead, InvalidURL...
            raise PageError(
                f"{shown}: not a valid HTTP answer ({type(exc).__name__}: {str(exc)[:80]})"
            ) from None
        if size.isdigit() and got < int(size):
            raise PageError(
                f"{shown}: the page ended after {got} of its {size} bytes "
                "(connection cut); nothing written"
            )
        return Response(
            url=split_credentials(final)[0],
            status=200,
            body=b"".join(chunks),
            content_type=info.get_content_type().lower() if info.get("Content-Type") else "",
            charset=info.get_content_charset(),
            etag=info.get("ETag"),
            last_modified=info.get("Last-Modified"),
        )

    def stream(
        self, url: str, sink: Callable[[bytes], None], *, max_bytes: int, doing: str
    ) -> None:
        """Feed the body of ``url`` to ``sink`` in chunks (a wheel to hash), within a total
        deadline that grows with what was received: ``self.timeout`` plus one second per
        :data:`~resolver_hook.limits.MIN_DOWNLOAD_RATE` bytes (``self.timeout`` per read
        too). Refused redirects read ``page: ...``; a body declared or found larger than
        ``max_bytes`` is :class:`TooLarge` (a declared one before any of it is read)."""
        url = keep(url)  # its credentials kept (in memory) for its host
        check_read_url(url, allow_insecure=self.allow_insecure)
        got = [0]
        abandoned = threading.Event()

        def fed(chunk: bytes) -> None:
            if abandoned.is_set():  # the caller gave up: its sink may be closed
                raise PageError(f"{redact(url)}: abandoned")
            got[0] += len(chunk)
            sink(chunk)

        outcome: dict[str, BaseException] = {}

        def run() -> None:
            try:
                self._stream(url, fed, max_bytes=max_bytes, doing=doing, stop=abandoned)
            except BaseException as exc:  # handed to the waiting thread, raised there
                outcome["error"] = exc

        began = time.monotonic()
        worker = threading.Thread(target=run, name="resolver-hook-download", daemon=True)
        worker.start()
        while worker.is_alive():
            left = began + self.timeout + got[0] / MIN_DOWNLOAD_RATE - time.monotonic()
            if left <= 0:
                abandoned.set()  # the worker stops at its next chunk or socket timeout
                raise PageError(
                    f"{redact(url)}: {doing}: {got[0]} bytes in {time.monotonic() - began:.0f} s, "
                    f"slower than {MIN_DOWNLOAD_RATE >> 10} KiB/s after the first "
                    f"{self.timeout:g} s",
                    hint="the server is slow or stalled; try again or raise --timeout",
                )
            worker.join(min(left, 0.25))
        if "error" in outcome:
            raise outcome["error"]

    def _stream(
        self,
        url: str,
        sink: Callable[[bytes], None],
        *,
        max_bytes: int,
        doing: str,
        stop: threading.Event,
    ) -> None:
        import http.client  # loaded by the opener already: for the failures below
        import urllib.error

        size = 0
        try:
            with self._open(url, {}, "page") as response:
                declared = (response.headers.get("Content-Length") or "").strip()[:20]
                if declared.isdigit() and int(declared) > max_bytes:
                    raise TooLarge(redact(url), max_bytes)
                while not stop.is_set() and (chunk := response.read1(_READ_CHUNK)):
                    size += len(chunk)
                    if size > max_bytes:
                        raise TooLarge(redact(url), max_bytes)
                    sink(chunk)
        except urllib.error.HTTPError as exc:
            exc.close()
            raise PageError(f"{redact(url)}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise self._unreachable(url, exc, doing) from None
        except http.client.HTTPException as exc:
            raise PageError(
                f"{redact(url)}: not a valid HTTP answer ({type(exc).__name__}: {str(exc)[:80]})"
            ) from None


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError:  # not a number: the request itself says so
        return None


def _bypass(host: str, port: int | None, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` sends ``host`` past the proxy, as pip's requests decides
    (``should_bypass_proxies``): for an IPv4 address, an entry that is a network holding
    it (``10.0.0.0/8``) or the address itself; for a name, an entry it (or ``host:port``)
    ends with; then urllib's own matcher (``*``, domains)."""
    entries = [e for e in no_proxy.replace(" ", "").split(",") if e]
    try:
        address: ipaddress.IPv4Address | None = ipaddress.IPv4Address(host)
    except ValueError:
        address = None
    if address is not None:
        for entry in entries:
            network = _network(entry)
            if (address in network) if network is not None else host == entry:
                return True
    else:
        with_port = f"{host}:{port}" if port else host
        if any(host.endswith(e) or with_port.endswith(e) for e in entries):
            return True
    import urllib.request  # a proxy is set: a connection is on its way

    # urllib's NO_PROXY matcher (not in its documented API, stable since Python 3.0).
    matcher: Callable[[str, Mapping[str, str]], bool] = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    return matcher(host, {"no": no_proxy})


def _network(entry: str) -> ipaddress.IPv4Network | None:
    """``entry`` as requests reads a network in ``NO_PROXY`` (``a.b.c.d/n``, n 1..32)."""
    address, slash, bits = entry.partition("/")
    if not slash or not bits.isdigit() or not 1 <= int(bits) <= 32:
        return None
    try:
        return ipaddress.IPv4Network(f"{address}/{bits}", strict=False)
    except ValueError:
        return None


def _within(timeout: float, work: Callable[[], T], late: str) -> T:
    """Run ``work`` in a worker thread; give up when ``timeout`` seconds have passed.

    A socket timeout bounds one read only, and http.client reads headers a line at a
    time: only a deadline kept outside the download bounds the whole of it.
    """
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the waiting thread, raised there
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="resolver-hook-fetch", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        # The daemon worker stops at its own deadline check or socket timeout.
        raise PageError(
            late,
            hint="the server is slow or stalled; try again or raise --timeout",
            cause="no answer in time",
        )
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value
