"""The one index client: every page resolver-hook reads comes through here.

:mod:`resolver_hook.index.model` holds the values (a page and its links, with the
attributes PEP 503, PEP 592, PEP 658/714 and PEP 691 give them); the fetching, parsing
and caching modules beside it produce them. Nothing else in the package opens a URL.
"""

from __future__ import annotations

from resolver_hook.index.model import Link, Page

__all__ = ["Link", "Page"]
