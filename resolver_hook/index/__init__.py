"""The one index client: every page resolver-hook reads comes through here.

:mod:`resolver_hook.index.model` holds the values (a page and its links, with the
attributes PEP 503, PEP 592, PEP 658/714 and PEP 691 give them); the modules beside it
produce them: :mod:`~resolver_hook.index.fetch` (the only place a socket is opened: URL
policy, proxies, certificates, credentials, one deadline, bounded bodies),
:mod:`~resolver_hook.index.htmlpage` and :mod:`~resolver_hook.index.jsonpage` (the two
page forms), :mod:`~resolver_hook.index.metadata` (PEP 658 files),
:mod:`~resolver_hook.index.cache` (the page cache), :mod:`~resolver_hook.index.mirrors`
(``UPSTREAM=MIRROR``), :mod:`~resolver_hook.index.pipconfig` (pip's ``cert`` setting)
and :mod:`~resolver_hook.index.client` (:class:`IndexClient`,
which puts them together). Nothing else in the package opens a URL.

This package imports only the errors, limits, the user cache folder and the URL policy
(:mod:`resolver_hook.manifest.urls`): callers sit above it. Its names are loaded when
first used (PEP 562), so that importing one module of it (the page cache, pip's
configuration) does not bring in the client and its HTTP machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resolver_hook.index.client import IndexClient, parse_page
    from resolver_hook.index.errors import PageError
    from resolver_hook.index.fetch import redact
    from resolver_hook.index.mirrors import apply_mirrors, mirrors_from
    from resolver_hook.index.model import Link

# Public name -> the module of this package that defines it.
_HOMES = {
    "IndexClient": "client",
    "parse_page": "client",
    "PageError": "errors",
    "redact": "fetch",
    "apply_mirrors": "mirrors",
    "mirrors_from": "mirrors",
    "Link": "model",
}

__all__ = [
    "IndexClient",
    "Link",
    "PageError",
    "apply_mirrors",
    "mirrors_from",
    "parse_page",
    "redact",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # the next lookup is a plain one
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
