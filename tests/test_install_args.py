"""The installer-argument side of install.py, without running pip or uv.

What pip (optparse) and uv (clap) read as an option, a value or a requirement
decides what the hook plans for and what it hands back to them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from resolver_hook.errors import OperationalError, UsageError
from resolver_hook.host import HostProfile
from resolver_hook.install import (
    Installer,
    find_installer,
    optional,
    parse_install_args,
    run_installer,
    session,
)
from resolver_hook.process.proc import Result
from resolver_hook.resolve import resolve
from tests.fakeproc import done, timed_out
from tests.paths import python_child


def test_options_of_ours_go_before_a_double_dash() -> None:
    # After "--" both pip and uv read every argument as a requirement: a "-c FILE"
    # added there would be read as a requirement named "-c".
    installer = Installer(tool="pip", command=("py", "-m", "pip", "install"), python="py")
    argv = installer.argv(["--no-deps", "--", "demo"], ["-c", "c.txt"])
    assert argv == ["py", "-m", "pip", "install", "-c", "c.txt", "--no-deps", "--", "demo"]


def test_double_dash_ends_the_options() -> None:
    parsed = parse_install_args("pip", ["--no-deps", "--", "demo", "other"])
    assert parsed.requirements == ("demo", "other")


def test_rewriting_drops_the_double_dash_with_the_requirements() -> None:
    # The generated "-r FILE" is appended to what is left: after a "--" it would be
    # read as two requirements.
    parsed = parse_install_args("pip", ["--require-hashes", "--", "demo"])
    assert list(parsed.options) == ["--require-hashes"]


# (arguments, requirement files, positional requirements, what rewriting keeps). Short
# options cluster as in pip (optparse) and uv (clap): "-Ur FILE" is "-U -r FILE".
PARSE_CASES = [
    (["-r", "req.txt", "demo"], ("req.txt",), ("demo",), []),
    (["-rreq.txt"], ("req.txt",), (), []),
    (["--requirement=req.txt"], ("req.txt",), (), []),
    (["--requirement", "req.txt", "-U"], ("req.txt",), (), ["-U"]),
    (["-Ur", "req.txt"], ("req.txt",), (), ["-U"]),
    (["-qqrreq.txt", "demo"], ("req.txt",), ("demo",), ["-qq"]),
    (["-Ue", ".", "demo"], (), ("demo",), ["-Ue", "."]),
    (["-i", "--", "demo"], (), ("demo",), ["-i", "--"]),  # "--" as a value ends nothing
    (["-U", "--", "demo", "-odd"], (), ("demo", "-odd"), ["-U"]),
]


@pytest.mark.parametrize(
    ("args", "files", "reqs", "kept"), PARSE_CASES, ids=[" ".join(c[0]) for c in PARSE_CASES]
)
def test_parse_install_args(
    args: list[str], files: tuple[str, ...], reqs: tuple[str, ...], kept: list[str]
) -> None:
    parsed = parse_install_args("pip", args)
    assert (parsed.requirement_files, parsed.requirements) == (files, reqs)
    assert list(parsed.options) == kept
    assert parsed.args == tuple(args)  # the user's arguments themselves stay as given


@pytest.mark.parametrize("args", [["-r"], ["-Ur"], ["--requirement"], ["-c"]])
def test_option_without_its_value(args: list[str]) -> None:
    with pytest.raises(UsageError, match=f"option {args[0]} needs a value"):
        parse_install_args("pip", args)


def test_pip_python_option_is_left_to_pip(tmp_path: Path) -> None:
    # pip refuses --python after "install" ("The --python option must be placed before
    # the pip subcommand name", pip >= 22.3): the pip that typing "pip" would run is
    # the one to run, and it says so itself.
    venv_python = tmp_path / "venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text("")
    parsed = parse_install_args("pip", ["--python", str(tmp_path / "elsewhere"), "demo"])
    installer = find_installer("pip", parsed, env={"VIRTUAL_ENV": str(tmp_path / "venv")})
    assert installer.python == str(venv_python)
    assert installer.command == (str(venv_python), "-m", "pip", "install")


@pytest.mark.parametrize("tee", [False, True])
def test_installer_that_cannot_start(tmp_path: Path, tee: bool) -> None:
    missing = str(tmp_path / "missing-pip")
    with pytest.raises(OperationalError) as info:
        run_installer([missing, "install"], {}, tee=tee, out=print)
    assert info.value.message == f"cannot run {missing}: No such file or directory"


def test_optional_package_whose_import_hangs_fails_its_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A GPU package's import can block on a driver that does not answer: that is an
    # import that failed, not a traceback that leaves the package installed.
    python = tmp_path / "python"
    python.write_text(
        "#!/bin/sh\ncase \"$2\" in *distributions*) echo '{}' ;; *) exec sleep 30 ;; esac\n"
    )
    python.chmod(0o755)
    monkeypatch.setattr(optional, "IMPORT_TIMEOUT", 0.5)
    installer = Installer(tool="pip", command=("true",), python=str(python))
    plan = resolve(["demo"], {}, HostProfile(os="linux", arch="x86_64", python="3.12"))
    outcome = optional.optional_install(
        installer, parse_install_args("pip", []), plan, "demo", folder=tmp_path, env={}, out=print
    )
    assert (outcome.ok, outcome.reason) == (False, "the import did not finish in 0.5 s")


def test_uv_python_find_that_hangs() -> None:
    def run(argv: Sequence[str], **kwargs: object) -> Result:
        return timed_out(argv, 60)

    with pytest.raises(OperationalError, match="uv python find did not answer in 60 s"):
        find_installer("uv", parse_install_args("uv", []), env={}, run=run)


def test_pip_on_path_behind_a_sh_trampoline(tmp_path: Path) -> None:
    # pip's script maker (distlib) writes "#!/bin/sh" and an exec line when the
    # interpreter's path has a space or is too long for a "#!" line.
    python = tmp_path / "with space" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    pip = python.parent / "pip"
    pip.write_text(f"#!/bin/sh\n'''exec' \"{python}\" \"$0\" \"$@\"\n' '''\nimport sys\n")
    pip.chmod(0o755)
    installer = find_installer("pip", parse_install_args("pip", []), env={"PATH": str(pip.parent)})
    assert installer.python == str(python)


def test_uv_is_found_on_the_path_of_the_environment_given(tmp_path: Path) -> None:
    # The installer runs with the environment passed in; its PATH names the uv.
    uv = tmp_path / "uv"
    uv.write_text("#!/bin/sh\n")
    uv.chmod(0o755)
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").write_text("")
    env = {"PATH": str(tmp_path), "VIRTUAL_ENV": str(tmp_path / "venv")}
    installer = find_installer("uv", parse_install_args("uv", ["numpy"]), env)
    assert installer.command[0] == str(uv)


def test_private_tempdir_restores_a_default_sigterm_handler() -> None:
    import signal

    from resolver_hook.install import private_tempdir

    before = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with private_tempdir() as folder:
            assert folder.is_dir()
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None)
        assert not folder.exists()
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, before)


def test_uv_system_skips_the_active_venv(tmp_path: Path) -> None:
    """`uv pip install --system` installs outside the venv: ask uv which Python that is."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/python").write_text("")
    calls: list[list[str]] = []

    def run(argv: Sequence[str], **kwargs: object) -> Result:
        calls.append(list(argv))
        return done(argv, 0, "/usr/bin/python3.12\n")

    env = {"VIRTUAL_ENV": str(venv), "PATH": ""}
    found = find_installer("uv", parse_install_args("uv", ["--system", "numpy"]), env, run=run)
    assert found.python == "/usr/bin/python3.12"
    assert calls[0][1:] == ["python", "find", "--system"]
    in_venv = find_installer("uv", parse_install_args("uv", ["numpy"]), env, run=run)
    assert in_venv.python == str(venv / "bin/python")


