"""``placeholder check`` on artifacts it did not build.

Every sdist here is made in the test with an in-tree PEP 517 backend that needs
nothing from an index, so pip and uv can build it offline; the one that needs a
backend from an index gets it through ``--find-links``, as a wheel made here too.
Nothing is downloaded.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.errors import UsageError
from resolver_hook.publish.placeholder import check_placeholder
from resolver_hook.publish.placeholder.check import (
    FAILS_AT_IMPORT,
    FAILS_LOUDLY,
    INCONCLUSIVE,
    INSTALLS_SILENTLY,
)

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]

# A PEP 517 backend in the sdist itself (backend-path): build_wheel packs src/NAME/*.
# ``{extra}`` is code run at the start of build_wheel and of metadata preparation.
BACKEND = """
import base64, hashlib, os, zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME, VERSION = {name!r}, {version!r}


def _extra():
{extra}


def get_requires_for_build_wheel(config_settings=None):
    _extra()
    return []


def _files():
    out = []
    src = os.path.join(ROOT, "src")
    for package in sorted(os.listdir(src)):
        for entry in sorted(os.listdir(os.path.join(src, package))):
            with open(os.path.join(src, package, entry), "rb") as f:
                out.append(("%s/%s" % (package, entry), f.read()))
    return out


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _extra()
    info = "%s-%s.dist-info" % (NAME, VERSION)
    files = _files()
    files.append((info + "/METADATA", open(os.path.join(ROOT, "PKG-INFO"), "rb").read()))
    wheel = "Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    files.append((info + "/WHEEL", wheel.encode()))
    record = ""
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += "%s,sha256=%s,%d\\n" % (name, digest, len(data))
    files.append((info + "/RECORD", (record + info + "/RECORD,,\\n").encode()))
    filename = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as zf:
        for name, data in files:
            zf.writestr(name, data)
    return filename
