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

# 6. Standalone device code, as flashinfer-cubin ships it: cubins (ELF, EM_CUDA) and a
#    .fatbin file. `compute_100f,code=sm_100` is how family builds are spelled; the
#    cubin's .note.nv.tkinfo records "-arch sm_100f".
"$NVCC" -cubin -gencode arch=compute_100f,code=sm_100 -o "$work/k_sm100f.cubin" "$work/k.cu"
"$NVCC" -cubin -gencode arch=compute_100a,code=sm_100a -o "$work/k_sm100a.cubin" "$work/k.cu"
"$NVCC" -cubin -gencode arch=compute_103a,code=sm_103a -o "$work/k_sm103a.cubin" "$work/k.cu"
"$NVCC" -fatbin -gencode arch=compute_100f,code=sm_100 \
    -gencode arch=compute_100f,code=compute_100f -o "$work/k.fatbin" "$work/k.cu"

# 7. A cupy-like object: SASS sm_89 plus uncompressed PTX compute_89 whose ISA is
#    rewritten to 8.8 (CUDA 12.9's), linked against a CUDA 12 runtime (a stub whose
#    soname is libcudart.so.12: nvcc 13.0 has no CUDA 12 runtime to link).
mkdir -p "$work/cu11" "$work/cu12" "$work/cu13" "$work/renamed"
gcc -shared -fPIC -Wl,-soname,libcudart.so.11.0 -o "$work/cu11/libcudart.so" "$work/cpu.c"
gcc -shared -fPIC -Wl,-soname,libcudart.so.12 -o "$work/cu12/libcudart.so" "$work/cpu.c"
gcc -shared -fPIC -Wl,-soname,libcudart.so.13 -o "$work/cu13/libcudart.so" "$work/cpu.c"
"$NVCC" -shared -Xcompiler -fPIC -no-compress \
    -gencode arch=compute_89,code=sm_89 \
    -gencode arch=compute_89,code=compute_89 \
    -cudart none -Xlinker --no-as-needed -L"$work/cu12" -lcudart -o "$work/libcupylike.so" "$work/k.cu"

# 8. bitsandbytes' pattern: one library per CUDA runtime, chosen at run time
#    (NEEDED libcudart.so.11.0 / .12 / .13), each with sm_75 and sm_80 SASS.
for v in 11 12 13; do
    "$NVCC" -shared -Xcompiler -fPIC \
        -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
        -cudart none -Xlinker --no-as-needed -L"$work/cu$v" -lcudart -o "$work/libbnb_cuda$v.so" "$work/k.cu"
done

# 9. A runtime vendored and renamed by auditwheel (NEEDED libcudart-53d54daa.so.12.6.68).
gcc -shared -fPIC -Wl,-soname,libcudart-53d54daa.so.12.6.68 \
    -o "$work/renamed/libcudart-53d54daa.so.12.6.68" "$work/cpu.c"
"$NVCC" -shared -Xcompiler -fPIC -gencode arch=compute_90,code=sm_90 -cudart none \
    -L"$work/renamed" -Xlinker --no-as-needed,-l:libcudart-53d54daa.so.12.6.68 \
    -o "$work/librenamed.so" "$work/k.cu"

# 10. A Jetson (Orin, CC 8.7) build: sm_87 SASS and a CUDA 12 runtime. nvcc here builds
#     x86_64 host code only, so the ELF header's e_machine is then set to aarch64 (183):
#     a fixture for the scanner, not code to load.
"$NVCC" -shared -Xcompiler -fPIC -gencode arch=compute_87,code=sm_87 \
    -cudart none -Xlinker --no-as-needed -L"$work/cu12" -lcudart -o "$work/libjetson.so" "$work/k.cu"

# 11. A ROCm object: NEEDED libamdhip64.so.7 and a .hip_fatbin section holding a clang
#     offload bundle with gfx90a and gfx942 code-object entries (the layout
#     resolver_hook/binaries/rocm.py reads; no hipcc here, so the bundle is written out).
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.7 -o "$work/libamdhip64.so" "$work/cpu.c"
python3 - "$work/bundle.bin" <<'PY'
import struct, sys
ids = [b"host-x86_64-unknown-linux-gnu-", b"hipv4-amdgcn-amd-amdhsa--gfx90a",
       b"hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"]
blobs = [b"", b"\x7fELF" + bytes(60), b"\x7fELF" + bytes(60)]
head = 24 + 8 + sum(24 + len(i) for i in ids)
out, table, at = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(ids)), b"", head
for ident, blob in zip(ids, blobs):
    table += struct.pack("<QQQ", at if blob else 0, len(blob), len(ident)) + ident
    at += len(blob)
open(sys.argv[1], "wb").write(out + table + b"".join(blobs))
PY
gcc -shared -fPIC -o "$work/librocmk.so" "$work/cpu.c" -Wl,--no-as-needed -L"$work" -lamdhip64
objcopy --add-section .hip_fatbin="$work/bundle.bin" "$work/librocmk.so"

# 12. Fat binaries kept as plain arrays, outside .nv_fatbin, as CUPTI (.rodata) and
#     cuFFT (.data) keep theirs: sm_75 SASS plus compute_86 PTX in a writable array
#     (.data), sm_89 SASS in a const one (.rodata), and in .rodata a fake: the fatbin
#     magic, version 1, header size 16, then bytes that are no container.
"$NVCC" -fatbin -gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code=compute_86 \
    -o "$work/rw.fatbin" "$work/k.cu"
"$NVCC" -fatbin -gencode arch=compute_89,code=sm_89 -o "$work/ro.fatbin" "$work/k.cu"
{
    echo '__attribute__((aligned(8))) unsigned char fatbin_rw[] = {'
    xxd -i <"$work/rw.fatbin"
    echo '};'
    echo '__attribute__((aligned(8))) const unsigned char fatbin_ro[] = {'
    xxd -i <"$work/ro.fatbin"
    echo '};'
    echo 'const unsigned char fatbin_fake[] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0,'
    echo '    0x40, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9};'
} >"$work/arrays.c"
gcc -shared -fPIC -o "$work/libdatafatbin.so" "$work/arrays.c"

for f in libkernels.so libptx.so libcpu.so libtorchext.so libnewptx.so libcupylike.so \
    libbnb_cuda11.so libbnb_cuda12.so libbnb_cuda13.so librenamed.so libjetson.so \
    librocmk.so libdatafatbin.so; do
    strip "$work/$f"
    cp "$work/$f" "$out/$f"
done
cp "$work/k_sm100f.cubin" "$work/k_sm100a.cubin" "$work/k_sm103a.cubin" "$work/k.fatbin" "$out/"
PYTHONPATH="$here" python3 "$here/scripts/patch_ptx_isa.py" "$out/libnewptx.so" 9.0 9.1
PYTHONPATH="$here" python3 "$here/scripts/patch_ptx_isa.py" "$out/libcupylike.so" 9.0 8.8
python3 - "$out/libjetson.so" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
assert data[:4] == b"\x7fELF" and data[5] == 1 and data[18:20] == (62).to_bytes(2, "little")
data[18:20] = (183).to_bytes(2, "little")  # EM_AARCH64
open(sys.argv[1], "wb").write(bytes(data))
PY
ls -l "$out"
du -cb "$out"/* | tail -1
