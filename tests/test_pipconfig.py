"""Which constraint files pip and uv read besides -c (pip's configuration files, in order)."""

from __future__ import annotations

import os
from pathlib import Path

from resolver_hook.install.pipconfig import implied_constraints


def test_pip_constraint_wins_over_configuration(tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nconstraint = /from-conf.txt\n")
    env = {"HOME": str(tmp_path), "PIP_CONFIG_FILE": str(conf), "PIP_CONSTRAINT": "/a.txt /b.txt"}
    got = implied_constraints("pip", env, None)
    assert (got.files, got.source) == (("/a.txt", "/b.txt"), "PIP_CONSTRAINT")


def test_later_configuration_files_override_earlier_and_install_overrides_global(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text("[global]\nconstraint = /user.txt\n")
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pip.conf").write_text(
        "[global]\nconstraint = /g.txt\n[install]\nConstraint = /i.txt\n"
    )
    env = {"HOME": str(home), "XDG_CONFIG_DIRS": str(tmp_path / "none")}
    assert implied_constraints("pip", env, None).files == ("/user.txt",)
    got = implied_constraints("pip", env, venv)
    assert (got.files, got.source) == (("/i.txt",), f"constraint in {venv / 'pip.conf'}")


def test_dev_null_config_file_loads_none(tmp_path: Path) -> None:
    (tmp_path / "pip.conf").write_text("[global]\nconstraint = /site.txt\n")
    env = {"HOME": str(tmp_path), "PIP_CONFIG_FILE": os.devnull}
    assert implied_constraints("pip", env, tmp_path).files == ()


def test_uv_reads_uv_constraint_only(tmp_path: Path) -> None:
    (tmp_path / "pip.conf").write_text("[global]\nconstraint = /site.txt\n")
    env = {"HOME": str(tmp_path), "UV_CONSTRAINT": "/u.txt", "PIP_CONSTRAINT": "/p.txt"}
    got = implied_constraints("uv", env, tmp_path)
    assert (got.files, got.source) == (("/u.txt",), "UV_CONSTRAINT")