"""


def _indent(code: str) -> str:
    return "".join(f"    {line}\n" for line in (code or "pass").splitlines())


def make_sdist(
    folder: Path,
    name: str,
    version: str,
    package: dict[str, str],
    *,
    extra: str = "",
    requires: tuple[str, ...] = (),
    backend: str | None = None,
    summary: str = "",
) -> Path:
    """``NAME-VERSION.tar.gz`` with static PKG-INFO, src/NAME/``package`` files, and an
    in-tree backend (or ``backend``, a module name that ``requires`` must supply)."""
    root = f"{name}-{version}"
    pkg_info = f"Metadata-Version: 2.2\nName: {name}\nVersion: {version}\n"
    if summary:
        pkg_info += f"Summary: {summary}\n"
    if backend is None:
        build = 'requires = []\nbuild-backend = "b"\nbackend-path = ["_backend"]\n'
    else:
        build = f"requires = {list(requires)!r}\nbuild-backend = {backend!r}\n"
    files = {
        "PKG-INFO": pkg_info,
        "pyproject.toml": f'[build-system]\n{build}[project]\nname = "{name}"\n'
        f'version = "{version}"\n',
        "_backend/b.py": BACKEND.format(name=name, version=version, extra=_indent(extra)),
        **{f"src/{name}/{k}": v for k, v in package.items()},
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{root}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{root}/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def backend_wheel(folder: Path) -> Path:
    """``tinybackend-1.0-py3-none-any.whl``: the in-tree backend above as an installable
    build backend named ``tinybackend``, for an sdist that must get it from an index."""
    folder.mkdir(parents=True, exist_ok=True)
    code = BACKEND.format(name="silentdep", version="0.0.1", extra=_indent(""))
    path = folder / "tinybackend-1.0-py3-none-any.whl"
    info = "tinybackend-1.0.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        # ROOT is the build's working folder for an installed backend.
        zf.writestr("tinybackend.py", code.replace(
            "os.path.dirname(os.path.dirname(os.path.abspath(__file__)))", "os.getcwd()"
        ))  # fmt: skip
        zf.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: tinybackend\nVersion: 1.0\n")
        zf.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        zf.writestr(f"{info}/RECORD", "")
    return path


def _verdicts(report: object) -> list[tuple[str, str]]:
    return [(v.installer, v.verdict) for v in report.verdicts]  # type: ignore[attr-defined]


# --- nothing of the artifact runs on the host ------------------------------------------


def test_a_foreign_silent_sdist_is_installed_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The old check ran src/<name>/_placeholder.py in resolver-hook's interpreter.
    planted = tmp_path / "written-by-the-artifact"
    sdist = make_sdist(
        tmp_path / "dist",
        "tilert",
        "0.0.0.dev0",
        {
            "__init__.py": "",
            "_placeholder.py": f"open({str(planted)!r}, 'w').write('ran')\n",
        },
        summary="Placeholder",
    )
    assert main(["placeholder", "check", str(sdist)]) == 1
    out = capsys.readouterr().out
    assert "pip: installs silently\n" in out
    assert "uv: installs silently\n" in out
    assert out.endswith(
        "verdicts: pip: installs silently; uv: installs silently\n"
        "check failed: only 'fails loudly at install' under every installer passes\n"
    )
    assert not planted.exists()


def test_a_foreign_sdist_that_fails_its_build_fails_loudly(tmp_path: Path) -> None:
    sdist = make_sdist(
        tmp_path,
        "oldname",
        "1.0",
        {"__init__.py": ""},
        extra="raise SystemExit('oldname is retired; pip install newname')",
    )
    report = check_placeholder(sdist)
    assert _verdicts(report) == [("pip", FAILS_LOUDLY), ("uv", FAILS_LOUDLY)]
    assert all("oldname is retired" in v.detail for v in report.verdicts)


def test_a_foreign_sdist_that_raises_on_import(tmp_path: Path) -> None:
    sdist = make_sdist(
        tmp_path, "loudimport", "0.0.1", {"__init__.py": "raise ImportError('use x')\n"}
    )
    report = check_placeholder(sdist)
    assert _verdicts(report) == [("pip", FAILS_AT_IMPORT), ("uv", FAILS_AT_IMPORT)]
    assert "ImportError: use x" in report.verdicts[0].detail
    assert not report.passed


def test_a_backend_that_is_not_offline_is_inconclusive_until_find_links_gives_it(
    tmp_path: Path,
) -> None:
    sdist = make_sdist(
        tmp_path / "dist",
        "silentdep",
        "0.0.1",
        {"__init__.py": ""},
        requires=("tinybackend",),
        backend="tinybackend",
    )
    report = check_placeholder(sdist)
    assert _verdicts(report) == [("pip", INCONCLUSIVE), ("uv", INCONCLUSIVE)]
    assert report.verdicts[0].detail.startswith(
        "a build backend or dependency is not available offline"
    )
    backends = backend_wheel(tmp_path / "backends").parent
    report = check_placeholder(sdist, find_links=[backends])
    assert _verdicts(report) == [("pip", INSTALLS_SILENTLY), ("uv", INSTALLS_SILENTLY)]


# --- wheels -------------------------------------------------------------------------------


def _wheel(folder: Path, name: str, version: str, init: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name}/__init__.py", init)
        zf.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        zf.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        zf.writestr(f"{info}/RECORD", "")
    return path


@pytest.mark.parametrize(
    ("init", "verdict"),
    [("", INSTALLS_SILENTLY), ("raise ImportError('reserved')\n", FAILS_AT_IMPORT)],
)
def test_a_placeholder_wheel_is_flagged(tmp_path: Path, init: str, verdict: str) -> None:
    # docs/facts.md section 4: nvidia-npp-cu13 0.0.0a0 is a zero-version wheel.
    wheel = _wheel(tmp_path, "nvidia_npp_cu13", "0.0.0a0", init)
    report = check_placeholder(wheel)
    (flag,) = [r for r in report.results if r.name.startswith("not a placeholder wheel")]
    assert flag.status == "FAIL"
    assert flag.detail.startswith("looks like a placeholder: version 0.0.0a0")
    assert _verdicts(report) == [("pip", verdict), ("uv", verdict)]
    assert not report.passed


# --- unreadable input: one error line, exit 2 -------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: _wheel(p, "x", "1.0", "").rename(p / "x-1.0.tar.gz"),
         "not a readable sdist: it is a zip file (a wheel?), not a gzip-compressed tar file"),
        (lambda p: (p / "x-1.0.tar.gz").write_bytes(b"not gzip") and p / "x-1.0.tar.gz",
         "not a readable sdist: not a gzip-compressed tar file"),
        (lambda p: (p / "x-1.0.whl").write_bytes(b"not zip") and p / "x-1.0.whl",
         "not a wheel file name: "),
        (lambda p: (p / "x-1.0-py3-none-any.whl").write_bytes(b"x")
         and p / "x-1.0-py3-none-any.whl", "not a readable wheel: not a zip file"),
        (lambda p: (p / "x.zip").write_bytes(b"x") and p / "x.zip",
         "not an sdist (.tar.gz) or a wheel (.whl)"),
        (lambda p: p, "not a file"),
    ],
)  # fmt: skip
def test_unreadable_input_is_one_error_line(
    tmp_path: Path, make: object, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    assert main(["placeholder", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {Path(path).resolve()}: {message}")
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1
    with pytest.raises(UsageError):
        check_placeholder(path)  # type: ignore[arg-type]


# --- signals ------------------------------------------------------------------------------

# A build that starts a grandchild which keeps writing files in the build folder (inside
# the check's folder, through TMPDIR) and records both pids, then waits.
_SLOW_BUILD = """
import subprocess, sys, time
loop = (
    "import os, time\\n"
    "i = 0\\n"
    "while True:\\n"
    "    i += 1\\n"
    "    open('grandchild-%d' % i, 'w').close()\\n"
    "    time.sleep(0.01)\\n"
)
child = subprocess.Popen([sys.executable, "-c", loop])
with open({pids!r} + ".tmp", "w") as f:
    f.write("%d %d" % (os.getpid(), child.pid))
