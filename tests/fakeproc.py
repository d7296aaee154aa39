"""Fake runs for code that takes a :class:`resolver_hook.process.proc.Runner`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from resolver_hook.process.proc import Result


def done(argv: Sequence[str], code: int = 0, stdout: str = "", stderr: str = "") -> Result:
    """A command that ran and exited with ``code``."""
    return Result(argv=tuple(argv), returncode=code, stdout=stdout, stderr=stderr)


def missing(argv: Sequence[str]) -> Result:
    """A program that does not exist."""
    return Result(argv=tuple(argv), returncode=None, error="not found", missing=True)


def timed_out(argv: Sequence[str], timeout: float) -> Result:
    """A command that did not finish within ``timeout``."""
    return Result(argv=tuple(argv), returncode=None, timed_out=True, timeout=timeout)


def no_programs(argv: Sequence[str], *, timeout: float, **kw: object) -> Result:
    """A runner on a machine where no program exists (no nvidia-smi, no nvcc)."""
    return missing(argv)


def no_pynvml() -> Any:
    """An NVML loader on a machine without nvidia-ml-py."""
    raise ImportError("No module named 'pynvml'")
