"""Lock files, one way down from the plan: plan -> the wheels of each target -> a format.

- :mod:`resolver_hook.lock.lines`: pinned requirement lines, several targets in one file
  told apart by markers (pure);
- :mod:`resolver_hook.lock.wheels`: the wheels a plan installs, with URL and sha256
  (reads index pages and hashes files when the manifest does not say: the network edge);
- :mod:`resolver_hook.lock.pylock`: a PEP 751 document for several targets, checked with
  ``packaging.pylock`` (pure);
- :mod:`resolver_hook.lock.hashes`: the sha256 of each flavoured requirements line, or
  why it is unknown;
- :mod:`resolver_hook.lock.resolved`: the packages without a manifest, resolved by uv for
  each target (a lock pins every package), against the index settings of
  :mod:`resolver_hook.lock.indexes`, keeping the pins :mod:`resolver_hook.lock.stable`
  reads from the lock already written;
- :mod:`resolver_hook.lock.environment`: one target's whole requirements lock;
- :mod:`resolver_hook.lock.files`: writing a lock file, or its ``--check`` diff;
- :mod:`resolver_hook.lock.uvproject`: ``[tool.uv.sources]`` / ``[[tool.uv.index]]`` text
  to paste into a project (pure);
- :mod:`resolver_hook.lock.sets`: one lock per machine class and the index ``sync`` reads.

Nothing here imports the install side.

Sources: docs/facts.md section 3 (PEP 751, uv project sources).
"""

from __future__ import annotations

__all__: list[str] = []
