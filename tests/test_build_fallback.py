"""The source-build fallback: ``[build]`` in a manifest, the ``build`` action of a plan,
and :func:`resolver_hook.toolchain.preflight.preflight` against fake toolkits.

The fake toolkits and compilers are those of tests/test_toolchain.py (the Gentoo case of
docs/facts.md section 5: CUDA 13.2 whose host_config.h stops at GNU 15,
default gcc 16, g++-15 beside it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resolver_hook.cli import main
from resolver_hook.host import parse_target
from resolver_hook.manifest import ManifestError, parse_manifest
from resolver_hook.resolve import resolve
from resolver_hook.toolchain.needs import check_build_needs
from resolver_hook.toolchain.preflight import preflight
from resolver_hook.toolchain.report import toolchain_report
from tests.test_toolchain import env_of, gnu, report_for, script, toolkit

WHEEL = "https://example.org/flash_attn-2.8.3+cu130torch2.13-cp312-cp312-manylinux_2_28_x86_64.whl"
NEEDS = ["nvcc>=12.8", "cmake>=3.26", "z3"]


def manifest_data(*, build: dict[str, Any] | None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema": 1,
        "package": {"name": "flash-attn"},
        "wheel": [{"url": WHEEL, "cuda": ">=13.0", "gpu": ["sm_90", "sm_100"]}],
    }
    if build is not None:
        data["build"] = build
    return data


BUILDABLE = {"flash-attn": parse_manifest(manifest_data(build={"needs": NEEDS}))}
WHEELS_ONLY = {"flash-attn": parse_manifest(manifest_data(build=None))}


# --- the manifest ---------------------------------------------------------------------------


def test_build_table_makes_a_manifest_buildable() -> None:
    assert BUILDABLE["flash-attn"].buildable
    assert BUILDABLE["flash-attn"].build_needs == tuple(NEEDS)
    assert not WHEELS_ONLY["flash-attn"].buildable
    empty = parse_manifest(manifest_data(build={}))
    assert (empty.buildable, empty.build_needs) == (True, ())


@pytest.mark.parametrize(
    ("needs", "problem"),
    [
        pytest.param(["nvcc>>12"], "build.needs[0]: 'nvcc>>12' is not a build need", id="syntax"),
        pytest.param(
            ["z3", "cmake @ https://x.org/c.tgz"],
            "build.needs[1]: 'cmake @ "
            "https://x.org/c.tgz': a build need is a name and a version specifier",
            id="url",
        ),
        pytest.param("nvcc", None, id="one-string-is-a-list"),
    ],
)
def test_build_needs_are_checked_at_load_time(needs: Any, problem: str | None) -> None:
    data = manifest_data(build={"needs": needs})
    if problem is None:
        assert parse_manifest(data).build_needs == ("nvcc",)
        return
    with pytest.raises(ManifestError) as info:
        parse_manifest(data, source="m.toml")
    assert f"m.toml: {problem}" in str(info.value)


# --- the plan -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "action", "why"),
    [
        pytest.param(
            "linux-x86_64-py312-glibc2.39-cuda13.0-sm90", "rewrite", None, id="wheel-fits"
        ),
        pytest.param(
            "linux-x86_64-py312-glibc2.39-cuda12.6-sm90",
            "build",
            "needs a driver with CUDA >=13.0 (driver 580 or newer); this driver has CUDA 12.6",
            id="driver-too-old",
        ),
        pytest.param(
            "linux-x86_64-py312-glibc2.39-cuda13.0-sm120",
            "build",
            "kernels sm_90, sm_100 do not run on RTX 50xx, RTX PRO 6000 Blackwell (sm_120)",
            id="kernels-miss-the-gpu",
        ),
        pytest.param(
            "linux-aarch64-py312-glibc2.39-cuda13.0-sm90",
            "build",
            "built for Linux x86_64 (manylinux_2_28_x86_64); this machine is Linux aarch64",
            id="other-cpu",
        ),
        pytest.param(
            "linux-x86_64-py311-glibc2.39-cuda13.0-sm90",
            "build",
            "built for Python 3.12; this machine has Python 3.11",
            id="other-python",
        ),
    ],
)
def test_build_when_no_wheel_fits(target: str, action: str, why: str | None) -> None:
    plan = resolve(["flash-attn>=2.8"], BUILDABLE, parse_target(target))
    (p,) = plan.packages
    assert p.action == action
    assert plan.ok  # a build is a plan, not an error
    if action == "rewrite":
        assert (p.build_needs, plan.builds) == ((), ())
        return
    assert plan.builds == (p,)
    assert [r.reason for r in p.rejected] == [why]
    assert p.reason.startswith("no build of flash-attn fits this machine")
    assert p.reason.endswith("the installer builds it from source")
    assert p.build_needs == tuple(NEEDS)
    # The requirement goes to the installer as written; nothing is pinned for it.
    assert (p.line, p.constraint, p.url, p.find_links) == ("flash-attn>=2.8", None, None, None)
    assert plan.requirements == ("flash-attn>=2.8",)
    assert plan.constraints == ()
    assert plan.explain_lines() == [
        f"flash-attn: build from source (needs nvcc>=12.8, cmake>=3.26, z3): {p.reason}"
    ]
    data = plan.to_dict()["packages"][0]
    assert (data["action"], data["build_needs"]) == ("build", NEEDS)


def test_without_build_table_it_is_an_error() -> None:
    plan = resolve(
        ["flash-attn"], WHEELS_ONLY, parse_target("linux-x86_64-py312-glibc2.39-cuda12.6-sm90")
    )
    (p,) = plan.packages
    assert (p.action, plan.ok, plan.builds) == ("error", False, ())


def test_plan_cli_shows_the_build_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "flash-attn.toml"
    path.write_text(f"""schema = 1
