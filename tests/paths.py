"""Where the tests find the repository and its test data, and the
environment a test gives a ``python -m resolver_hook`` it starts."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
# The fake pynvml package (tests/data/fake_pynvml) a child process imports.
FAKE_PYNVML = str(DATA / "fake_pynvml")


def child_env(
    env: Mapping[str, str] | None = None,
    *,
    fake_nvml: dict[str, Any] | None = None,
    pythonpath: str = FAKE_PYNVML,
) -> dict[str, str]:
    """This process's environment without the developer's overrides and GPU selection
    (as tests/conftest.py clears them), plus ``env``; with ``fake_nvml``, the child
    imports the fake pynvml from ``pythonpath`` and reads that machine.

    ``RESOLVER_HOOK_CACHE_DIR`` stays: it is the test's own empty cache folder
    (conftest.py), so the child neither reads a profile cached elsewhere (the
    developer's, another test run's) nor writes the developer's cache.
    """
    full = {
        k: v
        for k, v in os.environ.items()
        if k == "RESOLVER_HOOK_CACHE_DIR"
        or (not k.startswith("RESOLVER_HOOK_") and k != "CUDA_VISIBLE_DEVICES")
    }
    full.update(env or {})
    if fake_nvml is not None:
        full["PYTHONPATH"] = pythonpath
        full["FAKE_NVML"] = json.dumps(fake_nvml)
    return full
