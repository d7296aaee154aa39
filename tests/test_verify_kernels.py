"""Reading the flavoured wheels' kernels before they are installed, with real pip and uv.

Two wheels carry nvcc-built libraries (tests/cudawheels.py): ``kgood`` holds
``libkernels.so`` (SASS sm_90a, sm_100f, sm_120 + PTX compute_120), ``kbad`` holds
``libptx.so`` (SASS sm_80 + PTX compute_100f), ``knone`` a CPU-only ``libcpu.so``. All
three manifests claim Blackwell GPUs; on an RTX 50 (sm_120) the scan finds that kbad's
kernels run on none of them, and that knone holds no GPU code at all.

``kfwd`` and ``kcarry`` are index flavours whose manifests verify release 1.0 only; the
page also serves 1.1, planned with 1.0's kernel list carried forward (assumed): kfwd
1.1 carries the same libraries, kcarry 1.1 only kbad's. Their wheels are read by
default on a machine whose GPU is detected (the fake NVML module), not on a target.
``krange`` is an index flavour for every release on its page from 1.0 on (1.0, 1.1);
``kplain`` a plain build on the simple index, left to the installer.
The index serves each wheel's core metadata apart (PEP 658/714), as PyPI and
download.pytorch.org do: an installer's resolution reads the ``.metadata`` file, and
only a download meant to install fetches the wheel.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from packaging.utils import canonicalize_name

from resolver_hook.install.kernels import _as_file, fetch_options, scan_kernels, terminal_lines
from resolver_hook.resolve import PackagePlan
from tests import test_install_proof
from tests.cudawheels import CPU, KERNELS, PTX
from tests.installenv import PY, installed, venv_for, wheel_entry, write_manifest
from tests.paths import FAKE_PYNVML, REPO, fake_nvml_env
from tests.test_install import hook, versions
from tests.test_install_proof import IDS, INSTALLERS, _venv
from tests.wheelfactory import BuiltWheel, LoopbackIndex, build_wheel

pytestmark = pytest.mark.integration

# pip 23.2.1 and the newest pip from the package registry, as the proof tests run them.
pip_wheel = test_install_proof.pip_wheel

RTX50 = f"linux-x86_64-py{PY}-cuda13.0-sm120"
# The fake NVML module's RTX 5090 (tests/fake_nvml.py), for a detected machine.
DETECTED_RTX50 = {
    "driver": "580.95.05",
    "cuda": 13000,
    "gpus": [{"name": "NVIDIA GeForce RTX 5090", "cc": [12, 0], "mem": 32 * 1024**3}],
}


@pytest.fixture(scope="module")
def kernel_index(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, LoopbackIndex, dict[str, BuiltWheel]]]:
    root = tmp_path_factory.mktemp("kernels")
    out = root / "built"
    wheels: dict[str, BuiltWheel] = {
        "kgood": build_wheel(out, "kgood", "1.0+cu130", binaries={"kgood/libkernels.so": KERNELS}),
        "kbad": build_wheel(out, "kbad", "1.0+cu130", binaries={"kbad/libptx.so": PTX}),
        # Claims Blackwell kernels, holds a CPU-only library: no GPU code at all.
        "knone": build_wheel(out, "knone", "1.0+cu130", binaries={"knone/libcpu.so": CPU}),
    }
    carried: dict[str, BuiltWheel] = {}
    for name, newer in (("kfwd", KERNELS), ("kcarry", PTX)):
        carried[f"{name}-1.0"] = build_wheel(
            out, name, "1.0+cu130", binaries={f"{name}/libkernels.so": KERNELS}
        )
        carried[f"{name}-1.1"] = build_wheel(
            out, name, "1.1+cu130", binaries={f"{name}/libkernels.so": newer}
        )
    for version in ("1.0", "1.1"):
        carried[f"krange-{version}"] = build_wheel(
            out, "krange", version, binaries={"krange/libkernels.so": KERNELS}
        )
    plain = build_wheel(out, "kplain", "1.0", binaries={"kplain/libkernels.so": KERNELS})
    index = LoopbackIndex(root / "index", core_metadata=True)
    for w in wheels.values():
        index.add(w, simple=False)
    for w in carried.values():
        index.add(w, simple=False, flavour="cu130")
    index.add(plain)
    manifests = root / "manifests"
    manifests.mkdir()
    with index.serving():
        for name, w in wheels.items():
            write_manifest(
                manifests, name, "wheel", wheel_entry(index, w, ">=13.0", ["sm_100", "sm_120"])
            )
        for name in ("kfwd", "kcarry"):
            entry = {
                "url": index.links_url("cu130", name),
                "version": "1.0+cu130",
                "cuda": ">=13.0",
                "gpu": ["sm_100", "sm_120"],
                "checked": "2026-11-30",
            }
            write_manifest(manifests, name, "index", entry)
        gpus = {"cuda": ">=13.0", "gpu": ["sm_100", "sm_120"]}
        page = {"url": index.links_url("cu130", "krange"), "versions": ">=1.0", **gpus}
        write_manifest(manifests, "krange", "index", page)
        write_manifest(manifests, "kplain", "index", {"version": "1.0", **gpus})
        yield manifests, index, {**wheels, **carried, "kplain": plain}


def _run(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]],
    venv: Path,
    tmp: Path,
    *names: str,
    tool: str = "pip",
    flags: tuple[str, ...] = ("--verify-kernels", "--target", RTX50),
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    manifests, index, _ = kernel_index
    command = ["install"] if tool == "pip" else ["pip", "install"]
    proc = hook(
        tool,
        *flags,
        *command,
        "--index-url",
        index.simple_url,
        *names,
        venv=venv,
        manifests=manifests,
        env={"RESOLVER_HOOK_CACHE_DIR": str(tmp / "cache"), **(env or {})},
    )
    return proc.returncode, proc.stderr


def _detected(tmp: Path) -> dict[str, str]:
    """A child that detects an RTX 5090 (the fake NVML module) and reads the index pages."""
    return {
        **fake_nvml_env(DETECTED_RTX50, os.pathsep.join([FAKE_PYNVML, str(REPO)])),
        "RESOLVER_HOOK_OFFLINE": "0",
    }


def _installed_sha256(venv: Path, name: str) -> str:
    """The sha256 of the file the installer installed, as it recorded it (PEP 610's
    direct_url.json: pip's ``archive_info.hashes``, uv's URL fragment)."""
    site = next((venv / "lib").glob("python*/site-packages"))
    (info,) = site.glob(f"{name}-*.dist-info")
    direct = json.loads((info / "direct_url.json").read_text())
    assert unquote(direct["url"]).startswith("file://")
    sha = direct.get("archive_info", {}).get("hashes", {}).get("sha256")
    return str(sha or direct["url"].split("#sha256=", 1)[1])


def test_a_wheel_whose_kernels_run_on_no_visible_gpu_is_refused(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]], tmp_path: Path
) -> None:
    venv = venv_for("pip", tmp_path / "venv")
    before = versions(venv)
    code, err = _run(kernel_index, venv, tmp_path, "kbad")
    assert code == 1, err
    line = next(x for x in err.splitlines() if x.startswith("error: kbad-1.0+cu130"))
    assert "kbad/libptx.so carries " in line
    assert "none of which runs on sm_120" in line
    assert {"sm_80", "compute_100f"} <= set(
        line.split(" carries ")[1].split(", none")[0].split(", ")
    )
    assert "nothing was installed" in err
    assert versions(venv) == before


def test_a_wheel_claiming_kernels_that_holds_no_gpu_code_is_refused_naming_the_file(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]], tmp_path: Path
) -> None:
    venv = venv_for("pip", tmp_path / "venv")
    before = versions(venv)
    code, err = _run(kernel_index, venv, tmp_path, "knone")
    assert code == 1, err
    filename = kernel_index[2]["knone"].path.name
    assert (
        f"error: knone 1.0+cu130: {filename} holds no GPU code (no SASS or PTX in any of "
        "its files), but its manifest says it carries sm_100, sm_120"
    ) in err, err
    assert "nothing was installed" in err
    assert versions(venv) == before


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_the_file_scanned_is_the_file_installed_from_one_download(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]], tmp_path: Path, tool: str
) -> None:
    _, index, wheels = kernel_index
    venv = venv_for(tool, tmp_path / "venv")
    asked = index.gets(wheels["kgood"])
    code, err = _run(kernel_index, venv, tmp_path, "kgood", tool=tool)
    assert code == 0, err
    assert versions(venv)["kgood"] == "1.0+cu130"
    assert "kernels read: kgood 1.0+cu130 runs on every visible GPU" in err
    # One download of the wheel in all: the dry run and the install read that file.
    assert index.gets(wheels["kgood"]) - asked == 1
    # The scan is cached by the file's sha256, private to this user, and the file
    # installed has that sha256 (the file the server served).
    (entry,) = (tmp_path / "cache" / "kernel-scans").glob("*.json")
    assert entry.stat().st_mode & 0o777 == 0o600
    scanned = json.loads(entry.read_text())["sha256"]
    assert entry.name == f"{scanned}.json"
    assert _installed_sha256(venv, "kgood") == scanned
    assert scanned == hashlib.sha256(wheels["kgood"].path.read_bytes()).hexdigest()
    if tool == "uv":
        assert "uv has no download command: pip fetches the wheels to read, once" in err


@pytest.mark.parametrize(("tool", "pip"), INSTALLERS, ids=IDS)
def test_an_index_flavour_is_read_and_installed_from_one_download(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]],
    tmp_path: Path,
    pip_wheel: Callable[[str], Path],
    tool: str,
    pip: str,
) -> None:
    """A build the plan pins by version on its page (no URL in the plan): the file is
    fetched once, read, and that very file is installed, whatever the pip (23.2.1's dry
    run fetches every wheel it resolves, metadata or not; newer ones only the metadata)."""
    _, index, wheels = kernel_index
    wheel = wheels["kfwd-1.0"]
    venv = _venv(tmp_path, tool, pip_wheel, pip)
    asked, meta = index.gets(wheel), index.metadata_gets(wheel)
    code, err = _run(kernel_index, venv, tmp_path, "kfwd==1.0+cu130", tool=tool)
    assert code == 0, err
    assert "kernels read: kfwd 1.0+cu130 runs on every visible GPU" in err
    assert versions(venv)["kfwd"] == "1.0+cu130"
    assert index.gets(wheel) - asked == 1
    # Its core metadata was read from the page's metadata file, once: by the download.
    assert index.metadata_gets(wheel) - meta == 1
    (entry,) = (tmp_path / "cache" / "kernel-scans").glob("*.json")
    scanned = json.loads(entry.read_text())["sha256"]
    assert _installed_sha256(venv, "kfwd") == scanned == wheel.sha256


def test_a_release_range_is_read_from_the_version_uvs_dry_run_names(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]], tmp_path: Path
) -> None:
    """uv's dry run names the version it takes from the page, not the file: that
    version is fetched from the plan's page once, read, and that file installed."""
    _, index, wheels = kernel_index
    wheel = wheels["krange-1.1"]
    venv = venv_for("uv", tmp_path / "venv")
    asked = index.gets(wheel)
    code, err = _run(kernel_index, venv, tmp_path, "krange", tool="uv")
    assert code == 0, err
    assert "kernels read: krange 1.1 runs on every visible GPU" in err
    assert versions(venv)["krange"] == "1.1"
    assert index.gets(wheel) - asked == 1
    assert _installed_sha256(venv, "krange") == wheel.sha256


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_a_build_left_to_the_installer_is_read_or_named_unread(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]], tmp_path: Path, tool: str
) -> None:
    """pip's report names the file of a build left to it (read); uv's dry run names a
    version on the user's own index, which only uv reads: said, never skipped silently."""
    _, _, wheels = kernel_index
    venv = venv_for(tool, tmp_path / "venv")
    code, err = _run(kernel_index, venv, tmp_path, "kplain", tool=tool)
    assert code == 0, err
    assert versions(venv)["kplain"] == "1.0"
    unread = (
        "resolver-hook: note: --verify-kernels: kernels not read: kplain 1.0 (uv names no "
        "file for it, and no page of the plan serves it)"
    )
    if tool == "pip":
        assert "kernels read: kplain 1.0 runs on every visible GPU" in err
        assert _installed_sha256(venv, "kplain") == wheels["kplain"].sha256
        assert "kernels not read" not in err
    else:
        assert unread in err.splitlines()
        assert "kernels read" not in err
        assert not (tmp_path / "cache" / "kernel-scans").exists()


