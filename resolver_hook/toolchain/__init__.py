"""Source-build preflight: the CUDA toolkit, nvcc's host compiler and declared build needs."""
