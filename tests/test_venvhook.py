"""enable / disable / read_state on a venv's pip.conf, without running pip.

pip reads ``$VIRTUAL_ENV/pip.conf`` (docs/facts.md section 3). In it a command's own
section overrides ``[global]`` for that command, and key names ignore case,
``_`` vs ``-`` and a leading ``--`` (pip's documentation, "Configuration";
pip/_internal/configuration.py, ``_normalize_name``).
"""

from __future__ import annotations

import configparser
import json
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.errors import OperationalError
from resolver_hook.host import HostProfile
from resolver_hook.install.venvhook import disable, enable, hook_dir, read_state

PROFILE = HostProfile(os="linux", arch="x86_64", python="3.12")
PIN = "demo @ https://example.org/demo-1.0+cu130-py3-none-any.whl"
LINKS = "https://example.org/links/cu130/demo/"


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return tmp_path / "venv"


def pip_reads(conf: Path, section: str, key: str) -> list[str]:
    """The whitespace-separated values pip reads for ``key`` in ``section`` of ``conf``."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(conf.read_text(encoding="utf-8"))
    found = [
        v for k, v in parser.items(section) if k.lower().replace("_", "-").removeprefix("--") == key
    ]
    assert len(found) <= 1, f"{key} given {len(found)} times in [{section}]"
    return found[0].split() if found else []


@pytest.mark.parametrize(
    ("text", "section"),
    [
        ("[global]\ntimeout = 60\n", "global"),
        ("[global]\nconstraint = /mine.txt\nfind_links = /mine/\n", "global"),
        # [install] overrides [global] for `pip install`: ours must be in it too.
        (
            "[global]\ntimeout = 60\n[install]\nconstraint = /mine.txt\nFind-Links = /mine/\n",
            "install",
        ),
    ],
    ids=["no entries of its own", "underscore spelling", "install section"],
)
def test_enable_adds_to_what_pip_install_reads(venv: Path, text: str, section: str) -> None:
    conf = venv / "pip.conf"
    conf.write_text(text)
    cons = enable(venv, PROFILE, [PIN], [LINKS])
    mine = ["/mine.txt"] if "/mine.txt" in text else []
    assert pip_reads(conf, section, "constraint") == [*mine, str(cons)]
    assert pip_reads(conf, section, "find-links") == (["/mine/"] if mine else []) + [LINKS]
    assert pip_reads(conf, "global", "constraint")[-1] == str(cons)


def test_disable_restores_byte_for_byte(venv: Path) -> None:
    conf = venv / "pip.conf"
    original = b"# mine\r\n[global]\r\ntimeout = 60 ; keep\r\n\r\n[install]\r\nno-deps = 1\r\n"
    conf.write_bytes(original)
    enable(venv, PROFILE, [PIN], [LINKS])
    enable(venv, PROFILE, [PIN], [])  # again: the saved original stays the original
    assert read_state(venv).enabled
    assert disable(venv)
    assert conf.read_bytes() == original
    assert not hook_dir(venv).exists()
    assert not disable(venv)


def test_enable_refuses_a_pip_conf_it_cannot_read_and_writes_nothing(venv: Path) -> None:
    conf = venv / "pip.conf"
    original = b"[global]\ntimeout = 6\xe9\n"  # Latin-1
    conf.write_bytes(original)
    with pytest.raises(OperationalError, match=r"pip\.conf: .*UTF-8"):
        enable(venv, PROFILE, [PIN], [LINKS])
    assert conf.read_bytes() == original
    assert not hook_dir(venv).exists()


def test_unreadable_state_is_an_error_line(venv: Path) -> None:
    enable(venv, PROFILE, [PIN], [LINKS])
    state = hook_dir(venv) / "state.json"
    data = json.loads(state.read_text())
    del data["constraints"]
    state.write_text(json.dumps(data))
    with pytest.raises(OperationalError, match=r"state\.json: unreadable"):
        read_state(venv)


@pytest.mark.parametrize(
    ("variable", "key"), [("PIP_CONSTRAINT", "constraint"), ("PIP_FIND_LINKS", "find-links")]
)
def test_enable_warns_of_a_variable_that_replaces_pip_conf(
    venv: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    key: str,
) -> None:
    # pip's environment variables take the place of pip.conf's keys: the built-in torch
    # manifest's find-links pages would never be read.
    monkeypatch.setenv(variable, "/elsewhere")
    assert (
        main(["enable", "--venv", str(venv), "--target", "linux-x86_64-py312-cuda13.0-sm100"]) == 0
    )
    out = capsys.readouterr().out
    assert (
        f"warning: {variable} is set in this shell and takes the place of pip.conf's {key}" in out
    )


def test_enable_on_a_folder_that_is_not_a_venv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["enable", "--venv", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {tmp_path} is not a virtual environment")
