"""Detection probes. Each one never raises and never hangs.

A probe takes its inputs as arguments (the environment, a filesystem root, an
NVML module loader, a subprocess runner) so tests feed it a fake NVML module or a
fake ``/proc`` tree instead of patching it. It returns what it found, or ``None``,
together with a :class:`Probe` saying why. Paths are strings (``os.path``; a root may
be any ``os.PathLike``): detection is the cold path of ``detect --json``, which loads
no ``pathlib``.

Sources, best first (docs/facts.md section 1): NVML through ``nvidia-ml-py``; then
``/proc/driver/nvidia`` and ``/sys/module/nvidia`` (driver version only); then
``nvidia-smi`` with a timeout.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from resolver_hook.ground.valueclass import replace
from resolver_hook.host.profile import NvidiaGpu, NvidiaInfo, Probe, RocmInfo
from resolver_hook.portable import visible
from resolver_hook.portable.cuda import cuda_for_driver, decode_cuda_version, format_cc

if TYPE_CHECKING:
    from resolver_hook.process.proc import Result, Runner

__all__ = [
    "anywhere",
    "filter_visible",
    "on_path",
    "probe_container",
    "probe_jetson",
    "probe_nvidia",
    "probe_nvidia_smi",
    "probe_nvml",
    "probe_procfs",
    "probe_rocm",
    "probe_wsl",
]

# What an NVIDIA probe found (None: nothing), its notes, and the probe's outcome.
_NvidiaProbed = tuple[NvidiaInfo | None, list[str], Probe]

NVML_TIMEOUT = 5.0
SMI_TIMEOUT = 5.0


def run_subprocess(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Result:
    """The probes' runner: :func:`resolver_hook.process.proc.capture` (own process group, killed
    whole on timeout, output capped), imported when a probe first runs a program: a
    machine with neither ``nvidia-smi`` nor ``rocm_agent_enumerator`` never loads it."""
    from resolver_hook.process.proc import capture

    return capture(argv, timeout=timeout, env=env, cwd=cwd)


def on_path(name: str) -> bool:
    """Whether a file ``name`` is in a folder of ``PATH``, the folders the runner's
    ``exec`` searches (``os.get_exec_path``): where none is, starting it can only fail
    with "not found", so it is not started."""
    return any(os.path.exists(os.path.join(folder, name)) for folder in os.get_exec_path())


def anywhere(name: str) -> bool:
    """The lookup beside a runner given by the caller (a fake): it says what exists."""
    return True


def _read(path: str) -> str | None:
    """A small text file (``/proc``, ``/sys``), or None when it cannot be read. Never raises."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


# The library nvidia-ml-py binds on Linux (its _LoadNvmlLibrary loads it by this name).
NVML_LIBRARY = "libnvidia-ml.so.1"


def _import_pynvml() -> Any:
    """nvidia-ml-py, once the NVML library it binds loads; else :class:`_NoNvmlLibrary`.

    Importing nvidia-ml-py costs more than the rest of detection, and on a machine
    without the NVIDIA driver (most of them) it only fails in ``nvmlInit``: so on Linux
    the library is loaded first, by the same name and the same call ``ctypes.CDLL``
    makes there (``_ctypes.dlopen(name, RTLD_LOCAL)``, its ``DEFAULT_MODE``). Not
    through ``ctypes`` itself: importing it builds its C types, 2.5 ms of a cold
    ``detect --json``, which a machine without the library never uses (nvidia-ml-py
    imports it where the library is there). ``_ctypes`` has ``dlopen`` on POSIX only,
    hence imported here, on Linux.
    """
    if sys.platform.startswith("linux"):
        from _ctypes import RTLD_LOCAL, dlopen

        try:
            dlopen(NVML_LIBRARY, RTLD_LOCAL)
        except OSError:
            return _NoNvmlLibrary()
    import pynvml  # type: ignore[import-untyped]  # nvidia-ml-py ships no type information

    return pynvml


