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

The key and the file's place are computed in :mod:`resolver_hook.ground.hostkey`, which the
warm path of ``detect --json`` shares. Overrides, ``--target``, ``--profile`` and
``--no-cache`` bypass the cache (the callers decide). The file is written atomically
with mode 0600; a file that is corrupt, written for another key, not owned by this user
or writable by others is ignored, and the fresh profile says so in a note.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from resolver_hook.ground import cache as _cache
from resolver_hook.ground.hostkey import cache_file, cache_key
from resolver_hook.host.profile import HostProfile

__all__ = ["CACHE_ENV", "cache_file", "cache_key", "conclusive", "load", "store"]

CACHE_ENV = _cache.CACHE_ENV


def conclusive(key: Mapping[str, Any], profile: HostProfile) -> bool:
    """Whether a detection is worth keeping for the whole boot.

    A loaded driver whose GPUs detection could not list (NVML timed out, a device
    node not yet created) may be a passing state: detect again next time.
    """
    return key.get("driver") is None or bool(profile.gpus)


def load(
    path: str | os.PathLike[str], key: Mapping[str, Any]
) -> tuple[HostProfile | None, str | None]:
    """The cached profile for ``key``, or None and (for a file we could not use) why."""
    value, note = _cache.read(path, key)
    if value is None:
        return None, note and f"host {note}"
    try:
        return HostProfile.from_dict(value, where=str(path)), None
    except ValueError as exc:  # UsageError is a ValueError
        return None, f"host cache {path} ignored: unreadable ({exc})"


def store(path: str | os.PathLike[str], key: Mapping[str, Any], profile: HostProfile) -> None:
    """Write the cache atomically with mode 0600; a failure only costs the next detection."""
    _cache.write(path, key, profile.to_dict())
