"""The kernel-target algebra, case by case against docs/facts.md section 1.

Source of every expectation: NVIDIA CUDA documentation as summarised in
docs/facts.md section 1 ("What a compiled kernel runs on" and the CC list).
"""

from __future__ import annotations

import pytest

from resolver_hook.portable.cuda import (
    KernelTarget,
    cuda_for_driver,
    decode_cuda_version,
    describe_cc,
    describe_target,
    driver_meets_runtime,
    min_driver_for_runtime,
    parse_cc,
    parse_target,
    targets_cover,
    uncovered,
)

RUNS_ON = [
    # sm_100f: CC 10.0 and the higher minors of family 10 (10.3); not 11.0/12.x/9.0.
    ("sm_100f", (10, 0), True),
    ("sm_100f", (10, 3), True),
    ("sm_100f", (11, 0), False),  # Jetson Thor, named sm_101 before CUDA 13.0
    ("sm_100f", (12, 0), False),  # RTX 5090
    ("sm_100f", (12, 1), False),  # GB10: the TileRT report
    ("sm_100f", (9, 0), False),
    # sm_120f: 12.0 and 12.1.
    ("sm_120f", (12, 0), True),
    ("sm_120f", (12, 1), True),
    # sm_90a: arch-specific, exactly 9.0.
    ("sm_90a", (9, 0), True),
    ("sm_90a", (10, 0), False),
    # Plain SASS: same major, equal or higher minor.
    ("sm_80", (8, 0), True),
    ("sm_80", (8, 6), True),
    ("sm_80", (8, 9), True),
    ("sm_80", (9, 0), False),
    ("sm_120", (12, 1), True),  # "sm_120 SASS runs on GB10"
    ("sm_86", (8, 0), False),
    # PTX: any CC >= X.Y, any major.
    ("compute_80", (9, 0), True),
    ("compute_80", (12, 1), True),
    ("compute_80", (7, 5), False),
    ("compute_120", (8, 9), False),
    ("compute_120", (12, 1), True),
    # PEP 817 spellings mean the same targets.
    ("100_real", (10, 3), True),
    ("100_real", (12, 0), False),
    ("120_virtual", (12, 1), True),
    ("100f_real", (10, 3), True),
    # Tegra (docs/facts.md 1.1, Programming Guide "Binary Compatibility": not supported
    # for Tegra, nor between desktop and Tegra): exact CC only, both ways; PTX still JITs.
    ("sm_80", (8, 7), False),  # Jetson Orin: desktop SASS never runs on it
    ("sm_87", (8, 7), True),
    ("sm_87", (8, 9), False),  # Orin SASS never runs on an L4
    ("compute_80", (8, 7), True),  # PTX JITs on Orin
    ("compute_87", (8, 9), True),
    ("sm_70", (7, 2), False),  # Xavier
    ("sm_72", (7, 2), True),
    ("sm_72", (7, 5), False),
    ("sm_50", (5, 3), False),  # Nano
    ("sm_60", (6, 2), False),  # TX2
    # Family targets: sm_100f is 10.0 and 10.3 only; Thor (10.1) is Tegra.
    ("sm_100f", (10, 1), False),
    ("sm_100", (10, 1), False),
    ("sm_101f", (10, 3), False),
    ("sm_101f", (10, 1), True),
    ("sm_101", (10, 3), False),
    ("compute_100f", (10, 1), False),
    ("compute_100f", (10, 3), True),
    # CC 11.0 (Thor under CUDA 13) is an SBSA platform (docs/facts.md 1.2).
    ("sm_110", (11, 0), True),
    ("sm_110f", (11, 0), True),
    ("sm_100", (11, 0), False),
    ("compute_100", (11, 0), True),
]


@pytest.mark.parametrize(
    ("target", "cc", "expected"), RUNS_ON, ids=[f"{t}-on-{c[0]}.{c[1]}" for t, c, _ in RUNS_ON]
)
def test_runs_on(target: str, cc: tuple[int, int], expected: bool) -> None:
    assert parse_target(target).runs_on(cc) is expected


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("sm_90a", "sm_90a"),
        ("SM_100F", "sm_100f"),
        ("compute_120", "compute_120"),
        ("90_real", "sm_90"),
        ("120_virtual", "compute_120"),
        ("sm_121", "sm_121"),
    ],
)
def test_parse_round_trip(text: str, canonical: str) -> None:
    target = parse_target(text)
    assert str(target) == canonical
    assert parse_target(str(target)) == target
    assert parse_target(target.pep817) == target


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "sm",
        "sm_",
        "sm_1",
        "sm_1000",
        "sm_90b",
        "compute_x",
        "gfx90a",
        "sm_090",
        "100_imaginary",
        "sm-90",
    ],
)
def test_parse_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match=r"kernel target|architecture"):
        parse_target(bad)


