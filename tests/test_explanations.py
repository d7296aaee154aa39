"""Explanations that lead to the fix: every failed rule, computed hints, explain columns.

Against frozen manifests (the rule tests' own, tests/data/frozen-manifests/, and two
torch variants in tests/data/frozen/), not the built-in ones, so the exact texts here
do not move when the built-in data is revised. The table test at the end
also runs over the built-in manifests: whatever they hold, a hint must be true.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from resolver_hook.cli import main
from resolver_hook.host import parse_target
from resolver_hook.manifest import Manifest, builtin_manifests, load_manifest
from resolver_hook.resolve import RULES, Change, Plan, resolve

from .frozen import FROZEN_DIR
from .paths import DATA

FROZEN = DATA / "frozen"  # two torch variants only these tests read
STACK = ("torch", "flash-attn", "natten", "tilert")


def frozen_path(name: str) -> Path:
    """The stack's manifests are the rule tests' frozen ones (tests/frozen.py)."""
    return FROZEN_DIR / f"{name}.toml" if name in STACK else FROZEN / f"{name}.toml"


def frozen(*names: str) -> dict[str, Manifest]:
    out = {}
    for n in names:
        m = load_manifest(frozen_path(n))
        out[m.name] = m
    return out


MANIFESTS = frozen(*STACK)
CUDA_ONLY_TORCH = {**MANIFESTS, **frozen("torch-cu126-cu130")}


def plan(target: str, *reqs: str, manifests: dict[str, Manifest] = MANIFESTS) -> Plan:
    return resolve(list(reqs or STACK), manifests, parse_target(target))


def rules_by_flavour(p: Plan, name: str) -> dict[str, tuple[str, ...]]:
    pkg = p.package(name)
    assert pkg is not None
    return {r.candidate: r.rules for r in pkg.rejected}


# --- the seeds' machines: every failed rule, and a true hint -------------------------

TILERT = "tilert 0.1.5.post2 cp312 manylinux_2_28_x86_64"
TILERT_NONE = "sm_100f (B200/GB200, B300/GB300)"


def test_gb10_tilert_names_arch_and_gpu_and_says_no_change_helps() -> None:
    p = plan("linux-aarch64-py312-cuda13.0-sm121")
    tilert = p.package("tilert")
    assert tilert is not None
    assert tilert.action == "error"
    # Both rules, not only the first: a build for x86_64 would still not run on sm_121.
    assert rules_by_flavour(p, "tilert") == {TILERT: ("tags", "gpu")}
    assert tilert.rejected[0].reason == (
        "built for Linux x86_64 (manylinux_2_28_x86_64); this machine is Linux aarch64 | "
        "kernels sm_100f does not run on GB10 (sm_121)"
    )
    assert tilert.fix is None
    assert tilert.hint == (
        f"no build of tilert exists for Linux aarch64 or for GPUs outside {TILERT_NONE}: "
        "no single change to this machine gives one"
    )
    # The rest of the stack fits natively.
    assert [x.version for x in p.packages[:3]] == [
        "2.13.0+cu130",
        "2.8.3+cu130torch2.13",
        "0.21.7+torch2130cu130",
    ]


def test_rtx5090_on_a_12_8_driver_hint_is_the_driver() -> None:
    p = plan("linux-x86_64-py312-cuda12.8-sm120", "torch", manifests=CUDA_ONLY_TORCH)
    torch = p.package("torch")
    assert torch is not None
    assert torch.action == "error"
    assert rules_by_flavour(p, "torch") == {
        "torch 2.13.0+cu130 (download.pytorch.org/whl/cu130/torch/)": ("cuda",),
        "torch 2.13.0+cu126 (download.pytorch.org/whl/cu126/torch/)": ("gpu",),
    }
    assert torch.fix == Change(
        kind="driver",
        text="a driver of 580 or newer (CUDA 13.0)",
        gets="torch 2.13.0+cu130",
        cuda="13.0",
    )
    assert torch.hint == "a driver of 580 or newer (CUDA 13.0) gets torch 2.13.0+cu130"
    assert torch.alternatives == ()  # no CPU build in this manifest


def test_rtx5090_with_a_cpu_build_keeps_it_a_separate_alternative() -> None:
    p = plan("linux-x86_64-py312-cuda12.8-sm120", "torch")
    torch = p.package("torch")
    assert torch is not None
    assert torch.hint == "a driver of 580 or newer (CUDA 13.0) gets torch 2.13.0+cu130"
    assert list(map(str, torch.alternatives)) == ["torch==2.13.0+cpu (runs without the GPU)"]


def test_cpu_only_python_311() -> None:
    p = plan("linux-x86_64-py311")
    assert p.package("torch").version == "2.13.0+cpu"  # type: ignore[union-attr]
    assert rules_by_flavour(p, "tilert") == {TILERT: ("python", "cuda", "gpu")}
    tilert = p.package("tilert")
    assert tilert is not None
    assert tilert.fix is None
    # Not "tilert has builds for Python 3.12": 3.12 alone still has no CUDA and no sm_100f.
    assert tilert.hint == (
        "no build of tilert exists for Python 3.11 or without an NVIDIA GPU: "
        "no single change to this machine gives one"
    )
    fa = p.package("flash-attn")
    assert fa is not None
    assert fa.fix is not None
    assert (fa.fix.kind, fa.fix.cuda) == ("gpu", "13.0")
    assert fa.hint.startswith("an NVIDIA GPU of compute capability 8.0 or newer (A100 and later")


def test_sm89_on_a_12_6_driver_tilert_blames_driver_and_gpu() -> None:
    p = plan("linux-x86_64-py312-cuda12.6-sm89")
    assert [x.version for x in p.packages[:3]] == [
        "2.13.0+cu126",
        "2.8.3+cu126torch2.13",
        "0.21.7+torch2130cu126",
    ]
    assert rules_by_flavour(p, "tilert") == {TILERT: ("cuda", "gpu")}
    tilert = p.package("tilert")
    assert tilert is not None
    assert tilert.fix is None
    assert tilert.hint == (
        f"no build of tilert exists for a driver with CUDA 12.6 or for GPUs outside "
        f"{TILERT_NONE}: no single change to this machine gives one"
    )


def test_macos_arm64() -> None:
    p = plan("macos-arm64-py312")
    torch = p.package("torch")
    assert torch is not None
    assert (torch.action, torch.cause) == ("pass", "fit")
    fa = p.package("flash-attn")
    assert fa is not None
    assert fa.action == "error"
    # Every flavour fails the platform and needs an NVIDIA driver and GPU.
    assert all(
        {"tags", "cuda", "gpu"} <= set(r) for r in rules_by_flavour(p, "flash-attn").values()
    )
    assert fa.reason.startswith("no macOS builds of flash-attn exist;")
    assert fa.hint == (
        "no build of flash-attn exists for macOS arm64 or without an NVIDIA GPU: "
        "no single change to this machine gives one"
    )


def test_b200_fits_everything_and_has_no_hints() -> None:
    p = plan("linux-x86_64-py312-cuda13.0-sm100")
    assert p.ok
    assert all(x.fix is None and x.hint == "" for x in p.packages)


# --- Windows on Arm with an NVIDIA GPU ------------------------------------------------


def test_windows_arm64_nvidia_hint_is_an_x64_interpreter() -> None:
    p = plan("windows-arm64-py312-cuda13.0-sm121", "torch")
    torch = p.package("torch")
    assert torch is not None
    assert torch.action == "error"
    assert torch.fix is not None
    assert (torch.fix.kind, torch.fix.os, torch.fix.arch) == ("platform", "windows", "x86_64")
    assert torch.fix.gets == "torch 2.13.0+cu130"
    assert torch.hint.startswith("an x86_64 (x64) Python interpreter gets torch 2.13.0+cu130; ")
    assert "uv venv --python cpython-3.12-windows-x86_64-none" in torch.hint
    assert "x64 installer from python.org" in torch.hint


def test_windows_arm64_cli_exits_1_and_names_the_x64_build(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        [
            "plan",
            "torch",
            "--target",
            "windows-arm64-py312-cuda13.0-sm121",
            "--manifest",
            str(frozen_path("torch")),
        ]
    )
    _out, err = capsys.readouterr()
    assert code == 1
    (hint,) = [x for x in err.splitlines() if x.startswith("hint: an x86_64")]
    assert "x86_64 (x64)" in hint
    assert "torch 2.13.0+cu130" in hint
    assert "cpython-3.12-windows-x86_64-none" in hint


def test_windows_arm64_cuda_flavour_is_chosen_natively_when_it_fits() -> None:
    mine = frozen("torch-win-arm64")
    p = plan("windows-arm64-py312-cuda13.4-sm121", "torch", manifests=mine)
    torch = p.package("torch")
    assert torch is not None
    assert torch.action == "rewrite"
    assert torch.url is not None
    assert torch.url.endswith("cp312-cp312-win_arm64.whl")
    # On an older driver the native build does not fit: then the x64 interpreter does.
    p = plan("windows-arm64-py312-cuda13.0-sm121", "torch", manifests=mine)
    torch = p.package("torch")
    assert torch is not None
    assert torch.fix is not None
    assert torch.fix.kind == "driver"  # a newer driver comes first, and fits natively
    assert torch.fix.gets == "torch 2.13.0+cu134"


# --- JSON: rule ids, every field -------------------------------------------------------


def test_json_lists_every_failure_with_its_rule_id() -> None:
    data = plan("linux-aarch64-py312-cuda13.0-sm121").to_dict()
    tilert = next(x for x in data["packages"] if x["name"] == "tilert")
    (rej,) = tilert["rejected"]
    assert [f["rule"] for f in rej["failures"]] == ["tags", "gpu"]
    assert tilert["hint"].startswith("no build of tilert exists for Linux aarch64")
    assert tilert["fix"] is None
    assert tilert["cause"] == "no-fit"
    assert {f["rule"] for x in data["packages"] for r in x["rejected"] for f in r["failures"]} <= (
        set(RULES)
    )
    json.dumps(data)  # plain data all the way down


def test_json_has_more_lines_and_fix() -> None:
    p = resolve(
        ["torch==2.0.0", "torch<3"], MANIFESTS, parse_target("linux-x86_64-py312-cuda13.0-sm100")
    )
    d = p.to_dict()["packages"][0]
    assert d["more_lines"] == ["torch<3"]
    d = plan("linux-x86_64-py312-cuda12.8-sm120", "torch").to_dict()["packages"][0]
    assert d["fix"]["kind"] == "driver"
    assert d["fix"]["cuda"] == "13.0"


def test_json_comes_from_every_value_field() -> None:
    from resolver_hook.ground.valueclass import fields
    from resolver_hook.resolve import PackagePlan

    d = plan("linux-x86_64-py312-cuda13.0-sm100", "torch").to_dict()
    assert set(d["packages"][0]) == {f.name for f in fields(PackagePlan)}
    m = MANIFESTS["tilert"].to_dict()
    # Every field but those marked {"json": False} (a plan's own record of pages).
    shown = {f.name for f in fields(Manifest) if f.metadata.get("json", True)}
    assert set(m) == shown
    assert (m["description"], m["replaced"]) == (None, [])


# --- explain: columns from the same evaluation ----------------------------------------


def explain(capsys: pytest.CaptureFixture[str], pkg: str, target: str) -> list[list[str]]:
    args = ["explain", pkg, "--target", target]
    for n in STACK:
        args += ["--manifest", str(frozen_path(n))]
    main([*args, "--all"])
    out = capsys.readouterr().out.splitlines()
    head = next(i for i, x in enumerate(out) if x.lstrip().startswith("tags"))
    cols = out[head].split()
    # A flavour's row: the mark, then a yes/no/n/a per rule (its reason on the next line).
    cell = r"(yes|no|n/a) +"
    return [
        re.findall(r"yes|no|n/a", line)[: len(cols) - 1]
        for line in out[head + 1 :]
        if re.match(rf"[* ] {cell * (len(cols) - 1)}", line)
    ]


def test_explain_gpu_column_on_a_machine_without_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    rows = explain(capsys, "tilert", "linux-x86_64-py312")
    # tags, python, cuda, gpu, accel, couplings, specifier
    assert rows == [["yes", "yes", "no", "no", "n/a", "n/a", "n/a"]]


def test_explain_couplings_no_when_the_coupled_package_has_no_fit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = explain(capsys, "natten", "linux-x86_64-py312-cuda12.6-sm120")
    # torch has no fit on sm_120 with a 12.6 driver: no natten coupling can hold.
    assert all(r[5] == "no" for r in rows), rows
    rows = explain(capsys, "natten", "linux-x86_64-py312-cuda13.0-sm100")
    assert sorted(r[5] for r in rows) == ["no", "no", "yes"]  # cu130 chosen; cu126, cu132 clash


def test_explain_never_says_yes_for_a_failed_or_unapplied_rule() -> None:
    from packaging.specifiers import SpecifierSet

    from resolver_hook.resolve import evaluate_flavour

    for target in MACHINES:
        profile = parse_target(target)
        for m in MANIFESTS.values():
            for f in m.flavours:
                outcomes = evaluate_flavour(f, m, profile, SpecifierSet(">=0"))
                for rule, o in outcomes.items():
                    assert o.rule == rule
                    assert (o.status == "fail") == bool(o.reason)
                if f.needs.cuda is None:
                    assert outcomes["cuda"].status == "n/a"
                if not f.needs.gpu:
                    assert outcomes["gpu"].status == "n/a"
                if profile.nvidia is None and f.needs.gpu:
                    assert outcomes["gpu"].status == "fail"


# --- the table: every hint, re-planned, gives a fit -----------------------------------

MACHINES = [
    "linux-x86_64-py312-cuda13.0-sm100",
    "linux-x86_64-py312-cuda13.0-sm103",
    "linux-x86_64-py312-cuda13.0-sm120",
    "linux-x86_64-py312-cuda13.0-sm90",
    "linux-x86_64-py312-cuda13.0-sm89",
    "linux-x86_64-py312-cuda13.0-sm75",
    "linux-x86_64-py312-cuda12.8-sm120",
    "linux-x86_64-py312-cuda12.8-sm100",
    "linux-x86_64-py312-cuda12.6-sm89",
    "linux-x86_64-py312-cuda12.6-sm120",
    "linux-x86_64-py312-cuda12.4-sm90",
    "linux-x86_64-py311-cuda11.8-sm86",
    "linux-x86_64-py313-cuda12.8-sm100",
    "linux-x86_64-py39-cuda13.0-sm100",
    "linux-x86_64-py315-cuda13.0-sm100",
    "linux-x86_64-py311",
    "linux-x86_64-py312",
    "linux-x86_64-py312-rocm7.1",
    "linux-x86_64-py312-rocm6.2",
    "linux-x86_64-py312-cuda13.0",
    "linux-x86_64-py312-glibc2.17-cuda13.0-sm100",
    "linux-aarch64-py312-cuda13.0-sm121",
    "linux-aarch64-py312-cuda13.0-sm90",
    "linux-aarch64-py312-glibc2.31-cuda13.0-sm90",
    "linux-aarch64-py310",
    "linux-aarch64-py312-cuda12.6-sm87",
    "linux-ppc64le-py312",
    "macos-arm64-py312",
    "macos-x86_64-py312",
    "macos-arm64-py39",
    "windows-x86_64-py312-cuda13.0-sm120",
    "windows-x86_64-py312-cuda12.6-sm89",
    "windows-x86_64-py312",
    "windows-arm64-py312-cuda13.0-sm121",
    "windows-arm64-py312",
]


def changed_target(target: str, fix: Change) -> str:
    """The target spec with the hinted fact changed, written out independently of the
    resolver's own :func:`resolver_hook.resolve.apply_change`."""
    os_name, arch, *rest = target.split("-")
    fields = {re.match(r"[a-z]+", f).group(0): f for f in rest}  # type: ignore[union-attr]
    if fix.os:
        if fix.os != os_name:
            fields.pop("glibc", None)
        os_name, arch = fix.os, fix.arch or arch
    if fix.python:
        fields["py"] = "py" + fix.python.replace(".", "")
    if fix.glibc:
        fields["glibc"] = f"glibc{fix.glibc}"
    if fix.rocm:
        fields.pop("cuda", None)
        fields.pop("sm", None)
        fields["rocm"] = f"rocm{fix.rocm}"
    if fix.cuda:
        fields["cuda"] = f"cuda{fix.cuda}"
    if fix.sm:
        fields["sm"] = "sm" + fix.sm.replace(".", "")
    return "-".join([os_name, arch, *fields.values()])


