"""Lock formats beyond requirement lines: ``pylock.toml`` (PEP 751) and uv project sources.

- :mod:`resolver_hook.lockfmt.wheels`: the wheels a plan installs, with URL and sha256
  (reads index pages and hashes files when the manifest does not say: the network edge);
- :mod:`resolver_hook.lockfmt.pylock`: a PEP 751 document for several targets, checked with
  ``packaging.pylock`` (pure);
- :mod:`resolver_hook.lockfmt.uvproject`: ``[tool.uv.sources]`` / ``[[tool.uv.index]]`` text
  to paste into a project (pure).

Sources: docs/facts.md section 3 (PEP 751, uv project sources).
"""

from __future__ import annotations

__all__: list[str] = []
