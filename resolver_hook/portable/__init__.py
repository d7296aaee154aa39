"""Stdlib-only facts shared by the tool and the placeholders it generates.

Every module here runs on Python >= 3.8 with nothing but the standard library: the
placeholder generator embeds them verbatim into name-reservation packages (as
``_placeholder_<module>.py``), so a fact has one copy for both:

- ``cuda``: kernel targets and what they run on (Tegra included), GPU names, NVML's
  version encoding, driver -> CUDA tables;
- ``platforms``: OS and CPU words, wheel platform tags, Python/ABI words
  (free-threaded ``cp313t``), marker values;
- ``visible``: ``CUDA_VISIBLE_DEVICES`` as the CUDA runtime reads it;
- ``overrides``: the ``RESOLVER_HOOK_OVERRIDE_*`` variable names.

The modules import nothing from each other or from the rest of resolver-hook.
"""
