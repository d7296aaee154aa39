"""Detect this machine, apply overrides, or describe another machine.

Precedence (docs/facts.md section 1, "Order that works"): command-line flag, then
environment variable, then detection. ``--profile FILE`` and ``--target SPEC``
replace detection altogether; flag overrides still apply on top of them.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import re
import sys
import sysconfig
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from packaging.tags import sys_tags

from resolver_hook.errors import UsageError
from resolver_hook.ground.cache import JsonBeyondBounds, json_loads
from resolver_hook.ground.patterns import GFX_NAME
from resolver_hook.ground.record import NOWHERE, Recorder
from resolver_hook.ground.valueclass import replace
from resolver_hook.host.profile import (
    HostProfile,
    NvidiaGpu,
    NvidiaInfo,
    Probe,
    RocmInfo,
    compute_tags,
)
from resolver_hook.limits import MAX_MACHINE_VERSION_DIGITS
from resolver_hook.portable import platforms
from resolver_hook.portable.cuda import GPU_NAMES, JETSON_ONLY_CCS, format_cc, parse_cc
from resolver_hook.portable.overrides import ENV_OVERRIDES

if TYPE_CHECKING:
    from resolver_hook.process.proc import Runner

__all__ = [
    "ENV_OVERRIDES",
    "apply_overrides",
    "detect",
    "detect_host",
    "env_overrides",
    "load_profile",
    "parse_target",
    "resolve_machine",
]

canonical_arch = platforms.canonical_arch


# --- detection --------------------------------------------------------------------


def detect_host(
    *,
    env: Mapping[str, str],
    root: str | os.PathLike[str] = "/",
    run: Runner | None = None,
    load_nvml: Callable[[], Any] | None = None,
    system: str = sys.platform,
    machine: str | None = None,
    nvml_timeout: float | None = None,
    smi_timeout: float | None = None,
    config_var: Callable[[str], Any] = sysconfig.get_config_var,
) -> HostProfile:
    """Detect the host from the given inputs; no overrides, no cache. Never raises.

    ``config_var`` is ``sysconfig.get_config_var``: it says whether this CPython is a
    free-threaded build (``Py_GIL_DISABLED``; docs/facts.md section 3).
    """
    # The probes (and the subprocess runner behind them) load only when detection runs:
    # a command that finds its profile in the cache never needs them.
    from resolver_hook.host import probes

    # The real runner starts only programs that are on PATH; a caller's runner (a fake)
    # is asked for every program.
    exists = probes.on_path if run is None else probes.anywhere
    run = probes.run_subprocess if run is None else run
    load_nvml = probes._import_pynvml if load_nvml is None else load_nvml
    nvml_timeout = probes.NVML_TIMEOUT if nvml_timeout is None else nvml_timeout
    smi_timeout = probes.SMI_TIMEOUT if smi_timeout is None else smi_timeout
    os_name = platforms.os_of_sys_platform(system)
    arch_raw = machine if machine is not None else platform.machine()
    arch = canonical_arch(arch_raw) or arch_raw.lower()
    tags, libc, libc_version = _interpreter_tags()
    notes: list[str] = []
    probe_list: list[Probe] = []
    nvidia: NvidiaInfo | None = None
    rocm: RocmInfo | None = None
    mps = False
    if os_name in ("linux", "windows"):
        nvidia, nv_notes, nv_probes = probes.probe_nvidia(
            env,
            root,
            run,
            load_nvml=load_nvml,
            nvml_timeout=nvml_timeout,
            smi_timeout=smi_timeout,
            exists=exists,
        )
        notes += nv_notes
        probe_list += nv_probes
    else:
        probe_list.append(
            Probe(name="nvidia", found=False, detail=f"no NVIDIA CUDA driver exists for {os_name}")
        )
    l4t = None
    if os_name == "linux":
        rocm, rocm_probe = probes.probe_rocm(root, run, exists=exists)
        probe_list.append(rocm_probe)
        l4t, jetson_probe = probes.probe_jetson(root)
        probe_list.append(jetson_probe)
    if os_name == "macos":
        mps = arch == "aarch64"
        probe_list.append(
            Probe(
                name="mps",
                found=mps,
                detail="Apple silicon: Metal (MPS)"
                if mps
                else "Intel Mac: no Metal Performance Shaders backend",
            )
        )
    return HostProfile(
        os=os_name,
        arch=arch,
        python=f"{sys.version_info[0]}.{sys.version_info[1]}",
        implementation={"cpython": "cp", "pypy": "pp"}.get(
            sys.implementation.name, sys.implementation.name
        ),
        free_threaded=platforms.is_free_threaded(config_var),
        tags=tags,
        libc=libc if os_name == "linux" else None,
        libc_version=libc_version if os_name == "linux" else None,
        wsl=os_name == "linux" and probes.probe_wsl(root, env),
        container=probes.probe_container(root, env) if os_name == "linux" else None,
        nvidia=nvidia,
        rocm=rocm,
        mps=mps,
        l4t=l4t,
        probes=tuple(probe_list),
        notes=tuple(notes),
        origin="detected",
    )


def _interpreter_tags() -> tuple[tuple[str, ...], str | None, str | None]:
    tags = tuple(str(t) for t in sys_tags())
    try:
        gnu = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):
        gnu = ""
    if gnu.startswith("glibc "):
        return tags, "glibc", gnu.split()[1]
    for tag in tags:
        m = re.search(r"musllinux_(\d+)_(\d+)_", tag)
        if m:
            return tags, "musl", f"{m.group(1)}.{m.group(2)}"
    return tags, None, None


@functools.lru_cache(maxsize=2)
def _detect_cached(use_cache: bool) -> tuple[HostProfile, bool]:
    return _detect(dict(os.environ), use_cache)


def _detect(env: Mapping[str, str], use_cache: bool) -> tuple[HostProfile, bool]:
    """The profile, and whether the probes ran for it (else: this boot's cache)."""
    if not use_cache:
        return detect_host(env=env), True
    # Here: a plan for a --target (or --profile) detects nothing and reads no cache.
    from resolver_hook.host import cache

    path = cache.cache_file(env)
    key = cache.cache_key(env) if path else None
    note = None
    if path and key:
        cached, note = cache.load(path, key)
        if cached is not None:
            return cached, False
    profile = detect_host(env=env)
    if path and key and cache.conclusive(key, profile):
        cache.store(path, key, profile)
    return (profile.replace(notes=(*profile.notes, note)) if note else profile), True


def detect(
    env: Mapping[str, str] | None = None, *, use_cache: bool = True, record: Recorder = NOWHERE
) -> HostProfile:
    """This machine, with ``RESOLVER_HOOK_OVERRIDE_*`` applied, as ``env`` (by default
    ``os.environ``) describes it; ``os.environ``'s is detected once per process.

    ``use_cache``: read and write the per-boot profile cache (``host/cache.py``);
    any override variable bypasses it, so an overridden machine is never stored.
    Raises UsageError when an override variable holds nonsense. Probing refuses
    ``record`` (what the probes found no file holds; the cached profile is in the plan
    store's key).
    """
    env = os.environ if env is None else env
    overrides = env_overrides(env)
    use_cache = use_cache and not overrides
    found = _detect_cached(use_cache) if env is os.environ else _detect(dict(env), use_cache)
    profile, probed = found
    if probed:
        record.refuse("this machine detected")
    return apply_overrides(profile, overrides)


detect.cache_clear = _detect_cached.cache_clear  # type: ignore[attr-defined]


# --- overrides --------------------------------------------------------------------


def env_overrides(env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """``{field: (value, where)}`` for each override variable that is set."""
    return {k: (env[var], var) for k, var in ENV_OVERRIDES.items() if var in env}


def apply_overrides(profile: HostProfile, overrides: Mapping[str, tuple[str, str]]) -> HostProfile:
    """Apply ``{field: (value, where)}`` overrides; ``where`` names the flag or variable.

    ``cuda``: driver CUDA version (``""`` = no NVIDIA GPU); ``sm``: comma list of
    compute capabilities, replacing the GPUs; ``arch``: CPU arch; ``glibc``: glibc
    version. Changing arch or glibc recomputes the wheel tags.
    """
    if not overrides:
        return profile
    changed = list(profile.overridden)
    nvidia = profile.nvidia
    arch, libc, libc_version = profile.arch, profile.libc, profile.libc_version
    probe_list = list(profile.probes)
    if "arch" in overrides:
        value, where = overrides["arch"]
        arch = canonical_arch(value) or _bad(where, value, "a CPU architecture such as aarch64")
        changed.append("arch")
    if "glibc" in overrides:
        value, where = overrides["glibc"]
        _glibc(value.strip(), where)
        if profile.os != "linux":
            raise UsageError(f"{where}: glibc is Linux's C library; this machine runs {profile.os}")
        libc, libc_version = "glibc", value.strip()
        changed.append("glibc")
    if "cuda" in overrides:
        value, where = overrides["cuda"]
        if not value.strip():
            nvidia = None
            detail = f"{where} is empty: no NVIDIA GPU"
            probe_list.append(Probe(name="nvidia-override", found=False, detail=detail))
        else:
            cuda = _version2(value, where, "a driver CUDA version such as 13.0")
            # An override is never inferred.
            nvidia = replace(nvidia or NvidiaInfo(), cuda_version=cuda, cuda_inferred=False)
        changed.append("cuda")
    if "sm" in overrides:
        value, where = overrides["sm"]
        ccs = _cc_list(value, where)
        _jetson_only_on_linux_arm(ccs, profile.os, arch, where)
        # An explicit "no NVIDIA GPU" wins over a GPU list.
        if nvidia is not None or "cuda" not in overrides:
            gpus = tuple(NvidiaGpu.synthetic(i, cc) for i, cc in enumerate(ccs))
            nvidia = replace(nvidia or NvidiaInfo(), gpus=gpus)
        changed.append("sm")
    tags = profile.tags
    if arch != profile.arch or libc_version != profile.libc_version:
        tags = compute_tags(
            profile.os,
            arch,
            profile.python_tuple,
            libc=libc,
            libc_version=libc_version,
            free_threaded=profile.free_threaded,
        )
    return profile.replace(
        arch=arch,
        libc=libc,
        libc_version=libc_version,
        nvidia=nvidia,
        tags=tags,
        probes=tuple(probe_list),
        overridden=tuple(dict.fromkeys(changed)),
    )


# glibc 2.X: each minor adds a manylinux tag, so the minor is bounded (2.999999 would
# mean a million tags per Python tag). Compiled when first used: an override only.
_GLIBC = rf"2\.\d{{1,{MAX_MACHINE_VERSION_DIGITS}}}"
_GLIBC_WORDS = "a glibc version such as 2.39"


def _glibc(value: str, where: str) -> str:
    if not re.fullmatch(_GLIBC, value):
        _bad(where, value, _GLIBC_WORDS)
    return value


def _jetson_only_on_linux_arm(
    ccs: list[tuple[int, int]], os_name: str, arch: str, where: str
) -> list[tuple[int, int]]:
    """The compute capabilities that exist only on Jetson modules; UsageError when the
    machine described is not Linux aarch64 (a target or an override alike)."""
    jetson = [cc for cc in ccs if cc in JETSON_ONLY_CCS]
    if jetson and (os_name, arch) != ("linux", "aarch64"):
        cc = jetson[0]
        raise UsageError(
            f"{where}: compute capability {format_cc(cc)} is {GPU_NAMES.get(cc, 'a Jetson')}, "
            "a Jetson module: Linux aarch64 only"
        )
    return jetson


def _bad(where: str, value: str, expected: str) -> NoReturn:
    raise UsageError(f"{where}: {value!r} is not {expected}")


def _version2(value: str, where: str, expected: str) -> str:
    m = re.fullmatch(r"(\d{1,3})(?:\.(\d{1,3}))?", value.strip())
    if not m:
        _bad(where, value, expected)
    return f"{int(m.group(1))}.{int(m.group(2) or 0)}"


def _cc_list(value: str, where: str, prefix: str = "") -> list[tuple[int, int]]:
    """``9.0,12.1`` (overrides); with ``prefix="sm"`` also ``sm90,sm121`` (targets)."""
    items = [v.strip() for v in value.split(",")]
    if not value.strip() or not all(items):
        _bad(where, value, "a comma list of compute capabilities such as 9.0,12.1")
    if prefix:
        items = [v if v.startswith(prefix) else prefix + v for v in items]
    try:
        return [parse_cc(v) for v in items]
    except ValueError:
        _bad(where, value, "a comma list of compute capabilities such as 9.0,12.1")


# --- targets and saved profiles ----------------------------------------------------

# Target fields by prefix -> what they give (each may appear once).
_TARGET_FIELDS = {
    "py": "Python version",
    "cp": "Python version",
    "glibc": "glibc version",
    "cuda": "CUDA version",
    "sm": "GPU list",
    "rocm": "ROCm version",
    "gfx": "AMD GPU list",
    "l4t": "L4T release",
}


# Assumed where a target spec leaves a field out (said in the profile's notes).
DEFAULT_GLIBC = "2.35"


def _once(seen: dict[str, str], field: str, where: str) -> None:
    """Refuse a target field given twice (``py311-py312``: which Python?)."""
    low = field.lower()
    kind = next((k for k in _TARGET_FIELDS if low.startswith(k)), "")
    if not kind:
        return
    kind = "py" if kind == "cp" else kind
    if kind in seen:
        raise UsageError(
            f"{where}: fields {seen[kind]!r} and {field!r} both give the "
            f"{_TARGET_FIELDS[kind]}: give it once"
        )
    seen[kind] = field


def parse_target(spec: str) -> HostProfile:  # noqa: PLR0915 - one branch per field
    """Describe another machine from a target spec.

    ``OS-ARCH[-pyXY[t]][-glibcX.Y][-cudaX.Y][-smXY,...][-rocmX.Y][-gfxNNN,...][-l4tX.Y]``;
    ``py313t`` is a free-threaded CPython 3.13; ``l4tX.Y`` names a Jetson by its L4T
    release (JetPack 6 is L4T r36); a compute capability that exists only on Jetson
    modules (sm87: Orin) names a Jetson too (docs/facts.md section 1.2).

    Raises UsageError naming the field that is wrong.
    """
    where = f"--target {spec!r}"
    fields = spec.strip().split("-")
    if len(fields) < 2:
        raise UsageError(
            f"{where}: expected OS-ARCH first, such as linux-x86_64",
            hint="example: linux-aarch64-py312-glibc2.39-cuda13.0-sm121",
        )
    os_name = platforms.OS_ALIASES.get(fields[0].lower())
    if os_name is None:
        raise UsageError(f"{where}: OS {fields[0]!r} is not linux, macos or windows")
    arch = canonical_arch(fields[1])
    if arch is None:
        raise UsageError(
            f"{where}: CPU arch {fields[1]!r} is not known (x86_64, aarch64, arm64, ppc64le, ...)"
        )
    python: tuple[int, int] | None = None
    free_threaded = False
    glibc = cuda = rocm = l4t = None
    ccs: list[tuple[int, int]] = []
    gfx: tuple[str, ...] = ()
    notes: list[str] = []
    seen: dict[str, str] = {}
    for f in fields[2:]:
        low = f.lower()
        _once(seen, f, where)
        if m := re.fullmatch(r"(?:py|cp)(\d)(\d{1,2})(t?)", low):
            python = (int(m.group(1)), int(m.group(2)))
            free_threaded = bool(m.group(3))
        elif low.startswith("glibc"):
            glibc = _glibc(low[5:], f"{where} field {f!r}")
        elif m := re.fullmatch(r"cuda(\d+(?:\.\d+)?)", low):
            cuda = _version2(m.group(1), where + f" field {f!r}", "a CUDA version")
        elif low.startswith("sm"):
            ccs = _cc_list(low, f"{where} field {f!r}", prefix="sm")
        elif m := re.fullmatch(r"rocm(\d{1,3}\.\d{1,3})", low):
            rocm = m.group(1)
        elif low.startswith("gfx"):
            gfx = _gfx_list(low, f"{where} field {f!r}")
        elif m := re.fullmatch(r"l4t(\d{1,3}(?:\.\d{1,3}){0,2})", low):
            l4t = m.group(1)  # a Jetson: its L4T release (JetPack 6 = L4T r36)
        else:
            raise UsageError(
                f"{where}: field {f!r} is not pyXY[t], glibcX.Y, cudaX.Y, smXY[,smXY], "
                "rocmX.Y, gfxNNN[,gfxNNN] or l4tX.Y"
            )
    if python is None:
        python = sys.version_info[:2]
        notes.append(f"Python not given in the target; assumed {python[0]}.{python[1]}")
    libc = None
    if os_name == "linux":
        libc = "glibc"
        if glibc is None:
            glibc = DEFAULT_GLIBC
            notes.append(f"glibc not given in the target; assumed {glibc}")
    if l4t is not None and (os_name, arch) != ("linux", "aarch64"):
        raise UsageError(f"{where}: L4T (Jetson) is Linux aarch64 only")
    jetson = _jetson_only_on_linux_arm(ccs, os_name, arch, where)
    if jetson and l4t is None:
        notes.append(
            f"compute capability {format_cc(jetson[0])} is a Jetson's; its L4T release is "
            "not given (add l4tX.Y to the target, e.g. l4t36.4 for JetPack 6)"
        )
    if gfx and rocm is None:
        notes.append("ROCm version not given in the target (add rocmX.Y, e.g. rocm7.2)")
    if free_threaded and python < (3, 13):
        raise UsageError(f"{where}: free-threaded CPython exists from 3.13 on")
    if (ccs or cuda) and os_name == "macos":
        raise UsageError(f"{where}: NVIDIA CUDA does not exist on macOS")
    nvidia = None
    if ccs or cuda:
        nvidia = NvidiaInfo(
            cuda_version=cuda, gpus=tuple(NvidiaGpu.synthetic(i, cc) for i, cc in enumerate(ccs))
        )
    probe_list = (
        ()
        if nvidia
        else (Probe(name="nvidia-target", found=False, detail="the target names no NVIDIA GPU"),)
    )
    return HostProfile(
        os=os_name,
        arch=arch,
        python=f"{python[0]}.{python[1]}",
        free_threaded=free_threaded,
        tags=compute_tags(
            os_name, arch, python, libc=libc, libc_version=glibc, free_threaded=free_threaded
        ),
        libc=libc,
        libc_version=glibc,
        nvidia=nvidia,
        rocm=RocmInfo(version=rocm, gfx=gfx) if rocm or gfx else None,
        mps=os_name == "macos" and arch == "aarch64",
        l4t=l4t,
        probes=probe_list,
        notes=tuple(notes),
        origin=f"target {spec}",
    )


def _gfx_list(text: str, where: str) -> tuple[str, ...]:
    """``gfx942`` or ``gfx90a,gfx942``: the AMD GPUs, in order, without repeats."""
    names = text.split(",")
    bad = next((n for n in names if not re.fullmatch(GFX_NAME, n)), None)
    if bad is not None:
        raise UsageError(
            f"{where}: {bad!r} is not an AMD GPU name (gfxNNN[,gfxNNN], such as gfx942 or "
            "gfx90a,gfx942)",
            hint="`resolver-hook detect` on the machine prints its gfx names",
        )
    return tuple(dict.fromkeys(names))


def load_profile(path: str, record: Recorder = NOWHERE) -> HostProfile:
    """Read a profile saved by ``detect --json``; UsageError naming the file and key."""
    from resolver_hook.ground.input import read_text_input  # only a --profile reads a file

    text = read_text_input(path, what="--profile ", record=record)
    try:
        data = json_loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--profile {path}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except JsonBeyondBounds as exc:
        raise UsageError(f"--profile {path}: not valid JSON: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("profile"), dict):
        data = data["profile"]  # a plan's JSON carries its profile
    return HostProfile.from_dict(data, where=f"--profile {path}").replace(origin=f"profile {path}")


def resolve_machine(
    *,
    profile: str | None = None,
    target: str | None = None,
    flags: Mapping[str, str | None] | None = None,
    env: Mapping[str, str] | None = None,
    use_cache: bool = True,
    record: Recorder = NOWHERE,
) -> HostProfile:
    """The machine a command works for: ``--profile``, ``--target`` or detection
    (what was read declared to ``record``).

    Environment overrides apply to detection only; ``flags`` (``{field: value}``
    from ``--cuda``/``--sm``/``--arch``/``--glibc``) apply on top of any of them.
    """
    # An empty --target or --profile is a mistake, not "detect this machine".
    if profile is not None and target is not None:
        raise UsageError("--profile and --target describe the machine twice: give one")
    if profile is not None:
        base = load_profile(profile, record)
    elif target is not None:
        base = parse_target(target)
    else:
        base = detect(
            env,
            use_cache=use_cache and not any(v is not None for v in (flags or {}).values()),
            record=record,
        )
    flag_overrides = {k: (v, f"--{k}") for k, v in (flags or {}).items() if v is not None}
    return apply_overrides(base, flag_overrides)
