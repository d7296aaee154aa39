"""The page cache: index pages kept under the user cache folder, revalidated, bounded.

One file per page in ``<cache folder>/index/`` (the folder of
:func:`resolver_hook.ground.cache.cache_dir`), named by the sha256 of its key (what was
asked for and the URL, credentials never part of it). A file is one JSON header line
(format, key, final URL, content type and charset, ``ETag`` / ``Last-Modified``, the
time it was read, the body's size, sha256 and CRC-32) and then the body. Files are
written atomically with mode 0600 (:func:`resolver_hook.ground.cache.write_private`) and
read only when they are a regular file of this user not writable by others
(:func:`resolver_hook.ground.cache.read_private`); a file that is corrupt (bad header,
body not matching its size and CRC-32) or foreign (another format or key) is ignored
with a note and replaced by the next fetch.

The sha256 names the body (what the links kept beside it are tied to); the CRC-32
checks it as read back. The files are our own, written atomically into a private
folder: what the check is for is damage by a disk or an interrupted copy, which zlib's
CRC-32 detects (every change of a byte) at a fraction of a sha256's cost: a plan reads
some 1 MB of kept links, on which the interpreter's own sha256 takes 3-4 ms, and
OpenSSL's takes 2-7 ms to load.

Beside each page, the links read from it are kept (tied to the page body's sha256), so
a cached page is not parsed again, nor read past its header where it is served as it is
(the header names its body's sha256, the links file is checked by its own CRC-32; a
body is checked whenever it is read). A page the server said does not exist (HTTP 404
or 410) is kept as that answer, with no body. The folder is kept under
``MAX_PAGE_CACHE_BYTES``: after each write the oldest files go first. ``rm -r`` of the
folder clears it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from resolver_hook.ground import cache as _cache
from resolver_hook.ground.record import NOWHERE, Recorder, sha256_hex
from resolver_hook.ground.valueclass import from_columns, valueclass
from resolver_hook.index.model import Link
from resolver_hook.limits import MAX_PAGE_BYTES, MAX_PAGE_CACHE_BYTES

if TYPE_CHECKING:
    from pathlib import Path  # ~1 ms to import: a plan joins the cache's paths as text

__all__ = ["CacheEntry", "PageCache", "links_from_json", "links_to_json"]

_FORMAT = 2  # 2: the body checked by its CRC-32 (1: by its sha256)
# The formats of earlier releases: their files are no entry (the next fetch replaces
# them), without a note for each after an upgrade.
_OLDER = (1,)
_SUFFIX = ".page"
_MAX_HEADER = 64 << 10
# A header is a few hundred bytes: one longer (a URL of kilobytes) is read with its body.
_FIRST_READ = 4 << 10


@valueclass
class CacheEntry:
    """A cached answer: what :class:`~resolver_hook.index.fetch.Response` carried."""

    url: str
    body: bytes
    content_type: str = ""
    charset: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    fetched: float = 0.0  # seconds since the epoch, when the server last confirmed it
    status: int = 200  # 404 or 410: the server said there is no such page (no body)
    # The body's sha256 (hex) as its header names it (checked by its CRC-32 where the
    # body is read); None for an entry about to be stored (put hashes the body itself).
    sha256: str | None = None


class PageCache:
    """Pages by key in one folder; every failure to write only costs a later fetch.
    Each file read (or found missing) is declared to ``record``: by its header, which
    holds its body's size and sha256."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        max_bytes: int = MAX_PAGE_CACHE_BYTES,
        record: Recorder = NOWHERE,
    ) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.record = record
        # The folder as text, a file's path joined to it as text: what ``folder / name``
        # writes, without a Path made for each of the dozens of pages a plan asks for.
        self._folder = os.fspath(folder)

    def path(self, key: str) -> Path:
        from pathlib import Path

        return Path(self._file(key))

    def _file(self, key: str) -> str:
        """The path of ``key``'s file, as text."""
        name = sha256_hex(key.encode())[:40] + _SUFFIX
        return os.path.join(self._folder, name)

    def get(self, key: str, *, whole: bool = True) -> tuple[CacheEntry | None, str | None]:
        """``(entry, None)``; ``(None, why)`` for a file that could not be used;
        ``(None, None)`` when nothing is cached for ``key``.

        ``whole=False``: the entry from its file's header alone where the header is
        this key's and names the file's very size; its body is then not read (empty
        here) nor checked, and its ``sha256`` is the one the header gives: for a reader
        that needs only what that hash names (the links kept for that body). Any other
        file is read whole, as by default (a header longer than a first read too)."""
        path = self._file(key)
        if not whole:
            start, size, note = _cache.read_private_start(path, _FIRST_READ)
            if start is None:
                return self._none(path, note)
            entry = self._header(key, path, start, size)
            if entry is not None:
                return entry, None
        raw, note = _cache.read_private(path, MAX_PAGE_BYTES + _MAX_HEADER)
        if raw is None:
            return self._none(path, note)
        head, sep, body = raw.partition(b"\n")
        if sep:  # the header holds the body's size and sha256: it says all
            self.record.declare(path, ["read", len(head) + 1], raw[: len(head) + 1])
        else:
            self.record.file(path, raw)
        try:
            data = _cache.json_loads(head.decode("utf-8")) if sep else None
        except _cache.JsonBeyondBounds as exc:
            return None, f"cache {path} ignored: unreadable ({exc})"
        except ValueError:  # UnicodeDecodeError too
            data = None
        if not isinstance(data, dict):
            return None, f"cache {path} ignored: corrupt (no header)"
        if data.get("key") == key and data.get("format") in _OLDER:
            return None, None  # written by an older release: no entry, and nothing to say
        if data.get("format") != _FORMAT or data.get("key") != key:
            return None, f"cache {path} ignored: not a page cache entry of this version"
        from zlib import crc32

        if data.get("size") != len(body) or data.get("crc32") != crc32(body):
            return None, f"cache {path} ignored: corrupt (the page does not match its hash)"
        try:
            return _entry(data, body), None
        except (KeyError, TypeError, ValueError):
            return None, f"cache {path} ignored: corrupt (header fields)"

    def _none(self, path: str, note: str | None) -> tuple[None, str | None]:
        """No entry: ``note`` says why (a file that could not be used), or there is none."""
        if note is None:
            self.record.file(path, None)
        else:
            self.record.refuse(note)
        return None, note

    def _header(self, key: str, path: str, start: bytes, size: int) -> CacheEntry | None:
        """The entry of ``start``'s header line (the body not read) where it is whole in
        ``start``, this key's, of the file's very ``size`` and fields that read; else
        None, for the whole file to be read (and what is wrong with it said)."""
        head, sep, _ = start.partition(b"\n")
        if not sep or size > MAX_PAGE_BYTES + _MAX_HEADER:
            return None
        try:
            data = _cache.json_loads(head.decode("utf-8"))
            if (
                not isinstance(data, dict)
                or data.get("format") != _FORMAT
                or data.get("key") != key
                or data.get("size") != size - len(head) - 1
            ):
                return None
            entry = _entry(data, b"")
        except (KeyError, TypeError, ValueError):  # JsonBeyondBounds, UnicodeDecodeError
            return None
        self.record.declare(path, ["read", len(head) + 1], start[: len(head) + 1])
        return entry

    def put(self, key: str, entry: CacheEntry) -> None:
        """Store ``entry`` for ``key`` (atomic, 0600), then keep the folder bounded."""
        from zlib import crc32

        header = {
            "format": _FORMAT,
            "key": key,
            "url": entry.url,
            "content_type": entry.content_type,
            "charset": entry.charset,
            "etag": entry.etag,
            "last_modified": entry.last_modified,
            "fetched": entry.fetched,
            "size": len(entry.body),
            "sha256": sha256_hex(entry.body),
            "crc32": crc32(entry.body),
        }
        if entry.status != 200:
            header["status"] = entry.status
        data = json.dumps(header, sort_keys=True).encode() + b"\n" + entry.body
        if len(data) > self.max_bytes:
            return
        if _cache.write_private(self._file(key), data):
            self._evict()

    def _evict(self) -> None:
        """Oldest first (modification time: written or revalidated), down to the bound."""
        files = []
        try:
            with os.scandir(self.folder) as found:
                for item in found:
                    if item.name.endswith(_SUFFIX) and item.is_file(follow_symlinks=False):
                        st = item.stat(follow_symlinks=False)
                        files.append((st.st_mtime_ns, st.st_size, item.path))
        except OSError:
            return
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                total -= size


