"""What the cached host profile depends on, and the warm path of ``detect --json``.

Computed with the standard library alone: :func:`cached_detect_json` runs before the
command line is parsed (``resolver_hook/_entry.py``), so a warm ``detect --json``
imports neither the profile model, ``dataclasses``, ``packaging``, the probes nor
``pathlib`` (paths are strings here, as in :mod:`resolver_hook.ground.cache`).
``host/cache.py`` uses the same :func:`cache_key` and :func:`cache_file` to read and
write the profile on the full path: one key, one file, either way.

The key's parts, and why each, are listed in :mod:`resolver_hook.host.cache`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence

from resolver_hook import __version__
from resolver_hook.ground import cache as _cache
from resolver_hook.portable.overrides import ENV_OVERRIDES

# typing is not imported at run time: this module is on the start-up path of the warm
# commands, and the names below are only annotations.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "PROFILE_KEYS",
    "cache_file",
    "cache_key",
    "cached_detect_json",
    "plain_detect",
    "profile_json",
]

# Variables the probes read (host/probes.py): a change must re-detect.
_ENV_KEYS = ("CUDA_VISIBLE_DEVICES", "WSL_DISTRO_NAME", "KUBERNETES_SERVICE_HOST", "container")
# 2: the stored profile keeps the order of HostProfile.to_dict (the warm path prints it).
_FORMAT = 2
# The keys of HostProfile.to_dict, in order (held to the model by a test).
PROFILE_KEYS = (
    "schema",
    "os",
    "arch",
    "python",
    "implementation",
    "free_threaded",
    "tags",
    "libc",
    "libc_version",
    "wsl",
    "container",
    "nvidia",
    "rocm",
    "mps",
    "l4t",
    "probes",
    "notes",
    "overridden",
    "origin",
)


def cache_file(env: Mapping[str, str]) -> str | None:
    """Where the profile is cached, in the user cache folder (``_cache.cache_dir``)."""
    folder = _cache.cache_dir(env)
    return os.path.join(folder, "host-profile.json") if folder else None


def _read_small(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("ascii", "replace").strip()
    except OSError:
        return None


def cache_key(
    env: Mapping[str, str],
    *,
    root: str | os.PathLike[str] = "/",
) -> dict[str, Any] | None:
    """What the cached profile depends on, or None where caching is not safe."""
    boot_id = _read_small(os.path.join(root, "proc/sys/kernel/random/boot_id"))
    if not boot_id:
        return None  # no boot id to tie the cache to: detect every time
    try:
        interpreter_mtime = os.stat(sys.executable).st_mtime_ns
    except OSError:
        return None
    return {
        "format": _FORMAT,
        "tool": __version__,
        "boot_id": boot_id,
        "driver": _read_small(os.path.join(root, "sys/module/nvidia/version")),
        "env": {k: env.get(k) for k in _ENV_KEYS},
        "interpreter": [sys.executable, interpreter_mtime],
    }


def plain_detect(argv: Sequence[str], env: Mapping[str, str]) -> bool | None:
    """Whether ``argv`` is the plain ``detect --json`` (True) or ``detect --json
    --no-cache`` (False), with no override variable set; None for any other command.

    The plain command needs none of the command line: ``resolver_hook/_entry.py`` runs
    it without ``argparse`` (what it prints and exits with are the command line's).
    """
    args = list(argv)
    if args[:1] != ["detect"] or any(v in env for v in ENV_OVERRIDES.values()):
        return None
    rest = sorted(args[1:])
    if rest == ["--json"]:
        return True
    if rest == ["--json", "--no-cache"]:
        return False
    return None


def profile_json(value: Mapping[str, Any]) -> str:
    """What ``detect --json`` prints for a profile's dict (``HostProfile.to_dict``)."""
    return json.dumps(value, indent=2) + "\n"


def cached_detect_json(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """What ``detect --json`` prints, from this boot's cache; None for the full path.

    Only the plain command (``detect --json``, no other option) with no override
    variable set, and only a hit whose profile has exactly the model's keys: anything
    unusual (a miss, a note to give, a file written by another version) goes the full
    way, which also refreshes the cache.
    """
    if list(argv) != ["detect", "--json"] or not plain_detect(argv, env):
        return None
    path = cache_file(env)
    key = cache_key(env) if path else None
    if path is None or key is None:
        return None
    value, note = _cache.read(path, key)
    if note is not None or not isinstance(value, dict) or tuple(value) != PROFILE_KEYS:
        return None
    return profile_json(value)
