"""Output that fits a terminal: plan, explain, lock headers and doctor at 80 and 120
columns, with a flavour host that refuses connections (a loopback port nothing listens
on), torch's many flavours and a pin nothing matches. Without -v no line is wider than
the terminal; -v and --json carry the whole detail (every page that could not be read).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from resolver_hook.cli import _output
from resolver_hook.manifest import builtin_manifests
from tests.clirun import cli
from tests.indexreplica import dead_host_flags
from tests.test_doctor import TORCH_CU126, fake_python

# torch's shipped manifest: its many flavours (47 from 2026-12) are the point here.
pytestmark = pytest.mark.builtin_data

NO_GPU = "linux-x86_64-py312"
WIDTHS = [80, 120]
ROW = r"[* ] (yes|no|n/a) +(yes|no|n/a) +(yes|no|n/a) "  # a flavour's row in explain


@pytest.fixture
def dead_mirror(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Flags that send every page the shipped manifests list to a loopback port that
    refuses, read from the network (not --offline)."""
    monkeypatch.delenv("RESOLVER_HOOK_OFFLINE", raising=False)
    return [*dead_host_flags(builtin_manifests().values()), "--no-cache"]


def _over(text: str, width: int) -> list[str]:
    """The lines wider than ``width``, but for the requirement, constraint and
    find-links lines (to copy: never wrapped or cut)."""
    out, copying = [], False
    for x in text.splitlines():
        if not x.startswith(" "):
            copying = x in ("requirements:", "constraints:", "find-links:")
        elif len(x) > width and not copying:
            out.append(x)
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_plan_fits_and_verbose_and_json_say_everything(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    dead_mirror: list[str],
    width: int,
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    # torch==2.13.0+cu126 on a machine without a GPU: nothing matches the pin.
    argv = ["plan", "torch==2.13.0+cu126", "--target", NO_GPU, *dead_mirror]
    code, out, err = cli(capsys, *argv)
    assert code == 1
    assert _over(out + err, width) == []
    # One note for the host and cause, not one per page.
    (note,) = [x for x in out.splitlines() if "unreachable" in x]
    assert re.match(r"  127\.0\.0\.1 unreachable \(connection refused\): \d+ pages; ", note)
    # The refusal of a pin is short: no rejected build is listed but under -v.
    assert not re.findall(r"^  torch 2\.", err, re.M)
    assert "builds rejected: -v or --json lists every one)" in err
    code, vout, verr = cli(capsys, "-v", *argv)
    code, jout, _ = cli(capsys, *argv, "--json")
    plan = json.loads(jout)
    (full,) = [n for n in plan["notes"] if "unreachable" in n]
    pages = full.splitlines()[1:]
    assert len(pages) == int(re.search(r"(\d+) pages", note).group(1))  # type: ignore[union-attr]
    for page in pages:  # every page, whole, with its failure: in -v and in --json
        url = page.split()[0].rstrip(":")
        assert url.startswith("http://127.0.0.1:")
        assert "Connection refused" in page
        assert url in vout
    torch = next(p for p in plan["packages"] if p["name"] == "torch")
    rejected = {r["candidate"] for r in torch["rejected"]}
    assert len(rejected) > 20
    words = " ".join(verr.split())  # wrapped at spaces: the words are all there
    assert all(c in words for c in rejected)  # -v: every build and why


@pytest.mark.parametrize("width", WIDTHS)
def test_explain_fits_and_all_shows_every_flavour(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    dead_mirror: list[str],
    width: int,
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, _ = cli(capsys, "explain", "torch", "--target", NO_GPU, *dead_mirror)
    assert code == 0
    assert _over(out, width) == []
    n, shown, others = map(
        int,
        re.search(r"(\d+) flavours .*?(\d+) for this.*? (\d+) for\s+others", out, re.S).groups(),  # type: ignore[union-attr]
    )
    assert shown + others == n
    assert n > 40
    rows = [x for x in out.splitlines() if re.match(ROW, x)]
    assert len(rows) == shown
    assert all(" no " not in x[:10] for x in rows)  # tags and python hold on every row
    assert "cpu:" in out.splitlines()  # grouped by label
    # What reading showed: one line per host and cause; each page under -v.
    assert "note: 127.0.0.1 unreachable (connection refused): " in out
    assert "(-v lists each)" in " ".join(out.split())
    code, out, _ = cli(capsys, "explain", "torch", "--all", "--target", NO_GPU, *dead_mirror)
    assert len([x for x in out.splitlines() if re.match(ROW, x)]) == n
    code, out, _ = cli(capsys, "-v", "explain", "torch", "--target", NO_GPU, *dead_mirror)
    assert "Connection refused (planned from " in " ".join(out.split())


def test_lock_header_is_one_short_line_per_cause(
    capsys: pytest.CaptureFixture[str], dead_mirror: list[str]
) -> None:
    # The partial form, hashes not required: the dead host leaves torch a page pin.
    argv = ["lock", "torch", "-o", "-", "--flavoured-only", "--allow-unhashed"]
    code, out, _ = cli(capsys, *argv, "--target", NO_GPU, *dead_mirror)
    assert code == 0
    header = [x for x in out.splitlines() if x.startswith("#")]
    assert _over("\n".join(header), 80) == []
    notes = [x for x in header if x.startswith("# note: ")]
    assert len([x for x in notes if "unreachable" in x]) == 1
    assert not any("Connection refused" in x for x in header)  # the detail is the plan's


@pytest.mark.parametrize("width", WIDTHS)
def test_doctor_fits(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    width: int,
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_CUDA", "13.0")
    monkeypatch.setenv("RESOLVER_HOOK_OVERRIDE_SM", "12.0")
    python = fake_python(tmp_path, TORCH_CU126)
    code, out, _ = cli(capsys, "doctor", "--python", python)
    assert code == 1
    # A fix is a command to copy into a shell: whole on its line, however long.
    fixes = [x for x in out.splitlines() if x.lstrip().startswith("fix: resolver-hook uv pip")]
    assert fixes
    assert _over("\n".join(x for x in out.splitlines() if x not in fixes), width) == []


def _wider(text: str, width: int, *, verbose: bool) -> list[str]:
    """The lines wider than ``width``; under -v but for one word longer than a line
    (a source's URL, kept whole to copy)."""
    return [
        x
        for x in text.splitlines()
        if len(x) > width and not (verbose and len(x.split()) == 1 and len(x.strip()) > width - 2)
    ]


@pytest.mark.parametrize("flags", [[], ["--all"], ["-v"]], ids=["default", "all", "verbose"])
@pytest.mark.parametrize("package", ["torch", "torchvision", "triton", "llama-cpp-python"])
def test_explain_rows_fit_a_pipe_with_all_and_verbose(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    package: str,
    flags: list[str],
) -> None:
    # A pipe (no COLUMNS, no terminal) is 80 columns, as for every other command;
    # --all adds rows and -v keeps words whole, neither lets a row run past the edge.
    monkeypatch.setattr(_output, "PIPE_COLUMNS", 80)
    verbose = "-v" in flags
    argv = [*(["-v"] if verbose else []), "explain", package, *(f for f in flags if f != "-v")]
    code, out, _ = cli(capsys, *argv, "--target", "linux-x86_64-py312-cuda12.8-sm120")
    assert code in (0, 1)
    assert re.search(ROW, out, re.M)
    assert _wider(out, 80, verbose=verbose) == []
    # Only a word longer than a whole line is cut (a source's URL), and never under -v:
    # a flavour's page or tags that fit a line are whole, moved left where they must.
    cut = [w for w in out.split() if "..." in w]
    assert all(w.startswith("https://") and len(w) == 80 - 2 for w in cut)
    assert not (verbose and cut)
