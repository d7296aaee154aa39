"""The user's index: a flavour hosted on PyPI (onnxruntime-gpu, cupy-cuda13x, torch's plain
build) is read from, and pinned from, the index the user's installer reads, not pypi.org
(issue 49). pip: ``--index-url``, ``PIP_INDEX_URL``, then pip.conf; uv: ``--default-index``
or ``--index-url``, ``UV_DEFAULT_INDEX`` or ``UV_INDEX_URL``, then uv.toml; plan and lock
(no one installer): ours, the uv variables, ``PIP_INDEX_URL``, then pip.conf (docs/facts.md
section 3, "The user's index").

The company index is a loopback replica holding a wheel named like onnxruntime-gpu's; every
PyPI host is sent to a port where nothing listens, so the plan cannot read pypi.org and no
test downloads a real wheel.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.installenv import PY, clean_env, installed, make_uv_venv, make_venv
from tests.wheelfactory import BuiltWheel, LoopbackIndex, build_wheel

X86_B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"
VERSION = "1.31.1"


@pytest.fixture(scope="module")
def company(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LoopbackIndex, BuiltWheel]]:
    root = tmp_path_factory.mktemp("company")
    index = LoopbackIndex(root / "index")
    tag = f"cp{PY}-cp{PY}-manylinux_2_17_x86_64"
    wheel = build_wheel(root / "built", "onnxruntime-gpu", VERSION, tag=tag)
    index.add(wheel)
    with index.serving():
        yield index, wheel


def _dead_pypi() -> list[str]:
    """Flags that send pypi.org and files.pythonhosted.org to a closed loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return [
        "--allow-insecure-urls",
        "--mirror", f"https://pypi.org=http://127.0.0.1:{port}/pypi",
        "--mirror", f"https://files.pythonhosted.org=http://127.0.0.1:{port}/files",
    ]  # fmt: skip


def _env(tmp_path: Path, how: str, url: str) -> dict[str, str]:
    extra = {"RESOLVER_HOOK_OFFLINE": "", "HOME": str(tmp_path / "home")}
    if how == "pip.conf":
        conf = tmp_path / "pip.conf"
        conf.write_text(f"[global]\nindex-url = {url}\n")
        extra["PIP_CONFIG_FILE"] = str(conf)
    else:
        extra[how] = url
    return clean_env(tmp_path, **extra)


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", *args],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("how", ["PIP_INDEX_URL", "pip.conf", "UV_DEFAULT_INDEX"])
def test_a_pypi_hosted_flavour_is_planned_from_the_users_index(
    company: tuple[LoopbackIndex, BuiltWheel], tmp_path: Path, how: str
) -> None:
    index, wheel = company
    env = _env(tmp_path, how, index.simple_url)
    proc = _run(env, "plan", "onnxruntime", "--target", X86_B200, "--json", *_dead_pypi())
    assert proc.returncode == 0, proc.stderr
    p = next(x for x in json.loads(proc.stdout)["packages"] if x["name"] == "onnxruntime")
    assert (p["url"], p["sha256"]) == (index.wheel_url(wheel), wheel.sha256)
    assert "GET /simple/onnxruntime-gpu/" in index.requests


@pytest.mark.integration
@pytest.mark.parametrize(("tool", "how"), [("pip", "PIP_INDEX_URL"), ("pip", "pip.conf"),
                                           ("uv", "UV_DEFAULT_INDEX")])  # fmt: skip
def test_the_install_pins_and_installs_from_the_users_index(
    company: tuple[LoopbackIndex, BuiltWheel], tmp_path: Path, tool: str, how: str
) -> None:
    index, wheel = company
    env = _env(tmp_path, how, index.simple_url)
    venv = tmp_path / "venv"
    if tool == "pip":
        make_venv(venv)
        argv = ["pip", *_dead_pypi(), "--target", X86_B200, "install", "onnxruntime"]
    else:
        make_uv_venv(venv)
        env["UV_INSECURE_HOST"] = "127.0.0.1"
        argv = ["uv", *_dead_pypi(), "--target", X86_B200, "pip", "install", "onnxruntime"]
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    proc = _run(env, *argv)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert installed(venv / "bin" / "python")["onnxruntime-gpu"] == VERSION
    assert index.gets(wheel) >= 1


