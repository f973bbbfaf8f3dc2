"""Accelerators: which execution provider each ONNX model gets (providers.py), how much
GPU memory is free (vram.py), MIGraphX's compiled-model cache (migraphx_cache.py), and
numpy's BLAS threads while a stage runs (blas.py)."""
