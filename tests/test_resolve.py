"""The resolver: each rule with tables of target profiles, the issue's cases, properties."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet

from resolver_hook.host import parse_target
from resolver_hook.manifest import (
    IndexFlavour,
    WheelFlavour,
    load_manifest,
    loads_manifest,
    parse_manifest,
)
from resolver_hook.portable.cuda import uncovered
from resolver_hook.resolve import Plan, marker_environment, resolve
from resolver_hook.resolve.rules import Machine, flavour_failures, machine_failures, runs_on
from resolver_hook.resolve.solve import RULED_OUT, UNSAID, as_reqfile, solve
from tests.frozen import frozen_manifests
from tests.paths import DATA

# Rule tests resolve against frozen fixtures, not the shipped data (tests/frozen.py).
BUILTIN = frozen_manifests()
FA = "https://github.com/mjun0812/flash-attention-prebuild-wheels/releases/download/"


def plan(target: str, *reqs: str, manifests: object = None) -> Plan:
    return resolve(list(reqs), manifests or BUILTIN, parse_target(target))  # type: ignore[arg-type]


def test_cuda13_sm100_picks_cu130_everywhere() -> None:
    p = plan("linux-x86_64-py312-cuda13.0-sm100", "torch", "flash-attn", "natten")
    assert p.ok
    assert p.package("torch").version == "2.13.0+cu130"
    assert p.package("flash-attn").url == (
        FA + "v0.9.47/flash_attn-2.8.3+cu130torch2.13-cp312-cp312-"
        "manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
    )
    assert p.package("natten").version == "0.21.7+torch2130cu130"
    assert p.constraints[0] == "torch==2.13.0+cu130"
    assert p.find_links == (
        "https://download.pytorch.org/whl/cu130/torch/",
        "https://whl.natten.org",
    )
    # pip wants URL lines before plain lines (docs/facts.md section 3).
    assert p.requirements[0].startswith("flash-attn @ https://")
    assert len(p.explain_lines()) == 3


def test_cuda126_sm89_picks_cu126() -> None:
    p = plan("linux-x86_64-py312-cuda12.6-sm89", "torch", "flash-attn", "natten")
    assert [x.version for x in p.packages] == [
        "2.13.0+cu126",
        "2.8.3+cu126torch2.13",
        "0.21.7+torch2130cu126",
    ]


def test_cuda126_sm120_refuses_and_says_why() -> None:
    p = plan("linux-x86_64-py312-cuda12.6-sm120", "torch")
    (err,) = p.errors
    reasons = {r.candidate: r.reason for r in err.rejected}
    # cu126 covers up to sm_90 as SASS without PTX, so Blackwell is not covered.
    assert reasons["torch 2.13.0+cu126 (download.pytorch.org/whl/cu126/torch/)"].endswith(
        "do not run on RTX 50xx, RTX PRO 6000 Blackwell (sm_120)"
    )
    assert reasons["torch 2.13.0+cu130 (download.pytorch.org/whl/cu130/torch/)"] == (
        "needs a driver with CUDA >=13.0 (driver 580 or newer); this driver has CUDA 12.6"
    )
    assert list(map(str, err.alternatives)) == ["torch==2.13.0+cpu (runs without the GPU)"]


def test_macos_torch_passes_and_flash_attn_has_no_macos_build() -> None:
    p = plan("macos-arm64-py312", "torch", "flash-attn")
    torch, fa = p.packages
    assert (torch.action, torch.url, torch.line) == ("pass", None, "torch")
    assert fa.action == "error"
    assert fa.reason.startswith("no macOS builds of flash-attn exist")
    assert p.constraints == ()


def test_tilert_on_dgx_spark_names_arch_gpu_and_kernels() -> None:
    p = plan("linux-aarch64-py312-cuda13.0-sm121", "tilert")
    (err,) = p.errors
    text = err.reason + " " + " ".join(r.reason for r in err.rejected)
    for word in ("aarch64", "sm_121", "sm_100f"):
        assert word in text


def test_tilert_on_x86_gb10_says_kernels_do_not_run() -> None:
    p = plan("linux-x86_64-py312-cuda13.0-sm121", "tilert")
    assert p.errors[0].rejected[0].reason == "kernels sm_100f does not run on GB10 (sm_121)"


def test_tilert_on_b300_rewrites_to_its_wheel() -> None:
    p = plan("linux-x86_64-py312-cuda13.0-sm103", "tilert")
    (t,) = p.packages
    assert t.action == "rewrite"
    assert t.url.endswith("/tilert-0.1.5.post2-cp312-cp312-manylinux_2_28_x86_64.whl")
    assert p.requirements == (f"tilert @ {t.url}",)
    assert any("no sha256" in n for n in p.notes)


# Rule by rule: (target, requirement, expected version or None for an error, reason part).
RULES = [
    # 1. tags: Python, platform, glibc
    (
        "tags-python",
        "linux-x86_64-py311-cuda13.0-sm100",
        "tilert",
        None,
        "built for Python 3.12; this machine has Python 3.11",
    ),
    (
        "tags-platform",
        "windows-x86_64-py312-cuda13.0-sm100",
        "tilert",
        None,
        "built for Linux x86_64",
    ),
    (
        "tags-glibc",
        "linux-aarch64-py312-glibc2.31-cuda13.0-sm90",
        "flash-attn",
        None,
        "needs glibc >= 2.34 (manylinux_2_34_aarch64); this machine has glibc 2.31",
    ),
    (
        "tags-aarch64-ok",
        "linux-aarch64-py312-glibc2.39-cuda13.0-sm90",
        "flash-attn",
        "2.8.3+cu130torch2.13",
        "",
    ),
    (
        "tags-windows",
        "windows-x86_64-py313-cuda13.0-sm120",
        "flash-attn",
        "2.8.3+cu130torch2.13",
        "",
    ),
    # 2. CUDA: the driver's version against the flavour's range
    ("cuda-none", "linux-x86_64-py312", "tilert", None, "needs an NVIDIA driver with CUDA"),
    (
        "cuda-old",
        "linux-x86_64-py312-cuda12.8-sm100",
        "tilert",
        None,
        "needs a driver with CUDA >=13.0",
    ),
    ("cuda-newest-wins", "linux-x86_64-py312-cuda13.0-sm90", "torch", "2.13.0+cu130", ""),
    ("cuda-12-driver", "linux-x86_64-py312-cuda12.4-sm90", "torch", "2.13.0+cu126", ""),
    # 3. GPU coverage (docs/facts.md section 1: sm_100f runs on 10.0 and 10.3 only)
    ("gpu-family", "linux-x86_64-py312-cuda13.0-sm100", "tilert", "0.1.5.post2", ""),
    (
        "gpu-not-h100",
        "linux-x86_64-py312-cuda13.0-sm90",
        "tilert",
        None,
        "kernels sm_100f does not run on H100, H200, GH200 (sm_90)",
    ),
    (
        "gpu-every-visible",
        "linux-x86_64-py312-cuda13.0-sm100,sm120",
        "tilert",
        None,
        "does not run on RTX 50xx, RTX PRO 6000 Blackwell (sm_120)",
    ),
    ("gpu-old-cc-cu126", "linux-x86_64-py312-cuda13.0-sm60", "torch", "2.13.0+cu126", ""),
    (
        "gpu-ptx-flash-attn",
        "linux-x86_64-py312-cuda13.0-sm121",
        "flash-attn",
        "2.8.3+cu130torch2.13",
        "",
    ),
    (
        "gpu-too-old-for-fa",
        "linux-x86_64-py312-cuda13.0-sm75",
        "flash-attn",
        None,
        "kernels compute_80 does not run on T4, RTX 20xx (sm_75)",
    ),
    # 4. accelerator: no silent CPU build on a GPU machine; ROCm picks ROCm
    ("accel-cpu-host", "linux-x86_64-py312", "torch", "2.13.0+cpu", ""),
    (
        "accel-pinned-cpu",
        "linux-x86_64-py312-cuda13.0-sm100",
        "torch==2.13.0+cpu",
        "2.13.0+cpu",
        "",
    ),
    ("accel-rocm", "linux-x86_64-py312-rocm7.1", "torch", "2.13.0+rocm7.1", ""),
    ("accel-rocm-old", "linux-x86_64-py312-rocm6.4", "torch", None, "needs ROCm >=7.1"),
    # 5. the user's specifier
    (
        "spec-excludes",
        "linux-x86_64-py312-cuda13.0-sm100",
        "torch==2.13.0+cu126",
        None,
        "does not match your requirement ==2.13.0+cu126",
    ),
    ("spec-local", "linux-x86_64-py312-cuda13.0-sm90", "torch==2.13.0+cu126", "2.13.0+cu126", ""),
]


@pytest.mark.parametrize(
    ("target", "req", "version", "reason"), [r[1:] for r in RULES], ids=[r[0] for r in RULES]
)
def test_rules(target: str, req: str, version: str | None, reason: str) -> None:
    p = plan(target, req)
    first = p.packages[0]
    if version is None:
        assert first.action == "error"
        assert any(reason in r.reason for r in first.rejected), first.rejected
    else:
        assert first.action == "rewrite"
        assert first.version == version


def test_a_version_the_manifest_does_not_list_passes_unchanged() -> None:
    # The manifest knows 2.13.0 builds only: torch<2.13 is not refused, nor rewritten;
    # on a CUDA machine it is unjudged, and says which fact is missing (issue 40).
    p = plan("linux-x86_64-py312-cuda13.0-sm100", "torch<2.13")
    torch = p.package("torch")
    assert (torch.action, torch.cause) == ("pass", "unjudged")
    assert torch.reason.startswith(
        "UNJUDGED: which builds torch<2.13 has and the CUDA runtime and kernel list of "
        "each (no source in its manifest)"
    )
    assert "its manifest describes 1 release, 2.13.0" in torch.reason
    assert p.requirements == ("torch<2.13",)
    assert p.constraints == ()
    cpu = plan("linux-x86_64-py312", "torch<2.13").package("torch")
    assert (cpu.action, cpu.cause) == ("pass", "unlisted")
    assert cpu.reason.startswith(
        "no build in its manifest (built-in (torch.toml)) matches "
        "torch<2.13; the manifest knows 2.13.0"
    )


def test_couplings_follow_a_pinned_flavour() -> None:
    # 6. couplings: asking for the cu126 flash-attn moves torch to cu126 on a 13.0 driver.
    url = (
        FA + "v0.9.47/flash_attn-2.8.3+cu126torch2.13-cp312-cp312-"
        "manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
    )
    p = plan("linux-x86_64-py312-cuda13.0-sm90", "flash-attn==2.8.3+cu126torch2.13", "torch")
    assert p.package("flash-attn").url == url
    assert p.package("torch").version == "2.13.0+cu126"


def test_coupled_package_joins_the_plan_as_a_constraint() -> None:
    p = plan("linux-x86_64-py312-cuda13.0-sm90", "torchvision")
    tv, torch = p.packages
    assert tv.version == "0.28.0+cu130"
    assert (torch.version, torch.implied_by, torch.line) == ("2.13.0+cu130", ("torchvision",), None)
    assert p.constraints == ("torchvision==0.28.0+cu130", "torch==2.13.0+cu130")
    assert p.requirements == ("torchvision==0.28.0+cu130",)


def test_coupling_without_fitting_partner_is_an_error() -> None:
    p = plan("linux-x86_64-py312-cuda13.0-sm90", "natten", "torch==2.13.0+cu126")
    assert p.package("torch").version == "2.13.0+cu126"
    assert p.package("natten").version == "0.21.7+torch2130cu126"
    p = plan("linux-x86_64-py312-cuda13.0-sm90", "torchvision==0.28.0+cu130", "torch==2.13.0+cu126")
    assert p.package("torchvision").action == "error"


def test_markers_use_the_profile_not_this_interpreter() -> None:
    env = marker_environment(parse_target("windows-x86_64-py313"))
    assert (env["sys_platform"], env["platform_machine"], env["python_version"]) == (
        "win32",
        "AMD64",
        "3.13",
    )
    p = plan("macos-arm64-py312", 'tilert ; sys_platform == "linux"', "numpy")
    assert p.packages[0].action == "pass"
    assert "marker" in p.packages[0].reason
    assert p.ok


def test_user_manifest_replaces_builtin_and_source_is_recorded() -> None:
    mine = parse_manifest(
        {
            "package": {"name": "tilert"},
            "wheel": [
                {
                    "url": "https://x.org/tilert-0.2-cp312-cp312-manylinux_2_28_aarch64.whl",
                    "sha256": "a" * 64,
                    "cuda": ">=13.0",
                    "gpu": ["sm_120f"],
                }
            ],
        },
        source="mine.toml",
    )
    p = plan("linux-aarch64-py312-cuda13.0-sm121", "tilert", manifests={**BUILTIN, "tilert": mine})
    t = p.packages[0]
    assert (t.action, t.source, t.sha256) == ("rewrite", "mine.toml", "a" * 64)
    assert p.constraints == (
        "tilert @ https://x.org/tilert-0.2-cp312-cp312-manylinux_2_28_aarch64.whl"
        f"#sha256={'a' * 64}",
    )


def test_to_dict_shape() -> None:
    d = plan("linux-x86_64-py312-cuda13.0-sm100", "torch", "numpy").to_dict()
    assert set(d) >= {"profile", "packages", "constraints", "find_links", "notes"}
    assert set(d["packages"][0]) >= {
        "name",
        "action",
        "version",
        "url",
        "source",
        "reason",
        "rejected",
    }
    assert d["packages"][1]["action"] == "pass"


# --- properties -------------------------------------------------------------------

TARGETS = [
    "linux-x86_64-py312-cuda13.0-sm100",
    "linux-x86_64-py311-cuda12.6-sm89",
    "linux-aarch64-py312-cuda13.0-sm121",
    "linux-x86_64-py312",
    "macos-arm64-py312",
    "windows-x86_64-py313-cuda13.0-sm120",
    "linux-x86_64-py310-rocm7.1",
    "linux-x86_64-py312-cuda13.0-sm90,sm120",
    "linux-aarch64-py314-glibc2.28",
]
PROFILES = [parse_target(t) for t in TARGETS]
NAMES = ["alpha", "beta", "gamma"]

_platform = st.sampled_from(
    [
        "manylinux_2_28_x86_64",
        "manylinux_2_34_aarch64",
        "win_amd64",
        "macosx_11_0_arm64",
        "linux_x86_64",
        "any",
    ]
)
_py = st.sampled_from(["cp310", "cp311", "cp312", "cp313", "py3"])
_cuda = st.one_of(st.none(), st.sampled_from([">=12.0", ">=13.0", ">=12.6,<13", ">=11.8"]))
_gpu = st.lists(
    st.sampled_from(["sm_80", "sm_90a", "sm_100f", "sm_120", "compute_80", "compute_120", "sm_86"]),
    max_size=3,
)


@st.composite
def manifests(draw: st.DrawFn) -> dict[str, object]:
    out = {}
    for name in NAMES:
        wheels = []
        for i in range(draw(st.integers(0, 4))):
            py = draw(_py)
            abi = "none" if py == "py3" else py
            local = draw(st.sampled_from(["", "+cu126", "+cu130"]))
            w: dict[str, object] = {
                "url": f"https://x.org/{name}-1.{i}{local}-{py}-{abi}-{draw(_platform)}.whl"
            }
            cuda = draw(_cuda)
            if cuda:
                w["cuda"] = cuda
            gpu = draw(_gpu)
            if gpu:
                w["gpu"] = gpu
            if draw(st.booleans()):
                other = draw(st.sampled_from([n for n in NAMES if n != name]))
                w["requires"] = [f"{other}{draw(st.sampled_from(['>=1.1', '<1.2', '==1.0']))}"]
            wheels.append(w)
        indexes = []
        if draw(st.booleans()):
            indexes.append(
                {
                    "version": "1.0+cpu",
                    "url": "https://x.org/cpu/",
                    "platforms": ["manylinux_2_28_x86_64"],
                }
            )
        if wheels or indexes:
            out[name] = parse_manifest(
                {"package": {"name": name}, "wheel": wheels, "index": indexes}, source="generated"
            )
    return out


_reqs = st.lists(
    st.sampled_from(
        [
            "alpha",
            "beta>=1.1",
            "gamma<1.3",
            "alpha==1.0+cu130",
            "numpy",
            'beta ; sys_platform == "linux"',
            "gamma[x]",
            "delta @ https://x.org/delta-1.0-py3-none-any.whl",
        ]
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ms=manifests(), reqs=_reqs, which=st.integers(0, len(PROFILES) - 1))
def test_property_never_crashes_never_incompatible_deterministic(
    ms: dict[str, object], reqs: list[str], which: int
) -> None:
    profile = PROFILES[which]
    p1 = resolve(reqs, ms, profile)  # type: ignore[arg-type]
    p2 = resolve(list(reqs), dict(ms), profile)  # type: ignore[arg-type]
    assert p1.to_dict() == p2.to_dict()
    chosen = {x.name: x.flavour for x in p1.packages if x.flavour is not None}
    for name, f in chosen.items():
        assert f is not None
        if isinstance(f, WheelFlavour):
            assert {str(t) for t in f.tags} & set(profile.tags)
        elif isinstance(f, IndexFlavour) and f.platforms:
            assert {t.split("-")[2] for t in profile.tags} & set(f.platforms)
        if f.needs.cuda is not None:
            assert profile.cuda is not None
            assert f.needs.cuda.contains(f"{profile.cuda[0]}.{profile.cuda[1]}")
        if f.needs.gpu and profile.nvidia is not None:
            assert not uncovered(f.needs.gpu, profile.gpu_ccs)
        for r in f.needs.requires:
            partner = chosen.get(r.name)
            if partner is not None:
                assert r.specifier.contains(partner.version, prereleases=True), (name, r)


def test_the_same_name_twice_keeps_every_line_when_passed_through() -> None:
    # pip, not us, reports that these two cannot both hold: it must see both lines.
    p = plan("linux-x86_64-py312-cuda13.0-sm100", "torch==2.13.*", "torch>=3")
    torch = p.package("torch")
    assert torch.action == "pass"
    assert "which builds torch==2.13.* and torch>=3 has" in torch.reason
    assert p.requirements == ("torch==2.13.*", "torch>=3")


@pytest.mark.parametrize(
    "reqs",
    [
        ("torch==2.13", "torch @ https://x.org/torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl"),
        ("torch @ https://x.org/torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl", "torch==2.13"),
    ],
    ids=["url-second", "url-first"],
)
def test_a_url_for_a_manifest_package_is_left_as_written(reqs: tuple[str, str]) -> None:
    # A plain (unlabelled) Linux build no rule describes: left as written, and on a
    # CUDA machine said to be unjudged (issue 40, item 4), never silently.
    p = plan("linux-x86_64-py312-cuda13.0-sm100", *reqs)
    torch = p.package("torch")
    assert (torch.action, torch.cause) == ("pass", "unjudged")
    assert "torch 2.13.0 (no local label) is not a build its manifest's rules" in torch.reason
    assert set(p.requirements) == set(reqs)
    assert p.constraints == ()
    cpu = plan("linux-x86_64-py312", *reqs).package("torch")
    assert (cpu.action, cpu.reason) == ("pass", "you gave a URL or path: left as written")


def test_a_package_without_manifest_asked_twice_keeps_both_lines() -> None:
    p = plan("linux-x86_64-py312-cuda13.0-sm100", "numpy>=1", "numpy<2")
    assert p.requirements == ("numpy>=1", "numpy<2")


# --- rules 7-9: which CUDA build wins; per-platform entries; stale data --------------
CUDA_BUILDS = {"demo": load_manifest(DATA / "manifests" / "cuda-builds.toml")}


@pytest.mark.parametrize(
    ("target", "version"),
    [
        # The newest runtime not newer than the driver's CUDA version: on 13.0, cu130
        # beats cu132 although both fit (minor-version compatibility, docs/facts.md
        # section 1); on 13.2, cu132.
        ("linux-x86_64-py312-cuda13.0-sm90", "1.0+cu130"),
        ("linux-x86_64-py312-cuda13.2-sm90", "1.0+cu132"),
        ("linux-x86_64-py312-cuda13.1-sm90", "1.0+cu130"),
        ("linux-x86_64-py312-cuda12.8-sm90", "1.0+cu126"),
        # A newer runtime only when nothing older fits: sm_120 is only in cu132.
        ("linux-x86_64-py312-cuda13.0-sm120", "1.0+cu132"),
    ],
)
def test_which_cuda_build_wins(target: str, version: str) -> None:
    p = plan(target, "demo", manifests=CUDA_BUILDS)
    assert p.ok
    assert p.package("demo").version == version


def test_one_version_with_a_kernel_list_per_platform() -> None:
    x86 = plan("linux-x86_64-py312-cuda13.0-sm75", "demo==1.0+cu130", manifests=CUDA_BUILDS)
    assert x86.package("demo").flavour.where == "index[1]"
    arm = plan("linux-aarch64-py312-cuda13.0-sm110", "demo", manifests=CUDA_BUILDS)
    assert arm.package("demo").flavour.where == "index[2]"
    assert arm.package("demo").find_links == "https://example.org/cu130/demo/"
    # sm_75 is in the x86_64 list only: on aarch64 the kernel reason, not the platform.
    refused = plan("linux-aarch64-py312-cuda13.0-sm75", "demo", manifests=CUDA_BUILDS)
    demo = refused.package("demo")
    assert demo.action == "error"
    reasons = {r.candidate: r.reason for r in demo.rejected}
    assert reasons[
        "demo 1.0+cu130 (example.org/cu130/demo/ for manylinux_2_28_aarch64)"
    ].startswith("kernels sm_80, sm_90, sm_100, sm_110 do not run on T4")
    assert reasons["demo 1.0+cu130 (example.org/cu130/demo/ for manylinux_2_28_x86_64)"].startswith(
        "built for Linux x86_64"
    )


@pytest.mark.parametrize(
    ("today", "stale"),
    [(None, False), ("2026-11-28", False), ("2026-11-29", True)],
    ids=["no-date", "180-days", "181-days"],
)
def test_one_note_when_a_chosen_entry_is_older_than_180_days(
    today: str | None, stale: bool
) -> None:
    import datetime

    day = datetime.date.fromisoformat(today) if today else None
    p = resolve(["demo"], CUDA_BUILDS, parse_target("linux-x86_64-py312-cuda13.0-sm90"), today=day)
    notes = [n for n in p.notes if "older than 180 days" in n]
    assert notes == (
        [
            "manifest data older than 180 days: demo 1.0+cu130 (checked 2026-06-01); the "
            "builds may have changed since: compare with each entry's evidence"
        ]
        if stale
        else []
    )


def test_stale_note_is_one_note_for_every_stale_entry() -> None:
    import datetime

    other = parse_manifest(
        {
            "package": {"name": "other"},
            "index": [{"version": "2.0", "checked": "2025-01-01"}],
        }
    )
    p = resolve(
        ["demo", "other"],
        {**CUDA_BUILDS, "other": other},
        parse_target("linux-x86_64-py312-cuda12.8-sm90"),
        today=datetime.date(2026, 11, 30),
    )
    notes = [n for n in p.notes if "older than 180 days" in n]
    assert len(notes) == 1
    assert "demo 1.0+cu126 (checked 2026-01-01), other 2.0 (checked 2025-01-01)" in notes[0]
    d = p.to_dict()["packages"][0]
    assert (d["flavour"]["evidence"], d["flavour"]["checked"]) == (
        "https://example.org/build-table",
        "2026-01-01",
    )


@pytest.mark.parametrize(
    "line",
    [
        "torch @ https://x.org/whl/cu126/torch-2.13.0%2Bcu126-cp312-cp312-manylinux_2_28_x86_64.whl",
        "./torch-2.13.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",
    ],
    ids=["url", "path"],
)
def test_a_wheel_left_as_written_that_cannot_run_here_is_refused(line: str) -> None:
    # Judged by the same rules as the plan's own choices (issue 40, item 4): the cu126
    # build has no sm_100 kernels, so it is refused, naming the build that runs.
    p = plan("linux-x86_64-py312-cuda13.0-sm100", line)
    torch = p.package("torch")
    assert (torch.action, torch.cause) == ("error", "as-written")
    assert torch.reason == (
        "torch-2.13.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl cannot run on this "
        "machine (torch's rules below); the nearest build that runs here: torch==2.13.0+cu130"
    )
    assert [r.rules for r in torch.rejected] == [("gpu",)]
    assert not p.ok


def test_a_wheel_left_as_written_that_runs_here_is_kept_saying_why() -> None:
    line = "./torch-2.13.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"
    p = plan("linux-x86_64-py312-cuda13.0-sm100", line)
    torch = p.package("torch")
    assert (torch.action, torch.cause) == ("pass", "as-written")
    assert torch.line is not None
    assert torch.line.endswith(line[2:])
    assert torch.reason.endswith("which runs here")
    assert not [n for n in p.notes if "left as written" in n]


@pytest.mark.builtin_data
def test_the_readme_example_without_a_gpu() -> None:
    """What the README's quick start says a machine without an NVIDIA GPU gets."""
    from resolver_hook.manifest import builtin_manifests

    p = resolve(["torch", "flash-attn", "natten", "tilert"], builtin_manifests(),
                parse_target("linux-x86_64-py312"))  # fmt: skip
    actions = {x.name: x.action for x in p.packages}
    assert actions == {"torch": "rewrite", "flash-attn": "error", "natten": "pass",
                       "tilert": "error"}  # fmt: skip
    assert p.package("torch").version.endswith("+cpu")


