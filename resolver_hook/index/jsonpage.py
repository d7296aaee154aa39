"""PEP 691 JSON pages (``application/vnd.pypi.simple.v1+json``) -> :class:`Link` s.

What is read from each entry of ``files`` (docs/facts.md section 3): ``url`` (resolved
against the page), ``filename``, ``hashes`` (a hashlib name -> hex digest of the right
length; others dropped), ``requires-python``, ``yanked`` (``true`` or a reason string,
PEP 592), ``core-metadata`` (PEP 714), else ``dist-info-metadata`` (PEP 658/691):
``true`` or a hashes object offer the ``<url>.metadata`` file. ``meta.api-version``
must have major version 1 (PEP 691: a client must refuse a major version it does not
know). A document that is not such a page is a :class:`PageError`, never a KeyError.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from resolver_hook.index.errors import PageError
from resolver_hook.index.htmlpage import parse_hash
from resolver_hook.index.model import JSON_TYPE, Link
from resolver_hook.limits import MAX_PAGE_LINKS, MAX_PAGE_URL_BYTES

__all__ = ["JSON_TYPE", "parse_json"]


def _hashes(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    out = {}
    for name, digest in value.items():
        if isinstance(name, str) and isinstance(digest, str):
            pair = parse_hash(f"{name}={digest}")
            if pair:
                out[pair[0]] = pair[1]
    return out


def _metadata_offer(entry: Mapping[str, Any]) -> Mapping[str, str] | None:
    for key in ("core-metadata", "dist-info-metadata"):
        if key in entry:
            value = entry[key]
            if value is True:
                return {}
            if isinstance(value, Mapping):
                return _hashes(value)
            return None  # false, or a value the PEP does not define
    return None


def _yanked(value: object) -> str | None:
    if value is True:
        return ""
    if isinstance(value, str) and value:
        return value  # PEP 691: a non-empty string is yanked, with that reason
    return None


def parse_json(text: str, page_url: str) -> tuple[Link, ...]:
    """The files of a PEP 691 project page, bounded like an HTML page."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise PageError(f"the page is not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise PageError("the JSON page has no 'files' list (not a PEP 691 project page)")
    meta = data.get("meta")
    version = meta.get("api-version") if isinstance(meta, dict) else None
    if not isinstance(version, str) or version.split(".")[0] != "1":
        raise PageError(f"the JSON page has api-version {version!r}; this reader knows 1.x")
    files = data["files"]
    if len(files) > MAX_PAGE_LINKS:
        raise PageError(f"the page has more than {MAX_PAGE_LINKS} links")
    links = []
    total = 0
    for entry in files:
        if not isinstance(entry, dict):
            continue
        url, filename = entry.get("url"), entry.get("filename")
        if not isinstance(url, str) or not isinstance(filename, str) or not url:
            continue
        try:
            parts = urlsplit(urljoin(page_url, url))
            _ = parts.port
            url = urlunsplit(parts._replace(fragment=""))
        except ValueError:  # kept as written: the URL policy refuses it later
            pass
        total += len(url)
        if total > MAX_PAGE_URL_BYTES:
            raise PageError(f"the page's links add up to more than {MAX_PAGE_URL_BYTES} bytes")
        requires_python = entry.get("requires-python")
        links.append(
            Link(
                url=url,
                filename=filename,
                hashes=_hashes(entry.get("hashes")),
                requires_python=requires_python
                if isinstance(requires_python, str) and requires_python
                else None,
                yanked=_yanked(entry.get("yanked")),
                core_metadata=_metadata_offer(entry),
            )
        )
    return tuple(links)
