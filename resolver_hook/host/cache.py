"""A per-boot cache of the detected host profile.

Detection loads NVML (or runs ``nvidia-smi``) and computes every wheel tag of the
interpreter: tens of milliseconds on every ``pip install`` the hook wraps. What it
finds changes only with what is cheap to read, so the profile is kept in one file
under the user's cache folder, keyed by:

- the boot id (``/proc/sys/kernel/random/boot_id``): a cache is never trusted across
  boots, and where no boot id exists (macOS, Windows) nothing is cached;
- the loaded NVIDIA driver's version (``/sys/module/nvidia/version``): a driver
  upgrade reloads the module;
- the variables detection reads (``CUDA_VISIBLE_DEVICES`` and the WSL/container hints);
- the interpreter (path and modification time) and resolver-hook's own version.

Overrides, ``--target``, ``--profile`` and ``--no-cache`` bypass the cache (the
callers decide). The file is written atomically with mode 0600; a file that is
corrupt, written for another key, not owned by this user or writable by others is
ignored, and the fresh profile says so in a note.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from resolver_hook import _cache
from resolver_hook.host.profile import HostProfile

__all__ = ["CACHE_ENV", "cache_file", "cache_key", "conclusive", "load", "store"]

CACHE_ENV = _cache.CACHE_ENV
# Variables the probes read (host/probes.py): a change must re-detect.
_ENV_KEYS = ("CUDA_VISIBLE_DEVICES", "WSL_DISTRO_NAME", "KUBERNETES_SERVICE_HOST", "container")
_FORMAT = 1


def cache_file(env: Mapping[str, str]) -> Path | None:
    """Where the profile is cached, in the user cache folder (``_cache.cache_dir``)."""
    folder = _cache.cache_dir(env)
    return folder / "host-profile.json" if folder else None


def _read_small(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            return f.read(4096).decode("ascii", "replace").strip()
    except OSError:
        return None


def cache_key(
    env: Mapping[str, str], *, root: Path = Path("/"), executable: str = sys.executable
) -> dict[str, Any] | None:
    """What the cached profile depends on, or None where caching is not safe."""
    from resolver_hook import __version__

    boot_id = _read_small(root / "proc/sys/kernel/random/boot_id")
    if not boot_id:
        return None  # no boot id to tie the cache to: detect every time
    try:
        interpreter_mtime = os.stat(executable).st_mtime_ns
    except OSError:
        return None
    return {
        "format": _FORMAT,
        "tool": __version__,
        "boot_id": boot_id,
        "driver": _read_small(root / "sys/module/nvidia/version"),
        "env": {k: env.get(k) for k in _ENV_KEYS},
        "interpreter": [executable, interpreter_mtime],
    }


def conclusive(key: Mapping[str, Any], profile: HostProfile) -> bool:
    """Whether a detection is worth keeping for the whole boot.

    A loaded driver whose GPUs detection could not list (NVML timed out, a device
    node not yet created) may be a passing state: detect again next time.
    """
    return key.get("driver") is None or bool(profile.gpus)


def load(path: Path, key: Mapping[str, Any]) -> tuple[HostProfile | None, str | None]:
    """The cached profile for ``key``, or None and (for a file we could not use) why."""
    value, note = _cache.read(path, key)
    if value is None:
        return None, note and f"host {note}"
    try:
        return HostProfile.from_dict(value, where=str(path)), None
    except ValueError as exc:  # UsageError is a ValueError
        return None, f"host cache {path} ignored: unreadable ({exc})"


def store(path: Path, key: Mapping[str, Any], profile: HostProfile) -> None:
    """Write the cache atomically with mode 0600; a failure only costs the next detection."""
    _cache.write(path, key, profile.to_dict())