def _two_releases(newest_cuda: str = ">=13.0") -> dict[str, object]:
    """torch 2.15.0 for Python 3.11-3.12 and 2.14.1 for 3.10-3.12, one page each."""

    def entry(version: str, python: list[str], cuda: str) -> dict[str, object]:
        return {
            "url": "https://download.example/whl/cu130/torch/",
            "version": version,
            "cuda": cuda,
            "gpu": ["sm_100"],
            "platforms": ["manylinux_2_28_x86_64"],
            "python": python,
        }

    torch = parse_manifest(
        {
            "package": {"name": "torch"},
            "index": [
                entry("2.15.0+cu130", ["3.11", "3.12"], newest_cuda),
                entry("2.14.1+cu130", ["3.10", "3.11", "3.12"], ">=13.0"),
            ],
        },
        source="mine.toml",
    )
    return {"torch": torch}


def test_a_newest_release_without_a_build_for_this_python_is_named() -> None:
    older = plan("linux-x86_64-py310-cuda13.0-sm100", "torch", manifests=_two_releases())
    torch = older.package("torch")
    assert torch is not None
    assert torch.version == "2.14.1+cu130"
    assert torch.reason.endswith(
        "; newer torch 2.15.0 has no build for Python 3.10 (built for Python 3.11, 3.12)"
    )
    newest = plan("linux-x86_64-py312-cuda13.0-sm100", "torch", manifests=_two_releases())
    assert "newer" not in newest.packages[0].reason  # the newest is chosen
    capped = plan("linux-x86_64-py310-cuda13.0-sm100", "torch<2.15", manifests=_two_releases())
    assert "newer" not in capped.packages[0].reason  # the user asked for older
    # The newest fails on more than Python here (its driver floor): not named as such.
    driver = plan("linux-x86_64-py310-cuda13.0-sm100", "torch", manifests=_two_releases(">=13.2"))
    assert driver.packages[0].version == "2.14.1+cu130"
    assert "newer" not in driver.packages[0].reason


