"""Small wheels and sdists around the nvcc-built objects in tests/data/cuda/.

Shared by the scan integration tests and the lint tests. The objects' contents are
stated in scripts/make_cuda_fixtures.sh (and checked by tests/test_scan.py):

* ``libkernels.so``: x86_64; SASS sm_90a, sm_100f, sm_120 + PTX compute_120; NEEDED
  libcudart.so.13.
* ``libptx.so``: x86_64; SASS sm_80 + uncompressed PTX compute_100f (PTX ISA 9.0); no
  CUDA runtime in NEEDED.
* ``libcpu.so``: x86_64, no CUDA. ``libtorchext.so``: NEEDED libtorch.so, libc10.so.
* ``k_sm100f.cubin`` / ``k_sm100a.cubin`` / ``k_sm103a.cubin``: standalone cubins
  (``compute_100f,code=sm_100``, ``sm_100a``, ``sm_103a``); ``k.fatbin``: a bare fat
  binary with sm_100f SASS and compute_100f PTX.
* ``libcupylike.so``: SASS sm_89 + uncompressed PTX compute_89 of ISA 8.8 (CUDA 12.9's);
  NEEDED libcudart.so.12.
* ``libbnb_cuda11.so`` / ``12`` / ``13``: SASS sm_75, sm_80; NEEDED libcudart.so.11.0,
  libcudart.so.12, libcudart.so.13 (one library per runtime, as bitsandbytes ships).
* ``librenamed.so``: SASS sm_90; NEEDED libcudart-53d54daa.so.12.6.68 (auditwheel).
* ``libjetson.so``: aarch64 (e_machine set after the build); SASS sm_87; NEEDED
  libcudart.so.12.
* ``librocmk.so``: NEEDED libamdhip64.so.7; a ``.hip_fatbin`` offload bundle for gfx90a
  and gfx942.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

CUDA = Path(__file__).resolve().parent / "data" / "cuda"
KERNELS = (CUDA / "libkernels.so").read_bytes()
PTX = (CUDA / "libptx.so").read_bytes()
CPU = (CUDA / "libcpu.so").read_bytes()
TORCHEXT = (CUDA / "libtorchext.so").read_bytes()


def fixture(name: str) -> bytes:
    """The bytes of one committed object under tests/data/cuda/."""
    return (CUDA / name).read_bytes()


_FIXED_DATE = (2020, 1, 1, 0, 0, 0)


def metadata(
    name: str,
    version: str,
    *,
    classifiers: Sequence[str] = (),
    requires_dist: Sequence[str] = (),
    dynamic: Sequence[str] = (),
    metadata_version: str = "2.1",
) -> str:
    """Core metadata text (PKG-INFO / METADATA)."""
    lines = [f"Metadata-Version: {metadata_version}", f"Name: {name}", f"Version: {version}"]
    lines += [f"Dynamic: {d}" for d in dynamic]
    lines += [f"Classifier: {c}" for c in classifiers]
    lines += [f"Requires-Dist: {r}" for r in requires_dist]
    return "\n".join(lines) + "\n"


def binary_wheel(
    directory: Path,
    filename: str,
    members: Mapping[str, bytes] | None = None,
    *,
    classifiers: Sequence[str] = (),
    requires_dist: Sequence[str] = (),
) -> Path:
    """A wheel (zip) holding ``members`` (default: ``NAME/libkernels.so``) and METADATA."""
    name, version = filename.split("-")[:2]
    if members is None:
        members = {
            f"{name}/__init__.py": b"from ._lib import *\n",
            f"{name}/libkernels.so": KERNELS,
        }
    path = directory / filename
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in members.items():
            zf.writestr(zipfile.ZipInfo(member, _FIXED_DATE), data)
        meta = metadata(name, version, classifiers=classifiers, requires_dist=requires_dist)
        zf.writestr(zipfile.ZipInfo(f"{name}-{version}.dist-info/METADATA", _FIXED_DATE), meta)
    return path


def sdist(directory: Path, name: str, version: str, files: Mapping[str, str | bytes]) -> Path:
    """``NAME-VERSION.tar.gz`` with ``files`` under the ``NAME-VERSION/`` folder."""
    root = f"{name}-{version}"
    path = directory / f"{root}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for member, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(f"{root}/{member}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path