@pytest.mark.integration
def test_the_lock_pins_from_the_users_index(
    company: tuple[LoopbackIndex, BuiltWheel], tmp_path: Path
) -> None:
    index, wheel = company
    env = _env(tmp_path, "PIP_INDEX_URL", index.simple_url)
    out = tmp_path / "requirements.txt"
    proc = _run(env, "lock", "onnxruntime", "--target", X86_B200, "-o", str(out), *_dead_pypi())
    assert proc.returncode == 0, proc.stderr
    assert f"onnxruntime-gpu @ {index.wheel_url(wheel)}#sha256={wheel.sha256}" in out.read_text()


def _conf(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_each_installer_reads_its_own_settings_in_its_own_order(tmp_path: Path) -> None:
    """pip: flag > PIP_INDEX_URL > pip.conf; uv: flag > UV_DEFAULT_INDEX > UV_INDEX_URL
    > uv.toml (pip's settings unread); plan and lock: ours, uv's, pip's, then files."""
    from resolver_hook.index.userindex import user_index
    from resolver_hook.install.args import parse_install_args

    pip_conf = _conf(tmp_path, "pip.conf", "[global]\nindex-url = https://conf.example/simple/\n")
    uv_toml = _conf(tmp_path, "uv.toml", '[pip]\nindex-url = "https://toml.example/simple/"\n')
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_DIRS": str(tmp_path / "none"),
        "PIP_CONFIG_FILE": pip_conf,
        "UV_CONFIG_FILE": uv_toml,
        "PIP_INDEX_URL": "https://pip-env.example/simple/",
        "UV_INDEX_URL": "https://uv-old.example/simple/",
        "UV_DEFAULT_INDEX": "https://uv-env.example/simple/",
    }

    def got(tool: str | None, env: dict[str, str], *options: str) -> tuple[str, str] | None:
        given = parse_install_args(tool, options).index_url if tool else None
        found = user_index(env, tool=tool, given=given)
        return None if found is None else (found.url, found.where)

    flag = ("--index-url", "https://flag.example/simple/")
    assert got("pip", env, *flag) == ("https://flag.example/simple/", "pip's --index-url")
    assert got("pip", env, "-ihttps://i.example/") == ("https://i.example/", "pip's --index-url")
    # -Ui URL is -U -i URL to pip's option parser: its index is read too.
    assert got("pip", env, "-Ui", "https://c.example/") == (
        "https://c.example/",
        "pip's --index-url",
    )
    assert got("pip", env) == ("https://pip-env.example/simple/", "PIP_INDEX_URL")
    no_pip_env = {k: v for k, v in env.items() if k != "PIP_INDEX_URL"}
    assert got("pip", no_pip_env) == ("https://conf.example/simple/", f"index-url in {pip_conf}")
    assert got("uv", env, "--default-index=https://d.example/", *flag) == (
        "https://d.example/",
        "uv's --default-index",
    )
    assert got("uv", env, *flag) == ("https://flag.example/simple/", "uv's --default-index")
    assert got("uv", env) == ("https://uv-env.example/simple/", "UV_DEFAULT_INDEX")
    older = {k: v for k, v in env.items() if k != "UV_DEFAULT_INDEX"}
    assert got("uv", older) == ("https://uv-old.example/simple/", "UV_INDEX_URL")
    files_only = {k: v for k, v in older.items() if k not in ("UV_INDEX_URL", "PIP_INDEX_URL")}
    assert got("uv", files_only) == ("https://toml.example/simple/", f"index in {uv_toml}")
    assert got("uv", {**files_only, "UV_NO_CONFIG": "1", "UV_CONFIG_FILE": ""}) is None
    assert got(None, env) == ("https://uv-env.example/simple/", "UV_DEFAULT_INDEX")
    assert got(None, no_pip_env | {"UV_DEFAULT_INDEX": "", "UV_INDEX_URL": ""}) == (
        "https://conf.example/simple/",
        f"index-url in {pip_conf}",
    )
    assert got(None, files_only | {"PIP_CONFIG_FILE": "/dev/null"}) == (
        "https://toml.example/simple/",
        f"index in {uv_toml}",
    )


