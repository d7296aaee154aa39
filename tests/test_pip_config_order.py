"""pip's configuration read as pip reads it, checked against the pip that runs here.

pip merges its files global, user, site, then ``PIP_CONFIG_FILE`` (each overriding the
one before) and skips the user files when ``PIP_CONFIG_FILE`` names a file that exists
(docs/facts.md section 3, "pip's configuration files"). Each case writes the files,
asks real pip (``pip config debug`` / ``pip config list``) what applies, and asks the
hook's one reader the same.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.index.pipconfig import config_files, pip_settings
from resolver_hook.install.pipconfig import implied_constraints
from tests.installenv import GpuIndex, clean_env, make_venv
from tests.test_install import B200, hook, versions


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = clean_env(tmp_path, HOME=str(tmp_path / "home"))
    del env["PIP_CONFIG_FILE"]
    env.pop("XDG_CONFIG_HOME", None)
    env["XDG_CONFIG_DIRS"] = str(tmp_path / "xdg")
    env["VIRTUAL_ENV"] = sys.prefix  # the site file of the pip that runs below
    return {**env, **extra}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _pip(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "config", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def _pip_files(env: dict[str, str]) -> list[str]:
    """The files ``pip config debug`` says it reads, lowest priority first."""
    variants: dict[str, list[str]] = {}
    current = ""
    for line in _pip(env, "debug").splitlines():
        if re.fullmatch(r"[a-z_]+:", line):
            current = line[:-1]
        elif m := re.fullmatch(r"  (.+), exists: (True|False)", line):
            variants.setdefault(current, []).append(m.group(1))
    return [p for kind in ("global", "user", "site", "env") for p in variants.get(kind, [])]


def _pip_value(env: dict[str, str], name: str) -> str | None:
    """What ``pip install`` takes for ``name`` from its files: ``[install]`` over
    ``[global]``, an empty value as unset (pip's cli/parser.py)."""
    found = dict(re.findall(r"^([\w.:-]+)='(.*)'$", _pip(env, "list"), re.M))
    return found.get(f"install.{name}") or found.get(f"global.{name}") or None


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    return {
        "global": _write(tmp_path / "xdg" / "pip" / "pip.conf", "[global]\ncert = /g.pem\n"),
        "user": _write(
            tmp_path / "home" / ".config" / "pip" / "pip.conf",
            "[install]\ncert = /user.pem\nconstraint = /user.txt\n",
        ),
        "env": _write(tmp_path / "env.conf", "[global]\ncert = /env.pem\nconstraint = /env.txt\n"),
    }


def test_pip_config_file_comes_last_and_hides_the_user_files(
    tmp_path: Path, layout: dict[str, Path]
) -> None:
    env = _env(tmp_path, PIP_CONFIG_FILE=str(layout["env"]))
    assert config_files(env) == _pip_files(env)
    assert str(layout["user"]) not in config_files(env)
    assert _pip_value(env, "cert") == "/env.pem"
    assert pip_settings(env, "cert").get("cert") == ("/env.pem", f"cert in {layout['env']}")
    assert _pip_value(env, "constraint") == "/env.txt"
    got = implied_constraints("pip", env, None)
    assert (got.files, got.source) == (("/env.txt",), f"constraint in {layout['env']}")


def test_a_pip_config_file_that_does_not_exist_keeps_the_user_files(
    tmp_path: Path, layout: dict[str, Path]
) -> None:
    env = _env(tmp_path, PIP_CONFIG_FILE=str(tmp_path / "missing.conf"))
    assert config_files(env) == _pip_files(env)
    assert _pip_value(env, "cert") == "/user.pem"
    assert pip_settings(env, "cert").get("cert") == ("/user.pem", f"cert in {layout['user']}")


def test_install_section_of_an_earlier_file_beats_global_of_a_later_one(
    tmp_path: Path, layout: dict[str, Path]
) -> None:
    _write(layout["global"], "[install]\ncert = /gi.pem\n")
    env = _env(tmp_path, PIP_CONFIG_FILE=str(layout["env"]))
    assert _pip_value(env, "cert") == "/gi.pem"
    assert pip_settings(env, "cert").get("cert") == ("/gi.pem", f"cert in {layout['global']}")


def test_an_empty_value_in_a_later_file_unsets_the_setting(
    tmp_path: Path, layout: dict[str, Path]
) -> None:
    _write(layout["user"], "[global]\ncert =\n")
    env = _env(tmp_path)
    assert config_files(env) == _pip_files(env)
    # The machine's own /etc/pip.conf may set a cert too: the empty user value hides it.
    assert _pip_value(env, "cert") is None
    assert pip_settings(env, "cert").get("cert") is None


def test_a_variable_beats_every_file(tmp_path: Path, layout: dict[str, Path]) -> None:
    env = _env(tmp_path, PIP_CONFIG_FILE=str(layout["env"]), PIP_CERT="/var.pem")
    assert pip_settings(env, "cert").get("cert") == ("/var.pem", "PIP_CERT")
    assert pip_settings(env, "constraint").get("constraint") == (
        "/env.txt",
        f"constraint in {layout['env']}",
    )


def test_a_constraint_in_a_user_file_pip_skips_is_not_planned(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """The user's pip.conf pins the cu126 build; PIP_CONFIG_FILE names a file, so pip never
    reads it: the plan (and pip) take the machine's own build, cu130."""
    cons = _write(tmp_path / "cons.txt", "demo-gpu==1.0+cu126\n")
    _write(tmp_path / "home" / ".config" / "pip" / "pip.conf", f"[install]\nconstraint = {cons}\n")
    mine = _write(tmp_path / "mine.conf", "[global]\n")
    venv = tmp_path / "v"
    make_venv(venv)
    env = {"HOME": str(tmp_path / "home"), "PIP_CONFIG_FILE": str(mine)}
    args = ["pip", "--target", B200, "install", "--index-url", gpu_index.simple, "demo-gpu"]
    proc = hook(*args, venv=venv, env=env, manifests=gpu_index.manifests)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "planned with the constraints" not in proc.stderr
    assert versions(venv)["demo-gpu"] == "1.0+cu130"


def test_isolated_pip_reads_no_user_file_and_no_variable(
    tmp_path: Path, layout: dict[str, Path]
) -> None:
    """``pip --isolated``: no user file, no ``PIP_*`` variable (pip's cli/main.py
    ``create_command(..., isolated="--isolated" in cmd_args)``, configuration.py
    ``load``); the global, site and ``PIP_CONFIG_FILE`` files still apply."""
    env = _env(tmp_path, PIP_CERT="/var.pem")
    isolated = [p for kind in ("global", "user", "site", "env") for p in _isolated_files(env, kind)]
    assert config_files(env, isolated=True) == isolated
    assert str(layout["user"]) not in config_files(env, isolated=True)
    listed = dict(re.findall(r"^([\w.:-]+)='(.*)'$", _pip(env, "--isolated", "list"), re.M))
    assert ":env:.cert" not in listed  # the variable, unread
    # The user file's [install] value is skipped: the global one applies (this machine's
    # own /etc/pip.conf may set a cert over the test's global file).
    want = listed.get("install.cert") or listed.get("global.cert")
    got = pip_settings(env, "cert", isolated=True).get("cert")
    assert got is not None
    assert got[0] == want != "/user.pem"
    assert implied_constraints("pip", env, None, isolated=True).files == ()


def _isolated_files(env: dict[str, str], kind: str) -> list[str]:
    variants: dict[str, list[str]] = {}
    current = ""
    for line in _pip(env, "--isolated", "debug").splitlines():
        if re.fullmatch(r"[a-z_]+:", line):
            current = line[:-1]
        elif m := re.fullmatch(r"  (.+), exists: (True|False)", line):
            variants.setdefault(current, []).append(m.group(1))
    return variants.get(kind, [])


@pytest.mark.parametrize("where", ["user-file", "variable"])
def test_pip_install_isolated_is_planned_without_what_pip_skips(
    gpu_index: GpuIndex, tmp_path: Path, where: str
) -> None:
    """A constraint pinning the cu126 build, in the user's pip.conf or PIP_CONSTRAINT:
    ``pip install --isolated`` reads neither and installs the machine's own build, cu130.
    The plan read them anyway and refused demo-gpu on a B200 ("no build fits")."""
    cons = _write(tmp_path / "cons.txt", "demo-gpu==1.0+cu126\n")
    env = {"HOME": str(tmp_path / "home")}
    if where == "user-file":
        _write(
            tmp_path / "home" / ".config" / "pip" / "pip.conf", f"[install]\nconstraint = {cons}\n"
        )
        env["PIP_CONFIG_FILE"] = str(tmp_path / "missing.conf")  # a name, no file: user read
    else:
        env["PIP_CONSTRAINT"] = str(cons)
    venv = tmp_path / "v"
    make_venv(venv)
    args = ["pip", "--target", B200, "install", "--isolated", "--index-url", gpu_index.simple,
            "demo-gpu"]  # fmt: skip
    proc = hook(*args, venv=venv, env=env, manifests=gpu_index.manifests)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "planned with the constraints" not in proc.stderr
    assert versions(venv)["demo-gpu"] == "1.0+cu130"


def test_files_read_again_are_parsed_once_while_their_text_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command asks for the index, then for no-index: the files are read (and declared)
    each time, and parsed again only where a text changed."""
    import configparser

    from resolver_hook.ground.record import Recorder

    conf = _write(tmp_path / "pip.conf", "[global]\nindex-url = https://a.example/simple\n")
    env = {"HOME": str(tmp_path / "home"), "PIP_CONFIG_FILE": str(conf)}
    first = Recorder(cwd=str(tmp_path))
    assert pip_settings(env, "index-url", record=first) == {
        "index-url": ("https://a.example/simple", f"index-url in {conf}")
    }
    monkeypatch.setitem(sys.modules, "configparser", None)  # no parser to be had
    again = Recorder(cwd=str(tmp_path))
    assert pip_settings(env, "no-index", "index-url", record=again) == {
        "index-url": ("https://a.example/simple", f"index-url in {conf}")
    }
    assert again.inputs == first.inputs  # every read declared again
    monkeypatch.setitem(sys.modules, "configparser", configparser)
    _write(conf, "[global]\nno-index = yes\n")
    assert pip_settings(env, "no-index", "index-url") == {
        "no-index": ("yes", f"no-index in {conf}")
    }


def test_a_files_values_are_kept_by_its_text_across_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later command whose pip.conf holds the same text takes what it says from the
    user cache, without configparser; a changed text is parsed again; a text with an
    ``@`` (credentials) is never kept."""
    import configparser

    from resolver_hook.index import pipconfig

    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", str(tmp_path / "cache"))
    conf = _write(tmp_path / "pip.conf", "[install]\nIndex_URL = https://a.example/simple\n")
    env = {"HOME": str(tmp_path / "home"), "PIP_CONFIG_FILE": str(conf)}
    expected = {"index-url": ("https://a.example/simple", f"index-url in {conf}")}
    assert pip_settings(env, "index-url") == expected
    pipconfig._merged.cache_clear()  # as a new process finds it
    monkeypatch.setitem(sys.modules, "configparser", None)  # no parser to be had
    assert pip_settings(env, "index-url") == expected
    monkeypatch.setitem(sys.modules, "configparser", configparser)
    _write(conf, "[global]\nindex-url = https://u:p@b.example/simple\n")
    assert pip_settings(env, "index-url")["index-url"][0] == "https://u:p@b.example/simple"
    kept = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert "a.example" in kept
    assert "b.example" not in kept


def test_a_pip_conf_kept_by_other_code_is_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a pip.conf says is kept by the code that read it too (the tool's version and
    files, Python's): another tool, or a checkout edited in place, parses it again."""
    from resolver_hook.ground import contentcache
    from resolver_hook.index import pipconfig

    monkeypatch.setenv("RESOLVER_HOOK_CACHE_DIR", str(tmp_path / "cache"))
    conf = _write(tmp_path / "pip.conf", "[global]\nindex-url = https://a.example/simple\n")
    env = {"HOME": str(tmp_path / "home"), "PIP_CONFIG_FILE": str(conf)}
    parsed: list[str] = []
    parse = pipconfig._parsed

    def counted(path: str, text: str) -> list[list[str]] | None:
        parsed.append(path)
        return parse(path, text)

    monkeypatch.setattr(pipconfig, "_parsed", counted)
    for other_code in (False, False, True):
        if other_code:
            monkeypatch.setattr(contentcache, "_code", lambda: ["another tool"])
        pipconfig._merged.cache_clear()  # as a new process finds it
        assert pip_settings(env, "index-url")["index-url"][0] == "https://a.example/simple"
    assert [p for p in parsed if p == str(conf)] == [str(conf), str(conf)]  # (and /etc/pip.conf)