def _check_hints(target: str, manifests: dict[str, Manifest]) -> int:
    p = resolve(list(STACK), manifests, parse_target(target))
    checked = 0
    for pkg in p.errors:
        assert pkg.hint, f"{target}: {pkg.name} has no hint"
        if pkg.fix is None:
            assert "no single change" in pkg.hint
            continue
        assert pkg.fix.gets
        assert pkg.fix.gets in pkg.hint
        other = changed_target(target, pkg.fix)
        replanned = resolve(list(STACK), manifests, parse_target(other))
        q = replanned.package(pkg.name)
        assert q is not None, (target, other)
        assert q.cause == "fit", (target, other, pkg.hint)
        # A plain build left to the installer is named without a version (none is pinned).
        plain = f"{q.name}'s plain build (left to the installer)"
        assert (f"{q.name} {q.version}" if q.version else plain) == pkg.fix.gets
        # A package the hint says moves with it does: from the build the plan has to
        # the one named.
        for moved in pkg.fix.also:
            name, version = moved.split(" ")
            before, after = p.package(name), replanned.package(name)
            assert before is not None
            assert after is not None
            assert before.version != version == after.version, (target, moved)
        checked += 1
    return checked


@pytest.mark.parametrize("target", MACHINES)
def test_every_hint_re_planned_gives_a_fit_frozen(target: str) -> None:
    _check_hints(target, MANIFESTS)
    _check_hints(target, CUDA_ONLY_TORCH)


