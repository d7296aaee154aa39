"""pip's interpreter started before the plan (resolver_hook.install.pipearly,
resolver_hook.install.session pip_started, resolver_hook.install.checked pip_ahead):
started as the program starts for a pip install in an active virtual environment whose
pip is there (for a checked one, else as the command line is read where its pip writes
reports), importing pip's install command while it waits, taken by the session for
that interpreter (the dry run's, or an unchecked install's), stopped unused otherwise."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from resolver_hook.install import pipearly
from resolver_hook.install.args import parse_install_args
from resolver_hook.install.backends import Installer
from resolver_hook.install.checked import pip_ahead
from resolver_hook.install.launch import install_main
from resolver_hook.install.session import pip_started
from tests.paths import python_child


@pytest.fixture
def venv(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A virtual environment's files as the hook reads them (pyvenv.cfg, pip's version in
    its __init__.py), its python this interpreter, and a stand-in for pip's entry point
    on PYTHONPATH; the variables of a run in it."""
    root = tmp_path / "venv"
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    os.symlink(sys.executable, root / "bin" / "python")
    pip = root / "lib" / "python3.99" / "site-packages" / "pip"
    (pip / "_internal" / "cli").mkdir(parents=True)
    (pip / "__init__.py").write_text('__version__ = "26.0"\n')
    (pip / "_internal" / "__init__.py").write_text("")
    (pip / "_internal" / "cli" / "__init__.py").write_text("")
    (pip / "_internal" / "cli" / "main.py").write_text(
        "def main(args):\n    print('ran', ' '.join(args))\n    return 0\n"
    )
    # pip's install command: says when it is imported (in the folder PIP_IMPORTED names).
    (pip / "_internal" / "commands").mkdir()
    (pip / "_internal" / "commands" / "__init__.py").write_text("")
    (pip / "_internal" / "commands" / "install.py").write_text(
        "import os\n"
        "if os.environ.get('PIP_IMPORTED'):\n"
        "    open(os.path.join(os.environ['PIP_IMPORTED'], str(os.getpid())), 'w').close()\n"
    )
    env = {**os.environ, "VIRTUAL_ENV": str(root), "PYTHONPATH": str(pip.parent)}
    env.pop("COLUMNS", None)
    return root, env


def _command(root: Path) -> list[str]:
    return [str(root / "bin" / "python"), "-m", "pip"]


def test_a_checked_pip_install_starts_its_dry_runs_interpreter_first(
    venv: tuple[Path, dict[str, str]],
) -> None:
    root, env = venv
    parsed = parse_install_args("pip", ["demo"])
    started = pip_started("pip", parsed, env, proof=True)
    assert started is not None
    try:
        args = ["install", "--dry-run", "demo"]
        assert started.fits(_command(root), args, env)
        seen: list[str] = []
        assert started.dry_run(args, seen.append)[0] == 0
        assert "".join(seen) == "ran install --dry-run demo\n"
    finally:
        started.close()


@pytest.mark.parametrize(
    ("tool", "words", "proof", "version"),
    [
        ("pip", ["demo"], False, "26.0"),  # --no-proof: only the program's (none here)
        ("uv", ["demo"], True, "26.0"),  # uv's dry run is a process of its own
        ("pip", ["--report", "r.json", "demo"], True, "26.0"),  # the user's report
        ("pip", ["demo"], True, "22.1"),  # --report came in pip 22.2
    ],
)
def test_nothing_starts_where_no_dry_run_of_this_pip_comes(
    venv: tuple[Path, dict[str, str]], tool: str, words: list[str], proof: bool, version: str
) -> None:
    root, env = venv
    init = next((root / "lib").glob("python*/site-packages/pip/__init__.py"))
    init.write_text(f'__version__ = "{version}"\n')
    assert pip_started(tool, parse_install_args(tool, words), env, proof=proof) is None


def test_nothing_starts_outside_a_virtual_environment(venv: tuple[Path, dict[str, str]]) -> None:
    _, env = venv
    env = {k: v for k, v in env.items() if k != "VIRTUAL_ENV"}
    assert pip_started("pip", parse_install_args("pip", ["demo"]), env, proof=True) is None


