"""A fake of the parts of ``pynvml`` (nvidia-ml-py) that resolver-hook calls.

Built from a list of GPU dicts; behaves like NVML does on real drivers: errors are
NVMLError subclasses, strings may come back as bytes (older nvidia-ml-py).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class NVMLError(Exception):
    pass


class NVMLError_LibraryNotFound(NVMLError):
    def __str__(self) -> str:
        return "NVML Shared Library Not Found"


class NVMLError_DriverNotLoaded(NVMLError):
    def __str__(self) -> str:
        return "Driver Not Loaded"


class NVMLError_NotSupported(NVMLError):
    def __str__(self) -> str:
        return "Not Supported"


@dataclass
class _Mem:
    total: int


class FakeNVML:
    def __init__(
        self,
        gpus: list[dict[str, Any]] | None = None,
        *,
        driver: str = "580.95.05",
        cuda: int = 13000,
        init_error: Exception | None = None,
        init_sleep: float = 0.0,
    ) -> None:
        self.gpus = gpus or []
        self.driver = driver
        self.cuda = cuda
        self.init_error = init_error
        self.init_sleep = init_sleep
        self.shutdown_called = False

    def nvmlInit(self) -> None:
        if self.init_sleep:
            time.sleep(self.init_sleep)
        if self.init_error:
            raise self.init_error

    def nvmlShutdown(self) -> None:
        self.shutdown_called = True

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return self.driver.encode()

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        return self.cuda

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> dict[str, Any]:
        return self.gpus[i]

    def nvmlDeviceGetName(self, h: dict[str, Any]) -> str:
        return str(h["name"])

    def nvmlDeviceGetCudaComputeCapability(self, h: dict[str, Any]) -> tuple[int, int]:
        if h.get("cc") is None:
            raise NVMLError_NotSupported()
        return tuple(h["cc"])  # type: ignore[return-value]

    def nvmlDeviceGetMemoryInfo(self, h: dict[str, Any]) -> _Mem:
        if h.get("mem") is None:
            raise NVMLError_NotSupported()
        return _Mem(total=int(h["mem"]))

    def nvmlDeviceGetUUID(self, h: dict[str, Any]) -> str:
        return str(h["uuid"])


H100 = {
    "name": "NVIDIA H100 80GB HBM3",
    "cc": (9, 0),
    "mem": 80 * 1024**3,
    "uuid": "GPU-aaaa1111-0000-0000-0000-000000000000",
}
GB10 = {
    "name": "NVIDIA GB10",
    "cc": (12, 1),
    "mem": None,
    "uuid": "GPU-bbbb2222-0000-0000-0000-000000000000",
}
NA_DEVICE = {
    "name": "NVIDIA Tegra NPU",
    "cc": None,
    "mem": None,
    "uuid": "GPU-cccc3333-0000-0000-0000-000000000000",
}


class FakeNvmlLib:
    """A fake of ``libnvidia-ml.so.1`` as the placeholder runtime calls it through ctypes.

    Built from the same GPU dicts as :class:`FakeNVML`; out-parameters arrive as
    ``ctypes.pointer`` objects and string buffers, as the runtime passes them, and
    every call returns an NVML status (0 = NVML_SUCCESS, 3 = NOT_SUPPORTED).
    """

    def __init__(self, gpus: list[dict[str, Any]], *, cuda: int = 13000) -> None:
        self.gpus = gpus
        self.cuda = cuda

    def nvmlInit_v2(self) -> int:
        return 0

    def nvmlShutdown(self) -> int:
        return 0

    def nvmlSystemGetCudaDriverVersion_v2(self, out: Any) -> int:
        out.contents.value = self.cuda
        return 0

    def nvmlDeviceGetCount_v2(self, out: Any) -> int:
        out.contents.value = len(self.gpus)
        return 0

    def nvmlDeviceGetHandleByIndex_v2(self, i: int, out: Any) -> int:
        out.contents.value = i + 1  # a non-null handle
        return 0

    def _gpu(self, handle: Any) -> dict[str, Any]:
        return self.gpus[int(handle.value) - 1]

    def nvmlDeviceGetName(self, handle: Any, buf: Any, size: int) -> int:
        buf.value = str(self._gpu(handle)["name"]).encode()[: size - 1]
        return 0

    def nvmlDeviceGetCudaComputeCapability(self, handle: Any, major: Any, minor: Any) -> int:
        cc = self._gpu(handle).get("cc")
        if cc is None:
            return 3
        major.contents.value, minor.contents.value = cc
        return 0

    def nvmlDeviceGetUUID(self, handle: Any, buf: Any, size: int) -> int:
        buf.value = str(self._gpu(handle)["uuid"]).encode()[: size - 1]
        return 0


def fake_nvidia_smi(folder: Path, gpus: list[dict[str, Any]], *, driver: str = "580.95.05") -> Path:
    """Write an executable ``nvidia-smi`` into ``folder`` that reports ``gpus``.

    It answers ``--query-gpu=FIELDS --format=csv,noheader[,nounits]`` with the fields
    asked for (index, name, compute_cap, driver_version, memory.total, uuid; ``[N/A]``
    for a GPU whose cc is None), and prints a header with the CUDA version otherwise.
    """
    rows = [
        {
            "index": str(i),
            "name": g["name"],
            "compute_cap": f"{g['cc'][0]}.{g['cc'][1]}" if g.get("cc") else "[N/A]",
            "driver_version": driver,
            "memory.total": str(int(g["mem"]) // 2**20) if g.get("mem") else "[N/A]",
            "uuid": g["uuid"],
        }
        for i, g in enumerate(gpus)
    ]
    script = folder / "nvidia-smi"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"rows = {rows!r}\n"
        "query = [a for a in sys.argv[1:] if a.startswith('--query-gpu=')]\n"
        "if not query:\n"
        f"    print('| NVIDIA-SMI {driver}  Driver Version: {driver}  CUDA Version: 13.0 |')\n"
        "    sys.exit(0)\n"
        "fields = query[0].split('=', 1)[1].split(',')\n"
        "for row in rows:\n"
        "    print(', '.join(row[f] for f in fields))\n"
    )
    script.chmod(0o755)
    return script
