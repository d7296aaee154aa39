"""Tests for resolver_hook.toolchain (toolkit, compilers, needs, report) and `doctor --build`.

Fake toolkits and compilers are shell scripts in a temporary directory, reached through
an explicit ``env`` (PATH, CUDA_HOME): the probes never see this machine's tools unless a
test asks for them (the real-nvcc tests, skipped where nvcc is absent).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from resolver_hook.cli import main
from resolver_hook.process.proc import Result
from resolver_hook.toolchain.compilers import find_host_compiler, identify_compiler
from resolver_hook.toolchain.hostconfig import (
    HostConfigError,
    accepted_range,
    evaluate,
    parse_host_config,
)
from resolver_hook.toolchain.needs import check_build_needs
from resolver_hook.toolchain.report import Check, ToolchainReport, toolchain_report
from resolver_hook.toolchain.toolkit import find_toolkit, parse_nvcc_version
from tests.fakeproc import done

DATA = Path(__file__).parent / "data"
NOWHERE = "/nonexistent/resolver-hook-test/cuda"  # default_root that never exists

# `nvcc --version` of CUDA 13.2 (format as printed by nvcc 13.0 on this project's machines,
# 13.0 -> 13.2; the V and build numbers are made up).
NVCC_13_2 = """\
nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2026 NVIDIA Corporation
Built on Tue_Feb_10_11:00:00_PM_PST_2026
Cuda compilation tools, release 13.2, V13.2.51
Build cuda_13.2.r13.2/compiler.36800000_0
"""


def header(gnu_max: int) -> str:
    """CUDA 13.0's host_config.h structure with the GNU limit set to ``gnu_max``."""
    return (DATA / "host_config.h.in").read_text().replace("@GNU_MAX@", str(gnu_max))


def script(path: Path, body: str, *, mode: int = 0o755) -> Path:
    """Write an executable /bin/sh script. Only absolute paths and builtins inside:
    the tests run it with PATH set to the fake bin directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(mode)
    return path


def gnu(path: Path, version: str) -> Path:
    """A fake GNU compiler: --version, -dumpfullversion; anything else fails."""
    name = path.name
    return script(
        path,
        f"""case "$1" in
  --version) echo "{name} (Gentoo {version} p1) {version}"
             echo "Copyright (C) 2026 Free Software Foundation, Inc." ;;
  -dumpfullversion|-dumpversion) echo "{version}" ;;
  *) echo "fake {name}: $*" >&2; exit 1 ;;
esac
""",
    )


def clang(path: Path, version: str) -> Path:
    return script(
        path,
        f"""case "$1" in
  --version) echo "clang version {version}"; echo "Target: x86_64-pc-linux-gnu" ;;
  *) echo "fake clang: $*" >&2; exit 1 ;;
