"""The oracle of the plan store: every file a storing run read is one its readers declared.

A plan is stored by what its readers declare (resolver_hook/ground/record.py). A reader that
forgets to declare an input leaves a stored plan that is replayed after that input
changed. This oracle watches the run as the store once did: a PEP 578 audit hook sees
every file opened and every folder listed, a wrapper of ``os.stat``/``os.lstat`` every
file looked for, and the events whose answer no file holds (a socket, a program
started, a C library loaded; not pip's interpreter started ahead of an install, which
is told the words of the launch and answers nothing before it). :func:`traced` runs
one command so watched in a child (``python -I -B``), up to the moment an install
starts its installer (the files it wrote for it, in its private folder, are its own);
:func:`undeclared` gives each read that the stored record does not declare, once the
interpreter's, the libraries' and the tool's own files are set aside (they are the
key's: its version, its interpreter, ``sys.path``), and the cache folder's own
bookkeeping.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# The child: the command line as resolver_hook/_entry.py runs it, watched. argv: the
# file to write what it saw to, then the command's arguments.
_CHILD = r"""
import json, os, sys

out, argv = sys.argv[1], sys.argv[2:]
seen = []
UNSTORED = {"socket.connect", "socket.getaddrinfo", "subprocess.Popen", "os.system",
            "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "ctypes.dlopen"}
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        mode, flags = args[1] or "", args[2] or 0
        if not (set(str(mode)) & set("wax+") or flags & WRITE):
            seen.append(["open", os.fsdecode(args[0])])
    elif event in ("os.listdir", "os.scandir"):
        path = args[0] if args and args[0] is not None else "."
        if isinstance(path, (str, bytes, os.PathLike)):
            seen.append(["list", os.fsdecode(path)])
    elif event == "subprocess.Popen" and list(args[1][1:3]) == ["-c", _PIP_STEPS]:
        pass  # pip started ahead of its install: told the launch's words, it says nothing before
    elif event in UNSTORED:
        seen.append(["event", event])

_stat, _lstat = os.stat, os.lstat

def stat(path, *args, **kwargs):
    if isinstance(path, (str, bytes, os.PathLike)):
        seen.append(["stat", os.fsdecode(path)])
    return _stat(path, *args, **kwargs)

def lstat(path, *args, **kwargs):
    if isinstance(path, (str, bytes, os.PathLike)):
        seen.append(["stat", os.fsdecode(path)])
    return _lstat(path, *args, **kwargs)

from resolver_hook import _entry
from resolver_hook.ground import record as _record
from resolver_hook.process.foreground import _PIP_STEPS

launched = _record.Recorder.launched

def launch(self, what):
    seen.append(["launch", what.get("folder", "")])
    launched(self, what)

_record.Recorder.launched = launch
sys.addaudithook(hook)
os.stat, os.lstat = stat, lstat
sys.argv = ["resolver-hook", *argv]
try:
    code = _entry._command_line(argv)
finally:
    os.stat, os.lstat = _stat, _lstat
    cut = [i for i, (kind, _) in enumerate(seen) if kind == "launch"]
    kept = seen[: cut[0]] if cut else seen
    folder = seen[cut[0]][1] if cut else None
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"cwd": os.getcwd(), "reads": kept, "path": sys.path, "folder": folder}, f)
sys.exit(code)
"""


def traced(
    args: Sequence[str], env: Mapping[str, str], cwd: Path, out: Path, *, patch: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run ``resolver-hook ARGS`` watched; what it read goes to ``out``. ``patch``: Python
    run in the child first (a test takes a declaration away with it)."""
    argv = [sys.executable, "-I", "-B", "-c", patch + "\n" + _CHILD, str(out), *args]
    return subprocess.run(
        argv, capture_output=True, text=True, env=dict(env), cwd=cwd, timeout=600, check=False
    )


def _record_of(cache: Path) -> dict[str, Any]:
    (path,) = (cache / "plans").glob("*.json")
    data: dict[str, Any] = json.loads(path.read_bytes())
    return data


def _theirs(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def undeclared(out: Path, cache: Path) -> list[str]:
    """Each read of the watched run (``kind path``, or ``event NAME``) that the plan it
    stored in ``cache`` does not declare; the run must have stored one."""
    seen = json.loads(out.read_bytes())
    declared = {item[0] for item in _record_of(cache)["inputs"]}
    import resolver_hook

    # The key's: the interpreter, the libraries and the tool (sys.path, the version),
    # this boot's host profile; the cache folder's own bookkeeping.
    roots = [sys.prefix, sys.base_prefix, os.path.dirname(resolver_hook.__file__)]
    roots += [p for p in seen["path"] if p]
    if seen["folder"]:
        roots.append(seen["folder"])  # the session's private folder: what it writes
    exact = {
        os.path.realpath(sys.executable),
        sys.executable,
        "/proc/sys/kernel/random/boot_id",
        "/sys/module/nvidia/version",
        str(cache / "host-profile.json"),
        str(cache / "entry-points.json"),
        # The shipped snapshot's texts whose hash matched: a check of the tool's own
        # file (the key's) not made again, no answer of the plan.
        str(cache / "snapshot-checked.json"),
        str(cache),
        str(cache / "plans"),
        seen["cwd"],  # the current folder is the key's; listing it is not
    }
    found = []
    for kind, path in seen["reads"]:
        if kind == "event":
            found.append(f"event {path}")
            continue
        full = os.path.normpath(os.path.join(seen["cwd"], path))
        if full in exact or full in declared or _theirs(full, roots):
            continue
        kept = ("plans", "toml", "manifests", "snapshots", "pip-config", "tags", "expansions")
        own = [str(cache / p) for p in kept]
        if _theirs(full, own) or (
            _theirs(full, [str(cache)]) and os.path.basename(full).startswith(".")
        ):
            # The store's own files; the built-in manifests' documents and validated
            # results, and the shipped snapshot's as read (the tool's own files, by
            # digest); what a declared TOML or pip configuration file says, kept by the
            # sha256 of its text; a described machine's wheel tags, kept by the
            # arguments (the key's); an expansion kept with its own declarations,
            # which the plan declares as its own; a temporary file of the cache, being
            # written.
            continue
        above = [*declared, *roots, *exact]
        if kind == "stat" and any(d.startswith(full + os.sep) for d in above):
            continue  # a folder above one of those, looked at on the way to it
        found.append(f"{kind} {full}")
    return sorted(set(found))