class _NoNvmlLibrary:
    """nvidia-ml-py on a machine without its library: ``nvmlInit`` fails as its own does
    (``NVMLError_LibraryNotFound``, whose text this is)."""

    def nvmlInit(self) -> None:
        raise LookupError("NVML Shared Library Not Found")


# --- NVML -------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_query(nvml: Any) -> tuple[NvidiaInfo | None, list[str], str]:
    """Ask NVML everything; runs in a worker thread. Returns (info, notes, reason)."""
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None, [], f"NVML init failed: {_nvml_error(exc)}"
    notes: list[str] = []
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        cuda_version: str | None = None
        try:
            decoded = decode_cuda_version(int(nvml.nvmlSystemGetCudaDriverVersion_v2()))
            cuda_version = format_cc(decoded) if decoded else None  # 13000 -> "13.0"
        except Exception as exc:
            notes.append(f"NVML did not report the driver CUDA version: {_nvml_error(exc)}")
        count = nvml.nvmlDeviceGetCount()
        gpus = []
        for i in range(count):
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
            name = _text(nvml.nvmlDeviceGetName(handle))
            try:
                major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
            except Exception as exc:
                notes.append(
                    f"GPU {i} ({name}) skipped: compute capability unknown ({_nvml_error(exc)})"
                )
                continue
            memory = uuid = None
            # Unified-memory parts (GB10) report no dedicated memory.
            with contextlib.suppress(Exception):
                memory = int(nvml.nvmlDeviceGetMemoryInfo(handle).total) // (1024 * 1024)
            with contextlib.suppress(Exception):
                uuid = _text(nvml.nvmlDeviceGetUUID(handle))
            gpus.append(
                NvidiaGpu(
                    index=i, name=name, cc=(int(major), int(minor)), memory_mib=memory, uuid=uuid
                )
            )
        return (
            NvidiaInfo(driver_version=driver, cuda_version=cuda_version, gpus=tuple(gpus)),
            notes,
            "",
        )
    except Exception as exc:
        return None, notes, f"NVML query failed: {_nvml_error(exc)}"
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def _nvml_error(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _nothing(name: str, detail: str, notes: list[str] | None = None) -> _NvidiaProbed:
    """No NVIDIA facts from the probe ``name``, and why."""
    return None, notes or [], Probe(name=name, found=False, detail=detail)


def probe_nvml(
    load: Callable[[], Any] = _import_pynvml, timeout: float = NVML_TIMEOUT
) -> _NvidiaProbed:
    """NVML through nvidia-ml-py, in a daemon thread so a hung driver cannot hang us.

    (conda runs its CUDA probe in a subprocess for the same reason; a thread is
    cheaper and, being a daemon, does not keep the process alive.) Without the NVML
    library (:class:`_NoNvmlLibrary`) no driver is called, so no thread is started.
    """
    try:
        nvml = load()
    except Exception as exc:
        return _nothing("nvidia-nvml", f"nvidia-ml-py (pynvml) not importable: {exc}")
    box: list[tuple[NvidiaInfo | None, list[str], str]] = []
    if isinstance(nvml, _NoNvmlLibrary):
        box.append(_nvml_query(nvml))
    else:
        worker = threading.Thread(
            target=lambda: box.append(_nvml_query(nvml)), name="resolver-hook-nvml", daemon=True
        )
        worker.start()
        worker.join(timeout)
    if not box:
        return _nothing("nvidia-nvml", f"NVML timed out after {timeout:g} s")
    info, notes, reason = box[0]
    if info is None:
        return _nothing("nvidia-nvml", reason, notes)
    if not info.gpus and not notes:
        detail = f"NVML: driver {info.driver_version} has no devices"
    else:
        detail = f"NVML: driver {info.driver_version}, {len(info.gpus)} GPU(s)"
    return info, notes, Probe(name="nvidia-nvml", found=bool(info.gpus), detail=detail)


# --- /proc and /sys ---------------------------------------------------------------

# The probes' patterns are strings, compiled where first used (re's own cache): each
# searches a file or a program's output that a machine without the driver, a GPU or a
# Jetson does not have, and compiling the three costs 0.5 ms of a cold detect --json.
_NVRM = r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)"


