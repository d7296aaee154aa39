"""Tests for `resolver-hook lint` (resolver_hook.publish.lint).

Wheels and sdists are built in tmp_path around the nvcc-built objects of
tests/data/cuda/ (see tests/cudawheels.py); facts behind each check are cited from
docs/facts.md where the check encodes one.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from resolver_hook.binaries.elf import parse_elf
from resolver_hook.binaries.fatbin import parse_fatbin
from resolver_hook.cli import main
from resolver_hook.publish.lint import lint_paths
from tests.cudawheels import CPU, KERNELS, PTX, binary_wheel, fixture, metadata, sdist
from tests.frozen import FROZEN_DIR

REPO = Path(__file__).resolve().parent.parent
OS_INDEP = "Operating System :: OS Independent"
X86 = "manylinux_2_28_x86_64"


def sm100f_only(obj: bytes = KERNELS) -> bytes:
    """``obj`` with every fatbin entry rewritten to the sm_100 family (``f``), like
    TileRT's libtilert_*.so (`strings | grep sm_` finds only sm_100f)."""
    data = bytearray(obj)
    sec = parse_elf(obj).section(".nv_fatbin")
    assert sec is not None
    for entry in parse_fatbin(obj[sec.offset : sec.offset + sec.size]):
        at = sec.offset + entry.offset
        struct.pack_into("<I", data, at + 28, 100)
        flags = (entry.flags & ~0x300000) | 0x200000  # family-specific bit (fatbin.py)
        struct.pack_into("<Q", data, at + 40, flags)
    return bytes(data)


def tilert_like(
    tmp_path: Path,
    tag: str = f"cp312-cp312-{X86}",
    *,
    obj: bytes | None = None,
    version: str = "0.1.5.post2",
    classifiers: tuple[str, ...] = (OS_INDEP,),
) -> Path:
    return binary_wheel(
        tmp_path,
        f"tilert-{version}-{tag}.whl",
        {
            "tilert/__init__.py": b"from ._engine import run\n",
            "tilert/_engine.py": b"run = 1\n",
            "tilert/libtilert_dsv32.so": sm100f_only() if obj is None else obj,
        },
        classifiers=classifiers,
    )


def codes(*paths: Path) -> list[str]:
    findings, errors = lint_paths(paths)
    assert errors == []
    return sorted(f.code for f in findings)


# --- a TileRT-like release ------------------------------------------------------------


def test_tilert_like_wheel_gets_every_warning_one_file_can_support(tmp_path: Path) -> None:
    # One file says what it is for, not what the project lacks (no-aarch64, no-windows,
    # one-python need the release's wheels or its manifest).
    assert codes(tilert_like(tmp_path)) == [
        "cuda13-driver",
        "one-gpu-family",
        "one-wheel",
        "os-independent",
    ]


def test_the_same_wheel_with_a_manifest_gets_the_project_warnings(tmp_path: Path) -> None:
    wheel = tilert_like(tmp_path)
    manifest = tmp_path / "m.toml"
    manifest.write_text(
        'schema = 1\n[package]\nname = "tilert"\n'
        f'[[wheel]]\nurl = "https://e.org/{wheel.name}"\ncuda = ">=13.0"\ngpu = ["sm_100f"]\n'
    )
    assert codes(wheel, manifest) == [
        "cuda13-driver",
        "no-aarch64",
        "no-windows",
        "one-gpu-family",
        "one-python",
        "os-independent",
    ]


def test_one_wheel_speaks_of_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tilert_like(tmp_path, obj=KERNELS, classifiers=())
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert (
        f"note: {path}: this wheel is for {X86} and CPython 3.12 only; one file cannot "
        "tell which other platforms or Pythons the project publishes"
    ) in out
    assert "no aarch64 wheel" not in out
    assert "CPython 3.12 only; every other Python" not in out
    assert f"warning: {path}: this wheel needs runtime 13" in out


