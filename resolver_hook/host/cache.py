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

import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from resolver_hook.host.profile import HostProfile

__all__ = ["CACHE_ENV", "cache_file", "cache_key", "conclusive", "load", "store"]

CACHE_ENV = "RESOLVER_HOOK_CACHE_DIR"
_FORMAT = 1
_MAX_BYTES = 1 << 20  # a profile is a few kB; anything larger is not ours
# Variables the probes read (host/probes.py): a change must re-detect.
_ENV_KEYS = ("CUDA_VISIBLE_DEVICES", "WSL_DISTRO_NAME", "KUBERNETES_SERVICE_HOST", "container")


def cache_file(env: Mapping[str, str]) -> Path | None:
    """Where the profile is cached: ``$RESOLVER_HOOK_CACHE_DIR``, else the user cache folder."""
    if env.get(CACHE_ENV):
        base = Path(env[CACHE_ENV])
    elif env.get("XDG_CACHE_HOME"):
        base = Path(env["XDG_CACHE_HOME"]) / "resolver-hook"
    elif env.get("HOME"):
        base = Path(env["HOME"]) / ".cache" / "resolver-hook"
    else:
        return None
    return base / "host-profile.json"


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
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"host cache {path} not read ({exc.strerror or exc})"
    try:
        st = os.fstat(fd)
        import stat

        if not stat.S_ISREG(st.st_mode):
            return None, f"host cache {path} ignored: not a regular file"
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            return None, f"host cache {path} ignored: owned by another user"
        if st.st_mode & 0o022:
            return None, f"host cache {path} ignored: writable by others"
        raw = os.read(fd, _MAX_BYTES + 1)
    except OSError as exc:
        return None, f"host cache {path} not read ({exc.strerror or exc})"
    finally:
        os.close(fd)
    try:
        if len(raw) > _MAX_BYTES:
            raise ValueError("too large")
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("key") != key:
            return None, None  # written for another boot, driver or interpreter: stale
        profile = HostProfile.from_dict(data.get("profile"), where=str(path))
    except (ValueError, UnicodeDecodeError) as exc:  # UsageError is a ValueError
        return None, f"host cache {path} ignored: unreadable ({exc})"
    return profile, None


def store(path: Path, key: Mapping[str, Any], profile: HostProfile) -> None:
    """Write the cache atomically with mode 0600; a failure only costs the next detection."""
    text = json.dumps({"key": key, "profile": profile.to_dict()}, sort_keys=True)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".host-profile.", suffix=".tmp", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp makes it 0600
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