def test_an_assumed_kernel_list_is_read_by_default_on_a_detected_gpu(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]], tmp_path: Path
) -> None:
    _, index, wheels = kernel_index
    venv = venv_for("pip", tmp_path / "venv")
    asked = index.gets(wheels["kfwd-1.1"])
    code, err = _run(kernel_index, venv, tmp_path, "kfwd", flags=(), env=_detected(tmp_path))
    assert code == 0, err
    said = (
        "resolver-hook: kfwd 1.1+cu130: kernels assumed from 1.0+cu130, checked 2026-11-30: "
        "its wheel is read before it is installed ('--no-verify-kernels' skips this)"
    )
    assert said in err.splitlines()
    assert "kernels read: kfwd 1.1+cu130 runs on every visible GPU" in err
    assert versions(venv)["kfwd"] == "1.1+cu130"
    assert index.gets(wheels["kfwd-1.1"]) - asked == 1
    assert _installed_sha256(venv, "kfwd") == wheels["kfwd-1.1"].sha256


def test_an_assumed_kernel_list_that_does_not_hold_is_refused_unless_opted_out(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]], tmp_path: Path
) -> None:
    venv = venv_for("pip", tmp_path / "venv")
    before = versions(venv)
    detected = _detected(tmp_path)
    code, err = _run(kernel_index, venv, tmp_path, "kcarry", flags=(), env=detected)
    assert code == 1, err
    assert "error: kcarry-1.1+cu130-py3-none-any.whl: kcarry/libkernels.so carries " in err
    assert "hint: pick another build" in err
    assert versions(venv) == before
    flags = ("--no-verify-kernels",)
    code, err = _run(kernel_index, venv, tmp_path, "kcarry", flags=flags, env=detected)
    assert code == 0, err
    assert "read before it is installed" not in err
    assert "kernels read" not in err
    assert installed(venv / "bin" / "python")["kcarry"] == "1.1+cu130"


