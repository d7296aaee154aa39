"""OS/arch words, platform tags and Python/ABI words: one copy.

resolver_hook/portable/platforms.py is the only place these facts live; the profile,
the resolver and the placeholder runtime all read it. Wheel-tag facts: PEP 425, PEP
600, PEP 656; free-threaded CPython: docs/facts.md section 3.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resolver_hook.cli import main
from resolver_hook.host.detect import detect_host, parse_target
from resolver_hook.manifest import parse_manifest
from resolver_hook.portable import platforms
from resolver_hook.publish.placeholder.render import runtime
from resolver_hook.resolve import resolve
from tests.fakeproc import no_programs

WIN32_URL = "https://example.org/w/pkg-1.0-cp312-cp312-win32.whl"
AMD64_URL = "https://example.org/w/pkg-1.0-cp312-cp312-win_amd64.whl"
PKG = parse_manifest(
    {"schema": 1, "package": {"name": "pkg"}, "wheel": [{"url": AMD64_URL}, {"url": WIN32_URL}]},
    source="test",
)


@pytest.mark.parametrize("arch", ["x86", "i686", "i386", "win32"])
def test_windows_x86_targets_get_win32_tags(arch: str) -> None:
    profile = parse_target(f"windows-{arch}-py312")
    assert profile.arch == "i686"
    assert profile.tags[0] == "cp312-cp312-win32"
    assert not any("i686" in t for t in profile.tags)


def test_detect_json_lists_win32_tags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", "--json", "--target", "windows-x86-py312"]) == 0
    data = json.loads(capsys.readouterr().out)
    profile = data.get("profile", data)
    assert "cp312-cp312-win32" in profile["tags"]
    assert "py3-none-win32" in profile["tags"]


def test_a_win32_wheel_is_chosen_for_windows_x86() -> None:
    plan = resolve(["pkg"], {"pkg": PKG}, parse_target("windows-x86-py312"))
    assert plan.packages[0].url == WIN32_URL
    plan = resolve(["pkg"], {"pkg": PKG}, parse_target("windows-x86_64-py312"))
    assert plan.packages[0].url == AMD64_URL


@pytest.mark.parametrize(
    ("tag", "os_name", "arch"),
    [
        ("win32", "windows", "i686"),
        ("win_amd64", "windows", "x86_64"),
        ("win_arm64", "windows", "aarch64"),
        ("manylinux_2_28_aarch64", "linux", "aarch64"),
        ("manylinux2014_i686", "linux", "i686"),
        ("musllinux_1_2_x86_64", "linux", "x86_64"),
        ("macosx_11_0_arm64", "macos", "aarch64"),
        ("macosx_10_9_universal2", "macos", "universal2"),
    ],
)
def test_a_tag_means_the_same_os_and_cpu_to_every_reader(tag: str, os_name: str, arch: str) -> None:
    p = platforms.parse_platform(tag)
    assert (p["os"], p["arch"]) == (os_name, arch)
    # The placeholder runtime uses the very same function.
    assert runtime().parse_platform is not None
    assert runtime().parse_platform(tag) == p


def test_the_words_tables_live_only_in_portable() -> None:
    # No second copy of the OS/arch tables in the modules that used to hold one.
    root = Path(__file__).resolve().parents[1]
    for rel in (
        *(f"resolver_hook/resolve/{part}.py" for part in ("model", "rules", "words", "hints")),
        "resolver_hook/host/profile.py",
        "resolver_hook/host/detect.py",
        "placeholder_template/package/_placeholder.py",
    ):
        text = (root / rel).read_text(encoding="utf-8")
        assert '"amd64": "x86_64"' not in text, rel
        assert '"win_amd64": "Windows' not in text, rel
        assert '{"linux": "Linux", "macos": "macOS"' not in text, rel
        assert "// 1000" not in text, rel  # NVML version decoding lives in portable/cuda.py


# --- free-threaded CPython --------------------------------------------------------------

FT_URL = "https://example.org/f/pkg-1.0-cp313-cp313t-manylinux_2_28_x86_64.whl"
GIL_URL = "https://example.org/f/pkg-1.0-cp313-cp313-manylinux_2_28_x86_64.whl"
FT = parse_manifest(
    {"schema": 1, "package": {"name": "pkg"}, "wheel": [{"url": GIL_URL}, {"url": FT_URL}]},
    source="test",
)


def test_py313t_target_parses_with_cp313t_tags() -> None:
    profile = parse_target("linux-x86_64-py313t-cuda13.0-sm100")
    assert profile.free_threaded
    assert profile.tags[0] == "cp313-cp313t-manylinux_2_35_x86_64"
    assert not any(t.split("-")[1] in ("cp313", "abi3") for t in profile.tags)
    assert profile.python_words == "Python 3.13 (free-threaded)"
    assert "Python 3.13 (free-threaded)" in profile.describe()
    assert parse_target("linux-x86_64-py313-cuda13.0-sm100").tags[0].startswith("cp313-cp313-")


@pytest.mark.parametrize(
    ("spec", "url"),
    [("linux-x86_64-py313t", FT_URL), ("linux-x86_64-py313", GIL_URL)],
)
def test_cp313t_wheels_only_for_free_threaded(spec: str, url: str) -> None:
    plan = resolve(["pkg"], {"pkg": FT}, parse_target(spec))
    assert plan.packages[0].url == url


def test_a_cp313_wheel_is_never_chosen_for_free_threaded() -> None:
    only_gil = parse_manifest(
        {"schema": 1, "package": {"name": "pkg"}, "wheel": [{"url": GIL_URL}]}, source="test"
    )
    plan = resolve(["pkg"], {"pkg": only_gil}, parse_target("linux-x86_64-py313t"))
    assert not plan.ok
    assert plan.packages[0].rejected[0].reason == (
        "built for Python 3.13; this machine has Python 3.13 (free-threaded)"
    )
    only_ft = parse_manifest(
        {"schema": 1, "package": {"name": "pkg"}, "wheel": [{"url": FT_URL}]}, source="test"
    )
    plan = resolve(["pkg"], {"pkg": only_ft}, parse_target("linux-x86_64-py313"))
    assert plan.packages[0].rejected[0].reason == (
        "built for Python 3.13t; this machine has Python 3.13"
    )


def test_index_flavours_can_name_free_threaded_pythons() -> None:
    manifest = parse_manifest(
        {
            "schema": 1,
            "package": {"name": "pkg"},
            "index": [
                {"url": "https://example.org/ft/", "version": "1.0+ft", "python": ["3.13t"]},
                {"url": "https://example.org/gil/", "version": "1.0+gil", "python": ["3.13"]},
            ],
        },
        source="test",
    )
    plan = resolve(["pkg"], {"pkg": manifest}, parse_target("linux-x86_64-py313t"))
    assert plan.packages[0].version == "1.0+ft"
    plan = resolve(["pkg"], {"pkg": manifest}, parse_target("linux-x86_64-py313"))
    assert plan.packages[0].version == "1.0+gil"


@pytest.mark.parametrize(("flag", "expected"), [(1, True), (0, False), (None, False)])
def test_detection_reads_py_gil_disabled(tmp_path: Path, flag: int | None, expected: bool) -> None:
    def config_var(name: str) -> Any:  # a faked sysconfig.get_config_var
        return flag if name == "Py_GIL_DISABLED" else None

    profile = detect_host(
        env={},
        root=tmp_path,
        run=no_programs,
        load_nvml=lambda: (_ for _ in ()).throw(ImportError("no pynvml")),
        system="linux",
        machine="x86_64",
        config_var=config_var,
    )
    assert profile.free_threaded is expected
    assert platforms.is_free_threaded(config_var) is expected


def test_free_threaded_profiles_round_trip() -> None:
    from resolver_hook.host.profile import HostProfile

    profile = parse_target("linux-x86_64-py313t")
    again = HostProfile.from_dict(profile.to_dict())
    assert again.free_threaded
    assert again.python_label == "3.13t"
    data = profile.to_dict()
    del data["tags"]  # recomputed from the other fields
    assert HostProfile.from_dict(data).tags == profile.tags


def test_for_python_retargets_the_tags() -> None:
    profile = parse_target("linux-x86_64-py312")
    other = profile.for_python((3, 13), free_threaded=True, why="checked env")
    assert other.python == "3.13"
    assert other.tags[0] == "cp313-cp313t-manylinux_2_35_x86_64"
    assert other.notes[-1] == "checked env"
    assert profile.for_python((3, 12)) is profile


def test_placeholder_says_free_threaded() -> None:
    rt = runtime()
    host = {"implementation": "cpython", "python": [3, 13], "free_threaded": True}
    assert rt.describe_host_python(host) == "CPython 3.13 (free-threaded)"
    assert rt.describe_python("cp313", "cp313t") == "CPython 3.13 (free-threaded)"
    assert rt._python_fits(host, "cp313", "cp313t")
    assert not rt._python_fits(host, "cp313", "cp313")
    flavour = {"python": ["3.13t"], "platforms": []}
    full = {
        "os": "linux",
        "arch": "x86_64",
        "libc": "glibc",
        "libc_version": "2.39",
        "nvidia": None,
        "nvidia_reason": "",
        **host,
    }
    assert rt.checks(full, flavour) == []
    assert rt.checks({**full, "free_threaded": False}, flavour) != []
