"""What a wheel's compiled files hold: ELF objects, CUDA fat binaries, ROCm offload
bundles, read with bounds (``scan``), and a file name's local label (``locallabel``).
Shared by the install side (kernel proof, doctor) and the publish side (manifests
derived from real wheels), so neither reaches into the other.
"""
