"""Driver floors per kernel target, from scan to explain: a cupy-like wheel (sm_89 SASS
beside PTX of ISA 8.8) fits a CUDA 12.6 driver on sm_89 and needs 12.9 where only the
PTX runs; a bitsandbytes-like wheel (one library per runtime) fits CUDA 12.x; a Jetson
build without an l4t range is told apart from a server-Arm build. The wheels wrap the
nvcc-built objects of tests/data/cuda (tests/cudawheels.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.host import parse_target
from resolver_hook.manifest import Manifest, ManifestError, load_manifest, loads_manifest
from resolver_hook.resolve import resolve
from tests.cudawheels import binary_wheel, fixture

PREFIX = "https://example.org/wheels/"
CUPY = "cupy_cuda12x-14.2.0-cp312-cp312-manylinux_2_28_x86_64.whl"
BNB = "bitsandbytes-0.50.2-py3-none-manylinux_2_24_x86_64.whl"
JETSON = "cupy_cuda12x-14.2.0-cp310-cp310-manylinux_2_35_aarch64.whl"


def _scan(tmp_path: Path, filename: str, members: dict[str, bytes]) -> Path:
    wheel = binary_wheel(tmp_path, filename, members)
    out = tmp_path / "m.toml"
    assert main(["scan", str(wheel), "--url-prefix", PREFIX, "-o", str(out)]) == 0
    return out


@pytest.fixture
def cupy(tmp_path: Path) -> Path:
    return _scan(tmp_path, CUPY, {"cupy/_core.so": fixture("libcupylike.so")})


def test_scan_writes_a_floor_per_target(cupy: Path) -> None:
    text = cupy.read_text()
    assert 'cuda = ">=12.9"' in text  # what resolvers without cuda_floors read
    assert '[wheel.cuda_floors]\ncompute_89 = ">=12.9"\nsm_89 = ">=12.0"\n' in text
    (wheel,) = load_manifest(cupy).wheels
    assert {str(t): str(s) for t, s in wheel.cuda_floors} == {
        "compute_89": ">=12.9",
        "sm_89": ">=12.0",
    }


def _action(manifest: Manifest, target: str, name: str) -> tuple[str, str]:
    plan = resolve([name], {manifest.name: manifest}, parse_target(target))
    pkg = plan.package(name)
    assert pkg is not None
    return pkg.action, pkg.reason + " ".join(r.reason for r in pkg.rejected)


@pytest.mark.parametrize(
    ("target", "fits", "words"),
    [
        # sm_89 SASS runs on any CUDA 12 driver (minor-version compatibility).
        pytest.param("linux-x86_64-py312-cuda12.6-sm89", True, "", id="L4-by-SASS"),
        # On 9.0 only the PTX runs, and JIT of ISA 8.8 needs CUDA 12.9 (docs/facts.md 1.8).
        pytest.param(
            "linux-x86_64-py312-cuda12.6-sm90",
            False,
            "on H100, H200, GH200 (sm_90) only compute_89 needs CUDA >=12.9; this driver has "
            "CUDA 12.6",
            id="H100-by-PTX-old-driver",
        ),
        pytest.param("linux-x86_64-py312-cuda12.9-sm90", True, "", id="H100-by-PTX"),
        pytest.param("linux-x86_64-py312-cuda11.8-sm89", False, "sm_89 needs CUDA >=12.0", id="11"),
    ],
)
def test_the_floor_is_chosen_per_gpu(cupy: Path, target: str, fits: bool, words: str) -> None:
    action, reasons = _action(load_manifest(cupy), target, "cupy-cuda12x")
    assert (action == "rewrite") is fits
    assert words in reasons


def test_explain_of_the_cupy_like_wheel_fits_cuda_12_6_on_sm89(
    cupy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = "linux-x86_64-py312-cuda12.6-sm89"
    assert main(["explain", "cupy-cuda12x", "--manifest", str(cupy), "--target", target]) == 0
    chosen = [line for line in capsys.readouterr().out.splitlines() if line.startswith("*")]
    assert len(chosen) == 1
    assert "14.2.0" in chosen[0]


def test_a_machine_with_two_gpus_needs_each_gpus_floor(cupy: Path) -> None:
    # sm_89 runs SASS (12.0 is enough), sm_90 only the PTX (12.9): a 12.6 driver fails.
    manifest = load_manifest(cupy)
    action, reasons = _action(manifest, "linux-x86_64-py312-cuda12.6-sm89,sm90", "cupy-cuda12x")
    assert action != "rewrite"
    assert "(sm_90) only compute_89 needs CUDA >=12.9" in reasons


@pytest.mark.parametrize("cuda", ["12.0", "12.4", "12.8", "13.0"])
def test_the_bitsandbytes_like_wheel_fits_cuda_12_machines(tmp_path: Path, cuda: str) -> None:
    members = {f"bnb/libbnb_cuda{v}.so": fixture(f"libbnb_cuda{v}.so") for v in (11, 12, 13)}
    manifest = load_manifest(_scan(tmp_path, BNB, members))
    (wheel,) = manifest.wheels
    assert (str(wheel.needs.cuda), wheel.cuda_floors) == (">=11.0", ())
    action, reasons = _action(manifest, f"linux-x86_64-py312-cuda{cuda}-sm80", "bitsandbytes")
    assert action == "rewrite", reasons


def test_a_jetson_build_without_l4t_is_not_called_sbsa(tmp_path: Path) -> None:
    manifest = load_manifest(_scan(tmp_path, JETSON, {"cupy/_core.so": fixture("libjetson.so")}))
    action, reasons = _action(manifest, "linux-aarch64-py310-cuda12.6-sm87-l4t36.4", "cupy-cuda12x")
    assert action == "error"
    assert "carries SASS for this Jetson's GPU (sm_87)" in reasons
    assert "server-Arm (SBSA)" not in reasons
    # With the l4t range its publisher adds, the same wheel fits.
    text = (
        (tmp_path / "m.toml")
        .read_text()
        .replace('cuda = ">=12.0"', 'cuda = ">=12.0"\nl4t = ">=36,<37"')
    )
    fitted = loads_manifest(text, source="m.toml")
    assert _action(fitted, "linux-aarch64-py310-cuda12.6-sm87-l4t36.4", "cupy-cuda12x")[0] == (
        "rewrite"
    )


def _wheel_toml(extra: str, gpu: str = '["sm_89", "compute_89"]', cuda: str = '">=12.9"') -> str:
    return (
        'schema = 1\n[package]\nname = "x"\n[[wheel]]\n'
        'url = "https://e.org/x-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"\n'
        + (f"cuda = {cuda}\n" if cuda else "")
        + f"gpu = {gpu}\n{extra}"
    )


@pytest.mark.parametrize(
    ("extra", "cuda", "problem"),
    [
        pytest.param(
            'cuda_floors = { sm_90 = ">=12.0" }\n',
            '">=12.9"',
            "wheel[0].cuda_floors.sm_90: sm_90 is not in gpu",
            id="target-not-in-gpu",
        ),
        pytest.param(
            'cuda_floors = { sm_9 = ">=12.0" }\n',
            '">=12.9"',
            "wheel[0].cuda_floors.sm_9: ",
            id="not-a-target",
        ),
        pytest.param(
            'cuda_floors = { sm_89 = "twelve" }\n',
            '">=12.9"',
            "wheel[0].cuda_floors.sm_89: 'twelve' is not a version specifier",
            id="bad-specifier",
        ),
        pytest.param(
            'cuda_floors = { sm_89 = "" }\n', '">=12.9"', "cuda_floors.sm_89: empty", id="empty"
        ),
        pytest.param(
            'cuda_floors = { sm_89 = 12 }\n',
            '">=12.9"',
            "wheel[0].cuda_floors.sm_89: expected a string",
            id="not-a-string",
        ),
        pytest.param(
            'cuda_floors = ">=12.0"\n', '">=12.9"', "wheel[0].cuda_floors: expected a table",
            id="str",
        ),
        pytest.param(
            'cuda_floors = { sm_89 = ">=12.0" }\n', "", "wheel[0].cuda_floors: needs 'cuda' too",
            id="no-cuda",
        ),
    ],
)  # fmt: skip
def test_cuda_floors_are_validated_with_key_paths(extra: str, cuda: str, problem: str) -> None:
    with pytest.raises(ManifestError) as caught:
        loads_manifest(_wheel_toml(extra, cuda=cuda), source="m.toml")
    assert problem in caught.value.message


def test_a_manifest_without_cuda_floors_keeps_the_one_floor() -> None:
    manifest = loads_manifest(_wheel_toml(""), source="m.toml")
    action, reasons = _action(manifest, "linux-x86_64-py312-cuda12.6-sm89", "x")
    assert action == "error"
    assert "needs a driver with CUDA >=12.9" in reasons


def test_a_target_floor_keeps_the_upper_bound_of_cuda() -> None:
    floors = 'cuda_floors = { sm_89 = ">=12.0" }\n'
    manifest = loads_manifest(_wheel_toml(floors, cuda='">=12.9,<13"'), source="m.toml")
    assert _action(manifest, "linux-x86_64-py312-cuda12.6-sm89", "x")[0] == "rewrite"
    action, reasons = _action(manifest, "linux-x86_64-py312-cuda13.0-sm89", "x")
    assert action == "error"
    assert "sm_89 needs CUDA <13,>=12.0" in reasons
