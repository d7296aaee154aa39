"""The maintainer side stays behind the ``publish`` extra's boundary: a user's commands
(plan, pip/uv install with or without the kernel proof, detect, explain, lock, env,
doctor) import nothing of ``publish/`` (placeholders, lint, index-page import, the
built-in data's refresh) nor hatchling, the placeholder builder's library. The wheel
scanner both sides use lives below both, in ``binaries/``."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.paths import REPO, child_env

TARGET = "linux-x86_64-py312-cuda13.0-sm100"

# Imports every user command's module (an install and an env run a real installer: they
# are imported, not run), runs the others offline, and prints what of the maintainer
# side got loaded.
CHILD = f"""
import contextlib, io, json, sys
from resolver_hook.cli import main
import resolver_hook.cli.plan, resolver_hook.cli.install, resolver_hook.cli.detect
import resolver_hook.cli.explain, resolver_hook.cli.lock, resolver_hook.cli.env
import resolver_hook.install.session, resolver_hook.appenv.create
import resolver_hook.install.kernels, resolver_hook.cli.doctor
codes = []
for argv in (
    ["plan", "--offline", "--target", "{TARGET}", "torch", "flash-attn"],
    ["plan", "--offline", "--json", "--target", "{TARGET}", "torch"],
    ["explain", "--offline", "--target", "{TARGET}", "torch"],
    ["lock", "--example", "--offline", "-o", "-", "--target", "{TARGET}"],
    ["detect", "--json", "--no-cache"],
):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            codes.append(main(argv))
        except SystemExit as exc:
            codes.append(exc.code)
loaded = sorted(
    m for m in sys.modules
    if m.startswith("resolver_hook.publish") or m.split(".")[0] == "hatchling"
)
print(json.dumps({{"codes": codes, "loaded": loaded}}))
"""


def test_user_commands_import_nothing_of_the_publish_side() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        env=child_env({"RESOLVER_HOOK_OFFLINE": "1"}),
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    # The lock resolves with uv, which offline and with an empty cache may find nothing
    # (exit 1): its path up to uv has run either way.
    plan, plan_json, explain, lock, detect = seen["codes"]
    assert [plan, plan_json, explain, detect] == [0, 0, 0, 0]
    assert lock in (0, 1)
    assert seen["loaded"] == []