def _coupled_pair() -> dict[str, object]:
    """``base`` (1.0 for sm_80 only; 2.0 for sm_80 and sm_100) and ``addon`` (0.1 for
    Python 3.11 only, coupled with base 1.0; 0.2 for 3.11 and 3.12, with base 2.0)."""

    def wheel(name: str, version: str, py: str, gpu: str, requires: str = "") -> str:
        url = f"https://x.org/{name}-{version}-{py}-{py}-manylinux_2_28_x86_64.whl"
        extra = f"requires = [{requires!r}]\n" if requires else ""
        return f'[[wheel]]\nurl = "{url}"\ncuda = ">=12.0"\ngpu = [{gpu}]\n{extra}'

    base = "schema = 1\n[package]\nname = 'base'\n" + "".join(
        wheel("base", v, py, gpu)
        for v, gpu in (("1.0", '"sm_80"'), ("2.0", '"sm_80", "sm_100"'))
        for py in ("cp311", "cp312")
    )
    addon = "schema = 1\n[package]\nname = 'addon'\n" + "".join(
        [
            wheel("addon", "0.1", "cp311", '"sm_80"', "base==1.0"),
            wheel("addon", "0.2", "cp311", '"sm_80", "sm_100"', "base==2.0"),
            wheel("addon", "0.2", "cp312", '"sm_80", "sm_100"', "base==2.0"),
        ]
    )
    return {
        "base": loads_manifest(base, source="base.toml"),
        "addon": loads_manifest(addon, source="addon.toml"),
    }


