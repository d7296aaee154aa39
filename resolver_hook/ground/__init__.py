"""The helpers under everything: files, input, caches, the recorder, patterns.

May import: the standard library, ``errors``, ``limits``, ``portable/`` and the
package's ``__version__``; never ``process/`` or anything above. This file imports
nothing: the warm ``detect --json`` path imports :mod:`.hostkey` through it.
"""
