"""The manifest `scan` (and `manifest import`) writes makes
`placeholder build` and `plan` work unchanged.

Wheels are zipped around the nvcc-built objects in tests/data/cuda/ (tests/cudawheels.py
says what each holds); the manifests go through the real loader, the pure resolver and
the placeholder generator, with no adapter in between.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.host import parse_target
from resolver_hook.manifest import Manifest, load_manifest
from resolver_hook.resolve import Plan, resolve
from tests.cudawheels import KERNELS, PTX, TORCHEXT, binary_wheel

PREFIX = "https://example.org/wheels/"
WHEEL = "tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_x86_64.whl"
PAGES = Path(__file__).parent / "data" / "index"


def _scan_to_file(tmp_path: Path, *wheels: Path) -> Path:
    out = tmp_path / "m.toml"
    code = main(["scan", *map(str, wheels), "--url-prefix", PREFIX, "-o", str(out)])
    assert code == 0
    return out


def _scan_to_manifest(tmp_path: Path, *wheels: Path) -> Manifest:
    return load_manifest(_scan_to_file(tmp_path, *wheels))


def _plan(manifest: Manifest, target: str, req: str = "tilert") -> Plan:
    return resolve([req], {manifest.name: manifest}, parse_target(target))


@pytest.fixture
def scanned(tmp_path: Path) -> Manifest:
    return _scan_to_manifest(tmp_path, binary_wheel(tmp_path, WHEEL))


def test_scanned_manifest_loads_with_the_kernels_of_the_objects(scanned: Manifest) -> None:
    [wheel] = scanned.wheels
    assert wheel.url == PREFIX + WHEEL
    assert str(wheel.needs.cuda) == ">=13.0"
    assert sorted(str(t) for t in wheel.needs.gpu) == sorted(
        ["sm_90a", "sm_100f", "sm_120", "compute_120"]
    )
    assert wheel.needs.requires == ()


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("linux-x86_64-py312-cuda13.0-sm90", id="H100-by-sm_90a"),
        pytest.param("linux-x86_64-py312-cuda13.0-sm100", id="B200-by-sm_100f"),
        pytest.param("linux-x86_64-py312-cuda13.0-sm103", id="B300-by-sm_100f"),
        pytest.param("linux-x86_64-py312-cuda13.0-sm121", id="GB10-by-sm_120"),
    ],
)
def test_plan_rewrites_to_the_scanned_url_where_kernels_cover(
    scanned: Manifest, target: str
) -> None:
    plan = _plan(scanned, target)
    pkg = plan.package("tilert")
    assert pkg is not None
    assert (pkg.action, pkg.url) == ("rewrite", PREFIX + WHEEL)
    assert pkg.sha256 == scanned.wheels[0].sha256
    assert plan.requirements == (f"tilert @ {PREFIX}{WHEEL}#sha256={pkg.sha256}",)


@pytest.mark.parametrize(
    ("target", "words"),
    [
        # sm_90a is arch-specific: exactly 9.0; nothing here covers 8.x
        # (docs/facts.md section 1, "What a compiled kernel runs on").
        pytest.param(
            "linux-x86_64-py312-cuda13.0-sm89", "do not run on L4, L40S, RTX 40xx (sm_89)", id="L4"
        ),
        pytest.param("linux-x86_64-py312-cuda13.0-sm80", "do not run on A100 (sm_80)", id="A100"),
        # libcudart.so.13 -> driver CUDA >= 13.0 (minor-version compatibility).
        pytest.param("linux-x86_64-py312-cuda12.8-sm100", "12.8", id="old-driver"),
        pytest.param("linux-aarch64-py312-cuda13.0-sm121", "aarch64", id="aarch64"),
    ],
)
def test_plan_refuses_targets_the_scanned_wheel_does_not_cover(
    scanned: Manifest, target: str, words: str
) -> None:
    pkg = _plan(scanned, target).package("tilert")
    assert pkg is not None
    assert pkg.action == "error"
    assert words in pkg.reason + " ".join(r.reason for r in pkg.rejected)


def test_cli_plan_with_the_scanned_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _scan_to_file(tmp_path, binary_wheel(tmp_path, WHEEL))
    capsys.readouterr()
    target = "linux-x86_64-py312-cuda13.0-sm89"
    assert main(["plan", "tilert", "--manifest", str(out), "--target", target]) == 1
    err = capsys.readouterr().err
    assert "error: tilert: no build of tilert fits this machine" in err
    assert "do not run on L4, L40S, RTX 40xx (sm_89)" in err


def test_scanned_torch_coupling_is_a_resolver_coupling(tmp_path: Path) -> None:
    wheel = binary_wheel(
        tmp_path,
        "tilert-0.1.5.post2+torch2130cu130-cp312-cp312-manylinux_2_28_x86_64.whl",
        {"tilert/libkernels.so": KERNELS, "tilert/_C.so": TORCHEXT},
    )
    manifest = _scan_to_manifest(tmp_path, wheel)
    assert [str(r) for r in manifest.wheels[0].needs.requires] == ["torch==2.13.0"]
    pkg = _plan(manifest, "linux-x86_64-py312-cuda13.0-sm100").package("tilert")
    assert pkg is not None
    assert pkg.action == "rewrite"
    assert "couples with torch==2.13.0" in pkg.reason


def test_scanned_ptx_only_object_reaches_newer_gpus_by_jit(tmp_path: Path) -> None:
    # libptx.so: sm_80 SASS and compute_100f PTX (family PTX: 10.x only).
    wheel = binary_wheel(
        tmp_path, "ptxpkg-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", {"ptxpkg/libptx.so": PTX}
    )
    manifest = _scan_to_manifest(tmp_path, wheel)
    fits = {
        t: _plan(manifest, f"linux-x86_64-py312-cuda13.0-{t}", "ptxpkg").package("ptxpkg")
        for t in ("sm80", "sm86", "sm90", "sm103", "sm120")
    }
    assert {t: p.action for t, p in fits.items() if p is not None} == {
        "sm80": "rewrite",
        "sm86": "rewrite",
        "sm90": "error",
        "sm103": "rewrite",
        "sm120": "error",
    }


def _sdist_member(sdist: Path, suffix: str) -> str:
    with tarfile.open(sdist) as tar:
        [member] = [m for m in tar.getmembers() if m.name.endswith(suffix)]
        handle = tar.extractfile(member)
        assert handle is not None
        return handle.read().decode()


def test_placeholder_build_from_scanned_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _scan_to_file(tmp_path, binary_wheel(tmp_path, WHEEL))
    offline = ["--version", "0.0.0.dev0"]
    assert main(["placeholder", "build", str(out), "-o", str(tmp_path / "dist"), *offline]) == 0
    sdist = tmp_path / "dist" / "tilert-0.0.0.dev0.tar.gz"
    assert str(sdist) in capsys.readouterr().out
    data = json.loads(_sdist_member(sdist, "/_placeholder_data.json"))
    [flavour] = data["flavours"]
    assert (flavour["url"], flavour["cuda"]) == (PREFIX + WHEEL, ">=13.0")
    assert sorted(flavour["gpu"]) == sorted(["sm_90a", "sm_100f", "sm_120", "compute_120"])
    assert data["downloads"] == PREFIX
    # The PyPI page names the kernel families in words.
    pkg_info = _sdist_member(sdist, "/PKG-INFO")
    for words in (
        "H100, H200, GH200",
        "B200/GB200, B300/GB300",
        "GB10 \\(DGX Spark\\)",
        "driver 580 or newer",
    ):
        assert words in pkg_info


# --- manifest import -------------------------------------------------------------------

BASE = "https://pypi.example.org/simple/tilert/"
CU130 = "https://pypi.example.org/files/tilert-0.1.5%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl"


@pytest.fixture
def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """tests/data/index/simple-tilert.html saved from BASE; its links are relative."""
    page = tmp_path / "saved.html"
    shutil.copy(PAGES / "simple-tilert.html", page)
    out = tmp_path / "imported.toml"
    code = main(
        [
            "manifest",
            "import",
            str(page),
            "--base-url",
            BASE,
            "-o",
            str(out),
            "--gpu",
            "cu130=sm_100f,sm_120",
            "--gpu",
            "cu126=sm_90",
        ]
    )
    assert code == 0, capsys.readouterr().err
    return out


def test_imported_manifest_resolves_against_the_base_url(imported: Path) -> None:
    manifest = load_manifest(imported)
    assert manifest.downloads == BASE
    assert manifest.wheels[0].url == CU130
    pkg = _plan(manifest, "linux-x86_64-py312-cuda13.0-sm120").package("tilert")
    assert pkg is not None
    assert (pkg.action, pkg.url, pkg.sha256) == ("rewrite", CU130, "a" * 64)
    # A CUDA 12.8 driver gets the cu126 build, whose kernels are sm_90.
    pkg = _plan(manifest, "linux-x86_64-py312-cuda12.8-sm90").package("tilert")
    assert pkg is not None
    assert pkg.action == "rewrite"
    assert pkg.url is not None
    assert "cu126" in pkg.url
    pkg = _plan(manifest, "linux-x86_64-py312-cuda12.8-sm120").package("tilert")
    assert pkg is not None
    assert pkg.action == "error"
    assert any("RTX 50xx, RTX PRO 6000 Blackwell (sm_120)" in r.reason for r in pkg.rejected)


def test_placeholder_build_from_imported_manifest(imported: Path, tmp_path: Path) -> None:
    offline = ["--version", "0.0.0.dev0"]
    assert (
        main(["placeholder", "build", str(imported), "-o", str(tmp_path / "dist"), *offline]) == 0
    )
    data = json.loads(
        _sdist_member(tmp_path / "dist" / "tilert-0.0.0.dev0.tar.gz", "/_placeholder_data.json")
    )
    assert {f["url"] for f in data["flavours"]} >= {CU130}
    assert data["downloads"] == BASE


def test_import_of_a_saved_page_without_base_url_says_why_it_will_not_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m.toml"
    assert main(["manifest", "import", str(PAGES / "simple-tilert.html"), "-o", str(out)]) == 0
    assert "pass --base-url with the address the page came from" in capsys.readouterr().err
    assert main(["plan", "tilert", "--manifest", str(out)]) == 2
    assert "is a file: URL, not https" in capsys.readouterr().err


def test_base_url_must_be_https(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "manifest",
            "import",
            str(PAGES / "simple-tilert.html"),
            "--base-url",
            "http://example.org/simple/tilert/",
        ]
    )
    assert code == 2
    assert "only https URLs" in capsys.readouterr().err