def test_a_pinned_package_with_no_fit_still_holds_its_partner_to_its_coupling() -> None:
    # addon==0.1 has no Python 3.12 build, so it is refused; base must still be the
    # release addon 0.1 needs (1.0, which runs here), never the newest (issue 50: torch
    # 2.13.0 chosen beside xformers==0.0.25.post1, which needs torch 2.2.2).
    p = plan("linux-x86_64-py312-cuda12.8-sm80", "base", "addon==0.1", manifests=_coupled_pair())
    assert p.package("addon").action == "error"
    assert (p.package("base").action, p.package("base").version) == ("rewrite", "1.0")


def test_a_partner_that_the_pinned_package_needs_and_that_cannot_run_is_refused() -> None:
    # On sm_100 base 1.0 does not run: nothing the file allows runs, so base is refused
    # too, saying which requirement holds it, instead of the newest base.
    p = plan("linux-x86_64-py311-cuda13.0-sm100", "base", "addon==0.1", manifests=_coupled_pair())
    base = p.package("base")
    assert (p.package("addon").action, base.action) == ("error", "error")
    held = "your requirement addon==0.1 needs base==1.0; this is base 2.0"
    assert held in {r.reason for r in base.rejected}
    assert base.reason.startswith("no build of base goes with your requirements")


