"""``python -m resolver_hook``: the same as the ``resolver-hook`` command."""

from resolver_hook._entry import program

raise SystemExit(program())
