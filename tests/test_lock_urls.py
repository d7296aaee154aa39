"""A requirement given as a URL (``plainpkg @ https://host/plainpkg-1.0-py3-none-any.whl``)
in a whole-environment lock: the lock names that very file with its sha256, not
``plainpkg==1.0`` (which an installer takes from the index: another file, or none).

The URL's wheel is not the index's: a second loopback server serves a plainpkg 1.0 whose
module says ``WHICH = 'url'``, while the index of tests/installenv.py serves its own
plainpkg 1.0. Real pip and real uv install each lock into a throwaway venv, and the
installed module says which file they took.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tests.installenv import PY, UV, GpuIndex, clean_env, make_uv_venv, make_venv
from tests.test_lock_env import lock
from tests.wheelfactory import BuiltWheel, LoopbackIndex, build_wheel

X86_B200 = f"linux-x86_64-py{PY}-cuda13.0-sm100"
ARM_L4 = f"linux-aarch64-py{PY}-cuda12.6-sm89"

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64" or sys.platform != "linux",
    reason="the locks' target is Linux x86_64: pip and uv install them on such a machine",
)


@dataclass
class Side:
    """A plainpkg 1.0 that is not the index's, served on its own server."""

    server: LoopbackIndex
    wheel: BuiltWheel

    @property
    def url(self) -> str:
        return self.server.wheel_url(self.wheel)


@pytest.fixture(scope="module")
def side(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Side]:
    root = tmp_path_factory.mktemp("side")
    wheel = build_wheel(root / "built", "plainpkg", "1.0", code="WHICH = 'url'\n")
    server = LoopbackIndex(root / "index")
    server.add(wheel, simple=False)
    with server.serving():
        yield Side(server=server, wheel=wheel)


def _which(python: Path) -> str:
    """What the installed plainpkg says of itself: 'url' for the URL's file."""
    code = "import plainpkg; print(getattr(plainpkg, 'WHICH', 'index'))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _install(tool: str, lockfile: Path, gi: GpuIndex, tmp_path: Path) -> str:
    """Install ``lockfile`` with real ``tool`` (pip or uv) into a fresh venv, the index of
    ``gi`` as its index; what the installed plainpkg says of itself."""
    venv = tmp_path / f"venv-{tool}-{lockfile.name}"
    if tool == "pip":
        python = make_venv(venv)
        argv = [str(python), "-m", "pip", "install", "-q", "--require-hashes", "-r",
                str(lockfile), "--index-url", gi.simple]  # fmt: skip
    else:
        python = make_uv_venv(venv) / "bin" / "python"
        hashes = ["--require-hashes"] if lockfile.suffix == ".txt" else []
        argv = [*UV, "pip", "install", "--python", str(python), *hashes, "-r", str(lockfile),
                "--index-url", gi.simple]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, env=clean_env(tmp_path),
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return _which(python)


def _body(path: Path) -> list[str]:
    return [x for x in path.read_text().splitlines() if not x.startswith("#")]