def test_a_target_machine_reads_no_assumed_kernel_list(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]], tmp_path: Path
) -> None:
    """A described machine has no GPU to hold the kernels to: the plan line says
    'assumed', as before, and nothing is read."""
    venv = venv_for("pip", tmp_path / "venv")
    env = {"RESOLVER_HOOK_OFFLINE": "0"}
    code, err = _run(kernel_index, venv, tmp_path, "kcarry", flags=("--target", RTX50), env=env)
    assert code == 0, err
    assert "kernels assumed from 1.0+cu130" in err
    assert "kernels read" not in err
    assert not (tmp_path / "cache" / "kernel-scans").exists()


def test_doctor_holds_an_installed_wheel_to_its_cached_scan(
    kernel_index: tuple[Path, LoopbackIndex, dict[str, BuiltWheel]], tmp_path: Path
) -> None:
    """kbad's kernels run on a B200 (PTX compute_100f), not on an RTX 50, though its
    manifest claims both: once its file was read, doctor says so."""
    manifests, _, wheels = kernel_index
    venv = venv_for("pip", tmp_path / "venv")
    b200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"
    code, err = _run(
        kernel_index, venv, tmp_path, "kbad", flags=("--verify-kernels", "--target", b200)
    )
    assert code == 0, err
    sha = wheels["kbad"].sha256

    def doctor(target: str, cache: str = "cache") -> tuple[int, list[str]]:
        proc = hook(
            "doctor",
            "--python",
            str(venv / "bin" / "python"),
            "--target",
            target,
            manifests=manifests,
            # Whole lines to compare: doctor fits its report to the width (80 in a pipe).
            env={"RESOLVER_HOOK_CACHE_DIR": str(tmp_path / cache), "COLUMNS": "1000"},
        )
        return proc.returncode, proc.stdout.splitlines()

    code, lines = doctor(b200)
    assert code == 0, lines
    assert (
        f"        kernels: read from the installed wheel (sha256 {sha[:12]}): 1 library with "
        "kernels, each runs on every visible GPU"
    ) in lines
    code, lines = doctor(RTX50)
    assert code == 1, lines
    (line,) = [x for x in lines if x.startswith("fail    kbad 1.0+cu130: ")]
    assert f"the installed wheel (sha256 {sha[:12]}): kbad/libptx.so carries " in line
    assert "none of which runs on sm_120" in line
    # Without the scan (another cache), the manifest's claim is all doctor has.
    code, lines = doctor(RTX50, cache="empty")
    assert code == 0, lines
    assert not any(x.lstrip().startswith("kernels:") for x in lines)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_line_per_wheel_read_only_on_a_terminal(tmp_path: Path) -> None:
    assert terminal_lines(io.StringIO()) is None  # a pipe or a log: nothing extra
    stream = _Terminal()
    say = terminal_lines(stream)
    assert say is not None
    w = build_wheel(tmp_path, "kgood", "1.0+cu130", binaries={"kgood/libkernels.so": KERNELS})
    cache = tmp_path / "cache"
    objects = scan_kernels(w.sha256, w.path, cache, say)
    size = w.path.stat().st_size / 1e6
    line = f"resolver-hook: reading kernels of {w.filename} ({size:.1f} MB)...\n"
    assert stream.getvalue() == line
    ((library, targets),) = objects
    assert library == "kgood/libkernels.so"
    assert set(targets) == {"sm_90a", "sm_100f", "sm_120", "compute_120"}
    # The second time the scan comes from the cache: nothing is read, nothing said.
    assert scan_kernels(w.sha256, w.path, cache, say) == objects
    assert stream.getvalue() == line