def test_uv_toml_is_found_as_uv_finds_it(tmp_path: Path) -> None:
    """The project's file (the nearest uv.toml, or pyproject.toml with [tool.uv]) beats
    the user's, which beats the system's; [[index]] default = true names the index."""
    from resolver_hook.index.userindex import UvConfig

    project = tmp_path / "project" / "sub"
    project.mkdir(parents=True)
    user = _conf(tmp_path, "config/uv/uv.toml",
                 '[[index]]\nurl = "https://other.example/"\n\n'
                 '[[index]]\nurl = "https://user.example/"\ndefault = true\n')  # fmt: skip
    system = _conf(tmp_path, "xdg/uv/uv.toml", 'index-url = "https://system.example/"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CONFIG_DIRS": str(tmp_path / "xdg")}

    def got(env: dict[str, str]) -> tuple[str, str] | None:
        found = UvConfig(env, project).index()
        return None if found is None else (found.url, found.where)

    assert got(env) == ("https://user.example/", f"index in {user}")
    assert got({**env, "XDG_CONFIG_HOME": str(tmp_path / "none")}) == (
        "https://system.example/",
        f"index in {system}",
    )
    pyproject = _conf(tmp_path, "project/pyproject.toml",
                      '[tool.uv]\nindex-url = "https://project.example/"\n')  # fmt: skip
    # The user's [[index]] default = true beats the project's top-level index-url
    # (uv merges the files, then takes the default [[index]] first).
    assert got(env) == ("https://user.example/", f"index in {user}")
    _conf(tmp_path, "config/uv/uv.toml", "")
    assert got(env) == ("https://project.example/", f"index in {pyproject}")
    _conf(tmp_path, "project/sub/pyproject.toml", "[project]\nname = 'x'\n")  # no [tool.uv]
    assert got(env) == ("https://project.example/", f"index in {pyproject}")
    here = _conf(tmp_path, "project/sub/uv.toml",
                 '[pip]\nindex-url = "https://here.example/"\n')  # fmt: skip
    assert got(env) == ("https://here.example/", f"index in {here}")


def test_uv_toml_no_index_is_read_as_uv_merges_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """no-index in uv's files: [pip] before the top-level key, the project's file first,
    the first file that sets the key deciding; UV_NO_INDEX=1 beats the files (uv 0.13.9,
    docs/facts.md section 3)."""
    from resolver_hook.index.userindex import no_index

    project = tmp_path / "project"
    project.mkdir()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CONFIG_DIRS": str(tmp_path / "none")}

    monkeypatch.chdir(project)

    def said(tool: str | None = "uv", **more: str) -> str | None:
        return no_index({**env, **more}, tool=tool)

    assert said() is None
    user = _conf(tmp_path, "config/uv/uv.toml", "no-index = true\n")
    assert said() == f"no-index in {user}"
    assert said(None) == f"no-index in {user}"
    assert said("pip") is None  # pip reads no uv settings
    assert said(UV_NO_CONFIG="1") is None
    here = _conf(tmp_path, "project/uv.toml", "no-index = false\n")
    assert said() is None  # the project's false beats the user's true
    _conf(tmp_path, "config/uv/uv.toml", "[pip]\nno-index = true\n")
    assert said() == f"no-index in {user}"  # [pip] of any file before a top-level key
    _conf(tmp_path, "project/uv.toml", "[pip]\nno-index = false\n")
    assert said() is None
    assert said(UV_NO_INDEX="1") == "UV_NO_INDEX"
    assert said(UV_CONFIG_FILE=here) is None
    assert said(UV_CONFIG_FILE=user, UV_NO_CONFIG="1") == f"no-index in {user}"


def test_a_command_reads_uv_toml_once_for_both_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default index and no-index come from one read of uv's files, and that read is
    declared to the recorder: a stored plan is planned again when the file changes."""
    from resolver_hook.ground import record
    from resolver_hook.index import userindex
    from resolver_hook.settings import InstallerSettings, combine

    uv_toml = _conf(tmp_path, "uv.toml", 'index-url = "https://toml.example/"\nno-index = true\n')
    reads: list[str] = []

    def counted(path: str, limit: int, recorder: record.Recorder) -> bytes | None:
        reads.append(path)
        return record.file_bytes(path, limit, recorder)

    monkeypatch.setattr(userindex, "file_bytes", counted)
    recorder = record.Recorder()
    env = {"UV_CONFIG_FILE": uv_toml}
    indexes = combine(
        env, mirror=(), installer=InstallerSettings(tool="uv"), record=recorder
    ).indexes
    assert indexes.default == userindex.UserIndex("https://toml.example/", f"index in {uv_toml}")
    assert indexes.no_index == f"no-index in {uv_toml}"
    assert reads == [uv_toml]
    assert uv_toml in [path for path, _how, _digest in recorder.inputs.values()]


def _dead_index() -> str:
    """An index URL on a loopback port where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/simple"


@pytest.mark.parametrize("spelling", ["-i", "--index-url"])
def test_an_index_line_of_a_requirements_file_names_the_users_index(
    company: tuple[LoopbackIndex, BuiltWheel], tmp_path: Path, spelling: str
) -> None:
    """pip's weight: the file's line beats PIP_INDEX_URL (and pip.conf, and the flag)."""
    index, wheel = company
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(f"{spelling} {index.simple_url}\nonnxruntime\n")
    env = _env(tmp_path, "PIP_INDEX_URL", _dead_index())
    proc = _run(env, "plan", "-r", str(reqs), "--target", X86_B200, "--json", *_dead_pypi())
    assert proc.returncode == 0, proc.stderr
    p = next(x for x in json.loads(proc.stdout)["packages"] if x["name"] == "onnxruntime")
    assert (p["url"], p["sha256"]) == (index.wheel_url(wheel), wheel.sha256)


@pytest.mark.integration
@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_the_install_reads_the_index_line_of_a_requirements_file(
    company: tuple[LoopbackIndex, BuiltWheel], tmp_path: Path, tool: str
) -> None:
    index, wheel = company
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(f"--index-url {index.simple_url}\nonnxruntime\n")
    # pip: the file's line beats PIP_INDEX_URL; uv reads it with none of its own set.
    env = _env(tmp_path, "PIP_INDEX_URL", _dead_index())
    venv = tmp_path / "venv"
    if tool == "pip":
        make_venv(venv)
    else:
        make_uv_venv(venv)
        env["UV_INSECURE_HOST"] = "127.0.0.1"
    install = ["install", "-r", str(reqs)] if tool == "pip" else ["pip", "install", "-r", str(reqs)]
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    proc = _run(env, tool, *_dead_pypi(), "--target", X86_B200, *install)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert installed(venv / "bin" / "python")["onnxruntime-gpu"] == VERSION
    assert index.gets(wheel) >= 1


def test_an_index_line_weighs_as_each_installer_weighs_it() -> None:
    """pip: the file's last -i line beats every other setting; uv: read only when none
    of uv's own settings names an index; plan and lock: below our --index-url only.
    --extra-index-url adds an index: the default one stays."""
    from resolver_hook.index.userindex import UserIndex, file_index
    from resolver_hook.reqfile import read_requirements

    text = b"-i https://a.example/\n--extra-index-url https://x.example/\n-i https://b.example/\n"
    options = read_requirements(["-"], [], stdin=text).options
    env = UserIndex("https://env.example/", "PIP_INDEX_URL")
    ours = UserIndex("https://ours.example/", "--index-url")
    line = UserIndex("https://b.example/", "-i in -:3")
    assert file_index(env, options, "pip") == line
    assert file_index(env, options, "uv") == env
    assert file_index(None, options, "uv") == line
    assert file_index(env, options, None) == line
    assert file_index(ours, options, None) == ours
    extra = read_requirements(["-"], [], stdin=b"--extra-index-url https://x.example/\n").options
    assert file_index(None, extra, "pip") is None


@pytest.mark.parametrize("how", ["PIP_NO_INDEX", "pip.conf", "line", "UV_NO_INDEX", "uv.toml"])
def test_no_index_pins_nothing_from_the_default_index(
    company: tuple[LoopbackIndex, BuiltWheel], tmp_path: Path, how: str
) -> None:
    """--no-index (a variable, pip.conf, a requirements line): the installer reads the
    find-links pages only, so the plan pins no file of the default index (PyPI's, or
    the shipped snapshot's copy of it) and says why in one note."""
    _, wheel = company
    extra = {"RESOLVER_HOOK_OFFLINE": "", "HOME": str(tmp_path / "home")}
    lines = f"--find-links {wheel.path.parent}\nonnxruntime\n"
    if how == "pip.conf":
        extra["PIP_CONFIG_FILE"] = _conf(tmp_path, "pip.conf", "[global]\nno-index = true\n")
    elif how == "uv.toml":
        extra["UV_CONFIG_FILE"] = _conf(tmp_path, "uv.toml", "no-index = true\n")
    elif how == "line":
        lines = "--no-index\n" + lines
    else:
        extra[how] = "1"
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(lines)
    env = clean_env(tmp_path, **extra)
    proc = _run(env, "plan", "-r", str(reqs), "--target", X86_B200, "--json", *_dead_pypi())
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    p = next(x for x in plan["packages"] if x["name"] == "onnxruntime")
    assert p["url"] is None, p
    assert p["line"].startswith("onnxruntime-gpu"), p
    assert not any("files.pythonhosted.org" in line for line in plan["requirements"])
    said = [n for n in plan["notes"] if "the installer reads no index" in n]
    assert len(said) == 1, plan["notes"]
    assert "onnxruntime-gpu" in said[0]


@pytest.mark.integration
def test_pip_no_index_installs_from_the_find_links_folder(
    company: tuple[LoopbackIndex, BuiltWheel], tmp_path: Path
) -> None:
    """pip --no-index --find-links FOLDER: the plan's output installs from the folder
    with real pip. Every connection pip would open goes to a dead proxy, so a pin of a
    file on an index fails the test."""
    _, wheel = company
    env = _env(tmp_path, "PIP_INDEX_URL", _dead_index())
    dead = _dead_index().rsplit("/", 1)[0]
    env.update(HTTPS_PROXY=dead, https_proxy=dead, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    venv = tmp_path / "venv"
    make_venv(venv)
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    proc = _run(env, "pip", *_dead_pypi(), "--target", X86_B200, "install", "--no-index",
                "--find-links", str(wheel.path.parent), "onnxruntime")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert installed(venv / "bin" / "python")["onnxruntime-gpu"] == VERSION


def test_uv_config_flags_in_the_install_arguments_pick_the_files_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uv's ``--config-file PATH`` after ``install`` reads that file instead of the project's
    (even over ``UV_CONFIG_FILE``), ``--no-config`` reads no file found (seen with uv 0.13.9,
    docs/facts.md section 3): the plan reads the default index uv reads."""
    from resolver_hook.install.args import parse_install_args
    from resolver_hook.settings import InstallerSettings, combine

    here = _conf(tmp_path, "project/uv.toml", 'index-url = "https://project.example/"\n')
    given = _conf(tmp_path, "given.toml", 'index-url = "https://given.example/"\n')
    env_file = _conf(tmp_path, "env.toml", 'index-url = "https://env.example/"\n')
    monkeypatch.chdir(tmp_path / "project")

    def got(env: dict[str, str], *options: str) -> tuple[str, str] | None:
        parsed = parse_install_args("uv", options)
        installer = InstallerSettings(
            tool="uv", config_file=parsed.config_file, no_config=parsed.no_config
        )
        found = combine({"HOME": str(tmp_path), **env}, mirror=[], installer=installer)
        default = found.indexes.default
        return None if default is None else (default.url, default.where)

    assert got({}) == ("https://project.example/", f"index in {here}")
    assert got({}, "--config-file", given) == ("https://given.example/", f"index in {given}")
    assert got({}, f"--config-file={given}") == ("https://given.example/", f"index in {given}")
    assert got({"UV_CONFIG_FILE": env_file}, "--config-file", given) == (
        "https://given.example/",
        f"index in {given}",
    )
    assert got({}, "--no-config") is None
    assert got({}, "--no-config", "--config-file", given) == (
        "https://given.example/",
        f"index in {given}",
    )
    assert got({"UV_CONFIG_FILE": env_file}, "--no-config") == (
        "https://env.example/",
        f"index in {env_file}",
    )