_ROCM = """
schema = 1
[package]
name = "demo"
[[index]]
url = "https://example.org/rocm7.2/demo/"
version = "1.0+rocm7.2"
rocm = ">=7.2"
gfx = ["gfx90a", "gfx942"]
[[index]]
url = "https://example.org/cpu/demo/"
version = "1.0+cpu"
"""


@pytest.mark.parametrize(
    ("target", "version", "reason"),
    [
        ("linux-x86_64-py312-rocm7.2-gfx942", "1.0+rocm7.2", "gfx942 is one of its GPUs"),
        # Every GPU of the machine must be one the build was made for.
        ("linux-x86_64-py312-rocm7.2-gfx942,gfx803", None, "this machine's gfx803 is not"),
        ("linux-x86_64-py312-rocm7.2-gfx803", None, "this machine's gfx803 is not"),
        ("linux-x86_64-py312-rocm7.2-gfx90a", "1.0+rocm7.2", "gfx90a is one of its GPUs"),
        # No GPU named: nothing to hold it to, and the reason says so.
        ("linux-x86_64-py312-rocm7.2", "1.0+rocm7.2", "GPU not known"),
    ],
)
def test_a_rocm_build_runs_only_on_the_gpus_it_was_built_for(
    target: str, version: str | None, reason: str
) -> None:
    p = plan(target, "demo", manifests={"demo": loads_manifest(_ROCM, source="m.toml")})
    demo = p.package("demo")
    assert demo is not None
    assert demo.version == version
    if version is None:
        (r,) = [r for r in demo.rejected if "rocm" in r.candidate]
        assert r.rules == ("gpu",)
        assert r.reason == f"built for AMD GPUs gfx90a, gfx942; {reason} one of them"
        assert demo.action == "error"
    else:
        assert reason in demo.reason