def probe_procfs(root: str | os.PathLike[str]) -> tuple[str | None, Probe]:
    """The driver version from ``/sys/module/nvidia/version`` or ``/proc/driver/nvidia/version``."""
    text = (_read(os.path.join(root, "sys/module/nvidia/version")) or "").strip()
    proc_text = None if text else _read(os.path.join(root, "proc/driver/nvidia/version"))
    m = re.search(_NVRM, proc_text) if proc_text else None
    driver = text or (m.group(1) if m else None)
    if driver is not None:
        detail = f"kernel module nvidia {driver} loaded"
    elif proc_text is None:
        detail = "NVIDIA driver not loaded (no /proc/driver/nvidia/version)"
    else:
        detail = "/proc/driver/nvidia/version names no driver version"
    return driver, Probe(name="nvidia-procfs", found=driver is not None, detail=detail)


# --- nvidia-smi -------------------------------------------------------------------

_SMI_CUDA = r"CUDA Version:\s*(\d+\.\d+)"


def probe_nvidia_smi(
    run: Runner, timeout: float = SMI_TIMEOUT, *, exists: Callable[[str], bool] = anywhere
) -> _NvidiaProbed:
    """``nvidia-smi --query-gpu=...`` with a timeout; ``[N/A]`` rows skipped with a note.
    ``exists``: whether the program is there to run (:func:`on_path` for the real runner)."""
    if not exists("nvidia-smi"):
        return _nothing("nvidia-smi", "nvidia-smi not found")
    query = [
        "nvidia-smi",
        "--query-gpu=index,name,compute_cap,driver_version,memory.total,uuid",
        "--format=csv,noheader,nounits",
    ]
    done = run(query, timeout=timeout)
    code, out = done.returncode, done.stdout
    if done.missing:
        return _nothing("nvidia-smi", "nvidia-smi not found")
    if done.timed_out:
        return _nothing("nvidia-smi", f"nvidia-smi timed out after {timeout:g} s")
    if done.error is not None or done.truncated:
        return _nothing("nvidia-smi", str(done.reason()))
    if code != 0:
        first = out.strip().splitlines()[0] if out.strip() else f"exit code {code}"
        return _nothing("nvidia-smi", f"nvidia-smi failed: {first}")
    gpus: list[NvidiaGpu] = []
    notes: list[str] = []
    driver: str | None = None
    for line in out.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 4:
            continue
        index, name, cap, driver = cells[0], cells[1], cells[2], cells[3] or driver
        try:
            major, _, minor = cap.partition(".")
            cc = (int(major), int(minor))
        except ValueError:
            notes.append(f"nvidia-smi device {index} ({name}) skipped: compute capability {cap}")
            continue
        memory = int(cells[4]) if len(cells) > 4 and cells[4].isdigit() else None
        uuid = cells[5] if len(cells) > 5 and cells[5].startswith(("GPU-", "MIG-")) else None
        gpus.append(
            NvidiaGpu(
                index=int(index) if index.isdigit() else len(gpus),
                name=name,
                cc=cc,
                memory_mib=memory,
                uuid=uuid,
            )
        )
    m = re.search(_SMI_CUDA, run(["nvidia-smi"], timeout=timeout).stdout)
    cuda_version = m.group(1) if m else None
    if cuda_version is None:
        notes.append("nvidia-smi did not report the driver CUDA version")
    info = NvidiaInfo(driver_version=driver, cuda_version=cuda_version, gpus=tuple(gpus))
    detail = (
        f"nvidia-smi: driver {driver}, {len(gpus)} GPU(s)" if gpus else "nvidia-smi: no devices"
    )
    return info, notes, Probe(name="nvidia-smi", found=bool(gpus), detail=detail)


