"""The inventory: which files of a flavoured package exist, read from its index pages.

Manifests keep the rules (which page a flavour lives on, what its local label means,
kernel lists per label, platform and version range, couplings). What moves with every
release, the versions, files, wheel tags, sha256, ``requires-python``, yanked status
and ``Requires-Dist``, is read from the pages when planning:

- :mod:`resolver_hook.inventory.candidates`: the files of one page that belong to one
  flavour (its label, platforms and Pythons), newest first, and their ``Requires-Dist``
  read lazily from the PEP 658 metadata file;
- :mod:`resolver_hook.inventory.snapshot`: the shipped, dated, hashed snapshot of the
  built-in packages' pages, for ``--offline``, tests and a page that cannot be read;
- :mod:`resolver_hook.inventory.expand`: a manifest's index flavours turned into the
  exact files the planner may pin (``name @ url#sha256=...``), with kernel lists
  carried forward, marked, to releases newer than the newest verified one.

- :mod:`resolver_hook.inventory.kernels`: kernel lists read from the files themselves,
  which turn a carried-forward list into a verified one.

Pages come through a :class:`~resolver_hook.inventory.candidates.PageSource`; this
package opens no URL itself; the maintainers' data refresh
(:mod:`resolver_hook.publish.refresh`) reads the pages through the index client.
"""

from __future__ import annotations

from resolver_hook.inventory.candidates import PageSource
from resolver_hook.inventory.expand import expand_manifests

__all__ = [
    "PageSource",
    "expand_manifests",
]