def test_a_package_only_a_coupling_brings_in_never_holds_back_the_one_asked_for() -> None:
    # base 2.0 pins dep 2.0, base 1.0 pins nothing (torch 2.3.1's triton pin is for
    # Python < 3.12): with dep chosen first, its newest (3.0) would leave base at 1.0.
    def toml(name: str, *wheels: tuple[str, str]) -> str:
        rows = "".join(
            f'[[wheel]]\nurl = "https://x.org/{name}-{v}-py3-none-any.whl"\n'
            + (f"requires = [{r!r}]\n" if r else "")
            for v, r in wheels
        )
        return f"schema = 1\n[package]\nname = '{name}'\n{rows}"

    manifests = {
        "base": loads_manifest(toml("base", ("2.0", "dep==2.0"), ("1.0", "")), source="b.toml"),
        "dep": loads_manifest(toml("dep", ("3.0", ""), ("2.0", "")), source="d.toml"),
    }
    p = plan("linux-x86_64-py312", "base", manifests=manifests)
    assert (p.package("base").version, p.package("dep").version) == ("2.0", "2.0")


def test_a_newer_rocm_is_hinted_only_where_this_gpu_gets_a_build_from_it() -> None:
    # gfx803 has no build under ROCm 7.2 either: a newer ROCm is no fix for it.
    manifests = {"demo": loads_manifest(_ROCM, source="m.toml")}
    old = plan("linux-x86_64-py312-rocm6.4-gfx803", "demo", manifests=manifests)
    assert "ROCm 7.2" not in old.package("demo").hint  # type: ignore[union-attr]
    ok = plan("linux-x86_64-py312-rocm6.4-gfx942", "demo", manifests=manifests)
    assert ok.package("demo").hint == (  # type: ignore[union-attr]
        "an AMD GPU with ROCm 7.2 or newer gets demo 1.0+rocm7.2"
    )


def test_a_cuda_distribution_without_a_manifest_is_unjudged_on_an_nvidia_machine() -> None:
    # nvidia-*-cu12 runtime wheels, tensorflow, onnxruntime-gpu: CUDA builds no manifest
    # describes (resolver_hook/manifest/gpu_names.toml, each with its source) are said
    # unjudged on an NVIDIA machine, with what to do, never passed in silence (issue 50).
    reqs = ("nvidia-cublas-cu12==12.4.5.8", "tensorflow==2.13.0", "onnxruntime-gpu", "requests")
    p = plan("linux-x86_64-py312-cuda13.0-sm100", *reqs)
    for name in ("nvidia-cublas-cu12", "tensorflow", "onnxruntime-gpu"):
        got = p.package(name)
        assert (got.action, got.cause) == ("pass", "unjudged"), name
        assert got.reason.startswith("UNJUDGED: no manifest describes its CUDA builds")
        assert "--manifest FILE" in got.reason
        assert "--strict" in got.reason
    assert p.package("requests").cause == "no-manifest"
    assert p.requirements == reqs
    cpu = plan("linux-x86_64-py312", *reqs)
    assert {x.cause for x in cpu.packages} == {"no-manifest"}


def test_an_unlisted_release_of_a_cuda_package_is_unjudged_though_its_manifest_has_no_cuda() -> (
    None
):
    # triton's manifest has no CUDA or kernel field (the wheels bundle their compiler):
    # a release it does not list (its rules start at 2.0) is a GPU build it cannot judge.
    from resolver_hook._data import data_path

    triton = {"triton": load_manifest(data_path("manifests", "triton.toml"))}
    got = plan("linux-x86_64-py312-cuda13.0-sm100", "triton==1.1.1", manifests=triton)
    assert (got.packages[0].action, got.packages[0].cause) == ("pass", "unjudged")
    cpu = plan("linux-x86_64-py312", "triton==1.1.1", manifests=triton)
    assert cpu.packages[0].cause == "unlisted"


def test_unjudged_packages_with_the_same_reason_are_warned_once() -> None:
    from resolver_hook.cli.plan import render_unjudged

    p = plan("linux-x86_64-py312-cuda13.0-sm100", "nvidia-cublas-cu12", "nvidia-cudnn-cu12")
    lines = render_unjudged(p, strict=False).splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("warning: nvidia-cublas-cu12, nvidia-cudnn-cu12: UNJUDGED: ")


@pytest.mark.parametrize("order", [("a", "b", "c"), ("c", "b", "a"), ("b", "a", "c")])
def test_a_builds_lost_partner_is_found_in_any_later_pass(order: tuple[str, ...]) -> None:
    """Pruning reaches a fixed point along a chain: c 2.0 does not run here, so b 2.0
    (which needs it) goes, and then a 2.0 (which needs b 2.0), whichever package the
    plan judges first; each says the coupling it lost."""
    page = "https://x.org/whl/"

    def manifest(name: str, needs: str | None, *, runs2: bool = True) -> object:
        entries = [
            {
                "url": page,
                "version": v,
                **({"requires": [f"{needs}=={v}"]} if needs else {}),
                **({} if runs2 or v == "1.0" else {"python": ["3.11"]}),
            }
            for v in ("1.0", "2.0")
        ]
        return parse_manifest({"package": {"name": name}, "index": entries}, source=name)

    manifests = {
        "a": manifest("a", "b"),
        "b": manifest("b", "c"),
        "c": manifest("c", None, runs2=False),
    }
    p = resolve(list(order), manifests, parse_target("linux-x86_64-py312"))  # type: ignore[arg-type]
    assert p.ok
    assert {x.name: x.version for x in p.packages} == {"a": "1.0", "b": "1.0", "c": "1.0"}
    assert not any("that fit" in x.reason for x in p.packages)  # one build left of each
    for name, lost in (("a", "b==2.0"), ("b", "c==2.0")):
        rejected = p.package(name).rejected
        assert [(r.candidate.split(" (")[0], r.rules) for r in rejected] == [
            (f"{name} 2.0", ("coupling",))
        ]
        assert lost in rejected[0].failures[0].reason


def test_a_build_is_held_by_a_pinned_line_left_with_none_in_a_later_pass() -> None:
    """x is judged before o is left with no build (o 1.0 needs c 2.0, which does not
    run here); o's line still holds x to the build o 1.0 needs, so x 1.0 is chosen,
    not the newer x 2.0."""
    page = "https://x.org/whl/"

    def manifest(name: str, entries: list[dict[str, object]]) -> object:
        return parse_manifest({"package": {"name": name}, "index": entries}, source=name)

    manifests = {
        "x": manifest("x", [{"url": page, "version": v} for v in ("1.0", "2.0")]),
        "o": manifest("o", [{"url": page, "version": "1.0", "requires": ["x==1.0", "c==2.0"]}]),
        "c": manifest(
            "c",
            [{"url": page, "version": "1.0"}, {"url": page, "version": "2.0", "python": ["3.11"]}],
        ),
    }
    p = resolve(["x", "o>=1"], manifests, parse_target("linux-x86_64-py312"))  # type: ignore[arg-type]
    assert p.package("x").version == "1.0"
    assert p.package("o").action == "error"