def test_cover_several_gpus() -> None:
    targets = [parse_target(t) for t in ("sm_90a", "sm_100f")]
    assert targets_cover(targets, [(9, 0), (10, 3)])
    assert uncovered(targets, [(9, 0), (12, 1), (10, 0)]) == [(12, 1)]
    assert not targets_cover([], [(9, 0)])
    assert targets_cover([], [])  # no GPU: nothing to cover


def test_describe() -> None:
    # The placeholder message quotes these words.
    assert describe_target(parse_target("sm_100f")) == "sm_100f: NVIDIA B200/GB200, B300/GB300"
    assert describe_cc((12, 1)) == "sm_121 (GB10 (DGX Spark))"
    assert describe_cc((6, 1)) == "sm_61"
    assert "8.0 or newer" in describe_target(parse_target("compute_80"))


@pytest.mark.parametrize(
    ("text", "cc"), [("12.1", (12, 1)), ("sm_121", (12, 1)), ("sm90", (9, 0)), ("sm100", (10, 0))]
)
def test_parse_cc(text: str, cc: tuple[int, int]) -> None:
    assert parse_cc(text) == cc


@pytest.mark.parametrize("bad", ["12", "100", "twelve", "1.2.3", "sm_0", "sm_090", ""])
def test_parse_cc_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="compute capability"):
        parse_cc(bad)


# docs/facts.md section 1, minimum drivers (NVIDIA CUDA Toolkit release notes).
@pytest.mark.parametrize(
    ("major", "os_name", "driver"),
    [
        (13, "linux", "580"),
        (13, "windows", "580"),
        (12, "linux", "525.60.13"),
        (12, "windows", "528.33"),
        (11, "linux", "450.80.02"),
        (11, "windows", "452.39"),
        (10, "linux", None),
    ],
)
def test_min_driver(major: int, os_name: str, driver: str | None) -> None:
    assert min_driver_for_runtime(major, os_name) == driver


def test_minor_version_compatibility() -> None:
    # A cu128 wheel runs on a driver that supports CUDA 12.0 or newer, not 11.8.
    assert driver_meets_runtime((12, 0), (12, 8))
    assert driver_meets_runtime((13, 0), (12, 8))
    assert not driver_meets_runtime((11, 8), (12, 8))
    assert not driver_meets_runtime((12, 9), (13, 0))


def test_sm_101_is_jetson_thor() -> None:
    # CUDA 13.0 renumbered SM101 as SM110 (docs/facts.md 1.2): sm_101 is Thor, not B300.
    assert describe_cc((10, 1)) == "sm_101 (Jetson Thor (CUDA 12.9 naming))"
    assert (
        describe_target(parse_target("sm_101")) == "sm_101: NVIDIA Jetson Thor (CUDA 12.9 naming)"
    )
    assert describe_target(parse_target("sm_101f")) == (
        "sm_101f: NVIDIA Jetson Thor (CUDA 12.9 naming)"
    )
    assert describe_cc((8, 7)) == "sm_87 (Jetson Orin)"


@pytest.mark.parametrize(
    ("value", "cuda"), [(13000, (13, 0)), (12090, (12, 9)), (9020, (9, 2)), (0, None)]
)
def test_decode_cuda_version(value: int, cuda: tuple[int, int] | None) -> None:
    # 1000 * major + 10 * minor (docs/facts.md 1.3).
    assert decode_cuda_version(value) == cuda


# NVIDIA CUDA Toolkit release notes, Table 3 (docs/facts.md 1.3).
@pytest.mark.parametrize(
    ("driver", "expected"),
    [
        ("580.95.05", ((13, 0), True)),
        ("580.65.06", ((13, 0), True)),
        ("580.65.05", ((12, 9), True)),  # just below 13.0 GA's driver
        ("570.86.15", ((12, 8), True)),
        ("570.26", ((12, 8), True)),
        ("565.57.01", ((12, 6), True)),
        ("535.104.05", ((12, 2), True)),
        ("525.60.13", ((12, 0), True)),
        ("595.71.05", ((13, 2), True)),
        ("610.12", ((13, 2), False)),  # newer than every row: at least 13.2
        ("440.33.01", None),
        ("banana", None),
        ("", None),
    ],
)
def test_cuda_for_driver(driver: str, expected: tuple[tuple[int, int], bool] | None) -> None:
    assert cuda_for_driver(driver) == expected


def test_target_ordering_and_hash() -> None:
    a, b = parse_target("sm_90a"), parse_target("sm_100f")
    assert sorted([b, a]) == [a, b]
    assert len({a, parse_target("90a_real")}) == 1
    with pytest.raises(ValueError, match="bad kernel target"):
        KernelTarget("cubin", 9, 0)
