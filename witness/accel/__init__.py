"""Accelerators: which execution provider each ONNX model gets (providers.py), how much
GPU memory is free (vram.py), and MIGraphX's compiled-model cache (migraphx_cache.py)."""
