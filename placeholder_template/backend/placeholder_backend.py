"""The in-tree PEP 517 build backend of a resolver-hook placeholder.

It has no build requirements (``requires = []``), so pip and uv run it even offline
or behind a private index (docs/facts.md section 4: a backend that must be downloaded
hides the message behind "No matching distribution found"). Every build fails with
``SystemExit(message)``, which prints the message without a traceback, unless the
escape hatch ``NAME_ALLOW_PLACEHOLDER=1`` is set; then it builds a wheel whose
package raises on import, because pip and uv cache built wheels and never run the
build again (docs/facts.md section 4).

Standard library only; works on any Python >= 3.8.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import sys
import tarfile
import time
import zipfile

__all__ = [
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_wheel",
]

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SRC = os.path.join(_ROOT, "src")
# Zip cannot store times before 1980; 2020-02-02 is hatchling's reproducible default.
_DEFAULT_EPOCH = 1580601600


def _package_dir() -> str:
    for entry in sorted(os.listdir(_SRC)):
        if os.path.isfile(os.path.join(_SRC, entry, "_placeholder.py")):
            return os.path.join(_SRC, entry)
    raise SystemExit("placeholder backend: no src/*/_placeholder.py in %s" % _ROOT)


def _runtime():  # type: ignore[no-untyped-def]
    package = _package_dir()
    if package not in sys.path:
        sys.path.insert(0, package)
    import _placeholder

    return _placeholder


def _check_allowed() -> dict:
    """The placeholder data when the escape hatch is set; otherwise exit with the message."""
    runtime = _runtime()
    data = runtime.load_data(_package_dir())
    if not runtime.allowed(data["name"]):
        raise SystemExit(runtime.message())
    return data


def _epoch() -> int:
    try:
        return max(int(os.environ.get("SOURCE_DATE_EPOCH", _DEFAULT_EPOCH)), 315532800)
    except ValueError:
        return _DEFAULT_EPOCH


def _dist_name(data: dict) -> str:
    return "%s-%s" % (data["name"].replace("-", "_"), data["version"])


def _metadata() -> bytes:
    try:
        with open(os.path.join(_ROOT, "PKG-INFO"), "rb") as f:
            return f.read()
    except OSError:
        raise SystemExit(
            "placeholder backend: PKG-INFO is missing; build from the sdist "
            "that 'resolver-hook placeholder build' made"
        ) from None


def _wheel_file() -> bytes:
    return (
        b"Wheel-Version: 1.0\nGenerator: resolver-hook placeholder backend\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n"
    )


def get_requires_for_build_wheel(config_settings=None):  # type: ignore[no-untyped-def]
    return []


def get_requires_for_build_sdist(config_settings=None):  # type: ignore[no-untyped-def]
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):  # type: ignore[no-untyped-def]
    data = _check_allowed()
    dist_info = _dist_name(data) + ".dist-info"
    target = os.path.join(metadata_directory, dist_info)
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, "METADATA"), "wb") as f:
        f.write(_metadata())
    with open(os.path.join(target, "WHEEL"), "wb") as f:
        f.write(_wheel_file())
    return dist_info


def _record_hash(content: bytes) -> str:
    digest = hashlib.sha256(content).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # type: ignore[no-untyped-def]
    data = _check_allowed()
    package = _package_dir()
    import_name = os.path.basename(package)
    files = []
    for entry in sorted(os.listdir(package)):
        path = os.path.join(package, entry)
        if os.path.isfile(path) and not entry.endswith((".pyc", ".pyo")):
            with open(path, "rb") as f:
                files.append(("%s/%s" % (import_name, entry), f.read()))
    dist_info = _dist_name(data) + ".dist-info"
    files.append((dist_info + "/METADATA", _metadata()))
    files.append((dist_info + "/WHEEL", _wheel_file()))
    record = "".join("%s,%s,%d\n" % (n, _record_hash(c), len(c)) for n, c in files)
    record += dist_info + "/RECORD,,\n"
    files.append((dist_info + "/RECORD", record.encode("utf-8")))
    filename = _dist_name(data) + "-py3-none-any.whl"
    stamp = time.gmtime(_epoch())[:6]
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, content)
    return filename


def build_sdist(sdist_directory, config_settings=None):  # type: ignore[no-untyped-def]
    data = _check_allowed()
    base = _dist_name(data)
    filename = base + ".tar.gz"
    members = []
    for dirpath, dirnames, filenames in os.walk(_ROOT):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for entry in sorted(filenames):
            path = os.path.join(dirpath, entry)
            members.append((os.path.relpath(path, _ROOT).replace(os.sep, "/"), path))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, path in sorted(members):
            with open(path, "rb") as f:
                content = f.read()
            info = tarfile.TarInfo("%s/%s" % (base, rel))
            info.size, info.mtime, info.mode = len(content), _epoch(), 0o644
            tar.addfile(info, io.BytesIO(content))
    import gzip

    with (
        open(os.path.join(sdist_directory, filename), "wb") as raw,
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=_epoch()) as gz,
    ):
        gz.write(buffer.getvalue())
    return filename
