"""How the command line writes: colour on a terminal only, -q/-v, progress on a terminal.

Runs the real command in a subprocess, its output a pipe or a pseudo-terminal (pty).
"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from resolver_hook.cli import build_parser, main
from resolver_hook.ground.stdout import DropAfterClose

from .paths import REPO
from .test_scan import make_wheel

GB10 = "linux-aarch64-py312-cuda13.0-sm121"
ESC = "\x1b["


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def piped(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "resolver_hook", *argv],
        capture_output=True,
        text=True,
        env=_env(**env),
        check=False,
        timeout=120,
    )


def on_terminal(*argv: str, **env: str) -> tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal; (exit code, what it showed)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "resolver_hook", *argv],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=_env(TERM="xterm", **env),
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


# --- colour -----------------------------------------------------------------------------


def test_no_colour_in_a_pipe() -> None:
    proc = piped("plan", "tilert", "--target", GB10)
    assert proc.returncode == 1
    assert "error: tilert" in proc.stderr
    assert ESC not in proc.stdout + proc.stderr


def test_force_colour_in_a_pipe_but_never_in_json() -> None:
    proc = piped("plan", "tilert", "--target", GB10, FORCE_COLOR="1")
    assert f"{ESC}1;31merror:{ESC}0m tilert" in proc.stderr
    assert ESC in proc.stdout  # the action column
    proc = piped("plan", "tilert", "--target", GB10, "--json", FORCE_COLOR="1")
    assert ESC not in proc.stdout
    json.loads(proc.stdout)


def test_no_color_wins() -> None:
    proc = piped("plan", "tilert", "--target", GB10, FORCE_COLOR="1", NO_COLOR="1")
    assert ESC not in proc.stdout + proc.stderr


def test_colour_on_a_terminal_and_no_color_there() -> None:
    code, shown = on_terminal("plan", "tilert", "--target", GB10)
    assert code == 1
    assert f"{ESC}1;31merror:{ESC}0m" in shown
    code, shown = on_terminal("plan", "tilert", "--target", GB10, NO_COLOR="1")
    assert code == 1
    assert "error: tilert" in shown
    assert ESC not in shown


def test_force_color_zero_is_not_forcing() -> None:
    proc = piped("plan", "tilert", "--target", GB10, FORCE_COLOR="0")
    assert ESC not in proc.stdout + proc.stderr


# --- -q and -v ----------------------------------------------------------------------------


def test_quiet_prints_errors_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "-q", "torch", "tilert", "--target", GB10]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: tilert:")
    assert main(["-q", "plan", "torch", "--target", GB10]) == 0
    assert capsys.readouterr() == ("", "")


def test_verbose_lists_every_rejected_flavour_and_the_probes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plan", "flash-attn", "--target", GB10]) == 0
    out = capsys.readouterr().out
    assert "not: " not in out
    assert main(["-v", "plan", "flash-attn", "--target", GB10]) == 0
    out = capsys.readouterr().out
    # Every one of the other 29 wheels, with its reasons; and the probe lines.
    assert sum(1 for x in out.splitlines() if "not: flash-attn 2.8.3" in x) == 29
    assert "  probe nvidia-target" not in out  # a GPU target has no probe to show
    assert main(["plan", "-v", "numpy", "--target", "linux-x86_64-py312"]) == 0
    out = capsys.readouterr().out
    assert "  probe nvidia-target: nothing: the target names no NVIDIA GPU" in out


def test_verbose_on_errors_lists_every_flavour(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "flash-attn", "--target", "macos-arm64-py312"]) == 1
    err = capsys.readouterr().err
    assert "... and 26 builds for other platforms or Pythons" in err
    assert main(["plan", "-v", "flash-attn", "--target", "macos-arm64-py312"]) == 1
    err = capsys.readouterr().err
    assert "... and" not in err
    assert sum(1 for x in err.splitlines() if x.startswith("  flash-attn 2.8.3")) == 30


def test_verbose_before_install_is_ours_after_it_is_pips() -> None:
    parser = build_parser("pip")
    args = parser.parse_args(["pip", "-v", "install", "-v", "-q", "torch"])
    assert args.verbose == 1
    assert args.quiet is False
    assert args.installer_args == ["install", "-v", "-q", "torch"]


def test_every_command_takes_quiet_and_verbose() -> None:
    leaves = [
        ["detect", "-q"],
        ["plan", "-v", "torch"],
        ["explain", "-q", "torch"],
        ["placeholder", "build", "-v", "x.toml"],
        ["manifest", "import", "-q", "https://example.org/"],
        ["scan", "-v", "x.whl"],
        ["doctor", "-q"],
        ["lint", "-v", "x.whl"],
        ["status", "-q"],
    ]
    for argv in leaves:
        args = build_parser(argv[0]).parse_args(argv)
        assert args.quiet or args.verbose, argv


# --- progress -----------------------------------------------------------------------------


def test_scan_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    members = {f"pkg/data{i}.bin": os.urandom(64) for i in range(5)}
    wheel = make_wheel(tmp_path, "pkg-1.0-py3-none-any.whl", members)
    code, shown = on_terminal("scan", str(wheel))
    assert code == 0
    assert "\rscan: 0/1 pkg-1.0-py3-none-any.whl: 1/6 members" in shown
    assert "\r\x1b[K" in shown  # erased when done
    proc = piped("scan", str(wheel))
    assert proc.returncode == 0
    assert "scan:" not in proc.stderr
    assert "\r" not in proc.stderr
    # -q: no progress line even on a terminal.
    code, shown = on_terminal("scan", "-q", str(wheel))
    assert "\rscan:" not in shown


def test_manifest_import_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text(
        "".join(
            f'<a href="https://example.org/pkg-1.0+cu13{i}-py3-none-any.whl">x</a>\n'
            for i in range(3)
        )
    )
    code, shown = on_terminal("manifest", "import", str(page), "-o", str(tmp_path / "m.toml"))
    assert code == 0, shown
    assert "\rmanifest import: 0 fetching " in shown
    assert "of 3 links" in shown


def test_quiet_drops_reports_but_not_asked_for_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "detect"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["detect", "-q", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["schema"] == 1
    partial = ["--flavoured-only", "--allow-unhashed"]  # frozen manifests, no page read
    assert main(["-q", "lock", *partial, "torch", "-o", "-", "--target", GB10]) == 0
    assert "torch==2.13.0+cu130" in capsys.readouterr().out


def test_stdout_wrapper_outliving_its_stream_is_silent() -> None:
    """The command line's stdout wrapper (``| head -1`` drops the rest) may be collected
    after the stream it wraps was closed (a test's captured output, the interpreter's
    exit): flushing or closing it then does nothing, rather than an ``Exception
    ignored`` traceback on stderr."""
    inner = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    wrapper = DropAfterClose(inner)
    wrapper.write("kept")
    inner.close()
    wrapper.flush()
    wrapper.close()
    assert wrapper.closed
