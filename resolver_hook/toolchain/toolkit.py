"""The CUDA toolkit a source build would use: where it is, its version, its headers.

:func:`find_toolkit` looks where builds look (``CUDA_HOME``, ``CUDA_PATH``,
``CUDACXX``, nvcc on PATH, ``/usr/local/cuda``), reads the version from
``nvcc --version`` (:func:`parse_nvcc_version`), else ``version.json``, else
``CUDART_VERSION``; it finds ``crt/host_config.h`` (:func:`load_host_config` parses it)
and the driver stub builds link against (:func:`find_driver_stub`). Probes take the
environment and the runner, and turn every failure into a note, never an exception.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping

from resolver_hook.ground.cache import json_loads
from resolver_hook.ground.valueclass import valueclass
from resolver_hook.portable.cuda import decode_cuda_version
from resolver_hook.toolchain._base import (
    DEFAULT_TIMEOUT,
    IS_WINDOWS,
    Runner,
    release,
    run_subprocess,
    tool_output,
    which,
)
from resolver_hook.toolchain.hostconfig import HostConfig, HostConfigError, parse_host_config

__all__ = [
    "Toolkit",
    "find_driver_stub",
    "find_toolkit",
    "load_host_config",
    "parse_nvcc_version",
]


@valueclass
class Toolkit:
    """The CUDA toolkit a build would use.

    ``source`` says how it was found (``CUDA_HOME``, ``nvcc on PATH`` ...); ``notes``
    say what could not be established and why.
    """

    root: str | None
    source: str
    nvcc: str | None = None
    version: str | None = None
    version_source: str | None = None
    host_config: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def release(self) -> str | None:
        """Major.minor of :attr:`version` (``'13.0'``)."""
        return release(self.version)


# `nvcc --version` ends with "Cuda compilation tools, release 13.0, V13.0.88" and
# "Build cuda_13.0.r13.0/compiler.36424714_0" (nvcc 13.0 on this project's machines).
_NVCC_V_RE = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_NVCC_BUILD_RE = re.compile(r"Build cuda_(\d+\.\d+)\.r")


def parse_nvcc_version(text: str) -> str | None:
    """The full version in ``nvcc --version`` output (``'13.0.88'``), else None."""
    match = _NVCC_V_RE.search(text)
    if match:
        return match.group(2)
    match = _NVCC_BUILD_RE.search(text)
    return match.group(1) if match else None


def _looks_like_toolkit(root: str) -> bool:
    return _host_config_path(root) is not None or os.path.isfile(
        os.path.join(root, "include", "cuda_runtime_api.h")
    )


def _in_toolkit(root: str, *parts: str) -> list[str]:
    """``root/parts``, then the same path under each ``root/targets/*`` (a toolkit's
    per-platform folders)."""
    found = sorted(glob.glob(os.path.join(root, "targets", "*", *parts)))
    return [os.path.join(root, *parts), *found]


def _host_config_path(root: str) -> str | None:
    candidates = _in_toolkit(root, "include", "crt", "host_config.h")
    return next((c for c in candidates if os.path.isfile(c)), None)


def _root_from_nvcc(
    nvcc: str, *, env: Mapping[str, str], run: Runner, timeout: float
) -> tuple[str | None, str | None]:
    """The toolkit root of an ``nvcc``: resolve symlinks, else ask ``nvcc -dryrun``.

    A wrapper script (``exec /usr/local/cuda-13.0/bin/nvcc "$@"``) hides the root from
    symlink resolution; ``nvcc -dryrun`` prints ``#$ TOP=<root>/bin/..`` without
    running anything.
    """
    real = os.path.realpath(nvcc)
    root = os.path.dirname(os.path.dirname(real))
    if _looks_like_toolkit(root):
        return root, None
    out = tool_output(
        [nvcc, "-dryrun", "-E", "-x", "cu", os.devnull], env=env, run=run, timeout=timeout
    )
    match = re.search(r"^#\$ TOP=(.+)$", out.text, re.MULTILINE)
    if match and os.path.isdir(match.group(1).strip()):
        return os.path.realpath(match.group(1).strip()), None
    why = out.reason or "it printed no TOP= line"
    return None, f"cannot tell the toolkit root of {nvcc}: no toolkit at {root}, and {why}"


def find_toolkit(
    *,
    env: Mapping[str, str] | None = None,
    run: Runner = run_subprocess,
    timeout: float = DEFAULT_TIMEOUT,
    default_root: str | None = "/usr/local/cuda",
) -> Toolkit:
    """Find the CUDA toolkit: ``CUDA_HOME``, ``CUDA_PATH``, ``CUDACXX``, nvcc on PATH,
    then ``default_root``. Its version comes from ``nvcc --version``, else
    ``version.json``, else ``CUDART_VERSION`` in ``cuda_runtime_api.h``.
    """
    env = os.environ if env is None else env
    exe = "nvcc.exe" if IS_WINDOWS else "nvcc"
    notes: list[str] = []
    root: str | None = None
    nvcc: str | None = None
    source = "none"
    for var in ("CUDA_HOME", "CUDA_PATH"):
        value = env.get(var)
        if value:
            source = var
            if not os.path.isdir(value):
                return Toolkit(root=None, source=var, notes=(f"{var}={value} is not a directory",))
            root = os.path.abspath(value)
            break
    if root is None:
        for origin, found in (("CUDACXX", env.get("CUDACXX")), ("nvcc on PATH", which(exe, env))):
            if found:
                source, nvcc = origin, found
                root, why = _root_from_nvcc(found, env=env, run=run, timeout=timeout)
                if why:
                    notes.append(why)
                break
        else:
            if default_root and os.path.isdir(default_root):
                root, source = os.path.realpath(default_root), default_root
            else:
                where = f", no {default_root}" if default_root else ""
                return Toolkit(
                    root=None,
                    source="none",
                    notes=(f"no CUDA_HOME, CUDA_PATH or CUDACXX, no nvcc on PATH{where}",),
                )
    if nvcc is None and root is not None:
        candidate = os.path.join(root, "bin", exe)
        if os.path.isfile(candidate):
            nvcc = candidate
        else:
            notes.append(f"no {exe} in {os.path.join(root, 'bin')}")

    version: str | None = None
    version_source: str | None = None
    if nvcc:
        out = tool_output([nvcc, "--version"], env=env, run=run, timeout=timeout)
        if out.reason:
            notes.append(out.reason)
        else:
            version = parse_nvcc_version(out.text)
            if version:
                version_source = "nvcc --version"
            else:
                first = " ".join(out.text.split())[:80] or "nothing"
                notes.append(f"'{nvcc} --version' printed no CUDA release: {first!r}")
    if version is None and root is not None:
        version, version_source = _version_from_files(root)
    host_config = _host_config_path(root) if root else None
    if root and host_config is None:
        notes.append(f"no include/crt/host_config.h under {root}")
    return Toolkit(
        root=root,
        source=source,
        nvcc=nvcc,
        version=version,
        version_source=version_source,
        host_config=host_config,
        notes=tuple(notes),
    )


def _version_from_files(root: str) -> tuple[str | None, str | None]:
    """``version.json`` (``{"cuda": {"version": "13.0.1"}}``), else ``CUDART_VERSION``."""
    try:
        with open(os.path.join(root, "version.json"), encoding="utf-8") as fh:
            data = json_loads(fh.read())
        version = data["cuda"]["version"]
        if isinstance(version, str) and release(version):
            return version, "version.json"
    except (OSError, ValueError, KeyError, TypeError):
        pass
    for include in _in_toolkit(root, "include"):
        try:
            with open(
                os.path.join(include, "cuda_runtime_api.h"), encoding="utf-8", errors="replace"
            ) as fh:
                # A real value has 5 digits (13000); a longer one is no version.
                match = re.search(r"#define\s+CUDART_VERSION\s+(\d{1,9})\b", fh.read())
        except OSError:
            continue
        decoded = decode_cuda_version(int(match.group(1))) if match else None
        if decoded is not None:  # 13000 -> 13.0, NVIDIA's encoding (portable/cuda.py)
            return f"{decoded[0]}.{decoded[1]}", "CUDART_VERSION in cuda_runtime_api.h"
    return None, None


def load_host_config(toolkit: Toolkit) -> tuple[HostConfig | None, str | None]:
    """The toolkit's parsed ``crt/host_config.h``, else None and why."""
    if toolkit.host_config is None:
        return None, "no crt/host_config.h in the toolkit" if toolkit.root else "no CUDA toolkit"
    try:
        with open(toolkit.host_config, encoding="utf-8", errors="replace") as fh:
            return parse_host_config(fh.read(), path=toolkit.host_config), None
    except OSError as exc:
        return None, f"cannot read {toolkit.host_config}: {exc.strerror or exc}"
    except HostConfigError as exc:
        return None, str(exc)


def find_driver_stub(root: str) -> str | None:
    """The driver stub (``stubs/libcuda.so``) builds link ``-lcuda`` against, else None."""
    candidates = [
        os.path.join(root, "lib64", "stubs", "libcuda.so"),
        *_in_toolkit(root, "lib", "stubs", "libcuda.so"),
    ]
    if IS_WINDOWS:
        candidates += [os.path.join(root, "lib", "x64", "cuda.lib")]
    return next((c for c in candidates if os.path.isfile(c)), None)