esac
""",
    )


def echo_lines(text: str) -> str:
    return "".join(f"echo '{line}'\n" for line in text.splitlines())


def toolkit(root: Path, *, gnu_max: int | None = 15, nvcc: str | None = None) -> Path:
    """A fake CUDA toolkit: bin/nvcc (13.2 unless ``nvcc`` gives the script body) and
    include/crt/host_config.h (unless ``gnu_max`` is None)."""
    script(root / "bin" / "nvcc", nvcc if nvcc is not None else echo_lines(NVCC_13_2))
    if gnu_max is not None:
        crt = root / "include" / "crt"
        crt.mkdir(parents=True)
        (crt / "host_config.h").write_text(header(gnu_max))
    return root


@pytest.fixture
def fake(tmp_path: Path) -> dict[str, Path]:
    """The Gentoo case from docs/facts.md section 5: CUDA 13.2 (GNU <= 15),
    default gcc 16, g++-15 installed beside it."""
    bin_dir = tmp_path / "bin"
    gnu(bin_dir / "gcc", "16.1.0")
    gnu(bin_dir / "g++", "16.1.0")
    gnu(bin_dir / "g++-15", "15.2.1")
    # Gentoo's own name for the same compiler: one candidate, the shorter name wins.
    (bin_dir / "x86_64-pc-linux-gnu-g++-15").symlink_to(bin_dir / "g++-15")
    return {"bin": bin_dir, "cuda": toolkit(tmp_path / "cuda")}


def env_of(fake: Mapping[str, Path], **extra: str) -> dict[str, str]:
    return {"PATH": str(fake["bin"]), "CUDA_HOME": str(fake["cuda"]), **extra}


def check(report: ToolchainReport | Sequence[Check], name: str) -> Check:
    checks = report.checks if isinstance(report, ToolchainReport) else report
    return next(c for c in checks if c.name == name)


def report_for(env: Mapping[str, str], **kwargs: object) -> ToolchainReport:
    return toolchain_report(env=env, default_root=NOWHERE, **kwargs)  # type: ignore[arg-type]


# --- the Gentoo case: gcc 16 against CUDA 13.2 -----------------------------------------


def test_gcc16_rejected_and_gxx15_suggested(fake: dict[str, Path]) -> None:
    report = report_for(env_of(fake))
    assert report.toolkit.version == "13.2.51"
    assert report.toolkit.source == "CUDA_HOME"
    accept = check(report, "nvcc accepts host compiler")
    assert accept.status == "fail"
    assert "rejects gcc 16.1.0 (GNU)" in accept.summary
    assert "gcc versions later than 15 are not supported!" in accept.summary
    assert "GNU up to 15" in accept.summary
    gxx15 = f"{fake['bin']}/g++-15"
    assert accept.fix == (
        f"CUDAHOSTCXX={gxx15}",
        f"-DCMAKE_CUDA_HOST_COMPILER={gxx15}",
        f"nvcc -ccbin {gxx15}",
    )
    assert any("-allow-unsupported-compiler" in n and "not recommended" in n for n in accept.notes)
    # g++ 16 is not offered; the Gentoo-named link is the same file as g++-15.
    assert [c.command for c in report.alternatives] == [gxx15]
    assert not report.ok


def test_cli_prints_the_exact_fix_and_exits_1(
    fake: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_env(monkeypatch, env_of(fake))
    code = main(["doctor", "--build", "--driver-cuda", "13.2"])
    out, err = capsys.readouterr()
    assert code == 1
    assert err == ""
    assert f"      fix: CUDAHOSTCXX={fake['bin']}/g++-15" in out.splitlines()
    assert "fail  nvcc accepts host compiler: nvcc 13.2 rejects gcc 16.1.0 (GNU)" in out


def test_following_the_fix_passes(fake: dict[str, Path]) -> None:
    report = report_for(env_of(fake, CUDAHOSTCXX=f"{fake['bin']}/g++-15"))
    accept = check(report, "nvcc accepts host compiler")
    assert accept.status == "ok", accept
    assert accept.summary == (
        "nvcc 13.2 accepts g++-15 15.2.1 (GNU); host_config.h accepts GNU up to 15"
    )
    assert check(report, "host compiler").summary.endswith("(CUDAHOSTCXX)")


@pytest.mark.parametrize(
    ("gnu_max", "status", "fix_start"),
    [
        pytest.param(16, "ok", None, id="limit-16-accepts-gcc16"),
        pytest.param(15, "fail", "CUDAHOSTCXX=", id="limit-15-offers-gxx15"),
        pytest.param(
            14,
            "fail",
            "install a compiler nvcc 13.2 accepts (GNU up to 14)",
            id="limit-14-nothing-fits",
        ),
    ],
)
def test_limit_comes_from_the_header(
    tmp_path: Path, fake: dict[str, Path], gnu_max: int, status: str, fix_start: str | None
) -> None:
    cuda = toolkit(tmp_path / f"cuda-{gnu_max}", gnu_max=gnu_max)
    report = report_for({"PATH": str(fake["bin"]), "CUDA_HOME": str(cuda)})
    accept = check(report, "nvcc accepts host compiler")
    assert accept.status == status
    assert (accept.fix[0] if accept.fix else None) == (
        f"CUDAHOSTCXX={fake['bin']}/g++-15"
        if fix_start == "CUDAHOSTCXX="
        else (f"{fix_start} and set CUDAHOSTCXX=<its path>" if fix_start else None)
    )


@pytest.mark.parametrize(
    ("version", "accepted"),
    [("20.1.8", True), ("21.1.0", False)],
    ids=["clang-20", "clang-21"],
)
def test_clang_limit(fake: dict[str, Path], version: str, accepted: bool) -> None:
    # CUDA 13.0's header: "#if (__clang_major__ >= 21) || ..." -> unsupported clang version.
    clangxx = clang(fake["bin"] / f"clang++-{version.split('.', 1)[0]}", version)
    report = report_for(env_of(fake, CUDAHOSTCXX=str(clangxx)))
    accept = check(report, "nvcc accepts host compiler")
    assert (accept.status == "ok") is accepted, accept
    assert ("clang version must be less than 21" in accept.summary) is not accepted
    assert "clang 4 to 20" in accept.summary


def test_allow_unsupported_compiler_is_a_warning(fake: dict[str, Path]) -> None:
    env = env_of(fake, NVCC_APPEND_FLAGS="-allow-unsupported-compiler")
    accept = check(report_for(env), "nvcc accepts host compiler")
    assert accept.status == "warn"
    assert "-allow-unsupported-compiler in NVCC_APPEND_FLAGS skips the check" in accept.summary


# --- where the host compiler and the toolkit come from ----------------------------------


@pytest.mark.parametrize(
    ("extra", "expected", "source"),
    [
        pytest.param({}, "gcc", "nvcc's default: gcc on PATH", id="default-gcc"),
        pytest.param({"NVCC_CCBIN": "@/g++-15"}, "g++-15", "NVCC_CCBIN", id="nvcc-ccbin"),
        pytest.param(
            {"NVCC_PREPEND_FLAGS": "-O2 -ccbin=@/g++-15", "NVCC_CCBIN": "@/g++"},
            "g++-15",
            "-ccbin in NVCC_PREPEND_FLAGS",
            id="prepend-beats-env",
        ),
        pytest.param(
            {
                "NVCC_APPEND_FLAGS": "--compiler-bindir @/g++",
                "NVCC_PREPEND_FLAGS": "-ccbin @/g++-15",
            },
            "g++",
            "-ccbin in NVCC_APPEND_FLAGS",
            id="append-beats-prepend",
        ),
        pytest.param(
            {"CUDAHOSTCXX": "@/g++-15", "NVCC_APPEND_FLAGS": "-ccbin @/g++"},
            "g++-15",
            "CUDAHOSTCXX",
            id="cudahostcxx-first",
        ),
        pytest.param({"NVCC_CCBIN": "@"}, "gcc", "NVCC_CCBIN", id="ccbin-directory"),
    ],
)
def test_host_compiler_order(
    fake: dict[str, Path], extra: dict[str, str], expected: str, source: str
) -> None:
    calls: list[list[str]] = []

    def run(args: Sequence[str], *, timeout: float, **kw: object) -> Result:
        calls.append(list(args))  # answer without spawning anything
        return done(args, 0, "9.1.0\n" if "-dump" in args[1] else "fake (GCC) 9.1.0\n")

    env = {k: v.replace("@", str(fake["bin"])) for k, v in extra.items()}
    compiler = find_host_compiler(env={"PATH": str(fake["bin"]), **env}, run=run)
    assert (os.path.basename(compiler.command), compiler.source) == (expected, source)
    assert compiler.version == "9.1.0"
    assert calls
    assert all(c[0] == compiler.command for c in calls)


def test_nvcc_wrapper_script_root_from_dryrun(tmp_path: Path) -> None:
    # /usr/local/bin/nvcc on this project's machines is `exec /usr/local/cuda-13.0/bin/nvcc`:
    # no symlink to follow; `nvcc -dryrun` prints "#$ TOP=<root>/bin/..".
    cuda = toolkit(tmp_path / "cuda-13.2")
    script(tmp_path / "bin" / "nvcc", f'exec {cuda}/bin/nvcc "$@"\n')
    script(
        cuda / "bin" / "nvcc",
        f"""case "$1" in
  -dryrun) echo '#$ _HERE_={cuda}/bin'; echo '#$ TOP={cuda}/bin/..' >&2 ;;
  *) {echo_lines(NVCC_13_2).replace(chr(10), "; ")}:;;
