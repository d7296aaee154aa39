"""A fake of the parts of ``pynvml`` (nvidia-ml-py) that resolver-hook calls.

Built from a list of GPU dicts; behaves like NVML does on real drivers: errors are
NVMLError subclasses, strings may come back as bytes (older nvidia-ml-py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
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
