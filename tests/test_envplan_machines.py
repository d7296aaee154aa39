"""The example environment on three machines that were refused whole: an AMD GPU
(ROCm, named by its gfx architecture in the target), an Arm server without a GPU
(``--cpu``) and a GH200 on a CUDA 12.6 driver; and the target spec's gfx field."""

from __future__ import annotations

import pytest

from resolver_hook.errors import UsageError
from resolver_hook.host.detect import parse_target
from tests.clirun import cli


def test_a_target_names_amd_gpus_by_their_gfx_architecture() -> None:
    p = parse_target("linux-x86_64-py312-rocm6.4-gfx942")
    assert p.rocm is not None
    assert (p.rocm.version, p.rocm.gfx) == ("6.4", ("gfx942",))
    assert "AMD ROCm 6.4 (gfx942)" in p.describe()
    several = parse_target("linux-x86_64-py312-rocm7.2-gfx90a,gfx942,gfx90a")
    assert several.rocm is not None
    assert several.rocm.gfx == ("gfx90a", "gfx942")


def test_a_gfx_field_without_a_rocm_version_says_so() -> None:
    p = parse_target("linux-x86_64-py312-gfx1100")
    assert p.rocm is not None
    assert (p.rocm.version, p.rocm.gfx) == (None, ("gfx1100",))
    assert any("ROCm version not given" in n for n in p.notes)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("linux-x86_64-rocm7.2-gfx94z", "'gfx94z' is not an AMD GPU name"),
        ("linux-x86_64-rocm7.2-gfx942,sm90", "'sm90' is not an AMD GPU name"),
        ("linux-x86_64-gfx942-gfx90a", "fields 'gfx942' and 'gfx90a' both give the AMD GPU list"),
    ],
)
def test_a_bad_gfx_field_is_refused_naming_it(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_target(spec)


def test_a_bad_gfx_field_is_one_error_line_and_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "detect", "--target", "linux-x86_64-py312-rocm6.4-gfx9")
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0].startswith("error: --target 'linux-x86_64-py312-rocm6.4-gfx9' field 'gfx9'")
    assert lines[1].startswith("hint: ")
    assert len(lines) == 2
