"""The runtime of a resolver-hook placeholder: detect this machine, explain, refuse.

This file is copied verbatim into every generated placeholder (``NAME/_placeholder.py``)
and runs wherever the placeholder is built or imported, so it is standard-library
only and works on any Python >= 3.8. Everything that came from the manifest lives in
``_placeholder_data.json`` next to this file and is only ever read as data.

Detection honours the same override variables as resolver-hook itself
(``RESOLVER_HOOK_OVERRIDE_CUDA``, ``_SM``, ``_ARCH``, ``_GLIBC``), then asks NVML
(``libnvidia-ml.so.1`` through ctypes, in a thread with a timeout), then
``nvidia-smi`` (with a timeout). It never raises and never hangs.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import threading

# The facts shared with resolver-hook (resolver_hook/portable/), embedded verbatim
# next to this file as _placeholder_<module>.py.
try:
    from . import _placeholder_cuda as _cuda
    from . import _placeholder_overrides as _overrides
    from . import _placeholder_platforms as _platforms
    from . import _placeholder_visible as _visible
except ImportError:  # loaded outside its package: by the in-tree build backend or by tests
    try:
        import _placeholder_cuda as _cuda  # type: ignore[no-redef]
        import _placeholder_overrides as _overrides  # type: ignore[no-redef]
        import _placeholder_platforms as _platforms  # type: ignore[no-redef]
        import _placeholder_visible as _visible  # type: ignore[no-redef]
    except ImportError:  # loaded by resolver-hook itself, which owns the originals
        from resolver_hook.portable import cuda as _cuda  # type: ignore[no-redef]
        from resolver_hook.portable import overrides as _overrides  # type: ignore[no-redef]
        from resolver_hook.portable import platforms as _platforms  # type: ignore[no-redef]
        from resolver_hook.portable import visible as _visible  # type: ignore[no-redef]

__all__ = [
    "PlaceholderError",
    "allowed",
    "detect",
    "escape_hatch",
    "load_data",
    "message",
    "render_message",
    "render_retired",
    "retired_install_lines",
]

DATA_FILE = "_placeholder_data.json"
NVML_TIMEOUT = 5.0
SMI_TIMEOUT = 5.0

OVERRIDE_CUDA = _overrides.OVERRIDE_CUDA
OVERRIDE_SM = _overrides.OVERRIDE_SM
OVERRIDE_ARCH = _overrides.OVERRIDE_ARCH
OVERRIDE_GLIBC = _overrides.OVERRIDE_GLIBC


class PlaceholderError(ImportError):
    """Raised on import of a placeholder package; ``str()`` is the whole message.

    An ImportError (never ModuleNotFoundError) so that code which guards optional
    imports keeps working, and with ``name`` left unset so that ``python -m
    NAME.sub`` reports it instead of hiding it behind "Error while finding module
    specification".
    """


# --- data ---------------------------------------------------------------------------


def load_data(directory: str | None = None) -> dict:
    """The manifest data embedded at generation time."""
    here = directory or os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, DATA_FILE), encoding="utf-8") as f:
        data = json.load(f)
    return data


def escape_hatch(name: str) -> str:
    """``tilert`` -> ``TILERT_ALLOW_PLACEHOLDER``; ``flash-attn`` -> ``FLASH_ATTN_...``."""
    return re.sub(r"[-_.]+", "_", name).upper() + "_ALLOW_PLACEHOLDER"


def allowed(name: str, env: dict | None = None) -> bool:
    """Whether the escape hatch is set to ``1`` (or true/yes) for ``name``."""
    env = os.environ if env is None else env
    return env.get(escape_hatch(name), "").strip().lower() in ("1", "true", "yes")


# --- detection ----------------------------------------------------------------------


def _canonical_arch(text: str) -> str:
    return _platforms.canonical_arch(text) or text.strip().lower() or "unknown"


def _version_tuple(text: str) -> tuple:
    # Numbers of at most 32 digits (resolver_hook/limits.py MAX_VERSION_DIGITS): Python
    # refuses to turn a 5,000-digit string into an int, and no version has one.
    return tuple(int(p) for p in re.findall(r"\d{1,32}", text))


def _load_nvml():  # type: ignore[no-untyped-def]
    import ctypes

    if sys.platform == "win32":
        return ctypes.WinDLL("nvml.dll")  # type: ignore[attr-defined]
    return ctypes.CDLL("libnvidia-ml.so.1")


def _nvml_query(lib=None) -> dict:  # type: ignore[no-untyped-def]
    """NVML through ctypes: driver CUDA version and GPUs. Raises on any failure.

    ``lib`` is the loaded NVML library (tests pass a fake); pointers are passed as
    ``ctypes.pointer`` so a fake can write through them.
    """
    import ctypes

    lib = _load_nvml() if lib is None else lib
    if lib.nvmlInit_v2() != 0:
        raise OSError("nvmlInit failed")
    try:
        version = ctypes.c_int()
        cuda = None
        if lib.nvmlSystemGetCudaDriverVersion_v2(ctypes.pointer(version)) == 0:
            decoded = _cuda.decode_cuda_version(version.value)  # 13000 -> (13, 0)
            cuda = _cuda.format_cc(decoded) if decoded else None
        count = ctypes.c_uint()
        if lib.nvmlDeviceGetCount_v2(ctypes.pointer(count)) != 0:
            raise OSError("nvmlDeviceGetCount failed")
        gpus = []
        for i in range(count.value):
            handle = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.pointer(handle)) != 0:
                continue
            name = ctypes.create_string_buffer(96)
            lib.nvmlDeviceGetName(handle, name, 96)
            major, minor = ctypes.c_int(), ctypes.c_int()
            if (
                lib.nvmlDeviceGetCudaComputeCapability(
                    handle, ctypes.pointer(major), ctypes.pointer(minor)
                )
                != 0
            ):
                continue
            # NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96; the UUID reads "GPU-8932f937-...".
            uuid = ctypes.create_string_buffer(96)
            has_uuid = lib.nvmlDeviceGetUUID(handle, uuid, 96) == 0
            gpus.append(
                {
                    "index": i,
                    "name": name.value.decode("utf-8", "replace") or "NVIDIA GPU",
                    "cc": [major.value, minor.value],
                    "uuid": uuid.value.decode("ascii", "replace") if has_uuid else None,
                }
            )
        return {"cuda": cuda, "gpus": gpus}
    finally:
        lib.nvmlShutdown()


def _probe_nvml(timeout: float) -> tuple:
    """(info or None, reason). NVML can hang: it runs in a daemon thread."""
    box: dict = {}

    def work() -> None:
        try:
            box["info"] = _nvml_query()
        except BaseException as exc:  # a probe never raises
            box["error"] = exc

    thread = threading.Thread(target=work, name="placeholder-nvml", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return None, "NVML did not answer within %g s" % timeout
    if "info" in box:
        return box["info"], ""
    lib = "nvml.dll" if sys.platform == "win32" else "libnvidia-ml.so.1"
    if isinstance(box.get("error"), OSError):
        return None, "%s could not be loaded" % lib
    return None, "NVML failed: %s" % (box.get("error") or "unknown error")


def _probe_smi(timeout: float) -> tuple:
    """(info or None, reason) from ``nvidia-smi``; ``[N/A]`` rows are skipped."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None, "nvidia-smi not found"
    try:
        out = subprocess.run(
            [exe, "--query-gpu=index,name,compute_cap,uuid", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, "nvidia-smi did not answer within %g s" % timeout
    except OSError as exc:
        return None, "nvidia-smi could not run: %s" % exc
    if out.returncode != 0:
        first = (out.stdout + out.stderr).strip().splitlines()
        return None, "nvidia-smi failed: %s" % (first[0] if first else "exit %d" % out.returncode)
    gpus = []
    for line in out.stdout.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 4 or not cells[0].isdigit():
            continue
        name, cap, uuid = ", ".join(cells[1:-2]), cells[-2], cells[-1]
        m = re.match(r"^(\d+)\.(\d+)$", cap)
        if name and m:  # "[N/A]" rows (non-GPU devices) are skipped
            gpus.append(
                {
                    "index": int(cells[0]),
                    "name": name,
                    "cc": [int(m.group(1)), int(m.group(2))],
                    "uuid": uuid if uuid.upper().startswith(("GPU-", "MIG-")) else None,
                }
            )
    cuda = None
    try:
        head = subprocess.run(
            [exe], capture_output=True, text=True, timeout=timeout, check=False
        ).stdout
        m = re.search(r"CUDA Version:\s*(\d+\.\d+)", head)
        cuda = m.group(1) if m else None
    except (subprocess.TimeoutExpired, OSError):
        pass
    return {"cuda": cuda, "gpus": gpus}, ""


def _apply_visible(gpus: list, env: dict) -> tuple:
    """Apply ``CUDA_VISIBLE_DEVICES`` as resolver-hook does; (gpus, note)."""
    value = env.get(_visible.VARIABLE)
    if value is None:
        return gpus, ""
    keys = [(g.get("index", i), g.get("uuid")) for i, g in enumerate(gpus)]
    positions, note = _visible.select(value, keys)
    return [gpus[i] for i in positions], note


def _synthetic_gpu(cc: tuple) -> dict:
    known = _cuda.GPU_NAMES.get(tuple(cc))
    name = "NVIDIA " + known if known else "NVIDIA GPU of compute capability %d.%d" % tuple(cc)
    return {"name": name, "cc": list(cc)}


def _detect_nvidia(env: dict, system: str) -> tuple:
    """(nvidia dict or None, reason when None, names of overrides used)."""
    used = []
    cuda_override = env.get(OVERRIDE_CUDA)
    sm_override = env.get(OVERRIDE_SM)
    if cuda_override is not None and not cuda_override.strip():
        return None, "%s is empty" % OVERRIDE_CUDA, [OVERRIDE_CUDA]
    ccs = []
    if sm_override is not None:
        for item in sm_override.split(","):
            with contextlib.suppress(ValueError):
                ccs.append(_cuda.parse_cc(item))
        if ccs:
            used.append(OVERRIDE_SM)
    cuda = None
    if cuda_override is not None and re.match(r"^\s*\d{1,3}(\.\d{1,3})?\s*$", cuda_override):
        parts = (*_version_tuple(cuda_override), 0)
        cuda = "%d.%d" % parts[:2]
        used.append(OVERRIDE_CUDA)
    info = None
    reason = ""
    if not (ccs and cuda):  # something left to detect
        if system == "macos":
            reason = "macOS has no NVIDIA CUDA driver"
        else:
            info, reason = _probe_nvml(NVML_TIMEOUT)
            if info is None:
                info, smi_reason = _probe_smi(SMI_TIMEOUT)
                reason = "%s; %s" % (reason, smi_reason) if info is None else ""
    if info is None:
        if not (ccs or cuda):
            return None, reason or "no NVIDIA driver found", used
        info = {"cuda": None, "gpus": []}
    gpus = [_synthetic_gpu(cc) for cc in ccs] if ccs else list(info.get("gpus") or [])
    note = ""
    if not ccs:
        gpus, note = _apply_visible(gpus, env)
    nvidia = {"cuda": cuda or info.get("cuda"), "gpus": gpus}
    if not gpus:
        return nvidia, note or "the NVIDIA driver shows no GPU", used
    return nvidia, "", used


def detect(env: dict | None = None) -> dict:
    """This machine as a plain dict. Never raises; overrides first, then probes."""
    env = dict(os.environ if env is None else env)
    host = {
        "os": "unknown",
        "arch": "unknown",
        "python": list(sys.version_info[:2]),
        "implementation": sys.implementation.name,
        "free_threaded": False,
        "libc": None,
        "libc_version": None,
        "nvidia": None,
        "nvidia_reason": "not detected",
        "rocm": None,
        "overridden": [],
    }
    try:
        system = {"darwin": "macos", "win32": "windows", "cygwin": "windows"}.get(
            sys.platform, "linux" if sys.platform.startswith("linux") else sys.platform
        )
        host["os"] = system
        arch = env.get(OVERRIDE_ARCH)
        if arch and arch.strip():
            host["overridden"].append(OVERRIDE_ARCH)
        else:
            arch = platform.machine()
        host["arch"] = _canonical_arch(arch)
        host["free_threaded"] = _platforms.is_free_threaded()
        if system == "linux":
            glibc = env.get(OVERRIDE_GLIBC)
            if glibc and re.match(r"^\s*\d{1,3}\.\d{1,3}\s*$", glibc):
                host["libc"], host["libc_version"] = "glibc", glibc.strip()
                host["overridden"].append(OVERRIDE_GLIBC)
            else:
                lib, version = platform.libc_ver()
                if lib == "glibc" and version:
                    host["libc"], host["libc_version"] = "glibc", version
                elif any(n.startswith("ld-musl") for n in _listdir("/lib")):
                    host["libc"] = "musl"
        if system == "linux":
            host["rocm"] = rocm_version()
        nvidia, reason, used = _detect_nvidia(env, system)
        host["nvidia"], host["nvidia_reason"] = nvidia, reason
        host["overridden"].extend(used)
    except Exception as exc:  # detection must never stop the message
        host["nvidia_reason"] = "detection failed: %s" % exc
    return host


def _listdir(path: str) -> list:
    try:
        return os.listdir(path)
    except OSError:
        return []


# --- words --------------------------------------------------------------------------

_OS_WORDS = _platforms.OS_WORDS
# Platform tags and Python tags in words: one copy, shared with resolver-hook.
parse_platform = _platforms.parse_platform
describe_platform = _platforms.describe_platform
parse_python = _platforms.parse_python
describe_python = _platforms.describe_python


_SPEC = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*(\d+(?:\.\d+)*)(\.\*)?\s*$")


def _spec_clauses(spec: str) -> list | None:
    clauses = []
    for part in spec.split(","):
        m = _SPEC.match(part)
        if not m:
            return None
        clauses.append((m.group(1), _version_tuple(m.group(2)), bool(m.group(3))))
    return clauses


def _pad(a: tuple, n: int) -> tuple:
    return tuple(a) + (0,) * (n - len(a))


def spec_allows(spec: str, version: tuple) -> bool | None:
    """Whether a version satisfies a PEP 440 specifier (numeric subset); None if unknown."""
    clauses = _spec_clauses(spec)
    if clauses is None:
        return None
    version = tuple(version)
    for op, want, star in clauses:
        n = max(len(want), len(version))
        v, w = _pad(version, n), _pad(want, n)
        if star:
            if op not in ("==", "!="):
                return None
            same = _pad(version, len(want))[: len(want)] == want
            ok = same if op == "==" else not same
        elif op == "===":
            # Arbitrary equality compares the text: "1.0" is not "1.0.0" (PEP 440).
            ok = version == want
        elif op == "~=":
            if len(want) < 2:
                return None
            ok = v >= w and _pad(version, len(want))[: len(want) - 1] == want[:-1]
        else:
            ok = {
                "==": v == w,
                "!=": v != w,
                "<=": v <= w,
                ">=": v >= w,
                "<": v < w,
                ">": v > w,
            }[op]
        if not ok:
            return False
    return True


def describe_cuda(spec: str, system: str = "linux") -> str:
    """``>=13.0`` -> ``CUDA 13.0 or newer (driver 580 or newer)``."""
    clauses = _spec_clauses(spec)
    if clauses and len(clauses) == 1 and clauses[0][0] == ">=":
        want = clauses[0][1]
        text = "CUDA %s or newer" % ".".join(str(v) for v in want)
        driver = _cuda.min_driver_for_runtime(
            want[0], "windows" if system == "windows" else "linux"
        )
        if driver:
            text += " (driver %s or newer)" % driver
        return text
    return "CUDA %s" % spec


def describe_gpu(name: str, cc: list) -> str:
    """``NVIDIA GB10 (DGX Spark)`` with CC (12, 1) -> ``... (compute capability 12.1, sm_121)``."""
    return "%s (compute capability %d.%d, sm_%d%d)" % (name, cc[0], cc[1], cc[0], cc[1])


def describe_host_python(host: dict) -> str:
    """``CPython 3.12`` (and ``(free-threaded)``)."""
    impl = {"cpython": "CPython", "pypy": "PyPy"}.get(
        host["implementation"], host["implementation"]
    )
    text = "%s %d.%d" % (impl, host["python"][0], host["python"][1])
    return text + (" (free-threaded)" if host.get("free_threaded") else "")


def describe_machine(host: dict) -> str:
    """This machine in words, one line."""
    parts = ["%s %s" % (_OS_WORDS.get(host["os"], host["os"]), host["arch"])]
    parts.append(describe_host_python(host))
    if host["os"] == "linux":
        if host["libc"] == "glibc":
            parts.append("glibc %s" % host["libc_version"])
        elif host["libc"] == "musl":
            parts.append("musl libc")
        else:
            parts.append("glibc not found")
    nvidia = host["nvidia"]
    if nvidia and nvidia["gpus"]:
        gpus = ", ".join(describe_gpu(g["name"], g["cc"]) for g in nvidia["gpus"])
        parts.append(gpus)
        parts.append("NVIDIA driver CUDA %s" % (nvidia["cuda"] or "version unknown"))
    elif nvidia:
        parts.append(
            "NVIDIA driver CUDA %s but no GPU (%s)"
            % (nvidia["cuda"] or "version unknown", host["nvidia_reason"])
        )
    else:
        parts.append("no NVIDIA GPU (%s)" % host["nvidia_reason"])
    text = ", ".join(parts)
    if host["overridden"]:
        text += "; as set by %s" % ", ".join(host["overridden"])
    return text


# --- matching -----------------------------------------------------------------------


def _python_fits(host: dict, interpreter: str, abi: str) -> bool:
    p = parse_python(interpreter, abi)
    if p["version"] is None:
        return False
    impl = {"cpython": "cp", "pypy": "pp"}.get(host["implementation"], host["implementation"])
    if p["impl"] not in ("py", impl):
        return False
    have = list(host["python"])
    want = p["version"]
    if p["impl"] == "py" and len(want) == 1:
        return have[0] == want[0]
    if p["abi3"]:
        return have[0] == want[0] and have >= want
    if (
        p["impl"] == "cp"
        and abi not in ("none", "abi3")
        and p["free_threaded"] != bool(host.get("free_threaded"))
    ):
        return False
    return have == want[:2]


def _platform_fits(host: dict, tag: str) -> bool:
    p = parse_platform(tag)
    if p["os"] == "any":
        return True
    if p["os"] != host["os"]:
        return False
    if p["arch"] != host["arch"] and not (
        p["arch"] == "universal2" and host["arch"] in ("x86_64", "aarch64")
    ):
        return False
    if p["os"] == "linux" and p["libc"]:
        if host["libc"] is None:
            return True  # unknown libc: do not blame it
        if host["libc"] != p["libc"]:
            return False
        if p["libc_min"] and host["libc_version"]:
            return list(_version_tuple(host["libc_version"])[:2]) >= p["libc_min"]
    return True


def _flavour_python_words(flavour: dict) -> list:
    if flavour.get("tags"):
        return _unique(describe_python(t[0], t[1]) for t in flavour["tags"])
    if flavour.get("python"):
        return ["Python " + ", ".join(flavour["python"])]
    return []


def _flavour_platform_tags(flavour: dict) -> list:
    if flavour.get("tags"):
        return _unique(t[2] for t in flavour["tags"])
    return list(flavour.get("platforms") or [])


def _unique(items) -> list:  # type: ignore[no-untyped-def]
    seen: dict = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def platform_words(tags: list) -> list:
    """Platform tags in words, one entry per OS and CPU (the oldest libc that works)."""
    best: dict = {}
    for tag in tags:
        p = parse_platform(tag)
        key = (p["os"], p["arch"], p["libc"])
        if key not in best or (p["libc_min"] or [0]) < (best[key][0] or [0]):
            best[key] = (p["libc_min"], tag)
    return _unique(describe_platform(tag) for _, tag in best.values())


def python_words(words: list) -> list:
    """``["CPython 3.10", "CPython 3.11"]`` -> ``["CPython 3.10, 3.11"]``."""
    groups: dict = {}
    for word in _unique(words):
        m = re.match(r"^(CPython|PyPy|Python) (\d+(?:\.\d+)?)$", word)
        if m:
            groups.setdefault(m.group(1), []).append(m.group(2))
        else:
            groups.setdefault(word, None)
    return [k if v is None else "%s %s" % (k, ", ".join(v)) for k, v in groups.items()]


def _host_platform(host: dict) -> str:
    text = "%s %s" % (_OS_WORDS.get(host["os"], host["os"]), host["arch"])
    if host["os"] == "linux" and host["libc"] == "glibc":
        text += " with glibc %s" % host["libc_version"]
    elif host["os"] == "linux" and host["libc"] == "musl":
        text += " with musl libc"
    return text


def _installed_version(name: str) -> str | None:
    try:
        from importlib import metadata

        return metadata.version(name)
    except Exception:  # not installed, or unreadable metadata
        return None


def _requirement_fails(requirement: str) -> str | None:
    """``torch==2.13.*`` -> ``torch 2.12.0 is installed`` when the installed one differs.

    Only simple ``name<op>version`` requirements are checked; anything else, or a
    package that is not installed, is not held against the machine.
    """
    m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*((?:[<>=!~]=?[^,;]+,?\s*)+)$", requirement)
    if not m:
        return None
    installed = _installed_version(m.group(1))
    if installed is None:
        return None
    spec = m.group(2).strip()
    if re.search(r"[^0-9.,<>=!~*\s]", spec) or re.search(r"[^0-9.]", installed):
        # Local labels (+cu130) and pre-releases: compare the text exactly.
        pins = re.findall(r"==\s*([^,]+)", spec)
        if pins and all(not p.strip().endswith("*") for p in pins):
            ok = all(p.strip() == installed for p in pins)
            return None if ok else "%s %s is installed" % (m.group(1), installed)
        return None
    if spec_allows(spec, _version_tuple(installed)) is False:
        return "%s %s is installed" % (m.group(1), installed)
    return None


def checks(host: dict, flavour: dict) -> list:
    """The requirements of ``flavour`` that this machine fails, as (kind, want, have).

    Empty when the flavour fits. Unknown facts (a driver CUDA version nobody
    reported, an unreadable libc) are never held against the machine.
    """
    failed = []
    platforms = _flavour_platform_tags(flavour)
    if platforms and not any(_platform_fits(host, t) for t in platforms):
        failed.append(("platform", tuple(platform_words(platforms)), _host_platform(host)))
    tags = flavour.get("tags") or []
    if tags and not any(_python_fits(host, t[0], t[1]) for t in tags):
        failed.append(("python", tuple(_flavour_python_words(flavour)), describe_host_python(host)))
    if not tags and flavour.get("python"):
        have = _platforms.python_label(host["python"], bool(host.get("free_threaded")))
        if have not in flavour["python"]:
            failed.append(
                ("python", tuple(_flavour_python_words(flavour)), describe_host_python(host))
            )
    nvidia = host["nvidia"]
    targets = tuple(sorted(_cuda.parse_target(t) for t in flavour.get("gpu") or []))
    cuda_spec = flavour.get("cuda")
    if (targets or cuda_spec) and not (nvidia and (nvidia["gpus"] or not targets)):
        reason = host["nvidia_reason"] if not nvidia else "the driver shows no GPU"
        failed.append(("nvidia", (targets, cuda_spec), reason))
    else:
        if targets and nvidia:
            ccs = _unique(tuple(g["cc"]) for g in nvidia["gpus"])
            missing = _cuda.uncovered(targets, ccs)
            if missing:
                names = {tuple(g["cc"]): g["name"] for g in nvidia["gpus"]}
                failed.append(
                    (
                        "gpu",
                        targets,
                        " and ".join(describe_gpu(names[cc], list(cc)) for cc in missing),
                    )
                )
        if (
            cuda_spec
            and nvidia
            and nvidia["cuda"] is not None
            and spec_allows(cuda_spec, _version_tuple(nvidia["cuda"])) is False
        ):
            failed.append(("cuda", (cuda_spec,), nvidia["cuda"]))
    if flavour.get("rocm"):
        rocm = host.get("rocm")
        if rocm is None:
            failed.append(("rocm", (flavour["rocm"],), None))
        elif spec_allows(flavour["rocm"], _version_tuple(rocm)) is False:
            failed.append(("rocm", (flavour["rocm"],), rocm))
    for requirement in flavour.get("requires") or []:
        problem = _requirement_fails(requirement)
        if problem:
            failed.append(("requires", (requirement,), problem))
    return failed


def _phrase(kind: str, wants: list, have, system: str) -> str:  # type: ignore[no-untyped-def]
    """One failed requirement in words; ``wants`` merges what several builds need."""
    if kind == "platform":
        return "%s; this machine is %s" % (
            " or ".join(_unique(w for ws in wants for w in ws)),
            have,
        )
    if kind == "python":
        return "%s; this is %s" % (" or ".join(python_words([w for ws in wants for w in ws])), have)
    if kind in ("nvidia", "gpu"):
        targets = sorted({t for w in wants for t in (w[0] if kind == "nvidia" else w)})
        if len(targets) == 1:
            gpu = _cuda.describe_target(targets[0])
        else:
            gpu = "one of %s" % ", ".join(str(t) for t in targets)
        if kind == "gpu":
            return "a GPU for %s; this machine's %s is not one of them" % (gpu, have)
        specs = _unique(w[1] for w in wants if w[1])
        what = []
        if targets:
            what.append("an NVIDIA GPU for %s" % gpu)
        if specs:
            what.append(
                "an NVIDIA driver for %s" % " or ".join(describe_cuda(s, system) for s in specs)
            )
        return "%s; this machine has no NVIDIA GPU (%s)" % (" and ".join(what), have)
    if kind == "cuda":
        specs = _unique(w[0] for w in wants)
        return "an NVIDIA driver for %s; this driver supports CUDA %s" % (
            " or ".join(describe_cuda(s, system) for s in specs),
            have,
        )
    if kind == "rocm":
        specs = _unique(w[0] for w in wants)
        return "an AMD GPU with ROCm %s; %s" % (
            " or ".join(specs),
            "no ROCm was found" if have is None else "this is ROCm " + have,
        )
    return "%s; %s" % (" or ".join(_unique(w[0] for w in wants)), have)


def mismatches(host: dict, flavour: dict) -> list:
    """What keeps ``flavour`` from this machine, in words; empty when it fits."""
    return [_phrase(kind, [want], have, host["os"]) for kind, want, have in checks(host, flavour)]


def blockers(host: dict, flavours: list) -> list:
    """The requirements that every flavour fails, merged, in words.

    Empty when each requirement is met by some flavour (then only the combination
    is missing).
    """
    per_flavour = [checks(host, f) for f in flavours]
    lines = []
    for kind in ("platform", "python", "nvidia", "gpu", "cuda", "rocm", "requires"):
        found = [[c for c in failed if c[0] == kind] for failed in per_flavour]
        if flavours and all(found):
            wants = [c[1] for group in found for c in group]
            lines.append(_phrase(kind, wants, found[0][0][2], host["os"]))
    return lines


def rocm_version() -> str | None:
    """The ROCm version from ``/opt/rocm/.info/version`` (ROCm's own record), or None."""
    try:
        with open("/opt/rocm/.info/version", encoding="utf-8") as f:
            m = re.match(r"\s*(\d+(?:\.\d+)*)", f.read())
        return m.group(1) if m else None
    except OSError:
        return None


def install_line(data: dict, flavour: dict) -> str:
    """The exact command that installs ``flavour``, every URL shell-quoted (a query
    string's ``&`` would otherwise end the command)."""
    if flavour["kind"] == "wheel":
        url = flavour["url"]
        if flavour.get("sha256"):
            url += "#sha256=" + flavour["sha256"]
        return "pip install " + shlex.quote(url)
    # Another distribution or extras ("cupy-cuda12x"), a version pattern (">=0.3.35").
    name = flavour.get("install") or data["name"]
    pin = flavour.get("spec") or "==" + flavour["version"]
    head = "pip install " + shlex.quote(name + pin)
    if flavour.get("template"):
        # A page that depends on the build of a coupled package (torch): filled in by
        # the user from that build ({torch.version}, {torch.local}, ...).
        return "%s --find-links %s (fill in from %s)" % (
            head,
            shlex.quote(flavour["template"]),
            ", ".join(flavour.get("requires") or ()) or "the coupled build",
        )
    if not flavour.get("url"):
        return head
    return "%s --find-links %s" % (head, shlex.quote(flavour["url"]))


def flavour_label(data: dict, flavour: dict) -> str:
    if flavour["kind"] == "wheel":
        return flavour["filename"]
    name = data["name"]
    if flavour.get("install"):
        name = "%s as %s" % (data["name"], flavour["install"])
    version = flavour.get("spec") or flavour["version"]
    page = flavour.get("url") or flavour.get("template")
    if not page:
        return "%s %s from the default index" % (name, version)
    return "%s %s from %s" % (name, version, page)


# --- the message --------------------------------------------------------------------

# At most this many builds are explained one by one; the rest are counted.
MAX_LISTED = 3


def _explain(data: dict, host: dict, items: list, lines: list) -> None:
    for flavour, wrong in items[:MAX_LISTED]:
        lines.append("  %s needs" % flavour_label(data, flavour))
        lines.extend("    - %s" % w for w in wrong)
    if len(items) > MAX_LISTED:
        lines.append("  (and %d more)" % (len(items) - MAX_LISTED))


def _supported(data: dict) -> list:
    """The "builds exist for" block: every platform, Python, driver and kernel listed."""
    flavours = data["flavours"]
    name = data["name"]
    lines = []
    versions = _unique(f["version"] for f in flavours)
    title = data["display_name"] if data.get("display_name") else name
    lines.append("%s builds exist (%s) for:" % (title, ", ".join(versions) or "none listed"))
    platforms = platform_words([t for f in flavours for t in _flavour_platform_tags(f)])
    python = python_words([w for f in flavours for w in _flavour_python_words(f)])
    cuda = _unique(describe_cuda(f["cuda"], "linux") for f in flavours if f.get("cuda"))
    rocm = _unique("ROCm " + f["rocm"] for f in flavours if f.get("rocm"))
    targets = sorted({_cuda.parse_target(t) for f in flavours for t in f.get("gpu") or []})
    requires = _unique(r for f in flavours for r in f.get("requires") or [])
    lines.append("  platforms:      %s" % ("; ".join(platforms) or "not stated"))
    if python:
        lines.append("  Python:         %s" % "; ".join(python))
    if cuda:
        no_cuda = any(not f.get("cuda") for f in flavours)
        lines.append(
            "  NVIDIA driver:  %s%s"
            % ("; ".join(cuda), "; none for other builds" if no_cuda else "")
        )
    if targets:
        lines.append("  GPU kernels:    %s" % _cuda.describe_target(targets[0]))
        lines.extend("                  %s" % _cuda.describe_target(t) for t in targets[1:])
    if rocm:
        lines.append("  AMD GPUs:       %s" % "; ".join(rocm))
    if requires:
        lines.append("  together with:  %s" % "; ".join(requires))
    lines.append("")
    return lines


def _arch_missing(host: dict, flavour: dict) -> bool:
    """No tag of ``flavour`` is for this OS and CPU, whatever the libc (a newer glibc
    is an upgrade; another CPU is another machine)."""
    tags = _flavour_platform_tags(flavour)
    if not tags:
        return False
    loose = dict(host, libc=None)
    return not any(_platform_fits(loose, t) for t in tags)


def no_build_for_machine(data: dict, host: dict) -> str | None:
    """The sentence that says no build exists for this machine's CPU or GPU family at
    all, or None. Only hardware counts: another Python, a newer driver or other
    installer options can make a build fit; another CPU or GPU is another machine."""
    flavours = data["flavours"]
    if not flavours:
        return None
    arch = [_arch_missing(host, f) for f in flavours]
    gpu = [[c for c in checks(host, f) if c[0] == "gpu"] for f in flavours]
    if not all(arch[i] or gpu[i] for i in range(len(flavours))):  # no zip(strict): 3.8
        return None
    title = data["display_name"] if data.get("display_name") else data["name"]
    machine = "%s %s" % (_OS_WORDS.get(host["os"], host["os"]), host["arch"])
    parts = []
    if all(arch):
        parts.append("none is for %s" % machine)
    if all(gpu):
        parts.append("none has GPU kernels for its %s" % gpu[0][0][2])
    if not parts:
        parts.append("none is both for %s and has GPU kernels for its GPU" % machine)
    return (
        "No %s build exists for this machine: %s. Nothing you change on this machine "
        "(another Python, a newer NVIDIA driver, pip or uv options) will make one fit."
        % (title, " and ".join(parts))
    )


def render_message(data: dict, host: dict) -> str:
    """The whole message for ``host``. Pure: the same data and host give the same text."""
    name = data["name"]
    flavours = data["flavours"]
    lines = ["%s %s is a placeholder, not a broken install." % (name, data["version"])]
    hopeless = no_build_for_machine(data, host)
    if hopeless:
        lines.append(hopeless)  # first: the rest of the message cannot change it
    lines += [
        "It only reserves the name %s on PyPI; the real builds are listed below. It "
        "refuses to install or import so that you read this instead of finding a "
        "half-working package later." % name,
        "",
        "This machine: %s." % describe_machine(host),
        "",
    ]
    lines.extend(_supported(data))
    fitting = None
    problems = []
    for flavour in flavours:
        wrong = mismatches(host, flavour)
        if not wrong and fitting is None:
            fitting = flavour
        problems.append((flavour, wrong))
    if fitting is not None:
        lines.append(
            "A listed build fits this machine: %s. Install it with:" % flavour_label(data, fitting)
        )
        lines.append("  " + install_line(data, fitting))
        # The builds listed before it were preferred: say why they were passed over.
        # Only those for this platform and Python: the others were never candidates.
        passed_over = [
            (f, w)
            for f, w in problems[: flavours.index(fitting)]
            if not any(c[0] in ("platform", "python") for c in checks(host, f))
        ]
        if passed_over:
            lines.append("Builds listed before it do not match this machine:")
            _explain(data, host, passed_over, lines)
        # Only here: resolver-hook would find this same fit; with none it finds none.
        lines.append(
            "Or let resolver-hook pick it (pip install resolver-hook): "
            "resolver-hook pip install %s" % name
        )
    elif not flavours:
        lines.append("No build is listed.")
    else:
        lines.append("What does not match this machine:")
        common = blockers(host, flavours)
        lines.extend("  - %s" % w for w in common)
        if not common:
            # Every requirement is met by some build, but no build meets them all.
            lines.append("  no single build meets every requirement; the closest:")
            closest = sorted(problems, key=lambda item: len(item[1]))
            _explain(data, host, closest, lines)
    lines.append("")
    if data.get("downloads"):
        lines.append("Real downloads: %s" % data["downloads"])
    return _closing(data, name, lines)


def _closing(data: dict, name: str, lines: list) -> str:
    """``lines`` and the closing every message shares (homepage, escape hatch), joined."""
    if data.get("homepage"):
        lines.append("Homepage: %s" % data["homepage"])
    lines.append(
        "(%s=1 only lets this placeholder install; it still cannot be imported.)"
        % escape_hatch(name)
    )
    return "\n".join(lines)


def retired_install_lines(data: dict) -> tuple:
    """The exact pip and uv lines that install the replacement of a retired name."""
    return (
        "pip install %s" % data["replacement"],
        "uv pip install %s" % data["replacement"],
    )


def render_retired(data: dict) -> str:
    """The message of a retired or renamed name: the same on every machine, every time."""
    name, new = data["name"], data["replacement"]
    pip_line, uv_line = retired_install_lines(data)
    lines = [
        "%s %s: this name is retired; install %s instead." % (name, data["version"], new),
        "%s is not a broken install: the name %s only points to %s now. Replace %s with %s "
        "where it is written (requirements files, pyproject.toml, setup.py), then run one of:"
        % (name, name, new, name, new),
        "",
        "  " + pip_line,
        "  " + uv_line,
        "",
    ]
    return _closing(data, name, lines)


def message(env: dict | None = None, directory: str | None = None) -> str:
    """The message for this machine. Never raises."""
    try:
        data = load_data(directory)
    except (OSError, ValueError) as exc:
        return (
            "This package is a placeholder, not a broken install; its data file "
            "could not be read (%s)." % exc
        )
    try:
        if data.get("kind") == "retired":
            return render_retired(data)  # nothing about this machine matters
        return render_message(data, detect(env))
    except Exception as exc:  # the refusal must always say something
        return (
            "%s %s is a placeholder, not a broken install. Real downloads: %s "
            "(the full explanation failed: %s)"
            % (data.get("name"), data.get("version"), data.get("downloads"), exc)
        )


if __name__ == "__main__":  # ``python _placeholder.py``: print the message (used by checks)
    sys.stdout.write(message() + "\n")