esac
""",
    )
    found = find_toolkit(env={"PATH": str(tmp_path / "bin")}, default_root=NOWHERE)
    assert found.root == str(cuda)
    assert found.source == "nvcc on PATH"
    assert found.version == "13.2.51"
    assert found.host_config == str(cuda / "include" / "crt" / "host_config.h")


def test_nvcc_symlink_resolved(tmp_path: Path) -> None:
    cuda = toolkit(tmp_path / "cuda-13.2")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nvcc").symlink_to(cuda / "bin" / "nvcc")
    found = find_toolkit(env={"PATH": str(tmp_path / "bin")}, default_root=NOWHERE)
    assert (found.root, found.notes) == (str(cuda), ())


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("Cuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/c", "13.0.88"),
        ("Build cuda_12.8.r12.8/compiler.35404655_0", "12.8"),
        ("nvcc: command not found", None),
        ("", None),
    ],
    ids=["release-line", "build-line-only", "garbage", "empty"],
)
def test_parse_nvcc_version(text: str, version: str | None) -> None:
    assert parse_nvcc_version(text) == version


# --- this machine ---------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs a real nvcc on PATH")
def test_real_nvcc_accepts_real_gcc() -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CUDAHOSTCXX", "NVCC_CCBIN", "NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS")
    }
    report = toolchain_report(env=env)
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, check=True)
    assert report.toolkit.version == parse_nvcc_version(nvcc.stdout)
    for name in ("cuda toolkit", "host compiler", "nvcc accepts host compiler"):
        assert check(report, name).status == "ok", check(report, name)
    assert report.host_compiler is not None
    assert report.host_compiler.macro_source == "-dM -E"  # the compiler's own macros
    assert report.ok


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs a real nvcc on PATH")
def test_real_header_rejects_a_future_gcc() -> None:
    # Same header, same real macros, only __GNUC__ changed: the #error must be reached.
    report = toolchain_report()
    assert report.toolkit.host_config
    assert report.host_compiler
    config = parse_host_config(Path(report.toolkit.host_config).read_text())
    macros = {**dict(report.host_compiler.macros), "__CUDACC__": "1", "__GNUC__": "99"}
    verdict = evaluate(config, macros)
    assert [r.short.split("!")[0] for r in verdict.rejections] == ["unsupported GNU version"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs a real nvcc on PATH")
def test_real_cli_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--build", "--json", "--driver-cuda", "99.0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True
    assert {c["status"] for c in data["checks"]} <= {"ok", "warn", "skip"}


# --- probe failures are reasons, never tracebacks -------------------------------------------


def test_hanging_nvcc_times_out(tmp_path: Path, fake: dict[str, Path]) -> None:
    # Not `exec`: the sleeping grandchild holds the pipe; the whole group must be killed.
    cuda = toolkit(tmp_path / "hang", nvcc="/bin/sleep 30\n")
    start = time.monotonic()
    report = toolchain_report(
        env={"PATH": str(fake["bin"]), "CUDA_HOME": str(cuda)}, timeout=0.5, default_root=NOWHERE
    )
    # 0.5 s plus slack; killing only the shell would leave `sleep` holding the pipe
    # (subprocess.run would wait the full 30 s).
    assert time.monotonic() - start < 2
    toolkit_check = check(report, "cuda toolkit")
    assert toolkit_check.status == "fail"
    assert f"'{cuda}/bin/nvcc --version' did not finish within 0.5 s" in toolkit_check.notes


def test_garbage_nvcc_falls_back_to_version_json(tmp_path: Path, fake: dict[str, Path]) -> None:
    cuda = toolkit(tmp_path / "garbage", nvcc="echo 'hello \x01 world'\n")
    (cuda / "version.json").write_text('{"cuda": {"name": "CUDA SDK", "version": "13.2.0"}}')
    report = report_for({"PATH": str(fake["bin"]), "CUDA_HOME": str(cuda)})
    toolkit_check = check(report, "cuda toolkit")
    assert toolkit_check.status == "warn"
    assert report.toolkit.version == "13.2.0"
    assert report.toolkit.version_source == "version.json"
    assert any("printed no CUDA release" in n for n in toolkit_check.notes)


def test_failing_nvcc_reports_status_and_message(tmp_path: Path, fake: dict[str, Path]) -> None:
    cuda = toolkit(tmp_path / "fails", nvcc="echo 'boom: libnvvm missing' >&2; exit 3\n")
    report = report_for({"PATH": str(fake["bin"]), "CUDA_HOME": str(cuda)})
    assert check(report, "cuda toolkit").status == "fail"
    assert (
        f"'{cuda}/bin/nvcc --version' exited with status 3: boom: libnvvm missing"
        in report.toolkit.notes
    )


def test_missing_header_skips_the_check(tmp_path: Path, fake: dict[str, Path]) -> None:
    cuda = toolkit(tmp_path / "noheader", gnu_max=None)
    report = report_for({"PATH": str(fake["bin"]), "CUDA_HOME": str(cuda)})
    accept = check(report, "nvcc accepts host compiler")
    assert (accept.status, accept.summary) == (
        "skip",
        "not checked: no crt/host_config.h in the toolkit",
    )
    assert f"no include/crt/host_config.h under {cuda}" in check(report, "cuda toolkit").notes


def test_broken_header_is_a_reason(tmp_path: Path, fake: dict[str, Path]) -> None:
    cuda = toolkit(tmp_path / "broken")
    path = cuda / "include" / "crt" / "host_config.h"
    path.write_text(header(15) + "\n#if defined(__GNUC__)\n")
    accept = check(
        report_for({"PATH": str(fake["bin"]), "CUDA_HOME": str(cuda)}), "nvcc accepts host compiler"
    )
    assert accept.status == "skip"
    assert accept.summary == f"not checked: {path}: 1 #if block not closed by #endif"


def test_non_executable_compiler(fake: dict[str, Path]) -> None:
    noexec = gnu(fake["bin"] / "g++-14", "14.1.0")
    noexec.chmod(0o644)
    report = report_for(env_of(fake, CUDAHOSTCXX=str(noexec)))
    host = check(report, "host compiler")
    assert host.status == "fail"
    assert host.summary == (
        f"nvcc's host compiler (CUDAHOSTCXX): {noexec} is not executable (permission denied)"
    )
    assert check(report, "nvcc accepts host compiler").status == "skip"


def test_unidentifiable_compiler(fake: dict[str, Path]) -> None:
    odd = script(fake["bin"] / "mystery-cc", "echo 'Mystery Compiler 1.0'\n")
    host = identify_compiler(str(odd), source="CUDAHOSTCXX", env={"PATH": ""})
    assert host.reason == (
        f"cannot tell which compiler {odd} is: '--version' printed 'Mystery Compiler 1.0'"
    )


@pytest.mark.parametrize(
    ("env", "summary"),
    [
        pytest.param(
            {"CUDA_HOME": NOWHERE},
            f"no CUDA toolkit: CUDA_HOME={NOWHERE} is not a directory",
            id="bad-cuda-home",
        ),
        pytest.param(
            {},
            f"no CUDA toolkit: no CUDA_HOME, CUDA_PATH or CUDACXX, no nvcc on PATH, no {NOWHERE}",
            id="nothing",
        ),
    ],
)
def test_no_toolkit(fake: dict[str, Path], env: dict[str, str], summary: str) -> None:
    report = report_for({"PATH": str(fake["bin"]), **env})
    assert check(report, "cuda toolkit").summary == summary
    assert [
        c.status
        for c in report.checks
        if c.name in ("nvcc accepts host compiler", "cuda driver stub", "toolkit vs driver")
    ] == ["skip"] * 3


# --- driver, stub, tools ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("driver", "status", "words"),
    [
        pytest.param("13.2", "ok", "driver supports CUDA 13.2", id="same"),
        pytest.param("13.4", "ok", "driver supports CUDA 13.4", id="newer"),
        # docs/facts.md section 1: newer-toolkit PTX -> cudaErrorUnsupportedPtxVersion.
        pytest.param("13.0", "warn", "cudaErrorUnsupportedPtxVersion", id="older-minor"),
        pytest.param("12.8", "warn", "need a driver for CUDA 13.x", id="older-major"),
        pytest.param(None, "skip", "host detection unavailable", id="unknown"),
    ],
)
def test_toolkit_vs_driver(
    fake: dict[str, Path], driver: str | None, status: str, words: str
) -> None:
    report = report_for(
        env_of(fake),
        driver_cuda=driver,
        driver_cuda_reason=None if driver else "host detection unavailable",
    )
    result = check(report, "toolkit vs driver")
    assert (result.status, words in result.summary) == (status, True), result


def test_driver_stub_found_under_targets(fake: dict[str, Path]) -> None:
    assert check(report_for(env_of(fake)), "cuda driver stub").status == "warn"
    stub = fake["cuda"] / "targets" / "x86_64-linux" / "lib" / "stubs" / "libcuda.so"
    stub.parent.mkdir(parents=True)
    stub.write_bytes(b"")
    result = check(report_for(env_of(fake)), "cuda driver stub")
    assert (result.status, result.summary) == ("ok", str(stub))


def test_cmake_ninja_absent_is_a_warning(fake: dict[str, Path]) -> None:
    script(fake["bin"] / "cmake", "echo 'cmake version 3.31.6'\n")
    report = report_for(env_of(fake))
    assert check(report, "cmake").summary == f"cmake 3.31.6 at {fake['bin']}/cmake"
    ninja = check(report, "ninja")
    assert (ninja.status, ninja.summary) == ("warn", "ninja: ninja not found on PATH")


# --- build needs --------------------------------------------------------------------------


def test_check_build_needs(tmp_path: Path, fake: dict[str, Path]) -> None:
    script(fake["bin"] / "cmake", "echo 'cmake version 3.25.1'\n")
    script(fake["bin"] / "c++", "echo 'c++ (Debian 12.2.0) 12.2.0'\n")
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "z3.h").write_text("")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libz3.so.4").write_bytes(b"")
    env = env_of(
        fake,
        CPATH=str(tmp_path / "inc"),
        LIBRARY_PATH=str(tmp_path / "lib"),
        CXX=str(fake["bin"] / "g++-15"),
    )
    report = report_for(env)
    needs = [
        "nvcc>=12.8",
        "nvcc>=13.3",
        "cmake>=3.26",
        "cmake",
        "ninja",
        "cxx>=14",
        "cxx>=16",
        "z3",
        "z3>=4.12",
        "nosuchlib",
        "not a need!",
    ]
    problems = check_build_needs(needs, report, env=env, prefixes=())
    assert {c.name: c.status for c in problems} == {
        "nvcc>=13.3": "fail",
        "cmake>=3.26": "fail",
        "ninja": "fail",
        "cxx>=16": "fail",
        "z3>=4.12": "warn",  # found by file, no pkg-config: version unknown
        "nosuchlib": "fail",
        "not a need!": "fail",
    }
    assert check(problems, "cmake>=3.26").summary == (
        f"cmake 3.25.1 at {fake['bin']}/cmake does not satisfy >=3.26"
    )
    assert "libnosuchlib in" in check(problems, "nosuchlib").summary


def test_build_need_named_with_lib_prefix(tmp_path: Path, fake: dict[str, Path]) -> None:
    """``libz3`` and ``z3`` name the same library: libz3.so, never liblibz3."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "z3.h").write_text("")
    (tmp_path / "lib").mkdir()
    env = env_of(fake, CPATH=str(tmp_path / "inc"), LIBRARY_PATH=str(tmp_path / "lib"))
    report = report_for(env)
    (missing,) = check_build_needs(["libz3"], report, env=env, prefixes=())
    assert "liblib" not in missing.summary
    assert "libz3 in" in missing.summary
    (tmp_path / "lib" / "libz3.so").write_bytes(b"")
    assert check_build_needs(["libz3"], report, env=env, prefixes=()) == []