def test_a_build_fetched_by_version_takes_the_options_that_choose_its_file() -> None:
    """``pip download name==version`` chooses the file as the install would: with the
    user's pages and binary options; a URL download takes only how to fetch."""
    given = ["--index-url", "https://mirror/simple", "-f", "./wheels", "--no-index"]
    given += ["--only-binary=:all:", "--proxy", "http://proxy:3128", "--upgrade", "-q"]
    fetch = ["--index-url", "https://mirror/simple", "--proxy", "http://proxy:3128"]
    assert fetch_options("pip", given) == fetch
    assert fetch_options("pip", given, choice=True) == [
        "--index-url",
        "https://mirror/simple",
        "-f",
        "./wheels",
        "--no-index",
        "--only-binary=:all:",
        "--proxy",
        "http://proxy:3128",
    ]
    assert fetch_options("uv", given, choice=True) == []  # another program's options


def test_a_build_pinned_by_version_is_named_by_its_file_with_its_extras_and_marker() -> None:
    uri = "file:///tmp/w/kfwd-1.0%2Bcu130-py3-none-any.whl#sha256=" + "a" * 64
    p = PackagePlan(
        name=canonicalize_name("kfwd"),
        action="rewrite",
        reason="fits",
        version="1.0+cu130",
        line='kfwd[fast]==1.0+cu130 ; python_version >= "3.10"',
        constraint="kfwd==1.0+cu130",
    )
    new = _as_file(p, uri)
    assert new.line == f'kfwd[fast] @ {uri} ; python_version >= "3.10"'
    assert new.constraint == f"kfwd @ {uri}"
    assert (new.version, new.name) == (p.version, p.name)
