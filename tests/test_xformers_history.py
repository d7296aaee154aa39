"""A pinned xformers release couples the plan of an unpinned torch (issue 40, item 5):
its own METADATA pins one torch release (0.0.25.post1 -> torch==2.2.2, docs/facts.md
section 6.8), so the plan takes that torch where a build of it runs, and refuses the
pair where none does, naming both and the requirement between them."""

from __future__ import annotations

import json

import pytest

from resolver_hook.host import parse_target
from resolver_hook.manifest.load import loads_manifest
from resolver_hook.resolve import resolve
from tests.clirun import cli

L40 = "linux-x86_64-py311-cuda12.8-sm89"
B200 = "linux-x86_64-py311-cuda13.0-sm100"
B200_PY312 = "linux-x86_64-py312-cuda13.0-sm100"


def _plan(
    capsys: pytest.CaptureFixture[str], target: str, *reqs: str
) -> tuple[int, dict[str, dict[str, object]], str]:
    code, out, err = cli(capsys, "plan", *reqs, "--offline", "--json", "--target", target)
    return code, {str(p["name"]): p for p in json.loads(out)["packages"]}, err


@pytest.mark.builtin_data
def test_the_pinned_release_takes_the_torch_it_requires_where_that_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, plan, _ = _plan(capsys, L40, "xformers==0.0.25.post1", "torch")
    assert code == 0
    xformers, torch = plan["xformers"], plan["torch"]
    # Judged by its rules (CUDA 12.1, sm_80 SASS covers sm_89), not an unjudged pass.
    assert xformers["cause"] != "unjudged", xformers
    assert xformers["line"] == "xformers==0.0.25.post1"
    assert "couples with torch==2.2.2" in str(xformers["reason"])
    # torch 2.2.2's cu121 wheels carry sm_86 (pytorch/builder release/2.2).
    assert (torch["action"], torch["line"]) == ("rewrite", "torch==2.2.2+cu121")


@pytest.mark.builtin_data
def test_the_pair_is_refused_where_no_build_of_the_required_torch_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, plan, err = _plan(capsys, B200, "xformers==0.0.25.post1", "torch")
    assert code == 1
    xformers = plan["xformers"]
    assert xformers["action"] == "error"
    assert "xformers==0.0.25.post1 has no build that runs here" in str(xformers["reason"])
    # The requirement between the two lines: torch 2.2.2 has no sm_100 build.
    assert "needs torch==2.2.2; no such build of torch fits this machine" in err
    # The nearest that runs needs a torch that runs here too: 0.0.30 needs torch 2.7.0,
    # whose cu128 build has sm_100 kernels.
    assert "the nearest that does: xformers==0.0.30" in str(xformers["reason"])
    # With Python 3.12 no build of 0.0.25.post1 exists at all: refused as well.
    code, plan, _ = _plan(capsys, B200_PY312, "xformers==0.0.25.post1", "torch")
    assert (code, plan["xformers"]["action"]) == (1, "error")


@pytest.mark.builtin_data
def test_a_cuda_12_build_is_not_paired_with_a_cuda_13_torch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # PyPI's 0.0.34 is the torch2.10.0+cu128 build (its upload filter), and torch 2.10.0
    # has CUDA 13 builds too: the entry couples with the cu128 build it was built
    # against, so a CUDA 13 driver gets 2.10.0+cu128, never +cu130 (docs/facts.md 6.8).
    code, plan, _ = _plan(capsys, B200_PY312, "xformers==0.0.34", "torch")
    assert code == 0
    assert plan["xformers"]["cause"] != "unjudged", plan["xformers"]
    assert "couples with torch==2.10.0+cu128" in str(plan["xformers"]["reason"])
    assert plan["torch"]["line"] == "torch==2.10.0+cu128"


_XF = """
schema = 1
[package]
name = "xf"
[[index]]
version = "1.0"
requires = ["tt==1.0"]
[[index]]
version = "1.1"
requires = ["tt==1.1"]
[[index]]
version = "1.2"
requires = ["tt==2.0"]
"""


def _tt() -> str:
    out = ["schema = 1", "[package]", 'name = "tt"']
    for version, gpu in (("1.0+cu121", "sm_90"), ("1.1+cu121", "sm_90"), ("2.0+cu128", "sm_100")):
        out += [
            "[[index]]",
            f'url = "https://example.org/whl/{version.split("+")[1]}/tt/"',
            f'version = "{version}"',
            'cuda = ">=12.0"',
            f'gpu = ["{gpu}"]',
        ]
    return "\n".join(out) + "\n"


def test_the_nearest_release_offered_has_couplings_that_hold_here() -> None:
    # xf 1.1 is ruled out by the user's pin and also by its coupling (tt 1.1 has no
    # sm_100 build): the nearest that runs is 1.2, whose tt 2.0 does.
    manifests = {
        "xf": loads_manifest(_XF, source="test"),
        "tt": loads_manifest(_tt(), source="test"),
    }
    plan = resolve(["xf==1.0", "tt"], manifests, parse_target("linux-x86_64-py312-cuda13.0-sm100"))
    xf = plan.package("xf")
    assert xf is not None
    assert xf.action == "error"
    assert "the nearest that does: xf==1.2" in xf.reason, xf.reason
    assert [a.pin for a in xf.alternatives] == ["xf==1.2"]
