"""For maintainers publishing builds: read wheels (ELF, fatbin), derive manifests, lint."""