@pytest.mark.parametrize(
    ("tool", "variable", "value", "expected"),
    [
        ("pip", "PIP_REQUIRE_HASHES", "1", True),
        ("pip", "PIP_REQUIRE_HASHES", "0", False),
        ("uv", "UV_REQUIRE_HASHES", "true", True),
        ("uv", "PIP_REQUIRE_HASHES", "1", False),  # uv reads no PIP_* variables
    ],
)
def test_require_hashes_from_the_environment(
    tool: str, variable: str, value: str, expected: bool
) -> None:
    from resolver_hook.reqfile import read_requirements

    parsed = parse_install_args(tool, ["demo"])
    reqs = read_requirements([], ["demo"])
    assert session.needs_rewrite(parsed, reqs, {variable: value}) is expected


_MAKE_PRIVATE_FOLDER = (
    "import os, sys, tempfile, shutil\n"
    "sys.modules.pop('tempfile'); sys.modules.pop('shutil')\n"
    "from resolver_hook.install import private_tempdir\n"
    "with private_tempdir() as folder:\n"
    "    (folder / 'constraints.txt').write_text('x')\n"
    "    (folder / 'link').symlink_to(sys.argv[1])\n"
    # uv's cache of a session: folders in folders, a link to a folder among them.
    "    (folder / 'wheels' / 'deep').mkdir(parents=True)\n"
    "    (folder / 'wheels' / 'deep' / 'a.whl').write_bytes(b'x')\n"
    "    (folder / 'wheels' / 'to-folder').symlink_to(sys.argv[2])\n"
    "    mode = folder.stat().st_mode & 0o777\n"
    "loaded = 'tempfile' in sys.modules or 'shutil' in sys.modules\n"
    "print(folder, oct(mode), folder.exists(), loaded, tempfile.gettempdir())\n"
)


