"""Stdlib-only facts shared by the tool and the placeholders it generates.

Every module here runs on Python >= 3.8 with nothing but the standard library: the
placeholder generator embeds them verbatim into name-reservation packages, so a fact
(a kernel-target rule, a platform word) has one copy for both.
"""
