"""Volta's CUDA backend over CuPy (extra ``cupy``)."""
