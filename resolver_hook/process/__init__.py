"""Programs run: the probes' subprocess runner (proc), the installers' runner in the
terminal's process group (foreground), where pip and uv are (installers).

May import: ``ground/``, ``errors`` and ``limits``. This file imports nothing.
"""
