"""Requirement files: read every corpus file as pip 26.3 does, and the syntax corner cases."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.errors import UsageError
from resolver_hook.reqfile import (
    ReqEntry,
    format_requirement,
    parse_requirements,
    read_requirements,
    with_marker,
)

HERE = Path(__file__).parent
# Real requirement files of public GPU projects, each with its source in SOURCES.tsv.
CORPUS = HERE / "data" / "requirements-corpus"
# Recorded by scripts/pip_verdicts.py with pip 26.3 (parse phase, no network).
VERDICTS = json.loads((HERE / "data" / "pip-verdicts.json").read_text())
# Repository layouts that give corpus files the neighbours they include (-r common.txt).
LAYOUTS = json.loads((HERE / "data" / "corpus-layouts.json").read_text())


def _ours(e: ReqEntry) -> dict[str, object]:
    req = e.requirement
    return {
        "name": e.name,
        # pip's verdict records no specifier for a line with a URL (_pips below).
        "specifier": str(req.specifier) if req and e.kind == "requirement" and not e.url else None,
        "marker": str(e.marker) if e.marker else None,
        "editable": e.editable,
        "constraint": e.constraint,
        "hashes": len(e.hashes),
    }


def _pips(d: dict[str, object]) -> dict[str, object]:
    name = d["name"]
    return {
        "name": name.lower().replace("_", "-").replace(".", "-") if isinstance(name, str) else None,
        "specifier": d["specifier"] if d["url"] is None and name else None,
        "marker": d["marker"],
        "editable": d["editable"],
        "constraint": d["constraint"],
        "hashes": d["hashes"],
    }


def _compare(path: Path, verdict: dict[str, object], env: dict[str, str]) -> None:
    if "error" in verdict:
        with pytest.raises(UsageError) as info:
            read_requirements([str(path)], env=env)
        # Same kind of failure as pip's: the reason names the same thing.
        pip_error = str(verdict["error"]).lower()
        ours = info.value.message.lower()
        if "could not open" in pip_error:
            assert "could not open" in ours
            assert pip_error.rsplit("/", 1)[-1].rstrip("'") in ours
        else:
            assert "invalid requirement" in ours
            quoted = pip_error.split("'")[1]  # pip quotes the requirement it rejects
            assert quoted in ours
            assert ours.startswith(f"{str(path).lower()}:")  # file:line first
        return
    parsed = read_requirements([str(path)], env=env)
    entries = [e for e in parsed.entries if e.kind != "option"]
    expected = verdict["entries"]
    assert isinstance(expected, list)
    assert [_ours(e) for e in entries] == [_pips(d) for d in expected]


def test_every_corpus_file_has_a_source_and_a_verdict() -> None:
    files = {p.name for p in CORPUS.iterdir()} - {"SOURCES.tsv"}
    rows = (CORPUS / "SOURCES.tsv").read_text().splitlines()
    assert rows[0].split("\t")[:4] == ["file", "repository", "path", "commit"]
    sourced = {row.split("\t")[0] for row in rows[1:] if row}
    assert sourced == files
    assert set(VERDICTS["files"]) == files


@pytest.mark.parametrize("name", sorted(VERDICTS["files"]))
def test_corpus_file_as_pip_reads_it(name: str) -> None:
    _compare(CORPUS / name, VERDICTS["files"][name], env={})


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_corpus_layout_as_pip_reads_it(layout: str, tmp_path: Path) -> None:
    files = LAYOUTS[layout]
    for target, src in files.items():
        shutil.copy(CORPUS / src, tmp_path / target)
    _compare(tmp_path / next(iter(files)), VERDICTS["layouts"][layout], env={})


def test_env_expansion_like_pip() -> None:
    name = "EveryVoiceTTS__EveryVoice__requirements.torch.txt"
    verdict = dict(VERDICTS["env"][name])
    env = {"CUDA_TAG": verdict.pop("CUDA_TAG")}
    _compare(CORPUS / name, verdict, env=env)
    parsed = read_requirements([str(CORPUS / name)], env=env)
    assert parsed.options[0].value == "https://download.pytorch.org/whl/cu126"
    assert str(parsed.requirements[2].requirement) == 'torch==2.7.1+cu126; sys_platform != "darwin"'


def test_two_requirements_on_one_line_is_rejected_like_pip() -> None:
    path = CORPUS / "bmaltais__kohya_ss__requirements_linux.txt"
    with pytest.raises(UsageError) as info:
        read_requirements([str(path)], env={})
    assert info.value.message.startswith(
        f"{path}:1: invalid requirement 'torch==2.0.1+cu118 torchvision==0.15.2+cu118'"
    )
    assert info.value.hint == "pip reads one requirement per line: put each on its own line"


def parse(text: str, **kw: object) -> list[ReqEntry]:
    return list(parse_requirements(text, source="r.txt", **kw).entries)  # type: ignore[arg-type]


# Each line was checked with pip 26.3's parser (see scripts/pip_verdicts.py).
GOOD = [
    ("extra-index-on-req-line", "numpy --extra-index-url https://x.org", "numpy", None),
    ("hash-equals", "numpy==1.0 --hash=sha256:abc", "numpy==1.0", None),
    ("hash-space", "numpy==1.0 --hash sha256:abc", "numpy==1.0", None),
    (
        "comment-after-marker",
        'numpy ; python_version>"3"  # c',
        'numpy; python_version > "3"',
        None,
    ),
    ("no-space-marker", 'numpy==1.0;python_version>"3"', 'numpy==1.0; python_version > "3"', None),
    ("continuation", "numpy\\\n==1.0", "numpy==1.0", None),
    ("comment-never-continues", "# comment \\\nnumpy", "numpy", None),
    ("continuation-into-comment", "numpy==1.0 \\\n  # c", "numpy==1.0", None),
    ("trailing-backslash", "numpy \\", "numpy", None),
    ("extras-spaces", "numpy[foo ] >= 1.0", "numpy[foo]>=1.0", None),
    (
        "name-at-url",
        'foo[bar] @ https://x.org/foo-1.0-py3-none-any.whl ; python_version > "3"',
        'foo[bar] @ https://x.org/foo-1.0-py3-none-any.whl ; python_version > "3"',
        "https://x.org/foo-1.0-py3-none-any.whl",
    ),
    (
        "name-at-url-ending-in-whl",
        "foo @ https://x.org/foo-1.0-py3-none-any.whl",
        "foo @ https://x.org/foo-1.0-py3-none-any.whl",
        "https://x.org/foo-1.0-py3-none-any.whl",
    ),
    (
        "bare-wheel-url",
        'https://x.org/foo-1.0-py3-none-any.whl; python_version > "3"',
        "foo @ https://x.org/foo-1.0-py3-none-any.whl",
        "https://x.org/foo-1.0-py3-none-any.whl",
    ),
    ("vcs", "git+https://x.org/y.git", None, "git+https://x.org/y.git"),
    ("editable-vcs", "-e git+https://x.org/y.git#egg=y", None, "git+https://x.org/y.git#egg=y"),
]


@pytest.mark.parametrize(("text", "req", "url"), [g[1:] for g in GOOD], ids=[g[0] for g in GOOD])
def test_good_lines(text: str, req: str | None, url: str | None) -> None:
    (entry,) = [e for e in parse(text) if e.kind != "option"]
    assert (str(entry.requirement) if entry.requirement else None) == req
    assert entry.url == url


def test_options_are_recorded_not_followed() -> None:
    parsed = parse_requirements(
        "--index-url=https://x.org/simple numpy\n-f ./wheels\n--pre\n"
        "--extra-index-url https://a.org\n-i https://b.org\n--hash=sha256:abc\n",
        source="r.txt",
    )
    entries = parsed.entries
    # pip 26.3 drops the stray 'numpy' after an option without a word; we warn.
    assert parsed.warnings == (
        "r.txt:1: pip ignores 'numpy' after the options: put each "
        "requirement on its own line, before any option",
    )
    assert [(e.option, e.value) for e in entries] == [
        ("-i", "https://x.org/simple"),
        ("-f", "./wheels"),
        ("--pre", None),
        ("--extra-index-url", "https://a.org"),
        ("-i", "https://b.org"),
    ]


def test_includes_nested_relative_and_constraints(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("-r ../b.txt\n-c c.txt\nnumpy\n")
    (tmp_path / "b.txt").write_text("six\n-rsub/d.txt\n")
    (tmp_path / "sub" / "c.txt").write_text("numpy<2\n-r e.txt\n")
    (tmp_path / "sub" / "d.txt").write_text("attrs\n")
    (tmp_path / "sub" / "e.txt").write_text("idna\n")
    parsed = read_requirements([str(tmp_path / "sub" / "a.txt")], env={})
    assert [(e.name, e.constraint) for e in parsed.entries] == [
        ("six", False),
        ("attrs", False),
        ("numpy", True),
        ("idna", False),  # pip: -r inside a constraints file reads requirements
        ("numpy", False),
    ]
    assert len(parsed.files) == 5


def test_include_cycle_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("numpy\n-r b.txt\n")
    (tmp_path / "b.txt").write_text("-r a.txt\n")
    with pytest.raises(UsageError, match=r"b.txt:1: requirement files include each other: "):
        read_requirements([str(tmp_path / "a.txt")], env={})


def test_format_requirement() -> None:
    assert format_requirement(
        "tilert", url="https://x.org/t.whl", sha256="ab", marker='sys_platform == "linux"'
    ) == ('tilert @ https://x.org/t.whl#sha256=ab ; sys_platform == "linux"')
    assert format_requirement("torch", version="2.13.0+cu130", extras=["b", "a"]) == (
        "torch[a,b]==2.13.0+cu130"
    )


H = "--hash=sha256:" + "0" * 64
GUARD = 'sys_platform == "linux"'


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("numpy", f"numpy ; {GUARD}"),
        (
            "numpy>=2 ; python_version >= '3.10'",
            f'numpy>=2 ; (python_version >= "3.10") and ({GUARD})',
        ),
        # Unspaced marker, and options after it: the guard goes before the options, where
        # pip still reads it as the marker.
        (
            f'kern;python_version>="3.10" {H}',
            f'kern ; (python_version >= "3.10") and ({GUARD}) {H}',
        ),
        (f"kern==1.0 {H} {H}", f"kern==1.0 ; {GUARD} {H} {H}"),
        # A ';' inside the URL is not the marker.
        (
            "k @ https://x.org/a;b/k-1-py3-none-any.whl ; os_name == 'nt'",
            f'k @ https://x.org/a;b/k-1-py3-none-any.whl ; (os_name == "nt") and ({GUARD})',
        ),
    ],
)
def test_with_marker(line: str, expected: str) -> None:
    assert with_marker(line, GUARD) == expected
    entry = parse_requirements(expected).entries[0]
    assert entry.marker is not None
    assert GUARD in str(entry.marker)


# Malformed lines: one error each, naming file:line (pip 26.3 rejects each of them too).
BAD_LINES = [
    ("comment-without-space", "numpy#comment", "r.txt:1: invalid requirement 'numpy#comment'"),
    ("two-requirements", "torch==2.0 torchvision", "invalid requirement 'torch==2.0 torchvision'"),
    ("unknown-option", "--foo", "r.txt:1: no such option: --foo"),
    ("option-without-value", "-r", "r.txt:1: -r needs a value"),
    ("empty-version", "numpy==", "invalid requirement 'numpy=='"),
    ("unset-variable", "numpy==1.0+${NOPE_X}", "invalid requirement 'numpy==1.0+${NOPE_X}'"),
    ("unbalanced-quote", "numpy 'x", 'invalid requirement "numpy \'x"'),
    ("missing-include", "-r missing.txt", "could not open requirements file missing.txt"),
    ("missing-constraint", "-c missing.txt", "could not open constraint file missing.txt"),
    (
        "bad-marker-on-url",
        "https://x.org/f-1.0-py3-none-any.whl; python_version >> '3'",
        "invalid marker",
    ),
    ("url-include", "-r https://x.org/r.txt", "is a URL"),
    ("flag-with-value", "--pre=yes", "--pre takes no value"),
    ("bad-operator", "numpy=>1", "invalid requirement 'numpy=>1'"),
    ("bad-extras", "numpy[", "invalid requirement 'numpy['"),
]


@pytest.mark.parametrize(
    ("text", "message"), [b[1:] for b in BAD_LINES], ids=[b[0] for b in BAD_LINES]
)
def test_bad_lines(text: str, message: str, tmp_path: Path) -> None:
    def read(path: str) -> str:
        return (tmp_path / path).read_text()

    with pytest.raises(UsageError) as info:
        parse_requirements(text, source="r.txt", read=read, env={})
    assert message in info.value.message
    assert "\n" not in info.value.message


def test_names_given_compile_no_pattern_of_a_files_lines(tmp_path: Path) -> None:
    """The patterns of a file's lines (and of an ``#egg=`` name) are compiled when a
    file is read, not when the module is imported: a plan of names given on the command
    line compiles none of them. A file read compiles them, and reads as before."""
    code = (
        "import re, sys\n"
        "from resolver_hook import reqfile\n"
        "print(sorted(k for k, v in vars(reqfile).items() if isinstance(v, re.Pattern)))\n"
        "reqfile.read_requirements(lines=['torch', 'numpy>=2'])\n"
        "print(reqfile._compiled.cache_info().currsize)\n"
        "got = reqfile.read_requirements([sys.argv[1]], env={'V': '2'})\n"
        "print(reqfile._compiled.cache_info().currsize, [e.text for e in got.entries])\n"
    )
    req = tmp_path / "r.txt"
    req.write_text("# a comment\ntorch  # why\nnumpy>=${V} \\\n  ; python_version > '3'\n")
    proc = subprocess.run(
        [sys.executable, "-c", code, str(req)], capture_output=True, text=True, check=True
    )
    assert proc.stdout.splitlines() == [
        "['_URL', '_VCS']",
        "0",
        "3 ['torch', \"numpy>=2   ; python_version > '3'\"]",
    ]