@pytest.mark.parametrize("coupling", ["base>=2", "base==1.5"])
def test_a_partner_ruled_out_by_your_pin_is_named_for_a_range_and_an_exact_pin(
    coupling: str,
) -> None:
    """top needs a base your line ``base==1.0`` rules out: the build of base that would
    go with it (the first rejected, among hundreds that do not run here) is named."""
    page = "https://x.org/whl/"
    elsewhere = [{"url": page, "version": f"0.{i}", "python": ["3.11"]} for i in range(2, 9)]
    base = [*elsewhere, {"url": page, "version": "1.5"}, {"url": page, "version": "2.0"}]
    manifests = {
        "top": parse_manifest(
            {
                "package": {"name": "top"},
                "index": [{"url": page, "version": "3.0", "requires": [coupling]}],
            },
            source="top",
        ),
        "base": parse_manifest({"package": {"name": "base"}, "index": base}, source="base"),
    }
    p = resolve(["top", "base==1.0"], manifests, parse_target("linux-x86_64-py312"))  # type: ignore[arg-type]
    top = p.package("top")
    assert top.action == "error"
    named = "2.0" if coupling == "base>=2" else "1.5"
    words = [x.reason for r in top.rejected for x in r.failures]
    said = f"your requirement base==1.0 rules out base {named}, which fits this machine"
    assert words == [f"needs {coupling}; {said}"]


def test_the_machine_rules_of_a_cpu_build_leave_the_accelerator_rule_to_the_plan() -> None:
    """A CPU build on an NVIDIA machine runs there (rules 1-3, what a hint asks of a
    changed machine); rule 4 still refuses it for a plan that does not pin it."""
    m = Machine(parse_target("linux-x86_64-py312-cuda13.0-sm100"))
    torch = BUILTIN["torch"]
    cpu = next(f for f in torch.flavours if str(f.version) == "2.13.0+cpu")
    assert machine_failures(cpu, m)[0] == []
    fails, _ = flavour_failures(cpu, m, SpecifierSet(), torch)
    assert [x.rule for x in fails] == ["accelerator"]
    pinned, _ = flavour_failures(cpu, m, SpecifierSet("==2.13.0+cpu"), torch)
    assert pinned == []


def test_a_solve_without_reasons_chooses_the_same_and_says_no_coupling_why() -> None:
    """The hints read only the choices: the builds dropped for a coupling no partner
    meets are rejected as before, without the search for why (UNSAID)."""
    reqs = as_reqfile(["torchvision", "torch==2.13.0+cu126"])
    profile = parse_target("linux-x86_64-py312-cuda13.0-sm90")
    said = solve(reqs, BUILTIN, profile).slots
    quiet = solve(reqs, BUILTIN, profile, reasons=False).slots
    chosen = {n: s.chosen for n, s in quiet.items()}
    assert chosen == {n: s.chosen for n, s in said.items()}
    assert str(chosen["torchvision"].version) == "0.28.0+cu126"  # type: ignore[union-attr]
    dropped = [f for f, fails in quiet["torchvision"].rejected if fails == [UNSAID]]
    assert dropped
    assert all(
        fails[0].rule == "coupling" and fails[0].reason
        for f, fails in said["torchvision"].rejected
        if f in dropped
    )


@pytest.mark.parametrize(
    "target",
    [
        "linux-x86_64-py312-cuda13.0-sm100",
        "linux-aarch64-py312-cuda13.0-sm121",
        "windows-x86_64-py311-cuda12.6-sm75",
        "macos-aarch64-py313",
    ],
)
def test_a_build_runs_on_a_machine_where_it_fails_none_of_rules_1_to_3(target: str) -> None:
    """What a hint asks of each build on a changed machine, stopped at the tags for a
    build of another platform or Python: the same answer as every rule judged."""
    m = Machine(parse_target(target))
    builds = [f for name in ("torch", "flash-attn", "natten") for f in BUILTIN[name].flavours]
    said = [runs_on(f, m) for f in builds]
    assert said == [not machine_failures(f, m)[0] for f in builds]
    assert True in said
    assert False in said


def test_a_solve_without_reasons_judges_no_other_rule_of_a_build_the_user_rules_out() -> None:
    """Rule 5 holds on every machine: a build outside the user's specifier is rejected
    by it alone (RULED_OUT), the machine's rules left unjudged; the choices stay."""
    reqs = as_reqfile(["torch==2.13.0+cu126"])
    profile = parse_target("linux-aarch64-py311-cuda12.4-sm90")
    said = solve(reqs, BUILTIN, profile).slots["torch"]
    quiet = solve(reqs, BUILTIN, profile, reasons=False).slots["torch"]
    assert quiet.chosen == said.chosen
    assert [f for f, _ in quiet.rejected] == [f for f, _ in said.rejected]
    out = [f for f, fails in quiet.rejected if fails == [RULED_OUT]]
    assert out
    both = [fails for f, fails in said.rejected if f in out]
    assert all(fails[-1].rule == "specifier" for fails in both)
    assert any(len(fails) > 1 for fails in both)  # the machine's rules, judged when said


def test_a_machine_of_another_gpu_on_the_same_host_shares_the_judgements_of_its_tags() -> None:
    """The hints' machines of another GPU, driver or ROCm keep the host's tags: a
    wheel's rule 1 is judged once for all of them; another Python judges it anew."""
    here = Machine(parse_target("linux-x86_64-py312-cuda13.0-sm120"))
    other_gpu = Machine(parse_target("linux-x86_64-py312-cuda13.0-sm90"), like=here)
    other_python = Machine(parse_target("linux-x86_64-py311-cuda13.0-sm120"), like=here)
    wheel = next(f for f in BUILTIN["flash-attn"].flavours if isinstance(f, WheelFlavour))
    judged = flavour_failures(wheel, other_gpu, SpecifierSet(), BUILTIN["flash-attn"])
    assert wheel.tags in here.wheel_tags
    assert wheel.tags not in other_python.wheel_tags
    assert judged == flavour_failures(
        wheel, Machine(other_gpu.profile), SpecifierSet(), BUILTIN["flash-attn"]
    )