@pytest.mark.parametrize("tmpdir", ["scratch", "missing"])
def test_the_private_folder_is_made_and_removed_as_tempfile_and_shutil_would(
    tmp_path: Path, tmpdir: str
) -> None:
    """The session's folder is made where tempfile.mkdtemp would make it (``TMPDIR``,
    else the next candidate when that one is missing), named as it names one, 0700,
    and removed with its files and folders (a link removed, its target kept, a folder's
    too), without importing tempfile or shutil (with random and the compression
    modules: ~3 ms of an install)."""
    (tmp_path / "scratch").mkdir()
    victim = tmp_path / "victim"
    victim.write_text("kept", encoding="utf-8")
    (tmp_path / "victims").mkdir()
    (tmp_path / "victims" / "file").write_text("kept", encoding="utf-8")
    ran = python_child(
        _MAKE_PRIVATE_FOLDER,
        str(victim),
        str(tmp_path / "victims"),
        env={"TMPDIR": str(tmp_path / tmpdir)},
    )
    folder, mode, exists, loaded, tempdir = ran.stdout.split()
    assert [mode, exists, loaded] == ["0o700", "False", "False"], ran.stderr
    assert os.path.dirname(folder) == tempdir
    assert (tempdir == str(tmp_path / "scratch")) == (tmpdir == "scratch")
    assert re.fullmatch(r"resolver-hook-[a-z0-9_]{8}", os.path.basename(folder))
    assert victim.read_text(encoding="utf-8") == "kept"
    assert (tmp_path / "victims" / "file").read_text(encoding="utf-8") == "kept"


def test_a_private_folder_holding_a_folder_is_removed() -> None:
    from resolver_hook.install import private_tempdir

    with private_tempdir() as folder:
        (folder / "wheels" / "deep").mkdir(parents=True)
        (folder / "wheels" / "deep" / "a.whl").write_bytes(b"x")
        (folder / "report.json").write_text("{}")
    assert not folder.exists()


