#!/usr/bin/env bash
# The real-GPU check, for a machine with an NVIDIA GPU and driver: install the
# project, print `resolver-hook detect` (text and JSON) and `nvidia-smi` side by
# side, and run the gpu-marked test. Writes its log to ${OUT:-.}/device-check.log.
set -uo pipefail
cd "$(dirname "$0")/.."
log="${OUT:-.}/device-check.log"
{
  python3 -m pip install -q -e '.[test]' || exit 1
  nvidia-smi || true
  python3 -m resolver_hook detect
  python3 -m resolver_hook detect --json
  python3 scripts/bench_detect.py --runs 10
  RESOLVER_HOOK_REAL_GPU=1 python3 -m pytest -q tests/test_real_gpu.py tests/test_host_probes.py
} 2>&1 | tee "$log"
