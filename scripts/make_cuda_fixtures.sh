#!/usr/bin/env bash
# Rebuild the small CUDA shared objects under tests/data/cuda/ that the scan tests read.
#
# Needs nvcc (CUDA 13.0 was used for the committed files) and gcc; no GPU. The tests
# themselves never run this: the stripped .so files are committed so CI needs no nvcc.
# What each file holds is checked by tests/test_scan.py; keep the two in step.
set -euo pipefail

NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$here/tests/data/cuda"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM

mkdir -p "$out"
cat >"$work/k.cu" <<'CU'
extern "C" __global__ void add_one(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
extern "C" int launch_add_one(float *x, int n) {
    add_one<<<(n + 255) / 256, 256>>>(x, n);
    return 0;
}
CU
cat >"$work/cpu.c" <<'C'
int answer(void) { return 42; }
C

# 1. SASS for sm_90a, sm_100f, sm_120 plus PTX for compute_120; shared runtime, so
#    NEEDED has libcudart.so.13.
"$NVCC" -shared -Xcompiler -fPIC \
    -gencode arch=compute_90a,code=sm_90a \
    -gencode arch=compute_100f,code=sm_100f \
    -gencode arch=compute_120,code=sm_120 \
    -gencode arch=compute_120,code=compute_120 \
    -cudart shared -o "$work/libkernels.so" "$work/k.cu"

# 2. Uncompressed PTX (compute_100f: the `.target sm_100f` line is readable) plus
#    plain sm_80 SASS; no runtime linked (-cudart none), so no libcudart in NEEDED.
"$NVCC" -shared -Xcompiler -fPIC -no-compress \
    -gencode arch=compute_80,code=sm_80 \
    -gencode arch=compute_100f,code=compute_100f \
    -cudart none -o "$work/libptx.so" "$work/k.cu"

# 3. A CPU-only object with no CUDA at all.
gcc -shared -fPIC -o "$work/libcpu.so" "$work/cpu.c"

# 4. An extension linked against torch (stub libtorch.so / libc10.so made here).
gcc -shared -fPIC -Wl,-soname,libtorch.so -o "$work/libtorch.so" "$work/cpu.c"
gcc -shared -fPIC -Wl,-soname,libc10.so -o "$work/libc10.so" "$work/cpu.c"
gcc -shared -fPIC -o "$work/libtorchext.so" "$work/cpu.c" \
    -Wl,--no-as-needed -L"$work" -ltorch -lc10

# 5. SASS sm_90 plus uncompressed PTX compute_120 with a shared runtime
#    (libcudart.so.13), its PTX ISA then rewritten from 9.0 to 9.1 (CUDA 13.1's) in
#    the fatbin entry header and the `.version` line: nvcc 13.0 emits ISA 9.0 only.
"$NVCC" -shared -Xcompiler -fPIC -no-compress \
    -gencode arch=compute_90,code=sm_90 \
    -gencode arch=compute_120,code=compute_120 \
    -cudart shared -o "$work/libnewptx.so" "$work/k.cu"

for f in libkernels.so libptx.so libcpu.so libtorchext.so libnewptx.so; do
    strip "$work/$f"
    cp "$work/$f" "$out/$f"
done
PYTHONPATH="$here" python3 "$here/scripts/patch_ptx_isa.py" "$out/libnewptx.so" 9.0 9.1
ls -l "$out"
du -cb "$out"/*.so | tail -1