def test_no_kernels_for_hopper_or_newer_and_no_ptx(tmp_path: Path) -> None:
    # faiss-gpu-cu12's pattern: sm_70 and sm_80 SASS only (bnb fixtures: sm_75, sm_80).
    old = binary_wheel(
        tmp_path,
        f"old-1.0-cp312-cp312-{X86}.whl",
        {"old/__init__.py": b"x = 1\n", "old/libk.so": fixture("libbnb_cuda12.so")},
    )
    findings, _ = lint_paths([old])
    [f] = [f for f in findings if f.code == "no-current-gpus"]
    assert f.message == (
        "this wheel has no kernels for Hopper or newer, and no PTX: nothing runs on "
        "sm_90 (H100, H200, GH200) or sm_100 (B200/GB200)"
    )
    assert f.evidence == ("kernels sm_75, sm_80",)
    # PTX (compute_89, JIT-compiled on newer GPUs) or SASS for sm_90 clears it.
    cupy = binary_wheel(
        tmp_path,
        f"cp-1.0-cp312-cp312-{X86}.whl",
        {"cp/__init__.py": b"x = 1\n", "cp/libk.so": fixture("libcupylike.so")},
    )
    assert "no-current-gpus" not in codes(cupy)


def test_one_library_per_runtime_is_no_cuda13_driver_warning(tmp_path: Path) -> None:
    # bitsandbytes ships a library per CUDA runtime (11, 12, 13) and loads the one the
    # machine's driver supports: a CUDA 12 driver has a build.
    members = {f"bnb/libbnb_cuda{v}.so": fixture(f"libbnb_cuda{v}.so") for v in (11, 12, 13)}
    wheel = binary_wheel(tmp_path, f"bnb-1.0-py3-none-{X86}.whl", members)
    assert "cuda13-driver" not in codes(wheel)


def test_one_family_names_the_gpus_left_out(tmp_path: Path) -> None:
    # docs/facts.md section 1: sm_100f runs on 10.0 and 10.3 only, not on GB10 (12.1),
    # RTX 50xx (12.0), Jetson Thor (11.0, or 10.1 under CUDA 12.9 naming) or H100 (9.0).
    findings, _ = lint_paths([tilert_like(tmp_path)])
    [f] = [f for f in findings if f.code == "one-gpu-family"]
    assert f.message.startswith(
        "this wheel's GPU kernels cover one family only (sm_10x); left out: "
        "sm_121 (GB10 (DGX Spark)), "
        "sm_120 (RTX 50xx, RTX PRO 6000 Blackwell), sm_110 (Jetson Thor), "
        "sm_101 (Jetson Thor (CUDA 12.9 naming)), sm_90 (H100, H200, GH200), "
        "sm_89 (L4, L40S, RTX 40xx)"
    )
    assert f.evidence == ("kernels compute_100f, sm_100f",)