@pytest.mark.parametrize(
    "need", ["nvcc>>13", "x @ https://example.org/x.tar.gz", "z3[extra]", "z3 ; os_name == 'nt'"]
)
def test_cli_bad_need_is_a_usage_error(need: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--build", "--driver-cuda", "13.2", "--need", need]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"error: --need {need!r}")
    assert "hint: " in err


# --- the command line -------------------------------------------------------------------------


def use_env(monkeypatch: pytest.MonkeyPatch, env: Mapping[str, str]) -> None:
    for var in (
        "CUDA_HOME",
        "CUDA_PATH",
        "CUDACXX",
        "CUDAHOSTCXX",
        "NVCC_CCBIN",
        "CXX",
        "NVCC_APPEND_FLAGS",
        "NVCC_PREPEND_FLAGS",
    ):
        monkeypatch.delenv(var, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def gnu16_toolkit(tmp_path: Path, fake: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line's environment: the fake compilers and a CUDA 13.2 toolkit whose
    host_config.h takes GNU up to 16 (so the default gcc 16 passes)."""
    cuda = toolkit(tmp_path / "cuda-16", gnu_max=16)
    use_env(monkeypatch, {"PATH": str(fake["bin"]), "CUDA_HOME": str(cuda)})


@pytest.mark.usefixtures("gnu16_toolkit")
def test_cli_json_and_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--build", "--json", "--driver-cuda", "13.2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True
    assert data["toolkit"]["version"] == "13.2.51"
    assert check_status(data, "nvcc accepts host compiler") == "ok"
    assert check_status(data, "ninja") == "warn"


def check_status(data: dict[str, object], name: str) -> object:
    checks = data["checks"]
    assert isinstance(checks, list)
    return next(c["status"] for c in checks if c["name"] == name)


@pytest.mark.usefixtures("gnu16_toolkit")
def test_cli_need_failure_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--build", "--driver-cuda", "13.2", "--need", "nvcc>=14"]) == 1
    out = capsys.readouterr().out
    assert "fail  nvcc>=14: nvcc 13.2.51 at" in out


def test_cli_hanging_nvcc_no_traceback(
    tmp_path: Path,
    fake: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cuda = toolkit(tmp_path / "hang", nvcc="/bin/sleep 30\n")
    use_env(monkeypatch, {"PATH": str(fake["bin"]), "CUDA_HOME": str(cuda)})
    assert main(["doctor", "--build", "--timeout", "0.5", "--driver-cuda", "13.2"]) == 1
    out, err = capsys.readouterr()
    assert "did not finish within 0.5 s" in out
    assert err == ""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["doctor", "--build", "--python", "/nonexistent/python"],
            "error: --python /nonexistent/python: no such file",
        ),
        (["doctor", "--build", "--timeout", "0"], "error: --timeout must be positive, not 0"),
        (["doctor", "--build", "--timeout", "nan"], "error: --timeout must be positive, not nan"),
        (["doctor", "--build", "--timeout", "inf"], "error: --timeout must be positive, not inf"),
        (
            ["doctor", "--build", "--timeout", "soon"],
            "error: argument --timeout: invalid float value: 'soon'",
        ),
    ],
    ids=["no-such-python", "zero-timeout", "nan-timeout", "inf-timeout", "bad-timeout"],
)
def test_cli_usage_errors_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code  # type: ignore[assignment]
    assert code == 2
    assert capsys.readouterr().err.splitlines()[0] == message


# --- the header evaluator ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("macros", "rejected"),
    [
        pytest.param({"__GNUC__": "15"}, None, id="gcc-15"),
        pytest.param({"__GNUC__": "16"}, "unsupported GNU version", id="gcc-16"),
        pytest.param(
            {"__GNUC__": "4", "__clang__": "1", "__clang_major__": "3", "__clang_minor__": "2"},
            "unsupported clang version",
            id="clang-3.2",
        ),
        pytest.param(
            {"__GNUC__": "4", "__clang__": "1", "__clang_major__": "3", "__clang_minor__": "3"},
            None,
            id="clang-3.3",
        ),
        pytest.param(
            {"__GNUC__": "4", "__clang__": "1", "__clang_major__": "18", "__APPLE__": "1"},
            None,
            id="apple-clang-not-limited",
        ),
        pytest.param({"_WIN32": "1", "_MSC_VER": "1944"}, None, id="msvc-2022"),
        pytest.param(
            {"_WIN32": "1", "_MSC_VER": "1950"},
            "unsupported Microsoft Visual Studio version",
            id="msvc-too-new",
        ),
        pytest.param(
            {"_WIN32": "1", "_MSC_VER": "1916"},
            "unsupported Microsoft Visual Studio version",
            id="msvc-2017",
        ),
        pytest.param(
            {"__GNUC__": "12", "__ICC": "1"}, "ICC is not supported as a host compiler", id="icc"
        ),
        pytest.param(
            {"__GNUC__": "16", "__NV_NO_HOST_COMPILER_CHECK": "1"}, None, id="allow-unsupported"
        ),
        pytest.param({}, "UNSUPPORTED COMPILER !!!", id="no-compiler-macros"),
        pytest.param(
            {"__GNUC__": "12", "__powerpc__": "1"}, "unsupported PPC platform", id="ppc-big-endian"
        ),
    ],
)
def test_evaluate_header(macros: dict[str, str], rejected: str | None) -> None:
    config = parse_host_config(header(15))
    verdict = evaluate(config, {"__CUDACC__": "1", **macros})
    assert [r.short.split("!")[0] for r in verdict.rejections] == (
        [rejected.split("!")[0]] if rejected else []
    )
    assert verdict.unknown == ()


def test_outside_nvcc_nothing_is_rejected() -> None:
    # Without __CUDACC__ the whole check is skipped, as in the real header.
    assert evaluate(parse_host_config(header(15)), {"__GNUC__": "99"}).accepted


def test_accepted_range_follows_the_header() -> None:
    base = {"__CUDACC__": "1", "__GNUC__": "12"}
    assert accepted_range(parse_host_config(header(13)), base, "__GNUC__") == (1, 13)
    assert accepted_range(parse_host_config(header(17)), base, "__GNUC__") == (1, 17)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("#if A\n#error x\n", "1 #if block not closed by #endif"),
        ("#endif\n#error x\n", "h:1: #endif without #if"),
        ("#else\n", "h:1: #else without #if"),
        ("#if A\n#endif\n", "no #error directive"),
    ],
    ids=["unclosed", "stray-endif", "stray-else", "no-error"],
)
def test_parse_errors(text: str, error: str) -> None:
    with pytest.raises(HostConfigError, match=re.escape(error)):
        parse_host_config(text, path="h")


def test_unknown_condition_is_reported_not_guessed() -> None:
    text = (
        "#if __has_include(<x.h>)\n#error -- has x\n#endif\n"
        "#if defined(A) && F(1)\n#error -- function-like\n#endif\n"
        "#if A / B\n#error -- division\n#endif\n"
        "#ifdef __GNUC__\n# if __GNUC__ >= 0x10 && !(__GNUC__ < 020)\n"
        "#  error -- sixteen or more\n# endif\n#endif\n"
    )
    config = parse_host_config(text)
    verdict = evaluate(config, {"__GNUC__": "16", "A": "1"})
    assert [r.message for r in verdict.rejections] == ["sixteen or more"]
    assert verdict.unknown == (
        "line 1: cannot read '__has_include(<x.h>)' at '.h>)'",
        "line 4: function-like macro F(...) is not evaluated",
        "line 7: division by zero",
    )
    assert evaluate(config, {"__GNUC__": "15", "A": "1", "B": "1"}).rejections[0].message == (
        "division"
    )


def test_comments_continuations_and_defines() -> None:
    text = (
        "/* #error -- in a comment */\n"
        "#define LIMIT 15 // limit\n"
        "#if defined(__GNUC__) && \\\n    __GNUC__ > LIMIT\n"
        '#error -- "quoted /* not a comment */" too new, can\'t\n'
        "#endif\n"
        "#undef LIMIT\n"
    )
    config = parse_host_config(text)
    assert evaluate(config, {"__GNUC__": "15"}).accepted
    rejection = evaluate(config, {"__GNUC__": "16"}).rejections[0]
    assert (rejection.line, rejection.message) == (
        5,
        '"quoted /* not a comment */" too new, can\'t',
    )
