"""A stand-in for nvidia-ml-py's ``pynvml``, for end-to-end CLI tests.

Put this folder first on PYTHONPATH and a stand-in libnvidia-ml.so.1 on LD_LIBRARY_PATH
(tests/paths.py: fake_nvml_env); FAKE_NVML (JSON) describes the machine:
{"driver": "580.95.05", "cuda": 13000, "gpus": [{"name": ..., "cc": [12, 1], ...}],
 "init_error": "Driver Not Loaded", "init_sleep": 60}
"""

import json
import os
import time

_SPEC = json.loads(os.environ.get("FAKE_NVML", "{}"))


class NVMLError(Exception):
    pass


class _Mem:
    def __init__(self, total):
        self.total = total


def nvmlInit():
    time.sleep(_SPEC.get("init_sleep", 0))
    if _SPEC.get("init_error"):
        raise NVMLError(_SPEC["init_error"])


def nvmlShutdown():
    pass


def nvmlSystemGetDriverVersion():
    return _SPEC.get("driver", "580.95.05")


def nvmlSystemGetCudaDriverVersion_v2():
    return _SPEC.get("cuda", 13000)


def nvmlDeviceGetCount():
    return len(_SPEC.get("gpus", []))


def nvmlDeviceGetHandleByIndex(i):
    return _SPEC["gpus"][i]


def nvmlDeviceGetName(h):
    return h["name"]


def nvmlDeviceGetCudaComputeCapability(h):
    if h.get("cc") is None:
        raise NVMLError("Not Supported")
    return tuple(h["cc"])


def nvmlDeviceGetMemoryInfo(h):
    if h.get("mem") is None:
        raise NVMLError("Not Supported")
    return _Mem(h["mem"])


def nvmlDeviceGetUUID(h):
    return h.get("uuid", "GPU-00000000-0000-0000-0000-000000000000")