@pytest.mark.builtin_data  # without it, conftest swaps in the frozen copies
def test_every_hint_re_planned_gives_a_fit_builtin() -> None:
    builtin = builtin_manifests()
    checked = sum(_check_hints(t, builtin) for t in MACHINES)
    assert checked > 0


def test_the_table_checks_real_hints() -> None:
    """The table is not vacuous: it holds every kind of hint the tool gives."""
    kinds = set()
    for target in MACHINES:
        for m in (MANIFESTS, CUDA_ONLY_TORCH):
            for pkg in resolve(list(STACK), m, parse_target(target)).errors:
                if pkg.fix is not None:
                    kinds.add(pkg.fix.kind)
    assert kinds >= {"driver", "python", "platform", "gpu", "glibc"}, kinds


# --- saying each thing once, in real words --------------------------------------------


def test_probe_reasons_once_per_plan(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--example", "--target", "linux-x86_64-py312"]
    for n in STACK:
        args += ["--manifest", str(frozen_path(n))]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert (out + err).count("the target names no NVIDIA GPU") == 1


def test_sha256_note_once_for_all_unverified_wheels() -> None:
    p = plan("linux-x86_64-py312-cuda13.0-sm100")
    unverified = [n for n in p.notes if "sha256" in n]
    assert unverified == [
        "flash-attn, tilert: no sha256 in their manifest for the wheel URL: not verified by hash"
    ]


@pytest.mark.builtin_data
def test_sha256_note_once_for_the_builtin_manifests() -> None:
    builtin = resolve(
        list(STACK), builtin_manifests(), parse_target("linux-x86_64-py312-cuda13.0-sm100")
    )
    assert [n for n in builtin.notes if "sha256" in n] == [
        "built-in manifests carry no sha256 yet: their wheels are not verified by hash"
    ]


def test_machine_line_names_the_rocm_version() -> None:
    line = parse_target("linux-x86_64-py312-rocm7.1").describe()
    assert line.endswith("AMD ROCm 7.1")
    assert "no NVIDIA GPU" not in line
    p = plan("linux-x86_64-py312-rocm7.1", "torch")
    assert p.package("torch").version == "2.13.0+rocm7.1"  # type: ignore[union-attr]


def test_explain_says_one_flavour(capsys: pytest.CaptureFixture[str]) -> None:
    main(["explain", "tilert", "--target", GB10_T, "--manifest", str(frozen_path("tilert"))])
    out = capsys.readouterr().out
    assert out.startswith(f"tilert: 1 flavour from {frozen_path('tilert')}\n")


GB10_T = "linux-aarch64-py312-cuda13.0-sm121"


def test_enable_says_no_fit_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    args = ["enable", "--venv", str(venv), "--target", "macos-arm64-py312"]
    for n in STACK:
        args += ["--manifest", str(frozen_path(n))]
    assert main(args) == 0
    out = capsys.readouterr().out
    # enable plans every package with a manifest: those with no build here are named
    # once, and -v gives each its reason and hint.
    (line,) = [x for x in out.splitlines() if "no build fits this machine for" in x]
    assert "flash-attn" in line
    assert "'resolver-hook explain NAME' says why" in line
    assert not [x for x in out.splitlines() if x.startswith("  flash-attn:")]
    assert main(["-v", *args]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("  flash-attn:")]
    assert line.startswith("  flash-attn: no macOS builds of flash-attn exist; ")
    assert "no build fits this machine: no build" not in out
    assert "hint: no build of flash-attn exists for macOS arm64" in out


def test_pip_install_says_the_x64_interpreter_before_refusing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        [
            "pip",
            "--target",
            "windows-arm64-py312-cuda13.0-sm121",
            "--manifest",
            str(frozen_path("torch")),
            "install",
            "torch",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 1
    assert "hint: an x86_64 (x64) Python interpreter gets torch 2.13.0+cu130" in err
    assert "nothing was installed" in err


def test_readme_quick_start_makes_a_venv_in_two_commands() -> None:
    text = (DATA.parent.parent / "README.md").read_text()
    block = text.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [x for x in block.splitlines() if x.strip()]
    assert len(commands) == 2
    assert "-m venv .venv" in commands[0]
    assert ". .venv/bin/activate" in commands[0]
    assert commands[1].startswith("resolver-hook plan --example")


def test_a_pure_python_gpu_wheel_is_not_called_missing_for_this_os() -> None:
    from resolver_hook.manifest import parse_manifest

    demo = parse_manifest(
        {
            "package": {"name": "demo"},
            "wheel": [
                {
                    "url": "https://example.org/demo-1.0-py3-none-any.whl",
                    "cuda": ">=13.0",
                    "gpu": ["sm_90"],
                }
            ],
        }
    )
    p = resolve(["demo"], {"demo": demo}, parse_target("linux-x86_64-py312-cuda12.8-sm90"))
    err = p.package("demo")
    assert err is not None
    assert err.reason.startswith("no build of demo fits this machine;")
    assert err.hint == "a driver of 580 or newer (CUDA 13.0) gets demo 1.0"


def test_hint_work_is_bounded() -> None:
    # limits.py: a manifest listing thousands of Pythons, or a plan of many refused
    # packages, keeps its hints to the nearest changes and the first packages.
    from resolver_hook.limits import MAX_HINT_CHANGES, MAX_HINTED_PACKAGES
    from resolver_hook.manifest import parse_manifest

    pythons = [f"3.{m}" for m in range(20, 20 + 4 * MAX_HINT_CHANGES)]
    many = parse_manifest(
        {
            "package": {"name": "many"},
            "index": [{"url": "https://e.org/many/", "version": "1.0", "python": pythons}],
        }
    )
    p = plan("linux-x86_64-py312", "many", manifests={"many": many})
    fix = p.package("many").fix  # type: ignore[union-attr]
    assert fix is not None
    assert fix.python == "3.20"  # the nearest: only the nearest changes are tried
    names = [f"pkg{i}" for i in range(MAX_HINTED_PACKAGES + 3)]
    refused = {
        n: parse_manifest(
            {"package": {"name": n}, "index": [{"version": "1.0", "python": ["3.13"]}]}
        )
        for n in names
    }
    p = plan("linux-x86_64-py312", *names, manifests=refused)
    hints = [p.package(n).hint for n in names]  # type: ignore[union-attr]
    assert all(h.startswith("Python 3.13 gets") for h in hints[:MAX_HINTED_PACKAGES])
    assert all(h.startswith("no hint computed: ") for h in hints[MAX_HINTED_PACKAGES:])


@pytest.mark.parametrize("order", [("3.14", "3.14t"), ("3.14t", "3.14")])
@pytest.mark.parametrize(("machine", "first"), [("py313t", "3.14t"), ("py313", "3.14")])
def test_of_two_equally_near_pythons_the_one_built_like_the_machine_comes_first(
    order: tuple[str, str], machine: str, first: str
) -> None:
    # Not the order a set happens to give (it changed with PYTHONHASHSEED).
    from types import SimpleNamespace

    from resolver_hook.resolve.hints import _python_changes

    profile = parse_target(f"linux-x86_64-{machine}-cuda13.0-sm120")
    flavours: Any = [SimpleNamespace(python_versions=order)]
    changes = _python_changes(profile, flavours)
    assert [c.python for c in changes][:2] == [first, "3.14t" if first == "3.14" else "3.14"]
