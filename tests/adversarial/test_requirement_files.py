"""Threat model: requirement files and command-line requirements.

They come from projects, generators and Windows editors. Read them as pip does (a
UTF-8 byte-order mark is fine), and bound what pip would choke on later: numbers past
Python's int digit limit, include chains thousands deep, files of gigabytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.errors import UsageError
from resolver_hook.limits import MAX_INCLUDE_DEPTH, MAX_REQUIREMENTS_BYTES
from resolver_hook.reqfile import parse_requirements, read_requirements
from tests.installenv import GpuIndex, clean_env, make_venv
from tests.paths import REPO

TARGET = ["--target", "linux-x86_64-py312"]
HUGE = "1" * 5000


@pytest.mark.parametrize("command", [["plan"], ["lock", "--flavoured-only", "-o", "-"]])
def test_an_empty_requirement_is_refused_as_pip_does(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    # pip install '' says "ERROR: Invalid requirement: ''" (exit 1 there; a usage error here).
    assert main([*command, "", "six", "--target", "linux-x86_64-py312"]) == 2
    assert capsys.readouterr().err == "error: invalid requirement '': an empty requirement\n"


def test_utf8_bom_is_accepted_as_pip_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "req.txt"
    path.write_bytes(b"\xef\xbb\xbfnumpy>=1\n")
    (entry,) = read_requirements([str(path)]).requirements
    assert entry.name == "numpy"
    assert main(["plan", "-r", str(path), *TARGET]) == 0
    assert "numpy" in capsys.readouterr().out


@pytest.mark.parametrize(
    "line",
    [
        f"a=={HUGE}",
        f"a>={HUGE}.0",
        f"a ; python_version > '{HUGE}'",
        f"https://example.org/a-1.0-py3-none-any.whl ; python_version > '{HUGE}'",
    ],
    ids=["pin", "specifier", "marker", "url-marker"],
)
def test_versions_with_5000_digits_are_one_error_line(
    line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["plan", line, *TARGET])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: requirement ")
    assert "Traceback" not in err
    assert len(err) < 1000  # the offending text is shortened


def test_wheel_url_with_5000_digit_version_does_not_crash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Not a valid wheel name: passed on to the installer as pip would get it.
    code = main(["plan", f"https://example.org/a-1.{HUGE}-py3-none-any.whl", *TARGET])
    assert code == 0
    assert "Traceback" not in capsys.readouterr().err


def test_version_in_a_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "req.txt"
    path.write_text(f"numpy\na=={HUGE}\n")
    with pytest.raises(UsageError, match=rf"^{path}:2: invalid requirement"):
        read_requirements([str(path)])


def test_include_depth_is_bounded(tmp_path: Path) -> None:
    depth = MAX_INCLUDE_DEPTH + 5
    for i in range(depth):
        (tmp_path / f"r{i}.txt").write_text(f"-r r{i + 1}.txt\n")
    (tmp_path / f"r{depth}.txt").write_text("numpy\n")
    with pytest.raises(UsageError, match=f"nested more than {MAX_INCLUDE_DEPTH} files deep"):
        read_requirements([str(tmp_path / "r0.txt")])


def test_include_depth_below_the_bound_works(tmp_path: Path) -> None:
    for i in range(10):
        (tmp_path / f"r{i}.txt").write_text(f"-r r{i + 1}.txt\n")
    (tmp_path / "r10.txt").write_text("numpy\n")
    (entry,) = read_requirements([str(tmp_path / "r0.txt")]).requirements
    assert entry.name == "numpy"


def test_requirement_text_larger_than_the_limit_is_refused() -> None:
    text = "numpy\n" + "#" * MAX_REQUIREMENTS_BYTES
    with pytest.raises(UsageError, match="larger than"):
        parse_requirements(text, source="big.txt")


# --- pip's encoding rules ----------------------------------------------------------------

TEXT = "# café\nno-such-dist>=1\n"


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + TEXT.encode("utf-8"),
        TEXT.encode("utf-16"),  # PowerShell's 'pip freeze >': UTF-16 with its mark
        b"\xfe\xff" + TEXT.encode("utf-16-be"),
        TEXT.encode("utf-32"),
        b"\x00\x00\xfe\xff" + TEXT.encode("utf-32-be"),
        b"# -*- coding: latin-1 -*-\n" + TEXT.encode("latin-1"),
        b"\n# vim: set fileencoding=cp1252 :\n" + TEXT.encode("cp1252"),
    ],
    ids=["utf-8-bom", "utf-16", "utf-16-be", "utf-32", "utf-32-be", "coding-line", "second-line"],
)
def test_encodings_pip_reads_are_read(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "req.txt"
    path.write_bytes(data)
    (entry,) = read_requirements([str(path)]).requirements
    assert entry.name == "no-such-dist"
    assert str(entry.requirement) == "no-such-dist>=1"


@pytest.mark.integration
@pytest.mark.parametrize(
    "data",
    [TEXT.encode("utf-16"), b"# -*- coding: latin-1 -*-\n" + TEXT.encode("latin-1")],
    ids=["utf-16", "coding-line"],
)
def test_pip_reads_the_same_files(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "req.txt"
    path.write_bytes(data)
    # pip's own reading of it: a dry run with no index fails on its one requirement, having read it.
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "-r", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "No matching distribution found for no-such-dist>=1" in done.stderr


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"# -*- coding: no-such-codec -*-\nnumpy\n", "unknown encoding 'no-such-codec'"),
        (b"\xff\xfe\x00", "not valid utf-16 text"),
    ],
    ids=["unknown-codec", "broken-utf-16"],
)
def test_undecodable_files_are_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, error: str
) -> None:
    path = tmp_path / "req.txt"
    path.write_bytes(data)
    assert main(["plan", "-r", str(path), *TARGET]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: {error}")
    assert "Traceback" not in err


def test_a_locale_file_is_read_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import locale

    path = tmp_path / "req.txt"
    path.write_bytes(TEXT.encode("latin-1"))
    monkeypatch.setattr(locale, "getpreferredencoding", lambda do_setlocale=True: "latin-1")
    got = read_requirements([str(path)])
    assert [e.name for e in got.requirements] == ["no-such-dist"]
    assert got.warnings == (
        f"{path}: not UTF-8: read as this locale's latin-1, as pip does; name the encoding "
        "in a first line '# -*- coding: latin-1 -*-' if that is right",
    )
    monkeypatch.setattr(locale, "getpreferredencoding", lambda do_setlocale=True: "utf-8")
    with pytest.raises(UsageError, match="neither UTF-8 nor this locale's utf-8 text"):
        read_requirements([str(path)])


# --- no traceback for odd names and odd terminals -----------------------------------------


def test_a_nul_byte_in_an_included_path_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "req.txt"
    path.write_bytes(b"-r base\x00.txt\n")
    assert main(["plan", "-r", str(path), *TARGET]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {path}:1: could not open requirements file '{tmp_path}/base\\x00.txt': "
        "a file name cannot hold a NUL byte\n"
    )


def _run_c_locale(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    # COLUMNS: a message is wrapped to the width, and a word longer than it (the
    # temporary folder's path, longer under xdist) would be broken inside.
    env = clean_env(tmp_path, PYTHONPATH=str(REPO), LC_ALL="C", PYTHONUTF8="0", COLUMNS="1000")
    env.pop("PYTHONIOENCODING", None)
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", *args],
        env=env, cwd=tmp_path, capture_output=True, check=False, timeout=120,
    )  # fmt: skip


@pytest.mark.integration
def test_non_ascii_output_in_the_c_locale(tmp_path: Path) -> None:
    (tmp_path / "req.txt").write_text('six ; platform_release == "café"\n', encoding="utf-8")
    done = _run_c_locale(tmp_path, "plan", "-r", "req.txt", *TARGET)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert b'six ; platform_release == "caf\\xe9"' in done.stdout


@pytest.mark.integration
@pytest.mark.parametrize("name", [b"caf\xe9.txt", b"caf\xc3\xa9.txt"], ids=["latin-1", "utf-8"])
def test_lock_from_a_file_name_of_another_locale(tmp_path: Path, name: bytes) -> None:
    path = os.path.join(os.fsencode(tmp_path), name)
    with open(path, "wb") as f:
        f.write(b"six\n")
    done = _run_c_locale(
        tmp_path, "lock", "--flavoured-only", "-r", os.fsdecode(name), *TARGET, "-o", "out.txt"
    )
    assert done.returncode == 0, done.stderr
    header = (tmp_path / "out.txt").read_bytes().splitlines()[1]
    # The name's bytes read as UTF-8; a byte that is not UTF-8 shown as an escape.
    shown = name.decode("utf-8", "backslashreplace").encode("utf-8")
    assert header == b"# from " + shown


@pytest.mark.integration
@pytest.mark.parametrize("hook", [["pip"], ["pip", "--no-proof"]], ids=["checked", "unchecked"])
def test_pip_install_from_a_folder_of_a_non_ascii_name_in_the_c_locale(
    gpu_index: GpuIndex, tmp_path: Path, hook: list[str]
) -> None:
    """Under LC_ALL=C PYTHONUTF8=0 the folder's UTF-8 name reaches pip as surrogate
    escapes, and pip (its build tracker) failed writing it with a traceback. The
    unchecked install runs twice: the second is the stored plan's replay."""
    folder = tmp_path / "prójekt ü"
    folder.mkdir()
    (folder / "requirements.txt").write_text("plainpkg\n-r other.txt\n", encoding="utf-8")
    (folder / "other.txt").write_text("helperlib==1.0\n", encoding="utf-8")
    make_venv(tmp_path / "venv")
    env = clean_env(tmp_path, PYTHONPATH=str(REPO), LC_ALL="C", LANG="C", PYTHONUTF8="0",
                    VIRTUAL_ENV=str(tmp_path / "venv"), PIP_INDEX_URL=gpu_index.simple,
                    RESOLVER_HOOK_CACHE_DIR=str(tmp_path / "cache"))  # fmt: skip
    env.pop("PYTHONIOENCODING", None)
    argv = [*hook, "install", "--dry-run", "-r", os.path.join(folder, "requirements.txt")]
    for _ in range(2 if "--no-proof" in hook else 1):
        done = subprocess.run(
            [sys.executable, "-m", "resolver_hook", *argv],
            env=env, cwd=tmp_path, capture_output=True, check=False, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert b"Traceback" not in done.stderr
        assert b"Would install helperlib-1.0 plainpkg-1.0" in done.stdout


@pytest.mark.integration
def test_a_path_in_a_message_is_shown_as_its_bytes_in_the_c_locale(tmp_path: Path) -> None:
    """A message naming a file of a non-ASCII folder shows the name's own bytes (UTF-8:
    what a terminal shows as the name), not Python's surrogate escapes (``\\udcc3``);
    the same on the stored plan's replay."""
    folder = tmp_path / "prójekt ü"
    folder.mkdir()
    (folder / "requirements.txt").write_text("six\n-r other.txt\n", encoding="utf-8")
    (folder / "other.txt").write_text("six --pre stray\n", encoding="utf-8")
    shown = os.fsencode(folder / "other.txt")
    for _ in range(2):  # the second run replays the stored plan
        done = _run_c_locale(tmp_path, "plan", "-r", str(folder / "requirements.txt"), *TARGET)
        assert done.returncode == 0, done.stderr
        flat = b" ".join(done.stdout.split())  # a long note is wrapped at a space
        assert shown + b":1: pip ignores 'stray' after the options" in flat
        assert b"\\udc" not in done.stdout
    done = _run_c_locale(tmp_path, "plan", "-r", str(folder / "gone.txt"), *TARGET)
    assert done.returncode == 2
    assert done.stderr.startswith(
        b"error: could not open requirements file " + os.fsencode(folder / "gone.txt")
    )


@pytest.mark.integration
@pytest.mark.parametrize(
    "argv",
    [
        ["env", "plan", *TARGET, "{folder}"],  # a folder where --project was meant
        ["sync", *TARGET, "{folder}", "{folder}/requirements.txt"],  # one lock set only
    ],
    ids=["env-plan", "sync"],
)
def test_a_usage_error_naming_a_non_ascii_path_shows_its_bytes_in_the_c_locale(
    tmp_path: Path, argv: list[str]
) -> None:
    """The command line's own refusals (argparse's) name the path as every other
    message does: its bytes, not Python's surrogate escapes (``\\udcc3``)."""
    folder = tmp_path / "prójekt ü"
    folder.mkdir()
    (folder / "requirements.txt").write_text("six\n", encoding="utf-8")
    done = _run_c_locale(tmp_path, *(a.replace("{folder}", str(folder)) for a in argv))
    assert done.returncode == 2, done.stderr
    assert b"\\udc" not in done.stderr
    assert os.fsencode(folder) in done.stderr
    assert b"Traceback" not in done.stderr
