"""Where the tests find the repository and the shared material beside it."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
# The requirement-file corpus lives beside the checkout in ../shared (see the README).
SHARED = REPO.parent / "shared"