def test_the_session_takes_the_one_started_for_its_interpreter(
    venv: tuple[Path, dict[str, str]],
) -> None:
    root, env = venv
    parsed = parse_install_args("pip", ["demo"])
    python = str(root / "bin" / "python")
    installer = Installer(tool="pip", command=(python, "-m", "pip", "install"), python=python)
    started = pip_started("pip", parsed, env, proof=True)
    assert started is not None
    assert pip_ahead(installer, parsed, env, started=started) is started
    started.close()
    # Where the session's own checks disagree (here: the uv of --python), it is stopped.
    other = pip_started("pip", parsed, env, proof=True)
    assert other is not None
    uv = Installer(tool="uv", command=("uv", "pip", "install"), python=python)
    assert pip_ahead(uv, parse_install_args("uv", ["demo"]), env, started=other) is None
    assert other.proc is None  # stopped


def test_waiting_for_its_words_it_imports_pips_install_command(
    venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Most of a small dry run's time is pip importing its install command: done while
    the plan is made, before the dry run's words arrive."""
    _, env = venv
    (tmp_path / "imported").mkdir()
    env = {**env, "PIP_IMPORTED": str(tmp_path / "imported")}
    started = pip_started("pip", parse_install_args("pip", ["demo"]), env, proof=True)
    assert started is not None
    try:
        deadline = time.monotonic() + 60
        while not any((tmp_path / "imported").iterdir()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert started.proc is not None
        assert [p.name for p in (tmp_path / "imported").iterdir()] == [str(started.proc.pid)]
        seen: list[str] = []
        assert started.dry_run(["install", "--dry-run", "demo"], seen.append)[0] == 0
        assert "".join(seen) == "ran install --dry-run demo\n"
    finally:
        started.close()


@pytest.mark.parametrize(
    ("argv", "started"),
    [
        (["pip", "install", "demo"], True),
        (["pip", "--target", "linux-x86_64-py312", "install", "demo"], True),
        (["pip", "--no-proof", "install", "demo"], True),  # for the install itself
        (["pip", "uninstall", "demo"], False),
        (["uv", "pip", "install", "demo"], False),
    ],
)
def test_the_program_starts_it_for_a_pip_install(
    venv: tuple[Path, dict[str, str]], argv: list[str], started: bool
) -> None:
    _, env = venv
    early = pipearly.start_early(argv, env)
    try:
        assert (early is not None) is started
        assert pipearly.take_early() is early
        assert pipearly.take_early() is None  # taken once
    finally:
        if early is not None:
            early.close()


def test_the_program_starts_nothing_without_a_venv_or_its_pip(
    venv: tuple[Path, dict[str, str]],
) -> None:
    root, env = venv
    argv = ["pip", "install", "demo"]
    assert pipearly.start_early(argv, {k: v for k, v in env.items() if k != "VIRTUAL_ENV"}) is None
    next((root / "lib").glob("python*/site-packages/pip/__init__.py")).unlink()
    assert pipearly.start_early(argv, env) is None  # no pip: nothing to import
    assert pipearly.take_early() is None


def test_the_session_takes_the_one_the_program_started(venv: tuple[Path, dict[str, str]]) -> None:
    _, env = venv
    early = pipearly.start_early(["pip", "install", "demo"], env)
    assert early is not None
    try:
        assert pip_started("pip", parse_install_args("pip", ["demo"]), env, proof=True) is early
    finally:
        early.close()


def test_an_unchecked_install_runs_in_the_one_the_program_started(
    venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """--no-proof: no dry run; the session takes the program's interpreter, which has
    imported pip meanwhile, and the install runs in it: no second interpreter."""
    root, env = venv
    (tmp_path / "imported").mkdir()
    env = {**env, "PIP_IMPORTED": str(tmp_path / "imported")}
    early = pipearly.start_early(["pip", "--no-proof", "install", "demo"], env)
    assert early is not None
    try:
        taken = pip_started("pip", parse_install_args("pip", ["demo"]), env, proof=False)
        assert taken is early
        assert early.proc is not None
        pid = early.proc.pid
        seen: list[str] = []
        started: list[bool] = []
        argv = [*_command(root), "install", "demo"]
        code = install_main(
            "pip", argv, env, list, out=seen.append, error=_no_error, steps=early,
            started=lambda: started.append(True),
        )  # fmt: skip
        assert code == 0
        assert "".join(seen) == "ran install demo\n"
        assert started == [True]  # the plan is stored once it runs (_plancache)
        assert [p.name for p in (tmp_path / "imported").iterdir()] == [str(pid)]
        assert early.proc is None  # it ended with the install
    finally:
        early.close()


def test_an_unchecked_install_of_other_variables_runs_in_a_process_of_its_own(
    venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Variables the program's interpreter was not started with (a netrc of the
    session's, say): the install is a process started for them, the other one stopped."""
    root, env = venv
    pip = next((root / "lib").glob("python*/site-packages/pip"))
    (pip / "__main__.py").write_text(
        "import sys\nfrom pip._internal.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    early = pipearly.start_early(["pip", "--no-proof", "install", "demo"], env)
    assert early is not None
    try:
        proc = early.proc
        assert proc is not None
        seen: list[str] = []
        argv = [*_command(root), "install", "demo"]
        given = {**env, "NETRC": str(tmp_path / "netrc")}
        code = install_main("pip", argv, given, list, out=seen.append, error=_no_error, steps=early)
        assert code == 0
        assert "".join(seen) == "ran install demo\n"
        assert early.proc is None
        assert proc.returncode == -signal.SIGTERM  # stopped before the install started
    finally:
        early.close()


def _no_error(text: str, hint: str) -> None:
    raise AssertionError(text)


# The program as a checked pip install starts it, stopped once pip's interpreter is
# started: what is imported by then.
_AT_START = """
import sys
from resolver_hook.process import foreground

class Stop(BaseException):
    pass

def spy(*args, **kwargs):
    heavy = ("packaging", "resolver_hook.ground.hostkey", "resolver_hook.cli")
    print(sorted(m for m in heavy if m in sys.modules))
    raise Stop

foreground.PipSteps.ahead = spy
from resolver_hook import _entry
sys.argv = ["resolver-hook", "pip", "install", "demo"]
try:
    _entry.main()
except Stop:
    pass
"""


def test_the_program_starts_it_before_the_command_lines_imports(
    venv: tuple[Path, dict[str, str]],
) -> None:
    root, _ = venv
    ran = python_child(_AT_START, env={"VIRTUAL_ENV": str(root)})
    assert ran.stdout.strip() == "[]", (ran.stdout, ran.stderr)


# What the program started early, stopped by a Ctrl-C during the imports that follow it
# (here raised as the module named is looked for: the plan store's, for a checked
# install; the command line's, for an unchecked one, started once the store missed).
_INTERRUPTED_EARLY = """
import sys
from resolver_hook.install import pipearly

module, flags = sys.argv[1], sys.argv[2:]

stopped = []

class Started:
    def close(self):
        stopped.append(True)

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == module:
            raise KeyboardInterrupt

pipearly.start_early = lambda argv, env: Started()
sys.meta_path.insert(0, CtrlC())
from resolver_hook import _entry
sys.argv = ["resolver-hook", "pip", *flags, "install", "demo"]
try:
    _entry.main()
except KeyboardInterrupt:
    pass
print(stopped)
"""


@pytest.mark.parametrize(
    ("flags", "module"),
    [([], "resolver_hook._plancache"), (["--no-proof"], "resolver_hook.cli")],
    ids=["checked", "unchecked"],
)
def test_a_ctrl_c_right_after_the_early_start_stops_what_it_started(
    flags: list[str], module: str
) -> None:
    ran = python_child(_INTERRUPTED_EARLY, module, *flags)
    assert ran.stdout.strip() == "[True]", (ran.stdout, ran.stderr)
