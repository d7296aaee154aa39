"""Expansions kept by what they read: a plan made anew reads no page it read before.

Expanding the manifests of a plan (:func:`~resolver_hook.inventory.expand_manifests`)
reads the index pages of the packages asked for and of what they couple with, parses
their files and judges each by its manifest's rules: some 30 ms of a plan of five made
anew, most of the planner's own work. Its answer depends only on

- the packages asked for and their exact pins (a yanked file is planned for one only);
- the wheel tags of the target (the files whose metadata is read for couplings);
- the settings the pages are read with: the default index, ``--no-index``,
  ``--offline``, the mirrors, whether a mirror's hashes are trusted, insecure URLs;
- the built-in manifests, the shipped snapshot and kernel records, and the code that
  reads them: the tool's version and its own files, Python's version, packaging's;
- the files the page cache served (each page or its header, its links, each metadata
  file, and those it found missing), each declared to a
  :class:`~resolver_hook.ground.record.Recorder` as it is read, as a stored plan's
  inputs are (:mod:`resolver_hook._plancache`).

So the answer is kept in the user cache, ``expansions/<key>.json``, the key the sha256
of the first four, the file holding the declarations of the last. A later plan with the
same key takes each declaration again (:func:`~resolver_hook.ground.record.current`);
where every one gives the digest it gave, and no page served because it was fresh has
since gone stale, the expansion is made again from the file, and its declarations are
the plan's own (a plan stored from it is as valid as the files it read). A different
GPU, driver or CUDA on the same platform and Python, an option of the output, or a
range that pins nothing, is the same key.

Not kept: a plan over a manifest of the user's (a file, a folder, ``pyproject.toml``,
a plugin: what they name and hold would be keys too), one that read from the network
(its recorder refuses it), ``--refresh``, and anything that shows a credential. The
newest :data:`_KEEP` files are kept; ``rm -r`` of the folder clears them.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from resolver_hook.ground import cache as _cache
from resolver_hook.ground.contentcache import code_key
from resolver_hook.ground.record import Recorder, sha256_hex, unchanged
from resolver_hook.ground.userinfo import has_credentials
from resolver_hook.index.mirrors import Mirror
from resolver_hook.inventory.expand import Expansion, pins_exactly
from resolver_hook.manifest.model import Manifest
from resolver_hook.manifest.stored import CODE, dump_all, rebuild_all

__all__ = ["Kept", "kept_expansion"]

_FORMAT = 1
_KEEP = 16  # expansion files kept; a plan of torch and four companions is ~0.5 MB
_MAX_BYTES = 16 << 20

# What a kept expansion gives back: the expansion, the notes the reading added to it
# (the page source's and the index client's), and the pages that could not be read.
Kept = tuple[Expansion, list[str], dict[str, str]]


def kept_expansion(
    manifests: Mapping[str, Manifest],
    names: Sequence[str],
    *,
    pinned: Mapping[str, SpecifierSet] | None,
    tags: Sequence[str] | None,
    settings: Mapping[str, Any],
    mirrors: Sequence[Mirror],
    env: Mapping[str, str],
    record: Recorder,
    make: Callable[[Recorder], Kept],
) -> Kept:
    """``make(recorder)`` (the expansion of ``names`` read with that recorder), or the
    one kept for the same question whose declared files are unchanged. ``tags``: the
    target's wheel tags (None: every file's metadata is wanted); ``settings``: what
    the pages are read with, as plain data; ``env``: the command's environment (its
    cache folder, the page cache's). The declarations end up in ``record``."""
    key = _key(manifests, names, pinned, tags, settings)
    folder = _cache.cache_dir(env)
    if key is None or folder is None:
        return make(record)
    path = os.path.join(folder, "expansions", f"{key}.json")
    found = _valid(path)
    if found is not None:
        with contextlib.suppress(LookupError, TypeError, ValueError, AttributeError):
            made = _made_again(found, manifests, mirrors)
            record.take(found["inputs"], found["until"])
            return made
    mine = Recorder(cwd=os.getcwd())
    done = make(mine)
    if mine.refused is None:
        _store(path, done, mine)
    record.take(mine.inputs.values(), mine.until)
    if mine.refused is not None:
        record.refuse(mine.refused)
    return done


def _key(
    manifests: Mapping[str, Manifest],
    names: Sequence[str],
    pinned: Mapping[str, SpecifierSet] | None,
    tags: Sequence[str] | None,
    settings: Mapping[str, Any],
) -> str | None:
    """The sha256 of the question; None where it is not kept (see the module)."""
    if not getattr(manifests, "builtin_only", False) or settings.get("refresh"):
        return None
    exact = {canonicalize_name(k): str(v) for k, v in (pinned or {}).items() if pins_exactly(v)}
    text = json.dumps(
        {
            "format": _FORMAT,
            "code": code_key(CODE),
            "manifests": len(manifests),  # (which ones: the tool's files say)
            "names": list(names),
            "pinned": sorted(exact.items()),
            "tags": None if tags is None else sorted(tags),
            "settings": settings,
        },
        sort_keys=True,
    )
    return None if has_credentials(text) else sha256_hex(text.encode())


def _valid(path: str) -> dict[str, Any] | None:
    """The kept file's data where every declaration in it holds again, else None."""
    raw, _ = _cache.read_private(path, _MAX_BYTES)
    if raw is None:
        return None
    try:
        data = _cache.json_loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return None
    return data if unchanged(data.get("inputs"), data.get("until")) else None


def _made_again(
    data: dict[str, Any], manifests: Mapping[str, Manifest], mirrors: Sequence[Mirror]
) -> Kept:
    names, notes, touched = data["replaced"], data["notes"], data["touched"]
    made = rebuild_all(data["manifests"])
    if len(made) != len(names) or not all(isinstance(n, str) for n in names):
        raise ValueError("not a kept expansion")
    unread = data["unread"]
    texts = [*notes, *data["said"], *touched, *unread, *unread.values()]
    if not all(isinstance(t, str) for t in texts):
        raise TypeError("not a kept expansion")
    done = Expansion(
        manifests,
        dict(zip(names, made, strict=True)),
        mirrors,
        notes=tuple(notes),
        touched=frozenset(touched),
    )
    return done, list(data["said"]), dict(unread)


def _store(path: str, kept: Kept, record: Recorder) -> None:
    done, said, unread = kept
    try:
        data = {
            "format": _FORMAT,
            "until": record.until,
            "inputs": sorted(record.inputs.values()),
            "replaced": list(done.replaced),
            "manifests": dump_all(list(done.replaced.values())),
            "notes": list(done.notes),
            "touched": sorted(done.touched),
            "said": said,
            "unread": unread,
        }
        text = json.dumps(data, separators=(",", ":"))
    except (KeyError, TypeError, ValueError):  # a value no kept form holds: not kept
        return
    raw = text.encode()
    if len(raw) <= _MAX_BYTES and not has_credentials(text) and _cache.write_private(path, raw):
        _cache.keep_newest(os.path.dirname(path), _KEEP)
