"""Threat model: what a lock file is made of.

A lock line is read by pip: one hash per wheel (the manifest's, never a second one from
a URL fragment), no line breaks from a manifest value, and a failure names the
manifest key that caused it, not ``<command line>``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from resolver_hook.cli import main

HEX = "ab" * 32
WHEEL = "https://example.org/dl/pkg-1.0-py3-none-any.whl"


def pkg_manifest(tmp_path: Path, wheel: str) -> Path:
    """``m.toml``: the package ``pkg`` with one ``[[wheel]]`` of the TOML lines ``wheel``."""
    path = tmp_path / "m.toml"
    path.write_text(f'schema = 1\n[package]\nname = "pkg"\n[[wheel]]\n{wheel}')
    return path


def locked_pkg(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], manifest: Path, *targets: str
) -> str:
    """``lock pkg --manifest MANIFEST --target ... -o lock.txt``, which must succeed: the
    lock file's text."""
    out = tmp_path / "lock.txt"
    options = [word for target in targets for word in ("--target", target)]
    code = main(
        ["lock", "--flavoured-only", "pkg", "--manifest", str(manifest), *options, "-o", str(out)]
    )
    assert code == 0, capsys.readouterr().err
    return out.read_text()


def test_fragment_hash_equal_to_sha256_gives_one_hash_in_the_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = pkg_manifest(tmp_path, f'url = "{WHEEL}#sha256={HEX}"\nsha256 = "{HEX}"\n')
    text = locked_pkg(tmp_path, capsys, path, "linux-x86_64-py312")
    assert text.count("#sha256=") == 1
    assert f"pkg @ {WHEEL}#sha256={HEX}" in text


def test_sha256_with_newline_blames_the_manifest_key_in_a_multi_target_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = pkg_manifest(tmp_path, f'url = "{WHEEL}"\nsha256 = "{HEX}\\n"\n')
    (tmp_path / "req.in").write_text("pkg\n")
    out = tmp_path / "out.txt"
    code = main([
        "lock", "--flavoured-only", "-r", str(tmp_path / "req.in"), "--manifest", str(path),
        "--target", "linux-x86_64-py312", "--target", "linux-aarch64-py312", "-o", str(out),
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert f"{path}: wheel[0].sha256: " in err
    assert "<command line>" not in err
    assert not out.exists()


def test_fragment_hash_alone_reaches_the_lock_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = pkg_manifest(tmp_path, f'url = "{WHEEL}#sha256={HEX}"\n')
    text = locked_pkg(tmp_path, capsys, path, "linux-x86_64-py312", "linux-aarch64-py312")
    (line,) = [x for x in text.splitlines() if x.startswith("pkg")]
    assert line.startswith(f"pkg @ {WHEEL}#sha256={HEX}")
    assert line.count("sha256") == 1


@pytest.mark.parametrize("fragment", ["xyz", HEX + "0", "&".join([HEX, "sha256=" + "cd" * 32])])
def test_bad_fragment_hash_blames_the_manifest_key(
    fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = pkg_manifest(tmp_path, f'url = "{WHEEL}#sha256={fragment}"\n')
    code = main([
        "lock", "--flavoured-only", "pkg", "--manifest", str(path),
        "--target", "linux-x86_64-py312", "--target", "linux-aarch64-py312", "-o", "-",
    ])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith(f"error: {path}: wheel[0].url: #sha256=")
    assert "<command line>" not in err
    assert "sha256" not in out