def test_cli_text_output_of_a_tilert_like_wheel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tilert_like(tmp_path)
    assert main(["lint", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        f"warning: {path}: classifier '{OS_INDEP}' but the builds are platform-specific "
        f"(Classifier: {OS_INDEP}; wheels are tagged {X86})"
    )
    assert lines[1] == (
        "hint: list the systems the wheels are for, e.g. 'Operating System :: POSIX :: Linux'"
    )
    # CUDA 13 runtime -> driver >= 580 (docs/facts.md section 1, minor-version compatibility).
    assert (
        f"warning: {path}: this wheel needs runtime 13, so an NVIDIA driver >= 580; "
        "machines whose driver is older (CUDA 12 drivers, 525.60.13 up to 580, common on "
        "clusters and cloud images) cannot use it (tilert/libtilert_dsv32.so links "
        "libcudart.so.13)"
    ) in lines
    assert all(line.startswith(("warning: ", "note: ", "hint: ")) for line in lines)


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tilert_like(tmp_path)
    other = tilert_like(tmp_path, version="0.1.5.post2+other")
    assert main(["lint", "--json", str(path), str(other)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == []
    by_code = {w["code"]: w for w in doc["warnings"]}
    assert by_code["one-python"] == {
        "file": "tilert (2 inputs)",
        "code": "one-python",
        "message": "wheels for CPython 3.12 only; every other Python finds no build",
        "evidence": ["interpreter tags: cp312"],
        "hint": "build one wheel per supported CPython (cibuildwheel), or abi3 if the "
        "extension can use the limited API",
    }


@pytest.mark.parametrize(
    ("extra", "gone"),
    [
        pytest.param(["cp312-cp312-manylinux_2_28_aarch64"], "no-aarch64", id="aarch64-wheel"),
        pytest.param(["cp312-cp312-win_amd64"], "no-windows", id="windows-wheel"),
        pytest.param([f"cp311-cp311-{X86}"], "one-python", id="second-python"),
    ],
)
def test_each_release_warning_goes_away_when_fixed(
    tmp_path: Path, extra: list[str], gone: str
) -> None:
    paths = [tilert_like(tmp_path)] + [tilert_like(tmp_path, tag) for tag in extra]
    found = codes(*paths)
    assert gone not in found
    assert "one-gpu-family" in found  # the others stay


def test_release_is_judged_together_across_wheels(tmp_path: Path) -> None:
    # One flavour for the sm_100 family, another carrying sm_90a/sm_120: two families.
    one = tilert_like(tmp_path, version="0.1.5")
    two = tilert_like(tmp_path, version="0.1.5+other", obj=KERNELS)
    assert "one-gpu-family" not in codes(one, two)
    assert "one-gpu-family" in codes(one)


def test_abi3_is_not_one_python(tmp_path: Path) -> None:
    assert "one-python" not in codes(tilert_like(tmp_path, f"cp310-abi3-{X86}"))


def test_correct_classifier_and_multi_family_kernels(tmp_path: Path) -> None:
    path = tilert_like(tmp_path, obj=KERNELS, classifiers=("Operating System :: POSIX :: Linux",))
    assert codes(path) == ["cuda13-driver", "one-wheel"]


def test_cuda12_flavour_clears_the_driver_warning(tmp_path: Path) -> None:
    manifest = tmp_path / "m.toml"
    manifest.write_text(
        'schema = 1\n[package]\nname = "x"\n'
        '[[wheel]]\nurl = "https://e.org/x-1.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"\n'
        'cuda = ">=13.0"\ngpu = ["sm_90", "sm_100", "sm_120"]\n'
        '[[wheel]]\nurl = "https://e.org/x-1.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl"\n'
        'cuda = ">=12.0"\ngpu = ["sm_90", "sm_100", "sm_120"]\n'
    )
    assert "cuda13-driver" not in codes(manifest)
    manifest.write_text(manifest.read_text().replace('">=12.0"', '">=13.0"'))
    assert "cuda13-driver" in codes(manifest)


def test_frozen_tilert_manifest(tmp_path: Path) -> None:
    assert codes(FROZEN_DIR / "tilert.toml") == [
        "cuda13-driver",
        "no-aarch64",
        "no-windows",
        "one-gpu-family",
        "one-python",
    ]


def test_pure_python_wheel_is_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = binary_wheel(
        tmp_path,
        "pure-1.0-py3-none-any.whl",
        {"pure/__init__.py": b"x = 1\n", "pure/core.py": b"y = 2\n"},
        classifiers=(OS_INDEP,),
    )
    assert main(["lint", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_cpu_only_linux_wheel_says_nothing_about_gpus(tmp_path: Path) -> None:
    path = binary_wheel(
        tmp_path,
        f"cpu-1.0-cp312-abi3-{X86}.whl",
        {"cpu/__init__.py": b"x = 1\n", "cpu/libcpu.so": CPU},
    )
    assert codes(path) == ["one-wheel"]  # abi3: only the platform is one


# --- placeholders ---------------------------------------------------------------------


def test_tilert_placeholder_wheel_with_empty_init(tmp_path: Path) -> None:
    # docs/facts.md section 4: TileRT 0.0.0.dev0 shipped a 0-byte __init__.py.
    path = binary_wheel(
        tmp_path,
        "tilert-0.0.0.dev0-py3-none-any.whl",
        {"tilert/__init__.py": b""},
        classifiers=(OS_INDEP,),
    )
    findings, _ = lint_paths([path])
    assert [(f.code, f.evidence) for f in findings] == [
        (
            "silent-placeholder",
            (
                "looks like a placeholder: version 0.0.0.dev0, "
                "the package is only tilert/__init__.py",
                "tilert/__init__.py is 0 bytes (empty)",
            ),
        )
    ]


def test_placeholder_beside_real_wheels_is_not_a_build(tmp_path: Path) -> None:
    real = tilert_like(tmp_path, obj=KERNELS, classifiers=())
    fake = binary_wheel(
        tmp_path,
        "tilert-0.0.0.dev0-py3-none-any.whl",
        {"tilert/__init__.py": b""},
        classifiers=(OS_INDEP,),
    )
    # The placeholder's py3/any tags neither hide "one Python" nor add a platform.
    assert codes(real, fake) == [
        "cuda13-driver",
        "no-aarch64",
        "no-windows",
        "one-python",
        "silent-placeholder",
    ]


def test_a_placeholder_wheel_installs_silently_even_when_its_import_raises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/facts.md section 4: pip and uv prefer a wheel and install it without running
    # its code; nvidia-npp-cu13 0.0.0a0 is such a zero-version wheel.
    path = binary_wheel(
        tmp_path,
        "nvidia_npp_cu13-0.0.0a0-py3-none-any.whl",
        {"nvidia_npp_cu13/__init__.py": b"raise ImportError('use nvidia-npp')\n"},
    )
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(
        f"warning: {path}: placeholder wheel installs silently: pip and uv prefer a wheel to "
        "the sdist and install it without running any code, so the message comes only at "
        "import (looks like a placeholder: version 0.0.0a0, the package is only "
        "nvidia_npp_cu13/__init__.py; "
    )


@pytest.mark.parametrize(
    ("version", "summary", "members", "flagged"),
    [
        pytest.param("0.0.1", "", {"x/__init__.py": b""}, True, id="0.0.1-empty-init"),
        pytest.param("1.0", "Reserved name", {}, True, id="reserved-no-code"),
        pytest.param("2.0", "A stub for x", {"x/__init__.py": b'"doc"\n'}, True, id="stub"),
        pytest.param("1.0", "A placeholder engine", {"x/__init__.py": b"a = 1\n",
                     "x/core.py": b"b = 2\n"}, False, id="words-with-code"),
        pytest.param("0.0.1", "", {"x/__init__.py": b"a = 1\n", "x/core.py": b"b = 2\n"},
                     False, id="zero-version-with-code"),
        pytest.param("1.0", "", {"x/__init__.py": b""}, False, id="trivial-code-alone"),
        pytest.param("0.0.1", "", {"x/__init__.py": b"x = 1\n" * 20}, False, id="long-init"),
        pytest.param("0.1.0", "", {"x/__init__.py": b""}, False, id="0.1.0-is-not-zero"),
        pytest.param("0.0.0a0", "reserved name placeholder", {"mod1.py": b"x = 1\n"}, True,
                     id="one-small-top-level-module"),
        pytest.param("1.0", "", {"mod1.py": b"x = 1\n"}, False, id="small-module-alone"),
        pytest.param("0.0.1", "", {"mod1.py": b"x = 1\n" * 20}, False, id="long-module"),
        pytest.param("0.0.1", "", {"x/__init__.py": b"a = 1\n" * 3, "y.py": b"b = 2\n" * 3},
                     False, id="a-few-lines-each-but-not-in-all"),
    ],
)  # fmt: skip
def test_placeholder_needs_trivial_code_and_a_version_or_words(
    tmp_path: Path, version: str, summary: str, members: dict[str, bytes], flagged: bool
) -> None:
    path = binary_wheel(tmp_path, f"x-{version}-py3-none-any.whl", members)
    if summary:  # binary_wheel writes no Summary: add one to METADATA
        import zipfile

        rewritten = tmp_path / "r" / path.name
        rewritten.parent.mkdir()
        with zipfile.ZipFile(path) as old, zipfile.ZipFile(rewritten, "w") as new:
            for info in old.infolist():
                data = old.read(info)
                if info.filename.endswith("/METADATA"):
                    data += f"Summary: {summary}\n".encode()
                new.writestr(info, data)
        path = rewritten
    assert (codes(path) == ["silent-placeholder"]) is flagged


def test_this_projects_own_pyproject_lints_clean(capsys: pytest.CaptureFixture[str]) -> None:
    # Its description says "placeholder"; words alone never decide.
    assert "placeholder" in (REPO / "pyproject.toml").read_text().lower()
    assert main(["lint", str(REPO / "pyproject.toml")]) == 0, capsys.readouterr().out


def test_a_placeholder_pyproject_is_still_found_by_its_tree(tmp_path: Path) -> None:
    (tmp_path / "src" / "tilert").mkdir(parents=True)
    (tmp_path / "src" / "tilert" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(
        _hatchling_pyproject("tilert", "0.0.0.dev0") + 'description = "Placeholder for tilert"\n'
    )
    assert codes(tmp_path / "pyproject.toml") == ["placeholder-backend", "silent-placeholder"]


_ORDINARY = {
    # name: (version, description, files)
    "pyutil": ("2.31.0", "HTTP helpers", {"pyutil/__init__.py": "from .core import get\n",
                                          "pyutil/core.py": "def get():\n    return 1\n"}),
    "onemod": ("0.1.0", "One module", {"onemod.py": "def f():\n    return 2\n"}),
    "templ": ("0.0.1", "Template strings with placeholder substitution",
              {"templ/__init__.py": "from .render import render\n",
               "templ/render.py": "def render(s):\n    return s\n"}),
    "types-thing": ("0.0.1", "Typing stubs for thing", {"thing-stubs/__init__.pyi": "x: int\n"}),
    "biginit": ("0.0.0", "Reserved words checker",
                {"biginit/__init__.py": "".join(f"v{i} = {i}\n" for i in range(12))}),
}  # fmt: skip


def test_ten_ordinary_sdists_and_wheels_lint_clean(tmp_path: Path) -> None:
    from hatchling.builders.sdist import SdistBuilder
    from hatchling.builders.wheel import WheelBuilder

    built: list[Path] = []
    for name, (version, description, files) in _ORDINARY.items():
        project = tmp_path / name
        for rel, text in files.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(text)
        include = sorted({rel.split("/")[0] for rel in files})
        (project / "pyproject.toml").write_text(
            _hatchling_pyproject(name, version)
            + f'description = "{description}"\n'
            + f"[tool.hatch.build.targets.wheel]\ninclude = {include!r}\n"
            + f"[tool.hatch.build.targets.sdist]\ninclude = {include!r}\n"
        )
        for builder in (SdistBuilder, WheelBuilder):
            (artifact,) = builder(str(project)).build(
                directory=str(tmp_path / "dist"), versions=["standard"]
            )
            built.append(Path(artifact))
    assert len(built) == 10
    assert lint_paths(built) == ([], [])


def _hatchling_pyproject(name: str, version: str) -> str:
    return (
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\n'
    )


def test_hatchling_placeholder_sdist_gets_three_warnings(tmp_path: Path) -> None:
    path = sdist(
        tmp_path,
        "tilert",
        "0.0.0.dev0",
        {
            "PKG-INFO": metadata("tilert", "0.0.0.dev0"),
            "pyproject.toml": _hatchling_pyproject("tilert", "0.0.0.dev0"),
            "tilert/__init__.py": "",
        },
    )
    findings, _ = lint_paths([path])
    assert [f.code for f in findings] == [
        "silent-placeholder",
        "placeholder-backend",
        "placeholder-dynamic",
    ]
    assert findings[1].evidence[1] == "[build-system] requires = ['hatchling']"
    assert findings[2].evidence[1] == "PKG-INFO Metadata-Version 2.1"


def test_sdist_placeholder_that_fails_in_setup_py_but_downloads_setuptools(
    tmp_path: Path,
) -> None:
    path = sdist(
        tmp_path,
        "sklearn",
        "0.0.post12",
        {
            "PKG-INFO": metadata(
                "sklearn", "0.0.post12", metadata_version="2.4", dynamic=("Requires-Dist",)
            ),
            "setup.py": "raise SystemExit('use scikit-learn, not sklearn')\n",
            "sklearn/__init__.py": "",
        },
    )
    findings, _ = lint_paths([path])
    assert [f.code for f in findings] == ["placeholder-backend", "placeholder-dynamic"]
    assert findings[0].evidence[1] == (
        "[build-system] requires = ['setuptools (the default when there is no [build-system])']"
    )
    assert findings[1].evidence[1] == "PKG-INFO Dynamic: Requires-Dist"


def test_ordinary_sdist_is_not_a_placeholder(tmp_path: Path) -> None:
    path = sdist(
        tmp_path,
        "real",
        "1.2.0",
        {
            "PKG-INFO": metadata("real", "1.2.0"),
            "pyproject.toml": _hatchling_pyproject("real", "1.2.0"),
            "src/real/__init__.py": "from .core import main\n",
            "src/real/core.py": "main = 1\n",
        },
    )
    assert codes(path) == []


def test_our_generated_placeholders_lint_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = Path(__file__).parent / "data" / "tilert.toml"
    offline = ["--version", "0.0.0.dev0"]
    assert main(["placeholder", "build", str(manifest), "-o", str(tmp_path), *offline]) == 0
    assert main(["placeholder", "build", "--retired-name", "sklearn", "--replacement",
                 "scikit-learn", "-o", str(tmp_path), *offline]) == 0  # fmt: skip
    built = sorted(tmp_path.iterdir())
    assert [p.name for p in built] == ["sklearn-0.0.0.dev0.tar.gz", "tilert-0.0.0.dev0.tar.gz"]
    capsys.readouterr()
    assert main(["lint", *map(str, built)]) == 0, capsys.readouterr().out


# --- pyproject.toml -------------------------------------------------------------------


def test_pyproject_os_independent_with_native_code_in_the_tree(tmp_path: Path) -> None:
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "k.cu").write_text("__global__ void k() {}\n")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        _hatchling_pyproject("tilert", "0.1.5") + f'classifiers = ["{OS_INDEP}"]\n'
    )
    findings, _ = lint_paths([pyproject])
    assert [(f.code, f.evidence[1]) for f in findings] == [
        ("os-independent", "the tree has native code (csrc/k.cu)")
    ]
    (tmp_path / "csrc" / "k.cu").unlink()
    assert codes(pyproject) == []


# --- unreadable input -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        pytest.param(
            "broken-1.0-py3-none-any.whl",
            b"garbage",
            "error: broken-1.0-py3-none-any.whl: cannot read the wheel: File is not a zip file",
            id="not-a-zip",
        ),
        pytest.param("x-1.0.tar.gz", b"garbage", "cannot read the sdist", id="not-a-tar"),
        pytest.param("notes.txt", b"hello", "not a wheel (.whl), sdist (.tar.gz)", id="unknown"),
        pytest.param(
            "other.toml", b"[tool.x]\na = 1\n", "neither a pyproject.toml", id="other-toml"
        ),
        pytest.param("bad.toml", b"[project\n", "not valid TOML", id="bad-toml"),
    ],
)
def test_unreadable_input_is_one_error_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, message: str
) -> None:
    bad = tmp_path / name
    bad.write_bytes(content)
    good = tilert_like(tmp_path)
    assert main(["lint", str(bad), str(good)]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith("error: ")
    assert message in line
    assert "one-gpu-family" not in captured.out  # text output, not codes ...
    assert "GPU kernels cover one family only" in captured.out  # ... and the rest is linted


def test_damaged_package_file_is_one_error(tmp_path: Path) -> None:
    # scan skips members under 16 bytes; lint reads every __init__.py, and zipfile's
    # NotImplementedError (compression method 99 here) must not escape as a traceback.
    import zipfile

    path = tmp_path / "dam-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("dam/__init__.py", "x = 1\n")
        zf.writestr("dam-1.0.dist-info/METADATA", metadata("dam", "1.0"))
    raw = bytearray(path.read_bytes())
    raw[8] = 99  # the first local header, then its central directory entry
    raw[bytes(raw).index(b"PK\x01\x02") + 10] = 99
    path.write_bytes(bytes(raw))
    findings, errors = lint_paths([path])
    assert findings == []
    assert [e.message for e in errors] == [
        "dam-1.0-py3-none-any.whl: cannot read the wheel: That compression method is not supported"
    ]


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(tmp_path / "nope.whl")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nope.whl'}: no such file\n"


def test_cuda13_from_ptx_isa_when_no_runtime_is_linked(tmp_path: Path) -> None:
    path = binary_wheel(tmp_path, f"p-1.0-cp312-abi3-{X86}.whl", {"p/libptx.so": PTX})
    findings, _ = lint_paths([path])
    [f] = [f for f in findings if f.code == "cuda13-driver"]
    assert f.evidence == ("PTX ISA 9.0, no CUDA runtime linked",)


# --- a saved index page: the project's wheels -----------------------------------------


def _page(tmp_path: Path, *filenames: str) -> Path:
    links = "".join(f'<a href="https://e.org/{f}#sha256={"0" * 64}">{f}</a>\n' for f in filenames)
    page = tmp_path / "tilert.html"
    page.write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    return page


def test_a_saved_page_gives_the_project_wide_checks(tmp_path: Path) -> None:
    wheel = tilert_like(tmp_path, obj=KERNELS, classifiers=())
    page = _page(tmp_path, wheel.name, "tilert-0.1.5.post2.tar.gz")
    # The one wheel file alone: about itself. With the project's page: about the project.
    assert "no-aarch64" not in codes(wheel)
    assert codes(wheel, page) == ["cuda13-driver", "no-aarch64", "no-windows", "one-python"]


def test_a_page_listing_aarch64_and_windows_wheels_clears_those(tmp_path: Path) -> None:
    wheel = tilert_like(tmp_path, obj=KERNELS, classifiers=())
    page = _page(
        tmp_path,
        wheel.name,
        "tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_aarch64.whl",
        "tilert-0.1.5.post2-cp313-cp313-win_amd64.whl",
    )
    assert codes(wheel, page) == ["cuda13-driver"]


def test_a_page_of_no_wheels_is_an_error(tmp_path: Path) -> None:
    page = _page(tmp_path, "tilert-0.1.5.post2.tar.gz")
    findings, errors = lint_paths([page])
    assert findings == []
    assert [e.message for e in errors] == [
        f"{page}: a page of one project's wheels expected; projects: none"
    ]