os.replace({pids!r} + ".tmp", {pids!r})
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_leaves_no_folder_and_no_process(tmp_path: Path, signum: int) -> None:
    pids = tmp_path / "pids"
    sdist = make_sdist(
        tmp_path / "dist", "slowbuild", "1.0", {"__init__.py": ""},
        extra=_SLOW_BUILD.format(pids=str(pids)),
    )  # fmt: skip
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp), PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-m", "resolver_hook", "placeholder", "check", str(sdist)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not pids.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pids.exists(), proc.communicate()
        build, grandchild = map(int, pids.read_text().split())
        assert _alive(grandchild)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, out + err
    assert err == "error: interrupted; the check's processes and folder are gone\n"
    assert list(temp.iterdir()) == []
    assert not _alive(build)
    assert not _alive(grandchild)


def test_hostile_placeholder_data_is_not_trusted(tmp_path: Path) -> None:
    # Deeply nested JSON where a resolver-hook placeholder keeps its data: read as data,
    # it is simply not a resolver-hook placeholder; no traceback.
    sdist = make_sdist(
        tmp_path,
        "deep",
        "0.0.1",
        {"__init__.py": "", "_placeholder_data.json": "[" * 100_000 + "]" * 100_000},
    )
    report = check_placeholder(sdist)
    assert _verdicts(report) == [("pip", INSTALLS_SILENTLY), ("uv", INSTALLS_SILENTLY)]


def test_find_links_must_be_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sdist = make_sdist(tmp_path, "x", "1.0", {"__init__.py": ""})
    missing = tmp_path / "no such folder"
    assert main(["placeholder", "check", str(sdist), "--find-links", str(missing)]) == 2
    assert capsys.readouterr().err == f"error: --find-links {missing}: not a folder\n"
