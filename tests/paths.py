"""Where the tests find the repository and its test data, and the
environment a test gives a ``python -m resolver_hook`` it starts."""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
# The fake pynvml package (tests/data/fake_pynvml) a child process imports.
FAKE_PYNVML = str(DATA / "fake_pynvml")


def script(name: str) -> ModuleType:
    """``scripts/NAME.py``, run as a module named ``name`` (registered in sys.modules:
    its dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


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
        full.update(fake_nvml_env(fake_nvml, pythonpath, full))
    return full


def python_child(
    code: str, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Python running ``code`` (with ``args`` after it) with this checkout's
    resolver_hook first on its path, in :func:`child_env` plus ``env``: what the child
    imports is what is seen (the tests of imports not made)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=child_env({"PYTHONPATH": str(REPO), **(env or {})}),
        cwd=cwd,
        timeout=120,
        check=False,
    )


def fake_nvml_env(
    fake_nvml: dict[str, Any], pythonpath: str = FAKE_PYNVML, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables that make a child detect the machine ``fake_nvml`` describes: the
    fake pynvml first on ``PYTHONPATH`` and, as detection imports pynvml only once the
    NVML library loads (host/probes.py), a stand-in library first on ``LD_LIBRARY_PATH``
    (``env``'s own is kept behind it)."""
    old = (os.environ if env is None else env).get("LD_LIBRARY_PATH")
    return {
        "PYTHONPATH": pythonpath,
        "FAKE_NVML": json.dumps(fake_nvml),
        "LD_LIBRARY_PATH": os.pathsep.join([nvml_library_folder(), *([old] if old else [])]),
    }


@functools.lru_cache(maxsize=1)
def nvml_library_folder() -> str:
    """A folder holding a stand-in ``libnvidia-ml.so.1`` (a link to the C library this
    interpreter runs on, which the loader opens at no cost) for the fake pynvml's
    children; removed when the tests end."""
    folder = tempfile.mkdtemp(prefix="fake-nvml-lib-")
    atexit.register(shutil.rmtree, folder, True)
    (Path(folder) / "libnvidia-ml.so.1").symlink_to(_loaded_c_library())
    return folder


def _loaded_c_library() -> str:
    """The C library's file, from this process's memory map (Linux)."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if Path(path).name.startswith("libc.so") or Path(path).name.startswith("libc-"):
                return path
    raise RuntimeError("no C library in /proc/self/maps")