# The page parser's rules and the stored layout, by number: links kept by an earlier
# parser are read again (2: a page with a form and no package files is a sign-in page,
# no empty project; 3: a column per field, not a row per link).
_PARSER = 3


def links_to_json(links: Sequence[Link], page_sha256: str) -> bytes:
    """A page's parsed links, tied to the page body they were read from (reading them
    back is ~20x quicker than parsing the page again): one list per field of
    :class:`Link`, a value per link in each."""
    columns = {
        "url": [x.url for x in links],
        "filename": [x.filename for x in links],
        "hashes": [dict(x.hashes) for x in links],
        "requires_python": [x.requires_python for x in links],
        "yanked": [x.yanked for x in links],
        "core_metadata": [
            None if x.core_metadata is None else dict(x.core_metadata) for x in links
        ],
    }
    return json.dumps({"page_sha256": page_sha256, "parser": _PARSER, "links": columns}).encode()


def links_from_json(data: bytes, page_sha256: str) -> tuple[Link, ...] | None:
    """The links :func:`links_to_json` wrote for this very page body, else None (a
    value of a wrong type anywhere too)."""
    try:
        found: Any = _cache.json_loads(data)
        if found.get("page_sha256") != page_sha256 or found.get("parser") != _PARSER:
            return None
        columns = found["links"]
        if not _LIST.issuperset(map(type, columns.values())):
            return None  # a string or an object would pass as a column of its items
        # Each column's types checked whole, at C speed (a page has thousands of
        # links): a JSON object's keys are strings, its values are checked, and
        # dict.values refuses what is not an object (TypeError).
        hashes, meta = columns["hashes"], columns["core_metadata"]
        if not (
            _TEXT.issuperset(map(type, columns["url"]))
            and _TEXT.issuperset(map(type, columns["filename"]))
            and _MAYBE_TEXT.issuperset(map(type, columns["requires_python"]))
            and _MAYBE_TEXT.issuperset(map(type, columns["yanked"]))
            and _TEXT.issuperset(map(type, chain.from_iterable(map(dict.values, hashes))))
            and _MAYBE_DICT.issuperset(map(type, meta))
            and _TEXT.issuperset(
                map(type, chain.from_iterable(map(dict.values, filter(None, meta))))
            )
        ):
            return None
        # Columns other than Link's fields, or of different lengths: TypeError, ValueError.
        return tuple(from_columns(Link, columns))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


_LIST = frozenset({list})
_TEXT = frozenset({str})
_MAYBE_TEXT = frozenset({str, type(None)})
_MAYBE_DICT = frozenset({dict, type(None)})


def _entry(data: dict[str, Any], body: bytes) -> CacheEntry:
    """The entry a file's header ``data`` describes, with ``body`` (KeyError, TypeError,
    ValueError for fields that do not read)."""
    return CacheEntry(
        url=_text(data["url"]),
        body=body,
        content_type=_text(data.get("content_type") or ""),
        charset=_optional(data.get("charset")),
        etag=_optional(data.get("etag")),
        last_modified=_optional(data.get("last_modified")),
        fetched=float(data["fetched"]),
        status=int(data.get("status", 200)),
        sha256=_text(data["sha256"]),
    )


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def _optional(value: object) -> str | None:
    return None if value is None else _text(value)
