"""Issue 49, ``sync`` on AMD: a lock set holds one lock per AMD GPU class (gfx942 for an
MI300, gfx90a for an MI200); a ROCm machine picks the lock planned for its gfx ISA, and
a lock for another gfx fails that rule, named (as ``sync`` names the nearest lock)."""

from __future__ import annotations

from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from resolver_hook.host import parse_target
from resolver_hook.lock.sets import choose, lock_set_files, read_index
from resolver_hook.manifest.model import Needs, WheelFlavour
from resolver_hook.resolve.model import PackagePlan, Plan

MI300 = "linux-x86_64-py312-rocm6.4-gfx942"
MI200 = "linux-x86_64-py312-rocm6.4-gfx90a"


def _plan(target: str) -> Plan:
    """demo's ROCm build for the target's one AMD GPU, as a lock plans it."""
    gfx = target.rsplit("-", 1)[1]
    name = f"demo-1.0+rocm6.4.{gfx}-cp312-cp312-manylinux_2_28_x86_64.whl"
    flavour = WheelFlavour(
        url=f"https://example.org/{name}",
        filename=name,
        name=canonicalize_name("demo"),
        version=Version(f"1.0+rocm6.4.{gfx}"),
        tags=frozenset({Tag("cp312", "cp312", "manylinux_2_28_x86_64")}),
        sha256="ab" * 32,
        needs=Needs(rocm=SpecifierSet(">=6.4"), gfx=(gfx,)),
    )
    package = PackagePlan(
        name=canonicalize_name("demo"),
        action="rewrite",
        reason="fit",
        url=flavour.url,
        version=str(flavour.version),
        flavour=flavour,
    )
    return Plan(profile=parse_target(target), packages=(package,))


def _lock_set(folder: Path, targets: list[str]) -> None:
    rows = [(folder / f"{t}.txt", f"# {t}\n", t, parse_target(t), _plan(t)) for t in targets]
    for path, text in lock_set_files(folder, rows):
        path.write_text(text, encoding="utf-8")


def test_a_rocm_machine_picks_the_lock_of_its_gfx(tmp_path: Path) -> None:
    # The MI300 lock first: with no gfx rule the first lock that "fits" would be taken.
    _lock_set(tmp_path, [MI300, MI200])
    locks = read_index(tmp_path)
    assert [lock.gfx for lock in locks] == [("gfx942",), ("gfx90a",)]
    chosen, why = choose(locks, parse_target(MI200))
    assert chosen is not None
    assert chosen.target == MI200
    assert why[f"{MI300}.txt"][0] == (
        "the lock was planned for AMD gfx942; this machine's GPU gfx90a is not among them"
    )
    # The build's own gfx is kept in the index and judged too.
    assert any("gfx" in reason for reason in why[f"{MI300}.txt"][1:])
    chosen, _ = choose(locks, parse_target(MI300))
    assert chosen is not None
    assert chosen.target == MI300


def test_a_rocm_machine_with_no_lock_of_its_gfx_gets_none(tmp_path: Path) -> None:
    _lock_set(tmp_path, [MI300])
    chosen, why = choose(read_index(tmp_path), parse_target(MI200))
    assert chosen is None
    assert "gfx942" in why[f"{MI300}.txt"][0]