# --- CUDA_VISIBLE_DEVICES ---------------------------------------------------------


def filter_visible(
    gpus: tuple[NvidiaGpu, ...], env: Mapping[str, str]
) -> tuple[tuple[NvidiaGpu, ...], str | None]:
    """Apply ``CUDA_VISIBLE_DEVICES`` like the CUDA runtime does (docs/facts.md 1.4).

    The rules live in :mod:`resolver_hook.portable.visible`, shared with placeholders
    (loaded here: a machine without GPUs never needs them).
    Returns the visible GPUs and a note when the variable changed anything.
    """

    value = env.get(visible.VARIABLE)
    if value is None:
        return gpus, None
    positions, note = visible.select(value, [(g.index, g.uuid) for g in gpus])
    return tuple(gpus[i] for i in positions), note or None


def probe_nvidia(
    env: Mapping[str, str],
    root: str | os.PathLike[str],
    run: Runner,
    *,
    load_nvml: Callable[[], Any] = _import_pynvml,
    nvml_timeout: float = NVML_TIMEOUT,
    smi_timeout: float = SMI_TIMEOUT,
    exists: Callable[[str], bool] = anywhere,
) -> tuple[NvidiaInfo | None, list[str], list[Probe]]:
    """All NVIDIA sources in order; the first that lists GPUs wins."""
    probes: list[Probe] = []
    info, notes, probe = probe_nvml(load_nvml, nvml_timeout)
    probes.append(probe)
    if info is None or not info.gpus:
        driver, proc_probe = probe_procfs(root)
        probes.append(proc_probe)
        smi_info, smi_notes, smi_probe = probe_nvidia_smi(run, smi_timeout, exists=exists)
        probes.append(smi_probe)
        notes += smi_notes
        if smi_info is not None and (smi_info.gpus or info is None):
            info = smi_info
        if info is None and driver is not None:
            info = NvidiaInfo(driver_version=driver)
        if info is not None and info.cuda_version is None and info.driver_version:
            info, inferred = _infer_cuda(info)
            notes.append(inferred)
    if info is not None and info.gpus:
        shown, note = filter_visible(info.gpus, env)
        if note:
            notes.append(note)
            info = replace(info, gpus=shown)
            if not shown:
                probes.append(Probe(name="nvidia-visible", found=False, detail=note))
    return info, notes, probes


def _infer_cuda(info: NvidiaInfo) -> tuple[NvidiaInfo, str]:
    """The driver's CUDA version from its version, by NVIDIA's table (docs/facts.md 1.3)."""
    driver = info.driver_version or ""
    found = cuda_for_driver(driver)
    if found is None:
        return info, f"driver {driver} is older than NVIDIA's table: its CUDA version is unknown"
    cuda, exact = found
    words = format_cc(cuda) if exact else f"at least {format_cc(cuda)}"
    note = (
        f"driver CUDA version {words} inferred from driver {driver} with NVIDIA's table "
        "(NVML did not report it)"
    )
    return replace(info, cuda_version=format_cc(cuda), cuda_inferred=True), note


# --- Jetson (Tegra) ---------------------------------------------------------------

_TEGRA_RELEASE = r"^#\s*R(\d{1,3})\s*\(release\),\s*REVISION:\s*(\d{1,3})(?:\.(\d{1,3}))?"
# /proc/device-tree/compatible SoC entries (docs/facts.md section 1.2).
_TEGRA_SOCS = {"nvidia,tegra234": "Jetson Orin", "nvidia,tegra194": "Jetson Xavier"}


