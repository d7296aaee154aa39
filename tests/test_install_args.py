"""The installer-argument side of install.py, without running pip or uv.

What pip (optparse) and uv (clap) read as an option, a value or a requirement
decides what the hook plans for and what it hands back to them.
"""

from __future__ import annotations

from resolver_hook.install import Installer, args_without_requirements, parse_install_args


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
    assert args_without_requirements(parsed) == ["--require-hashes"]
