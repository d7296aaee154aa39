"""Sphinx configuration of the manual (docs/*.md, Markdown through MyST-Parser).

Built strictly in .ci/run: ``python -m sphinx -W --keep-going -n -b html docs OUT``.
"""

project = "resolver-hook"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# Headings down to ####: ``[text](page.md#anchor)`` links resolve to them, and one that
# does not is a warning (myst.xref_missing), which -W makes an error.
myst_heading_anchors = 4
html_theme = "alabaster"