def probe_jetson(root: str | os.PathLike[str]) -> tuple[str | None, Probe]:
    """The L4T release of a Jetson (``36.4``) from ``/etc/nv_tegra_release``, or None.

    ``/proc/device-tree/compatible`` names the module (``nvidia,tegra234`` is Orin);
    it is reported in the probe, and alone (no release file) gives no L4T release.
    """
    release = _read(os.path.join(root, "etc/nv_tegra_release")) or ""
    m = re.match(_TEGRA_RELEASE, release.strip()) if release else None
    compatible = _read(os.path.join(root, "proc/device-tree/compatible")) or ""
    entries = [e.strip() for e in compatible.split("\0") if e.strip()]
    module = next((_TEGRA_SOCS[e] for e in entries if e in _TEGRA_SOCS), None)
    if module is None and any(e.startswith("nvidia,tegra") for e in entries):
        module = "a Jetson (" + next(e for e in entries if e.startswith("nvidia,tegra")) + ")"
    if m:
        l4t = f"{int(m.group(1))}.{int(m.group(2))}"
        where = f" ({module})" if module else ""
        return l4t, Probe(name="jetson", found=True, detail=f"Jetson{where}: L4T {l4t}")
    if module:
        return None, Probe(
            name="jetson",
            found=False,
            detail=f"{module} per the device tree, but /etc/nv_tegra_release is missing or "
            "unreadable: L4T release unknown",
        )
    return None, Probe(name="jetson", found=False, detail="not a Jetson (no /etc/nv_tegra_release)")


# --- ROCm, WSL, containers ---------------------------------------------------------


def _gfx_name(target_version: int) -> str:
    # KFD encodes gfx_target_version as major*10000 + minor*100 + stepping;
    # the gfx name writes minor and stepping in hex: 90010 -> gfx90a.
    major, rest = divmod(target_version, 10000)
    minor, step = divmod(rest, 100)
    return f"gfx{major}{minor:x}{step:x}"


def probe_rocm(
    root: str | os.PathLike[str], run: Runner, *, exists: Callable[[str], bool] = anywhere
) -> tuple[RocmInfo | None, Probe]:
    """AMD GPUs from the KFD topology in sysfs, else ``rocm_agent_enumerator`` (when
    ``exists`` says it is there)."""
    version = (_read(os.path.join(root, "opt/rocm/.info/version")) or "").strip() or None
    gfx: list[str] = []
    nodes = os.path.join(root, "sys/class/kfd/kfd/topology/nodes")
    try:
        for node in sorted(os.listdir(nodes)):
            properties = _read(os.path.join(nodes, node, "properties")) or ""
            m = re.search(r"^gfx_target_version\s+(\d+)", properties, re.M)
            if m and int(m.group(1)) > 0:  # 0 is a CPU node
                gfx.append(_gfx_name(int(m.group(1))))
    except OSError:
        pass
    if not gfx and exists("rocm_agent_enumerator"):
        done = run(["rocm_agent_enumerator"], timeout=SMI_TIMEOUT)
        if done.ok:
            gfx = [w for w in done.stdout.split() if w.startswith("gfx") and w != "gfx000"]
    if not gfx:
        return None, Probe(
            name="rocm",
            found=False,
            detail="no AMD GPU (no KFD topology, no rocm_agent_enumerator)",
        )
    return RocmInfo(version=version, gfx=tuple(gfx)), Probe(
        name="rocm", found=True, detail="AMD " + ", ".join(gfx)
    )


def probe_wsl(root: str | os.PathLike[str], env: Mapping[str, str]) -> bool:
    if env.get("WSL_DISTRO_NAME"):
        return True
    return "microsoft" in (_read(os.path.join(root, "proc/version")) or "").lower()


def probe_container(root: str | os.PathLike[str], env: Mapping[str, str]) -> str | None:
    if os.path.exists(os.path.join(root, ".dockerenv")):
        return "docker"
    if os.path.exists(os.path.join(root, "run/.containerenv")):
        return "podman"
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    return env.get("container") or None
