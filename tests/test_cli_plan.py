"""plan, explain and lock from the command line: exit codes, one-line errors, files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clirun import cli as run

from .test_manifest import BAD as BAD_MANIFESTS
from .test_reqfile import BAD_LINES

SM100 = "linux-x86_64-py312-cuda13.0-sm100"
# The frozen manifests give no sha256 and the tests read no page: the flavour lines as
# the plan writes them, the rest as written (issue 45: refused without these).
PARTIAL = ("--flavoured-only", "--allow-unhashed")


def lock(
    capsys: pytest.CaptureFixture[str], *inputs: str, output: str, targets: list[str]
) -> tuple[int, str, str]:
    """``resolver-hook lock INPUTS... -o OUTPUT --target T...``: (exit code, stdout, stderr)."""
    options = [word for target in targets for word in ("--target", target)]
    return run(capsys, "lock", *PARTIAL, *inputs, "-o", output, *options)


def test_plan_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "plan", "torch", "flash-attn", "natten", "--target", SM100, "--json"
    )
    assert (code, err) == (0, "")
    d = json.loads(out)
    assert [p["action"] for p in d["packages"]] == ["rewrite"] * 3
    assert d["packages"][2]["version"] == "0.21.7+torch2130cu130"


# A plain build whose page no source here lists (not in the shipped snapshot, and the
# tests read no network): the planner knows no file of it.
UNLISTED = """schema = 1
[package]
name = "kplain"
[[index]]
version = "1.4.0"
platforms = ["macosx_11_0_arm64"]
"""


def test_plan_reports_no_version_it_does_not_pin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A plain build that fits but whose files are not known stays unpinned, and no
    version is said; where the files are known (torch on macOS, from the snapshot's
    PyPI page), the line is pinned to one and the version said is that file's."""
    manifest = tmp_path / "kplain.toml"
    manifest.write_text(UNLISTED)
    where = ["--manifest", str(manifest), "--target", "macos-arm64-py312"]
    code, out, err = run(capsys, "plan", "kplain", *where, "--json")
    assert (code, err) == (0, "")
    (plain,) = json.loads(out)["packages"]
    assert (plain["action"], plain["line"], plain["version"]) == ("pass", "kplain", None)
    assert plain["reason"].endswith("; left to the installer")
    code, out, _ = run(capsys, "plan", "kplain", *where)
    assert code == 0
    assert "left to the installer" in out
    assert "1.4" not in out

    code, out, err = run(capsys, "plan", "torch", "--target", "macos-arm64-py312", "--json")
    assert (code, err) == (0, "")
    (torch,) = json.loads(out)["packages"]
    assert torch["action"] == "rewrite"
    assert torch["line"] == f"torch @ {torch['url']}#sha256={torch['sha256']}"
    assert f"/torch-{torch['version']}-cp312-cp312-macosx_" in torch["url"]


def test_plan_no_fit_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "plan", "tilert", "--target", "linux-aarch64-py312-cuda13.0-sm121")
    assert code == 1
    assert "tilert  error" in out
    assert err.startswith("error: tilert: no build of tilert fits this machine;")
    for word in ("aarch64", "sm_121", "sm_100f"):
        assert word in err
    assert "Traceback" not in err


def test_plan_example_and_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plan", "--example", "--target", "linux-x86_64-py312-cuda13.0-sm103")
    assert code == 0
    assert "numpy>=2" in out
    code, out, _ = run(capsys, "explain", "torch", "--target", SM100)
    assert code == 0
    chosen = [line for line in out.splitlines() if line.startswith("*")]
    assert len(chosen) == 1
    assert "2.13.0+cu130" in chosen[0]
    code, out, _ = run(capsys, "explain", "tilert", "--target", "linux-x86_64-py312-cuda13.0-sm121")
    assert code == 1
    assert "kernels sm_100f does not run on GB10 (sm_121)" in out


