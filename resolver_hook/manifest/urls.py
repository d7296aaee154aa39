"""The one URL policy: which wheel and index URLs resolver-hook accepts, and how it prints them.

Every URL that comes from outside (a manifest, a ``manifest import`` page, ``scan
--url-prefix``, placeholder data, a redirect) passes :func:`url_problem` before it is
used. The rule:

- https only; loopback ``http://`` (127.0.0.0/8, ``::1``, ``localhost``) and ``file:``
  only with ``--allow-insecure-urls`` (tests serve a loopback index; docs/design.md
  "Secure by default").
- None of the characters that have no place in a wheel or index URL: whitespace,
  control characters, quotes, backtick, ``$``, ``;``, ``|``, ``<``, ``>``, backslash.
  The URL is written into requirement and constraint files (a space or line break
  starts another option or line there), into Markdown and into commands people paste
  into a shell. Percent-encoding covers every legitimate use of them. A query string
  (``?a=1&b=2``) stays legitimate.

Printing: :func:`markdown_url` for a link destination in Markdown.
"""

from __future__ import annotations

import os
import re

from resolver_hook.errors import UsageError
from resolver_hook.ground.userinfo import redact, redact_text
from resolver_hook.limits import MAX_URL_LENGTH

__all__ = [
    "FORBIDDEN_URL_CHARACTERS",
    "INSECURE_FLAG",
    "check_read_url",
    "check_url",
    "each_url_problem",
    "is_loopback_host",
    "markdown_url",
    "url_filename",
    "url_problem",
    "url_problems",
    "usual_host",
]

# The one opt-in flag for loopback http and file: URLs, on every command that reads URLs.
INSECURE_FLAG = "--allow-insecure-urls"

# Printable characters refused anywhere in a URL (whitespace and control characters too).
FORBIDDEN_URL_CHARACTERS = "\"'`$;|<>\\"


def is_loopback_host(host: str | None) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1): this machine only."""
    if host is None:
        return False
    if host == "localhost":
        return True
    import ipaddress  # (~1 ms): for a URL other than the usual https one

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_problem(url: str, *, allow_insecure: bool = False) -> str | None:
    """None when ``url`` may be used, else the problem in words (without the key; any
    credentials in ``url`` shown as ``****@``)."""
    problem = _problem(url, allow_insecure=allow_insecure)
    return None if problem is None else redact_text(problem)


def each_url_problem(urls: list[str], *, allow_insecure: bool) -> list[str | None]:
    """:func:`url_problem` of each of ``urls``, quick when they share their
    ``scheme://host/`` and all pass (an index page's links): the host is checked once,
    every character in one go."""
    shared = os.path.commonprefix(urls)  # noqa: RUF071 - by character, as meant
    host = shared[: shared.find("/", shared.find("//") + 2) + 1] if "//" in shared else ""
    if (
        host.endswith("/")
        and max(map(len, urls)) <= MAX_URL_LENGTH
        and _clean("".join(urls))
        and url_problem(host, allow_insecure=allow_insecure) is None
    ):
        return [None] * len(urls)
    return [url_problem(url, allow_insecure=allow_insecure) for url in urls]


def usual_host(url: str) -> str | None:
    """The host of the usual link, ``https://host/path``, as written: a host with no
    userinfo, port or IPv6 brackets, what urlsplit would find (but for its case); None
    for any other URL. Read as text, without urllib.parse (with ipaddress, ~2 ms)."""
    if not url.startswith("https://"):
        return None
    host = url[8:].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if host and "@" not in host and ":" not in host and "[" not in host and "]" not in host:
        return host
    return None


def _clean(text: str) -> bool:
    """Printable ASCII (which holds one space, " ") without a space or a forbidden
    character, checked whole: a plan checks thousands of URLs, and one character at a
    time costs more than the rest of reading them. ASCII's printable characters but the
    space are ``!`` to ``~``: the bytes left when those allowed are deleted are the
    others (one pass in C; ``str.isprintable`` looks up each character's Unicode
    category, ~5x slower on a page's URLs)."""
    return text.isascii() and not text.encode("ascii").translate(None, _ALLOWED)


# The bytes a clean URL is made of: printable ASCII, less the space and the forbidden.
_ALLOWED = bytes(c for c in range(0x21, 0x7F) if chr(c) not in FORBIDDEN_URL_CHARACTERS)


def _problem(url: str, *, allow_insecure: bool) -> str | None:
    if len(url) > MAX_URL_LENGTH:
        return f"{url[:60]!r}... is longer than {MAX_URL_LENGTH} characters"
    # Any URL but a clean one is walked for its first bad character.
    clean = _clean(url)
    bad = (
        None
        if clean
        else next(
            (
                ch
                for ch in url
                if ch.isspace() or not ch.isprintable() or ch in FORBIDDEN_URL_CHARACTERS
            ),
            None,
        )
    )
    if bad is not None:
        return (
            f"{url!r} contains {bad!r}: percent-encode it (it has no place in a wheel or index URL)"
        )
    if clean and usual_host(url) is not None:
        return None  # https with a host is allowed
    import urllib.parse  # (with ipaddress, ~2 ms): for a URL other than the usual one

    try:
        parts = urllib.parse.urlsplit(url)
        hostname = parts.hostname
        _ = parts.port  # a port that is not a number raises here
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    scheme = parts.scheme.lower()
    if scheme == "https":
        return None if hostname else f"{url!r} has no host"
    hint = f"; loopback http:// and file: URLs need {INSECURE_FLAG}"
    if scheme == "file":
        return None if allow_insecure else f"{url!r} is a file: URL, not https{hint}"
    if scheme == "http":
        if is_loopback_host(hostname):
            return None if allow_insecure else f"{url!r} is plain http, not https{hint}"
        return f"{url!r} is plain http: only https URLs are allowed"
    if not scheme:
        return f"{url!r} is not a URL (expected https://...)"
    return f"{url!r} uses {scheme}:, not https"


# A URL written in a lock file (a requirement line, a TOML string), up to a space or quote;
# both compiled when a lock file is checked.
_URL_IN_TEXT = r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>]+"
_COMMENT = r"(?:^|\s)#.*"