def test_builds_sharing_a_dead_coupling_share_its_failure() -> None:
    """The builds of a release share their coupling: when no candidate of the partner
    meets it, it is said why once, and each such build carries that one failure."""
    page = "https://x.org/whl/"
    tops = [
        {"url": f"{page}{plat}/", "version": "2.0", "platforms": [plat], "requires": ["base==2.0"]}
        for plat in ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "linux_x86_64")
    ]
    tops.append({"url": page, "version": "1.0", "requires": ["base==1.0"]})
    base = [{"url": page, "version": "1.0"}, {"url": page, "version": "2.0", "python": ["3.11"]}]
    manifests = {
        "top": parse_manifest({"package": {"name": "top"}, "index": tops}, source="top"),
        "base": parse_manifest({"package": {"name": "base"}, "index": base}, source="base"),
    }
    p = resolve(["top"], manifests, parse_target("linux-x86_64-py312"))  # type: ignore[arg-type]
    top = p.package("top")
    assert top.version == "1.0"
    dead = [r.failures for r in top.rejected if r.rules == ("coupling",)]
    assert len(dead) == 3
    assert "base==2.0" in dead[0][0].reason
    assert all(x[0] is dead[0][0] for x in dead)


def test_a_build_refused_on_rule_1_is_judged_on_the_others_when_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A build for another platform is refused whatever rules 2-5 say: a plan that
    reads only its choices words none of them for it; its rejection, once read, says
    every rule it fails, as the rules say them alone."""
    from resolver_hook.resolve import rules

    worded: list[object] = []
    gpu_reason = rules.gpu_reason

    def counted(*args: object) -> str:
        worded.append(args[0])
        return gpu_reason(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(rules, "gpu_reason", counted)
    page = "https://x.org/whl/"
    entries = [
        {"url": page, "version": "1.0", "cuda": ">=13.0", "gpu": ["sm_100"]},
        {"url": page, "version": "0.9", "platforms": ["win_amd64"], "gpu": ["sm_80"]},
    ]
    pkg = parse_manifest({"package": {"name": "pkg"}, "index": entries}, source="pkg.toml")
    target = parse_target("linux-x86_64-py312-cuda13.0-sm100")
    chosen = resolve(["pkg"], {"pkg": pkg}, target).package("pkg")
    assert chosen is not None
    assert chosen.version == "1.0"
    assert worded == []
    (refused,) = chosen.rejected
    assert refused.rules == ("tags", "gpu")
    alone, _ = flavour_failures(pkg.indexes[1], Machine(target), SpecifierSet(), pkg)
    assert list(refused.failures) == alone
    assert len(worded) == 2


def test_a_build_dropped_for_its_coupling_is_said_why_when_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An older release of top needs a base no build of which runs here: the plan
    chooses the newer top without saying why the older one was dropped, and says it,
    naming the coupling, once its rejections are read."""
    from resolver_hook.resolve import reasons
    from resolver_hook.resolve.model import Coupling

    said: list[object] = []
    coupling_words = reasons.coupling_words

    def counted(c: Coupling) -> str:
        said.append(c.cause)
        return coupling_words(c)

    monkeypatch.setattr(reasons, "coupling_words", counted)
    page = "https://x.org/whl/"
    tops = [
        {"url": page, "version": "2.0", "requires": ["base==2.0"]},
        {"url": page, "version": "1.0", "requires": ["base==1.0"]},
    ]
    base = [{"url": page, "version": "1.0", "python": ["3.11"]}, {"url": page, "version": "2.0"}]
    manifests = {
        "top": parse_manifest({"package": {"name": "top"}, "index": tops}, source="top"),
        "base": parse_manifest({"package": {"name": "base"}, "index": base}, source="base"),
    }
    p = resolve(["top"], manifests, parse_target("linux-x86_64-py312"))  # type: ignore[arg-type]
    top = p.package("top")
    assert top is not None
    assert top.version == "2.0"
    assert said == []
    (dropped,) = top.rejected
    assert dropped.rules == ("coupling",)
    assert "base==1.0" in dropped.reason
    assert said == ["unfit"]


@pytest.mark.parametrize(
    "target",
    [
        "linux-x86_64-py312-cuda13.0-sm100",
        "linux-aarch64-py313t-cuda12.8-sm90",
        "linux-x86_64-py39-glibc2.17",
        "windows-x86_64-py310",
        "macos-arm64-py312",
        "linux-aarch64-py310-l4t36.4-sm87",
    ],
)
def test_rule_1_is_decided_without_its_words_as_with_them(target: str) -> None:
    """The solver asks whether a build passes rule 1, and its rank, without the words
    of a failure: the same answer as the rule with its words, for every build."""
    from resolver_hook.resolve import rules

    m = Machine(parse_target(target))
    seen = 0
    for name in sorted(BUILTIN):
        for f in BUILTIN[name].flavours:
            fails, rank = rules._tag_failures(f, m)
            assert rules._rule_1_rank(f, m) == (None if fails else rank), f.describe()
            seen += 1
    assert seen > 40


def test_a_plan_that_fits_words_no_rule_1_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build for another platform or Python is refused without the words of rule 1,
    made once its rejections are read, as the rule says them."""
    from resolver_hook.resolve import rules

    said: list[object] = []
    platform_reason, python_reason = rules.platform_reason, rules.python_reason
    monkeypatch.setattr(rules, "platform_reason", lambda *a: said.append(a) or platform_reason(*a))
    monkeypatch.setattr(rules, "python_reason", lambda *a: said.append(a) or python_reason(*a))
    base = "https://x.org/pkg-{0}-{1}-{1}-{2}.whl"
    wheels = [
        {"url": base.format(v, py, plat), "cuda": ">=12.0", "gpu": ["sm_100"]}
        for v, py, plat in [
            ("1.0", "cp312", "manylinux_2_28_x86_64"),
            ("0.9", "cp311", "manylinux_2_28_x86_64"),
            ("0.9", "cp312", "win_amd64"),
        ]
    ]
    pkg = parse_manifest({"package": {"name": "pkg"}, "wheel": wheels}, source="pkg.toml")
    target = parse_target("linux-x86_64-py312-cuda13.0-sm100")
    chosen = resolve(["pkg"], {"pkg": pkg}, target).package("pkg")
    assert chosen is not None
    assert chosen.version == "1.0"
    assert said == []
    m = Machine(target)
    assert [r.failures for r in chosen.rejected] == [
        tuple(flavour_failures(f, m, SpecifierSet(), pkg)[0]) for f in pkg.wheels[1:]
    ]
    assert [r.rules for r in chosen.rejected] == [("python",), ("tags",)]
