"""Requirement lines rewritten into a generated file mean what they meant in the user's.

Threat model: real requirement-file habits the rewrite (``--hash``, ``--require-hashes``,
a name flavour) used to break: ``-f ../wheels`` beside the file (pip and uv read it
relative to the requirements file), ``./pkg.whl`` (relative to the current folder), and
per-line build options (``-C``/``--config-settings``, ``--global-option``). Real pip and
uv install real wheels from those paths.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.host import HostProfile
from resolver_hook.reqfile import parse_requirements, read_requirements
from resolver_hook.resolve import resolve
from tests.installenv import clean_env, installed, venv_for
from tests.paths import REPO
from tests.wheelfactory import build_wheel


def test_build_options_and_paths_survive_the_rewrite(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    (tmp_path / "wheels").mkdir()
    sub.mkdir()
    text = (
        "-f ../wheels\n"
        "demo==1.0 --hash=sha256:aa -C key=value --config-settings 'other=a b' "
        "--global-option=--verbose\n"
        "./local-1.0-py3-none-any.whl --hash=sha256:bb\n"
        "-e ./editable\n"
    )
    (sub / "req.txt").write_text(text)
    reqs = read_requirements([str(sub / "req.txt")])
    plan = resolve(reqs, {}, HostProfile(os="linux", arch="x86_64", python="3.12"))
    assert plan.rewritten_lines() == [
        f"-f {sub / '..' / 'wheels'}",  # as pip joins it (a link in the path kept)
        "demo==1.0 --hash=sha256:aa -C key=value -C 'other=a b' --global-option --verbose",
        f"{Path.cwd() / 'local-1.0-py3-none-any.whl'} --hash=sha256:bb",
        f"-e {Path.cwd() / 'editable'}",
    ]
    # The generated line reads back as the same requirement with the same options.
    again = parse_requirements("\n".join(plan.rewritten_lines()), source="<generated>")
    assert next(e.build_options for e in again.requirements) == (
        ("-C", "key=value"),
        ("-C", "other=a b"),
        ("--global-option", "--verbose"),
    )


def test_find_links_not_beside_the_file_stays_as_written(tmp_path: Path) -> None:
    (tmp_path / "req.txt").write_text("-f ../nowhere\ndemo\n")
    (option,) = read_requirements([str(tmp_path / "req.txt")]).options
    assert option.as_line() == "-f ../nowhere"  # pip: as written, from the current folder


@pytest.mark.integration
@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_relative_paths_in_a_hashed_file_install_with_the_real_installer(
    tmp_path: Path, tool: str
) -> None:
    project = tmp_path / "project"
    (project / "requirements").mkdir(parents=True)
    wheels = project / "wheels"
    wheels.mkdir()
    demo = build_wheel(wheels, "demo", "1.0")
    local = build_wheel(project, "localpkg", "1.0")
    req = project / "requirements" / "prod.txt"
    req.write_text(
        "-f ../wheels\n"
        f"demo==1.0 --hash=sha256:{demo.sha256}\n"
        f"./{local.path.name} --hash=sha256:{local.sha256}\n"
    )
    venv = venv_for(tool, tmp_path / "venv")
    env = clean_env(tmp_path, PYTHONPATH=str(REPO), VIRTUAL_ENV=str(venv))
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    cmd = ["pip"] if tool == "pip" else ["uv", "pip"]
    done = subprocess.run(
        [sys.executable, "-m", "resolver_hook", *cmd, "install", "--no-index",
         "-r", "requirements/prod.txt"],
        env=env, cwd=project, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "requirement lines rewritten" in done.stderr
    have = installed(venv / "bin" / "python")
    assert have["demo"] == "1.0"
    assert have["localpkg"] == "1.0"