def url_problems(text: str, *, allow_insecure: bool = False) -> list[str]:
    """The problem of every URL written in ``text`` (a lock file: requirement lines or
    TOML) that the policy refuses, comments aside, in order and each once."""
    found: dict[str, None] = {}
    for line in text.splitlines():
        for url in re.findall(_URL_IN_TEXT, re.sub(_COMMENT, "", line)):
            problem = url_problem(url, allow_insecure=allow_insecure)
            if problem is not None:
                found.setdefault(problem)
    return list(found)


def check_read_url(url: str, *, allow_insecure: bool, what: str = "page") -> None:
    """The policy before ``url`` is read (a page, a file); UsageError ``what: problem``
    when refused, with the hint to :data:`INSECURE_FLAG` where it would allow it."""
    problem = url_problem(redact(url), allow_insecure=allow_insecure)
    if problem is not None:
        hint = None
        if INSECURE_FLAG in problem:
            hint = f"add {INSECURE_FLAG} for a local test index"
        raise UsageError(f"{what}: {problem}", hint=hint)


def check_url(url: object, *, key: str, allow_insecure: bool = False) -> str:
    """``url`` when the policy allows it; else UsageError ``key: problem``."""
    if not isinstance(url, str):
        raise UsageError(f"{key}: expected a URL string, got {type(url).__name__}")
    problem = url_problem(url, allow_insecure=allow_insecure)
    if problem is not None:
        raise UsageError(f"{key}: {problem}")
    return url


def url_filename(url: str) -> str:
    """The last path segment of a URL, percent-decoded (``%2B`` -> ``+``)."""
    import urllib.parse

    path = urllib.parse.urlsplit(url).path
    return urllib.parse.unquote(path.rsplit("/", 1)[-1])


def markdown_url(url: str) -> str:
    """``url`` as a Markdown link destination: parentheses percent-encoded.

    The policy already refuses spaces, ``<``, ``>`` and backslashes; a ``(`` or ``)``
    left as is could end the link early.
    """
    return url.replace("(", "%28").replace(")", "%29")
