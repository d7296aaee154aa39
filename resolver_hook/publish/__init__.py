"""For maintainers publishing builds: read wheels (ELF, fatbin, ROCm code), derive manifests,
lint, and build and check loud placeholders (:mod:`resolver_hook.publish.placeholder`)."""