@pytest.mark.parametrize(
    "path",
    [None, "", ":", "bin", "bin:bin", "empty:bin", ":bin", "dir:bin", "plain:bin", "bin:/x"],
)
@pytest.mark.parametrize(
    "name", ["prog", "here", "dir", "plain", "bin/prog", "./bin/prog", "./here", "missing"]
)
def test_a_program_is_found_as_shutil_which_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str | None, name: str
) -> None:
    """PATH's folders in order, empty ones the current folder (relative, as given), a
    folder or a file that cannot run skipped, a name with a folder in it taken as is."""
    import shutil

    from resolver_hook.process.which import which

    for folder in ("bin", "empty", "dir", "plain"):
        (tmp_path / folder).mkdir()
    for folder in ("bin", "plain"):
        for prog in ("prog", "plain"):
            (tmp_path / folder / prog).write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "prog").chmod(0o755)
    (tmp_path / "prog").write_text("#!/bin/sh\n")  # the current folder's, not runnable
    (tmp_path / "here").write_text("#!/bin/sh\n")
    (tmp_path / "here").chmod(0o755)
    (tmp_path / "dir" / "dir").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "bin")
    assert which(name, path) == shutil.which(name, path=path)


def test_uv_is_found_without_shutil(tmp_path: Path) -> None:
    """shutil imports the compression modules (zlib, bz2, lzma: ~1.7 ms): every uv
    install looks for uv, as shutil.which would, without it."""
    uv = tmp_path / "uv"
    uv.write_text("#!/bin/sh\n")
    uv.chmod(0o755)
    child = (
        "import sys\n"
        "sys.modules.pop('shutil', None)\n"
        "from resolver_hook.process.which import find_uv\n"
        f"print(find_uv({{'PATH': {str(tmp_path)!r}}}), 'shutil' in sys.modules)\n"
    )
    ran = python_child(child)
    assert ran.stdout.split() == [str(uv), "False"], ran.stderr


def test_the_install_command_loads_the_plan_commands_printer_only_for_a_plan_without_fit() -> None:
    """The plan command's module prints a plan's errors: an install whose plan fits
    never loads it (~0.15 ms of imports)."""
    child = (
        "import sys\n"
        "import resolver_hook.cli.install, resolver_hook.install.checked\n"
        "print('resolver_hook.cli.plan' in sys.modules)\n"
    )
    ran = python_child(child)
    assert ran.stdout.split() == ["False"], ran.stderr


def test_the_patterns_of_a_pip_on_path_are_compiled_only_for_one(tmp_path: Path) -> None:
    """A pip install into the active venv reads no pip script and asks no pip its
    version: the patterns of both (~0.2 ms) are not compiled as the module loads."""
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").write_text("")
    child = (
        "import re, sys\n"
        "seen = []\n"
        "compile = re.compile\n"
        "re.compile = lambda p, flags=0: seen.append(p) or compile(p, flags)\n"
        "from resolver_hook.install import find_installer, parse_install_args\n"
        f"env = {{'VIRTUAL_ENV': {str(tmp_path / 'venv')!r}}}\n"
        "find_installer('pip', parse_install_args('pip', ['x']), env)\n"
        "marks = ('pypy', b'exec', 'pip \\\\S+ from')\n"
        "print([p for p in seen if any(type(m) is type(p) and m in p for m in marks)])\n"
    )
    ran = python_child(child)
    assert ran.stdout.split() == ["[]"], ran.stderr


def test_a_checked_install_loads_neither_the_twins_said_unchecked_nor_the_reporter_type() -> None:
    """The twins an unchecked install reads after installing (install.twins) and the
    Reporter protocol, a type the session only names in annotations: a checked install
    loads neither (~0.2 ms of imports)."""
    child = (
        "import sys\n"
        "import resolver_hook.cli.install, resolver_hook.install.session\n"
        "import resolver_hook.install.checked\n"
        "print([m for m in ('resolver_hook.install.twins', 'resolver_hook.install.report')\n"
        "       if m in sys.modules])\n"
    )
    ran = python_child(child)
    assert ran.stdout.split() == ["[]"], ran.stderr