def test_lock_one_file_per_target_and_inputs_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    req = tmp_path / "requirements.in"
    req.write_text('torch\ntilert ; sys_platform == "linux"\nnumpy\n')
    before = req.read_bytes()
    code, _, err = lock(
        capsys,
        "-r",
        str(req),
        output=str(tmp_path / "{target}.txt"),
        targets=[SM100, "linux-x86_64-py312-cuda13.0-sm103"],
    )
    assert (code, err) == (0, "")
    text = (tmp_path / f"{SM100}.txt").read_text().splitlines()
    body = [x for x in text if not x.startswith("#")]
    assert body[0] == "--find-links https://download.pytorch.org/whl/cu130/torch/"
    assert body[1].startswith("tilert @ https://github.com/tile-ai/TileRT/")
    assert body[1].endswith('.whl ; sys_platform == "linux"')  # space before ';'
    assert body[2:] == ["torch==2.13.0+cu130", "numpy"]
    assert req.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_lock_file_is_readable_like_any_other(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A lock file is shared (CI, colleagues): the temporary file's private 0600 must not
    # leak into it; a lock file that exists keeps its mode.
    out = tmp_path / "lock.txt"
    assert run(capsys, "lock", *PARTIAL, "torch", "-o", str(out), "--target", SM100)[0] == 0
    assert out.stat().st_mode & 0o777 == 0o644
    out.chmod(0o664)
    assert run(capsys, "lock", *PARTIAL, "torch", "-o", str(out), "--target", SM100)[0] == 0
    assert out.stat().st_mode & 0o777 == 0o664
    assert [p.name for p in tmp_path.iterdir()] == ["lock.txt"]


def test_lock_one_file_with_markers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "lock.txt"
    code, _, _ = lock(
        capsys, "flash-attn", output=str(out), targets=[SM100, "linux-aarch64-py312-cuda13.0-sm100"]
    )
    assert code == 0
    lines = [x for x in out.read_text().splitlines() if x.startswith("flash-attn")]
    assert lines[0].endswith(
        '; (sys_platform == "linux" and platform_machine == "x86_64" and python_version == "3.12")'
    )
    assert "manylinux_2_34_aarch64.whl ; " in lines[1]
    code, _, err = lock(
        capsys, "torch", output=str(out), targets=[SM100, "linux-x86_64-py312-cuda12.6-sm89"]
    )
    assert code == 2
    assert err.count("error:") == 1
    assert "differ only in what markers cannot tell apart" in err


def test_lock_pins_the_plain_build_with_extras_and_marker(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # torch on macOS is the plain PyPI build: the lock pins its version and keeps what
    # the user wrote around it (dropping the marker would install it everywhere).
    req = tmp_path / "requirements.in"
    req.write_text('torch[opt-einsum]==2.13.* ; python_version >= "3.10"\n')
    code, out, _ = run(
        capsys, "lock", *PARTIAL, "-r", str(req), "-o", "-", "--target", "macos-arm64-py312"
    )
    assert code == 0
    assert out.splitlines()[-1] == 'torch[opt-einsum]==2.13.0 ; python_version >= "3.10"'


def test_lock_guard_goes_before_hash_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # kern has a wheel for x86_64 only and may be built elsewhere: the aarch64 line is the
    # user's, with --hash. Its target guard must come before the option, or pip ignores it.
    manifest = tmp_path / "kern.toml"
    manifest.write_text(
        _toml(
            {
                "package": {"name": "kern"},
                "build": {"needs": ["cmake"]},
                "wheel": [{"url": "https://x.org/kern-1.0-py3-none-manylinux_2_28_x86_64.whl"}],
            }
        )
    )
    req = tmp_path / "requirements.in"
    hash_option = "--hash=sha256:" + "0" * 64
    req.write_text(f'kern;python_version>="3.10" {hash_option}\n')
    code, out, err = lock(
        capsys,
        "-r",
        str(req),
        "--manifest",
        str(manifest),
        output="-",
        targets=["linux-x86_64-py312", "linux-aarch64-py312"],
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == (
        'kern ; (python_version >= "3.10") and ((sys_platform == "linux" and platform_machine '
        f'== "aarch64" and python_version == "3.12")) {hash_option}'
    )


def test_lock_one_file_keeps_every_targets_notes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # macOS takes the plain build (no note); the Linux plan notes the unverified wheels.
    code, out, _ = run(
        capsys,
        "lock",
        *PARTIAL,
        "torch",
        "-o",
        "-",
        "--target",
        "macos-arm64-py312",
        "--target",
        SM100,
    )
    assert code == 0
    assert "# note: built-in manifests carry no sha256 yet" in out


@pytest.mark.parametrize(
    "output", ["a-file/lock.txt", "lock.txt"], ids=["folder-is-a-file", "a-folder"]
)
def test_lock_unwritable_output_is_one_error(
    output: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    (tmp_path / "lock.txt").mkdir()
    code, _, err = run(capsys, "lock", *PARTIAL, "torch", "-o", output, "--target", SM100)
    assert code == 1  # _fs.write_atomic: an OperationalError, as for scan and import
    assert err.startswith(f"error: {output}: cannot write: ")
    assert err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "lock.txt"]
    assert list((tmp_path / "lock.txt").iterdir()) == []


def test_lock_refuses_an_input_before_writing_any_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    req = tmp_path / "macos-arm64-py312.txt"
    req.write_text("torch\n")
    code, _, err = lock(
        capsys,
        "-r",
        str(req),
        output=str(tmp_path / "{target}.txt"),
        targets=[SM100, "macos-arm64-py312"],
    )
    assert code == 2
    assert "is one of the input files" in err
    assert [p.name for p in tmp_path.iterdir()] == [req.name]


def test_lock_no_fit_writes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "lock.txt"
    code, _, err = run(
        capsys, "lock", *PARTIAL, "tilert", "-o", str(out), "--target", "macos-arm64-py312"
    )
    assert code == 1
    assert "nothing written" in err
    assert not out.exists()


# --- thirty-odd malformed inputs: each one 'error:' line, exit 2, no traceback ------------


def _manifest_cases() -> list[tuple[str, object, str]]:
    return [(f"manifest-{case[0]}", case[1], case[2]) for case in BAD_MANIFESTS]


@pytest.mark.parametrize(
    ("data", "expected"), [c[1:] for c in _manifest_cases()], ids=[c[0] for c in _manifest_cases()]
)
def test_malformed_manifest_via_cli(
    data: dict[str, object], expected: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "tilert.toml"
    path.write_text(_toml(data))
    code, _out, err = run(capsys, "plan", "tilert", "--manifest", str(path), "--target", SM100)
    assert code == 2
    assert err.count("error:") == 1
    assert "Traceback" not in err
    assert expected in err


@pytest.mark.parametrize(
    ("text", "expected"), [b[1:] for b in BAD_LINES], ids=[b[0] for b in BAD_LINES]
)
def test_malformed_requirement_line_via_cli(
    text: str, expected: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "r.txt"
    path.write_text(text + "\n")
    code, _, err = run(capsys, "plan", "-r", str(path), "--target", SM100)
    assert code == 2
    assert err.count("error:") == 1
    assert "Traceback" not in err
    assert expected.replace("r.txt:1", f"{path}:1").split(" file ")[0].split("missing")[0] in err


@pytest.mark.parametrize(
    "argv",
    [
        ["plan"],
        ["plan", "torch", "--target", "plan9-x86_64"],
        ["plan", "torch==", "--target", SM100],
        ["explain", "no-such-package", "--target", SM100],
        ["explain", "torch>>", "--target", SM100],
        ["plan", "torch", "--manifest", "/nonexistent.toml", "--target", SM100],
    ],
    ids=[
        "nothing",
        "bad-target",
        "bad-requirement",
        "unknown-package",
        "bad-explain",
        "missing-manifest",
    ],
)
def test_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.count("error:") == 1


def _toml(data: object, prefix: str = "") -> str:
    """A small TOML writer for the test tables (strings, ints, lists, nested tables)."""
    assert isinstance(data, dict)
    scalars, tables, arrays = [], [], []
    for k, v in data.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            tables.append(f"[{key}]\n" + _toml(v, key))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.extend(f"[[{key}]]\n" + _toml(x, key) for x in v)
        else:
            scalars.append(f"{k} = {json.dumps(v)}")
    return "\n".join(scalars) + "\n" + "\n".join(tables + arrays)


def test_lock_same_target_twice_is_one_target(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "lock", *PARTIAL, "torch", "-o", "-", "--target", SM100, "--target", SM100
    )
    assert code == 0
    assert "torch==2.13.0+cu130\n" in out  # no marker: one target, not two


def test_plan_json_and_explain_show_evidence_and_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.paths import DATA

    manifest = str(DATA / "manifests" / "cuda-builds.toml")
    target = "linux-x86_64-py312-cuda13.0-sm90"
    code, out, _ = run(capsys, "plan", "demo", "--manifest", manifest, "--target", target, "--json")
    assert code == 0
    (demo,) = json.loads(out)["packages"]
    assert (demo["version"], demo["flavour"]["evidence"], demo["flavour"]["checked"]) == (
        "1.0+cu130",
        "https://example.org/build-table",
        "2026-06-01",
    )
    # The CLI passes today's date: 2026-06-01 is long past by the time this runs.
    assert any("older than 180 days" in n for n in json.loads(out)["notes"])
    code, out, _ = run(capsys, "explain", "demo", "--manifest", manifest, "--target", target)
    assert code == 0
    assert "evidence: https://example.org/build-table (checked 2026-01-01)" in out
    # The arm build is for another platform: its row and evidence under --all.
    assert "build-table-arm" not in out
    code, out, _ = run(
        capsys, "explain", "demo", "--manifest", manifest, "--target", target, "--all"
    )
    assert code == 0
    assert "evidence: https://example.org/build-table-arm (checked 2026-06-01)" in out


def test_lock_one_version_built_per_platform_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The same page and version with a kernel list per platform: each target gets its
    # own entry, and the merged lock file pins the version once, for both.
    from tests.paths import DATA

    out = tmp_path / "lock.txt"
    code, _, err = lock(
        capsys,
        "demo",
        "--manifest",
        str(DATA / "manifests" / "cuda-builds.toml"),
        output=str(out),
        targets=["linux-x86_64-py312-cuda13.0-sm90", "linux-aarch64-py312-cuda13.0-sm110"],
    )
    assert (code, err) == (0, "")
    body = [x for x in out.read_text().splitlines() if not x.startswith("#")]
    assert body == ["--find-links https://example.org/cu130/demo/", "demo==1.0+cu130"]


def test_lock_names_the_marker_that_leaves_a_package_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    req = tmp_path / "requirements.in"
    req.write_text("torch\ntilert\n")
    out = tmp_path / "lock.txt"
    code, _, err = lock(
        capsys, "-r", str(req), output=str(out), targets=[SM100, "macos-arm64-py312"]
    )
    assert code == 1
    assert not out.exists()
    assert (
        "hint: tilert has no build for macos-arm64-py312; to lock the other targets, give it "
        "a marker that is false there: 'tilert ; sys_platform == \"linux\"'" in err.splitlines()
    )
    # The suggested marker works: with it, the lock is written.
    req.write_text('torch\ntilert ; sys_platform == "linux"\n')
    code, _, _ = lock(capsys, "-r", str(req), output=str(out), targets=[SM100, "macos-arm64-py312"])
    assert code == 0


def test_lock_never_writes_a_line_whose_marker_cannot_hold(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from packaging.markers import Marker

    from resolver_hook.host import parse_target
    from resolver_hook.resolve import marker_environment

    req = tmp_path / "requirements.in"
    req.write_text('torch\ntilert ; sys_platform == "linux"\nnumpy ; sys_platform == "win32"\n')
    targets = [SM100, "macos-arm64-py312"]
    code, out, _ = run(
        capsys,
        "lock",
        *PARTIAL,
        "-r",
        str(req),
        "-o",
        "-",
        "--target",
        targets[0],
        "--target",
        targets[1],
    )
    assert code == 0
    envs = [marker_environment(parse_target(t)) for t in targets]
    lines = [x for x in out.splitlines() if x and not x.startswith(("#", "-"))]
    for line in lines:
        if " ; " in line:
            marker = Marker(line.split(" ; ", 1)[1])
            assert any(marker.evaluate(dict(e)) for e in envs), line
    assert not any(x.startswith("numpy") for x in lines)  # true on neither target: dropped
    # The header's notes are wrapped at 80 columns, each continuation under "#   ".
    header = " ".join(x.removeprefix("#   ") for x in out.splitlines() if x.startswith("#"))
    assert (
        f'# note: numpy ; sys_platform == "win32" ({req}:3): left out for macos-arm64-py312, '
        "where its marker is false" in header
    )


def test_lock_targets_no_marker_tells_apart_name_the_difference(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = lock(
        capsys,
        "torch",
        output=str(tmp_path / "lock.txt"),
        targets=[SM100, "linux-x86_64-py312-glibc2.28-cuda13.0-sm100"],
    )
    assert code == 2
    assert "differ only in what markers cannot tell apart: glibc (2.35 vs 2.28)" in err


def test_the_plan_help_names_what_the_bundled_example_asks_for(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--example``'s help names what the bundled example asks for."""
    from resolver_hook import cli
    from resolver_hook.cli import _inputs

    monkeypatch.setenv("COLUMNS", "1000")  # one line per option
    with pytest.raises(SystemExit):
        cli.main(["plan", "--help"])
    shown = capsys.readouterr().out
    assert f"plan the bundled example ({', '.join(_inputs.example_names())})" in shown


def test_a_plans_lines_are_searched_for_credentials_only_where_one_may_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A userinfo ends at an ``@``: the printed plan looks for one with the whole
    pattern (and shows it as ``****``) only in the lines that may hold one, most of a
    plan's holding none (redact_text looks for ``://...@`` first)."""
    import re
    from types import SimpleNamespace

    from resolver_hook.ground import userinfo

    searched: list[str] = []

    def counted(pattern: str, shown: str, text: str, count: int = 0) -> str:
        searched.append(text)
        return re.sub(pattern, shown, text, count=count)

    monkeypatch.setattr(userinfo, "re", SimpleNamespace(sub=counted, finditer=re.finditer))
    reqs = tmp_path / "reqs.txt"
    reqs.write_text("--extra-index-url https://user:secret@x.org/simple/\ntorch\n")
    code, out, _ = run(capsys, "plan", "-r", str(reqs), "--target", SM100, "--offline")
    assert code == 0
    assert "https://****@x.org/simple/" in out
    assert "secret" not in out
    assert searched
    assert all("@" in x for x in searched)