@pytest.mark.parametrize("how", ["http", "file", "fragment"])
def test_a_url_requirement_is_locked_as_that_file_and_installed_from_it(
    gpu_index: GpuIndex, side: Side, tmp_path: Path, how: str
) -> None:
    sha = side.wheel.sha256
    url = {
        "http": side.url,
        "file": side.wheel.path.as_uri(),
        "fragment": f"{side.url}#sha256={sha}",
    }[how]
    assert sha != gpu_index.wheels["plain"].sha256  # the index's plainpkg 1.0 is another file
    out = tmp_path / "requirements.txt"
    proc = lock(gpu_index, "demo-gpu", f"plainpkg @ {url}", "--target", X86_B200,
                "--index-url", gpu_index.simple, "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    plain = f"plainpkg @ {url}" + ("" if how == "fragment" else f" --hash=sha256:{sha}")
    assert plain in _body(out)
    assert not any(x.startswith("plainpkg==") for x in _body(out))
    for tool in ("pip", "uv"):
        assert _install(tool, out, gpu_index, tmp_path) == "url", tool

    pylock = tmp_path / "pylock.toml"
    proc = lock(gpu_index, "demo-gpu", f"plainpkg @ {url}", "--target", X86_B200,
                "--index-url", gpu_index.simple, "-o", str(pylock))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = pylock.read_text()
    assert f'url = "{url.split("#")[0]}"' in text
    assert f'sha256 = "{sha}"' in text
    assert _install("uv", pylock, gpu_index, tmp_path) == "url"


def test_a_url_requirement_with_extras_and_two_targets_keeps_its_url(
    gpu_index: GpuIndex, side: Side, tmp_path: Path
) -> None:
    """Extras name what else to install (each of those pinned on its own line); the line
    of the package itself is its URL on every target, and locking again keeps it."""
    out = tmp_path / "requirements.txt"
    args = ("demo-gpu", f"plainpkg[extra] @ {side.url}", "--target", X86_B200, "--target",
            ARM_L4, "--index-url", gpu_index.simple, "-o", str(out))  # fmt: skip
    proc = lock(gpu_index, *args)
    assert proc.returncode == 0, proc.stderr
    assert f"plainpkg @ {side.url} --hash=sha256:{side.wheel.sha256}" in _body(out)
    again = lock(gpu_index, *args, "--check")
    assert again.returncode == 0, again.stdout + again.stderr


def test_credentials_in_the_url_are_not_written(gpu_index: GpuIndex, tmp_path: Path) -> None:
    """The server asks for a password; the lock holds the URL without it, says so, and
    is still the file's URL (the installer brings its own credentials)."""
    wheel = build_wheel(tmp_path / "built", "plainpkg", "1.0", code="WHICH = 'url'\n")
    server = LoopbackIndex(tmp_path / "private")
    server.add(wheel, simple=False)
    server.credentials = ("user", "s3cret-pw")
    with server.serving():
        url = server.wheel_url(wheel)
        with_pw = url.replace("http://", "http://user:s3cret-pw@")
        for name in ("requirements.txt", "pylock.toml"):
            out = tmp_path / name
            proc = lock(gpu_index, f"plainpkg @ {with_pw}", "--target", X86_B200,
                        "--index-url", gpu_index.simple, "-o", str(out))  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            text = out.read_text()
            assert "s3cret-pw" not in text + proc.stdout + proc.stderr, name
            assert url in text, name
            assert wheel.sha256 in text, name
            said = " ".join(text.replace("#", " ").split())
            assert "the credentials in a URL of your requirements are not written" in said, name


def _git_package(folder: Path) -> tuple[str, str]:
    """A git repository holding a package with static metadata; its URL and commit."""
    folder.mkdir()
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "gitpkg"\nversion = "0.3"\ndescription = "from git"\n'
        '[build-system]\nrequires = ["flit_core"]\nbuild-backend = "flit_core.buildapi"\n'
    )
    (folder / "gitpkg").mkdir()
    (folder / "gitpkg" / "__init__.py").write_text('"""A package from git."""\n')
    git = ["git", "-C", str(folder), "-c", "user.email=t@example.org", "-c", "user.name=t"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run([*git, *step], check=True, capture_output=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return f"git+{folder.as_uri()}", head.stdout.strip()


def test_a_vcs_requirement_is_pinned_to_its_commit_and_named_as_unhashed(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """A git checkout has no sha256: the lock is refused naming it (the hint says
    --allow-unhashed), which writes it pinned to the commit uv resolved, never as
    gitpkg==0.3; a pylock.toml lists wheels, and this is a source to build."""
    url, commit = _git_package(tmp_path / "repo")
    out = tmp_path / "requirements.txt"
    args = (f"gitpkg @ {url}", "--target", X86_B200, "--index-url", gpu_index.simple)
    proc = lock(gpu_index, *args, "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("error: 1 lock line without a sha256")
    assert f"gitpkg @ {url}@{commit} (for {X86_B200}): a VCS checkout" in proc.stderr
    assert "\nhint: ask for a wheel or sdist URL of it" in proc.stderr
    assert "--allow-unhashed writes it pinned to its commit" in proc.stderr
    assert not out.exists()
    proc = lock(gpu_index, *args, "-o", str(out), "--allow-unhashed")
    assert proc.returncode == 0, proc.stderr
    assert f"gitpkg @ {url}@{commit}" in _body(out)
    pylock = tmp_path / "pylock.toml"
    proc = lock(gpu_index, *args, "-o", str(pylock))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(f"error: gitpkg 0.3 is asked for as {url}@{commit}, a source")
    assert "\nhint: lock --format requirements keeps the URL" in proc.stderr
    assert not pylock.exists()


def test_a_wheel_url_for_one_platform_is_refused_for_another_unless_its_marker_says(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """uv hands back an x86_64 wheel's URL for an aarch64 target too; the lock names it
    instead of writing a line that cannot install there, and a marker that is false on
    aarch64 locks it for x86_64 alone."""
    wheel = build_wheel(tmp_path / "built", "plainpkg", "1.0", tag="py3-none-manylinux_2_17_x86_64")
    server = LoopbackIndex(tmp_path / "x86")
    server.add(wheel, simple=False)
    with server.serving():
        url = server.wheel_url(wheel)
        for name in ("requirements.txt", "pylock.toml"):
            out = tmp_path / name
            targets = ("--target", X86_B200, "--target", ARM_L4, "--index-url", gpu_index.simple)
            proc = lock(gpu_index, f"plainpkg @ {url}", *targets, "-o", str(out))
            assert proc.returncode == 1, proc.stderr
            assert proc.stderr.startswith(
                f"error: plainpkg 1.0 is asked for as {url}, a wheel that does not install "
                "on Linux aarch64"
            ), proc.stderr
            assert "\nhint: give the requirement a marker that is false" in proc.stderr
            assert not out.exists()
            marked = f"plainpkg @ {url} ; platform_machine == 'x86_64'"
            proc = lock(gpu_index, marked, *targets, "-o", str(out))
            assert proc.returncode == 0, proc.stderr
            text = out.read_text()
            assert wheel.sha256 in text, name
            if name == "pylock.toml":
                [entry] = [e for e in tomllib.loads(text)["packages"] if e["name"] == "plainpkg"]
                text = entry["marker"]
            assert 'platform_machine == "x86_64"' in text, name


def test_a_wheel_url_with_its_local_version_quoted_is_still_that_wheel(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """``+`` in a wheel's filename is often written ``%2B`` in its URL (PyTorch's pages
    do): the filename the lock reads its tags from is the unquoted one."""
    wheel = build_wheel(tmp_path / "built", "plainpkg", "1.0+local")
    server = LoopbackIndex(tmp_path / "quoted")
    server.add(wheel, simple=False)
    with server.serving():
        url = server.wheel_url(wheel).replace("+", "%2B")
        for name in ("requirements.txt", "pylock.toml"):
            out = tmp_path / name
            proc = lock(gpu_index, f"plainpkg @ {url}", "--target", X86_B200,
                        "--index-url", gpu_index.simple, "-o", str(out))  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            assert url in out.read_text(), name
            assert wheel.sha256 in out.read_text(), name


def test_a_wheel_url_with_a_query_string_is_still_a_wheel(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """A signed download URL (``...whl?X-Amz-Signature=...``) names a wheel by its path:
    its tags are still checked for each target (an x86_64 wheel is refused for aarch64
    in both formats), and a pylock.toml lists it as the wheel it is, installed by uv."""
    wheel = build_wheel(tmp_path / "built", "plainpkg", "1.0", code="WHICH = 'url'\n",
                        tag="py3-none-manylinux_2_17_x86_64")  # fmt: skip
    server = LoopbackIndex(tmp_path / "signed")
    server.add(wheel, simple=False)
    with server.serving():
        url = server.wheel_url(wheel) + "?X-Amz-Signature=abc123"
        for name in ("requirements.txt", "pylock.toml"):
            out = tmp_path / name
            targets = ("--target", X86_B200, "--target", ARM_L4, "--index-url", gpu_index.simple)
            proc = lock(gpu_index, f"plainpkg @ {url}", *targets, "-o", str(out))
            assert proc.returncode == 1, name + proc.stderr
            assert "a wheel that does not install on Linux aarch64" in proc.stderr, proc.stderr
            assert not out.exists()
        pylock = tmp_path / "pylock.toml"
        proc = lock(gpu_index, f"plainpkg @ {url}", "--target", X86_B200,
                    "--index-url", gpu_index.simple, "-o", str(pylock))  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert f'url = "{url}"' in pylock.read_text()
        assert _install("uv", pylock, gpu_index, tmp_path) == "url"


def test_a_url_whose_sha256_is_not_its_files_is_refused(
    gpu_index: GpuIndex, side: Side, tmp_path: Path
) -> None:
    """uv takes a URL's ``#sha256=`` on trust when it resolves: the lock reads the file's
    own and refuses a URL that names another, in both formats, instead of writing a line
    that no installer can install (requirements) or one that drops the URL's word
    (pylock)."""
    wrong = "0" * 64
    url = f"{side.url}#sha256={wrong}"
    for name in ("requirements.txt", "pylock.toml"):
        out = tmp_path / name
        proc = lock(gpu_index, f"plainpkg @ {url}", "--target", X86_B200,
                    "--index-url", gpu_index.simple, "-o", str(out))  # fmt: skip
        assert proc.returncode == 1, name + proc.stderr
        first, hint = proc.stderr.splitlines()
        assert first == (
            f"error: plainpkg 1.0 is asked for as {url}, whose sha256 is not its file's: "
            f"the file is sha256:{side.wheel.sha256}"
        ), name
        assert hint.startswith("hint: "), name
        assert not out.exists(), name


def test_a_vcs_url_with_credentials_is_refused_without_them(
    gpu_index: GpuIndex, tmp_path: Path
) -> None:
    """A git repository behind a password (served over git's plain HTTP protocol): the
    refusal of its unhashed line names it without the password, as the lock written
    with --allow-unhashed does."""
    _git_package(tmp_path / "repo")
    root = tmp_path / "srv"
    root.mkdir()
    bare = root / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(tmp_path / "repo"), str(bare)],
                   check=True, capture_output=True)  # fmt: skip
    subprocess.run(["git", "-C", str(bare), "update-server-info"], check=True)
    server = LoopbackIndex(root)
    server.credentials = ("user", "s3cret-pw")
    with server.serving():
        url = server.url.replace("http://", "git+http://user:s3cret-pw@") + "/repo.git"
        out = tmp_path / "requirements.txt"
        proc = lock(gpu_index, f"gitpkg @ {url}", "--target", X86_B200,
                    "--index-url", gpu_index.simple, "-o", str(out))  # fmt: skip
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("error: 1 lock line without a sha256"), proc.stderr
        assert f"gitpkg @ git+http://****@127.0.0.1:{server.url.rsplit(':', 1)[1]}" in proc.stderr
        assert "s3cret-pw" not in proc.stdout + proc.stderr
        assert not out.exists()


def test_a_url_line_whose_hash_option_is_not_its_files_is_refused(
    gpu_index: GpuIndex, side: Side, tmp_path: Path
) -> None:
    """``name @ URL --hash=sha256:...`` says which file the URL must serve (pip's
    meaning): a lock of another file is refused in both formats, not written with the
    sha256 of whatever the server gave; the line's own sha256 locks as before."""
    for sha, ok in (("0" * 64, False), (side.wheel.sha256, True)):
        req = tmp_path / "requirements.in"
        req.write_text(f"plainpkg @ {side.url} --hash=sha256:{sha}\n")
        for name in ("requirements.txt", "pylock.toml"):
            out = tmp_path / name
            proc = lock(gpu_index, "-r", str(req), "--target", X86_B200,
                        "--index-url", gpu_index.simple, "-o", str(out))  # fmt: skip
            if ok:
                assert proc.returncode == 0, name + proc.stderr
                assert side.wheel.sha256 in out.read_text(), name
                out.unlink()
                continue
            assert proc.returncode == 1, name + proc.stderr
            assert proc.stderr.startswith(
                f"error: plainpkg 1.0 is asked for as {side.url}, whose sha256 is not its "
                f"file's: the file is sha256:{side.wheel.sha256}"
            ), name + proc.stderr
            assert not out.exists(), name
