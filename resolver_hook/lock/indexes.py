"""The index settings a lock resolves the rest of the environment against.

A lock of torch and a private ``kplain`` must read ``kplain`` from the company index the
user's installer reads, not from PyPI. The settings come, first found first (issue 45):

1. our command line: ``--index-url``, ``--extra-index-url``, ``--find-links``;
2. the environment: ``UV_DEFAULT_INDEX``, then the older ``UV_INDEX_URL``, then
   ``PIP_INDEX_URL``; extra indexes from ``UV_INDEX`` (``NAME=URL`` or ``URL``,
   space-separated), ``UV_EXTRA_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``; find-links from
   ``UV_FIND_LINKS`` (comma-separated) then ``PIP_FIND_LINKS`` (docs/facts.md
   section 3);
3. pip's configuration files, as pip itself reads and orders them (``[install]`` over
   ``[global]``, later files over earlier): the caller hands them in, already read
   (:func:`resolver_hook.index.pipconfig.pip_settings`).

Nothing found: uv runs with no index option, so its own ``uv.toml`` (or PyPI) decides, and
the lock's header names the indexes uv's answer says it used.

:func:`lock_indexes` is pure and takes every setting as an argument. The settings value
(:class:`resolver_hook.settings.IndexSettings`) holds the flags, and the default index in
the plan's order only (uv.toml last, read here by uv itself), so the extra indexes and
find-links of the environment and pip's files are read here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from resolver_hook.errors import UsageError
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.index.fetch import redact
from resolver_hook.manifest.urls import url_problem

__all__ = ["LockIndexes", "lock_indexes"]

_UV_INDEX_NAME = re.compile(r"[A-Za-z0-9_.-]+=")


@valueclass
class LockIndexes:
    """Where the rest of the environment is read from, and where each setting was found."""

    index_url: str | None = None  # None: the installer's own default (uv.toml, PyPI)
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    # Where each was set: "--index-url", "PIP_INDEX_URL", "index-url in /etc/pip.conf"
    index_from: str = ""
    extras_from: str = ""
    links_from: str = ""

    def uv_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` for ``uv pip compile`` with these settings in it. In the environment,
        not on the command line: an index URL may hold credentials, and a command line
        is visible to every user of the machine. A setting uv reads itself (from its own
        ``UV_*`` variable) is left as it is."""
        out = dict(env)
        kinds = (
            (self.index_url and (self.index_url,), self.index_from, "UV_INDEX_URL", " ",
             ("UV_DEFAULT_INDEX", "UV_INDEX_URL")),
            (self.extra_index_urls, self.extras_from, "UV_EXTRA_INDEX_URL", " ",
             ("UV_INDEX", "UV_EXTRA_INDEX_URL")),
            (self.find_links, self.links_from, "UV_FIND_LINKS", ",", ("UV_FIND_LINKS",)),
        )  # fmt: skip
        for values, source, name, sep, uvs in kinds:
            if not values or source.startswith("UV_"):
                continue
            for old in uvs:
                out.pop(old, None)
            out[name] = sep.join(values)
        return out

    def described(self) -> str:
        """The settings in words for a lock's header, credentials shown as ``****``."""
        parts = []
        if self.index_url:
            parts.append(f"index {redact(self.index_url)} (from {self.index_from})")
        if self.extra_index_urls:
            urls = " ".join(redact(u) for u in self.extra_index_urls)
            parts.append(f"extra index {urls} (from {self.extras_from})")
        if self.find_links:
            urls = " ".join(redact(u) for u in self.find_links)
            parts.append(f"find-links {urls} (from {self.links_from})")
        return ", ".join(parts)


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(value.split()) if value and value.strip() else ()


def lock_indexes(
    *,
    index_url: str | None,
    extra_index_urls: Sequence[str],
    find_links: Sequence[str],
    env: Mapping[str, str],
    pip_files: Mapping[str, tuple[str, str]],
    allow_insecure: bool = False,
) -> LockIndexes:
    """The settings, first found first: the command line, ``env``, then ``pip_files``
    (``{"index-url": (value, where)}`` as :func:`~resolver_hook.index.pipconfig.pip_settings`
    gives them).
    ``allow_insecure``: whether our own options may name loopback http or ``file:``."""

    def first(
        cli: Sequence[str], flag: str, names: Sequence[str], key: str
    ) -> tuple[tuple[str, ...], str]:
        if cli:
            return tuple(cli), flag
        for name in names:
            raw = env.get(name)
            if raw and raw.strip():
                # uv reads UV_FIND_LINKS comma-separated, every other list space-separated.
                return _split(raw.replace(",", " ") if name == "UV_FIND_LINKS" else raw), name
        if key in pip_files:
            value, where = pip_files[key]
            return _split(value), where
        return (), ""

    main, index_from = first(
        [index_url] if index_url else [],
        "--index-url",
        ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"),
        "index-url",
    )
    extras, extras_from = first(
        extra_index_urls,
        "--extra-index-url",
        ("UV_INDEX", "UV_EXTRA_INDEX_URL", "PIP_EXTRA_INDEX_URL"),
        "extra-index-url",
    )
    extras = tuple(_UV_INDEX_NAME.sub("", u, count=1) if "://" in u else u for u in extras)
    links, links_from = first(
        find_links, "--find-links", ("UV_FIND_LINKS", "PIP_FIND_LINKS"), "find-links"
    )
    # Ours are checked as every URL we are given is; what the user's installer is
    # configured with (environment, pip.conf) is theirs, handed on as pip would use it.
    for flag, urls in (("--index-url", [index_url] if index_url else []),
                       ("--extra-index-url", extra_index_urls)):  # fmt: skip
        for url in urls:
            problem = url_problem(url, allow_insecure=allow_insecure)
            if problem:
                raise UsageError(f"{flag} {redact(url)}: {problem}")
    return LockIndexes(
        index_url=main[0] if main else None,
        extra_index_urls=extras,
        find_links=links,
        index_from=index_from,
        extras_from=extras_from,
        links_from=links_from,
    )
