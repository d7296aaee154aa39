"""resolver-hook: pick the right flavour of GPU packages before pip or uv runs."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