[package]
name = "flash-attn"
[[wheel]]
url = "{WHEEL}"
cuda = ">=13.0"
gpu = ["sm_90", "sm_100"]
[build]
needs = ["nvcc>=12.8", "cmake>=3.26", "z3"]
""")
    target = ["--manifest", str(path), "--target", "linux-x86_64-py312-glibc2.39-cuda12.6-sm90"]
    assert main(["plan", "flash-attn", *target]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert lines[1].split() == ["flash-attn", "build", "flash-attn", "from", "source", "(sdist)"]
    assert any(
        x.strip().startswith(
            "no wheel: flash-attn 2.8.3+cu130torch2.13 cp312 "
            "manylinux_2_28_x86_64: needs a driver with CUDA >=13.0"
        )
        for x in lines
    )
    assert any(x.strip().startswith("build needs: nvcc>=12.8, cmake>=3.26, z3") for x in lines)
    assert main(["plan", "flash-attn", "--json", *target]) == 0
    (pkg,) = json.loads(capsys.readouterr().out)["packages"]
    assert (pkg["action"], pkg["build_needs"]) == ("build", NEEDS)
    # The same machine with a GPU the wheel covers and a new driver: the wheel, exit 0.
    target[-1] = "linux-x86_64-py312-glibc2.39-cuda13.0-sm90"
    assert main(["plan", "flash-attn", "--json", *target]) == 0
    (pkg,) = json.loads(capsys.readouterr().out)["packages"]
    assert pkg["action"] == "rewrite"


# --- preflight ------------------------------------------------------------------------------


@pytest.fixture
def fake(tmp_path: Path) -> dict[str, Path]:
    """As in test_toolchain.py: CUDA 13.2 (GNU <= 15), default gcc 16, g++-15 beside it."""
    bin_dir = tmp_path / "bin"
    gnu(bin_dir / "gcc", "16.1.0")
    gnu(bin_dir / "g++", "16.1.0")
    gnu(bin_dir / "g++-15", "15.2.1")
    return {"bin": bin_dir, "cuda": toolkit(tmp_path / "cuda")}


def build_plan(needs: list[str] | None = None) -> Any:
    manifests = {
        "flash-attn": parse_manifest(
            manifest_data(build={"needs": NEEDS if needs is None else needs})
        )
    }
    return resolve(
        ["flash-attn", "numpy"],
        manifests,
        parse_target("linux-x86_64-py312-glibc2.39-cuda13.2-sm120"),
    )


def z3_and_cmake(tmp_path: Path, bin_dir: Path, cmake: str) -> dict[str, str]:
    script(bin_dir / "cmake", f"echo 'cmake version {cmake}'\n")
    (tmp_path / "inc").mkdir(exist_ok=True)
    (tmp_path / "inc" / "z3.h").write_text("")
    (tmp_path / "lib").mkdir(exist_ok=True)
    (tmp_path / "lib" / "libz3.so").write_bytes(b"")
    return {"CPATH": str(tmp_path / "inc"), "LIBRARY_PATH": str(tmp_path / "lib")}


def test_preflight_gentoo_case_fails_with_the_fix(fake: dict[str, Path]) -> None:
    """gcc 16 against CUDA 13.2, no cmake, no z3: every problem, before pip runs."""
    env = env_of(fake)
    lines = preflight(build_plan(), env=env, prefixes=())
    gxx15 = f"{fake['bin']}/g++-15"
    assert len(lines) == 3, lines
    assert (
        lines[0] == "flash-attn: cannot build from source: cmake>=3.26: cmake: cmake not "
        "found on PATH"
    )
    assert lines[1].startswith("flash-attn: cannot build from source: z3: z3: no pkg-config z3")
    assert lines[2].startswith(
        "flash-attn: cannot build from source: nvcc accepts host "
        "compiler: nvcc 13.2 rejects gcc 16.1.0 (GNU)"
    )
    assert lines[2].endswith(
        f"; fix: CUDAHOSTCXX={gxx15} / -DCMAKE_CUDA_HOST_COMPILER={gxx15} / nvcc -ccbin {gxx15}"
    )


def test_preflight_passes_once_the_fix_is_applied(tmp_path: Path, fake: dict[str, Path]) -> None:
    env = env_of(
        fake, CUDAHOSTCXX=f"{fake['bin']}/g++-15", **z3_and_cmake(tmp_path, fake["bin"], "3.31.6")
    )
    assert preflight(build_plan(), env=env, prefixes=()) == []
    # ...and an old cmake is still caught.
    script(fake["bin"] / "cmake", "echo 'cmake version 3.25.1'\n")
    assert preflight(build_plan(), env=env, prefixes=()) == [
        f"flash-attn: cannot build from source: cmake>=3.26: cmake 3.25.1 at "
        f"{fake['bin']}/cmake does not satisfy >=3.26"
    ]


def test_preflight_nvcc_too_old_is_not_reported_twice(
    tmp_path: Path, fake: dict[str, Path]
) -> None:
    env = {"PATH": str(fake["bin"]), **z3_and_cmake(tmp_path, fake["bin"], "3.31.6")}
    report = report_for(env)  # no toolkit anywhere
    lines = preflight(build_plan(), report=report, env=env, prefixes=())
    assert lines == [
        "flash-attn: cannot build from source: nvcc>=12.8: nvcc: no CUDA "
        "toolkit with a known version"
    ]


def test_preflight_toolchain_failures_only_for_cuda_builds(
    tmp_path: Path, fake: dict[str, Path]
) -> None:
    """A build that does not need nvcc is not stopped by nvcc refusing gcc 16."""
    env = env_of(fake, **z3_and_cmake(tmp_path, fake["bin"], "3.31.6"))
    assert preflight(build_plan(["cmake>=3.26", "z3"]), env=env, prefixes=()) == []
    assert len(preflight(build_plan(["nvcc", "z3"]), env=env, prefixes=())) == 1


def test_preflight_warnings_do_not_stop_a_build(tmp_path: Path, fake: dict[str, Path]) -> None:
    env = env_of(fake, **z3_and_cmake(tmp_path, fake["bin"], "3.31.6"))
    plan = build_plan(["z3>=4.12"])  # found by its files: the version cannot be read
    report = toolchain_report(env=env)
    assert [c.status for c in check_build_needs(["z3>=4.12"], report, env=env, prefixes=())] == [
        "warn"
    ]
    assert preflight(plan, env=env, prefixes=()) == []


def test_preflight_probes_nothing_without_builds() -> None:
    def no_run(*args: object, **kwargs: object) -> Any:
        raise AssertionError("preflight ran a program for a plan with no build")

    plan = resolve(
        ["flash-attn"], BUILDABLE, parse_target("linux-x86_64-py312-glibc2.39-cuda13.0-sm90")
    )
    assert plan.package("flash-attn").action == "rewrite"  # type: ignore[union-attr]
    assert preflight(plan, run=no_run, env={}) == []
    # A build with no declared needs has nothing to check either.
    empty = {"flash-attn": parse_manifest(manifest_data(build={}))}
    plan = resolve(["flash-attn"], empty, parse_target("macos-arm64-py312"))
    assert plan.package("flash-attn").action == "build"  # type: ignore[union-attr]
    assert preflight(plan, run=no_run, env={}) == []
