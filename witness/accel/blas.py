"""numpy's BLAS thread pool, limited while a stage runs.

The stages that call numpy with small matrices (Kaldi filterbanks, clustering) run 1.5-4x
slower with OpenBLAS's default pool on a loaded 2-core machine: its threads spin between
calls and take the cores from ONNX Runtime's own threads.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext


def blas_threads(threads: int | None) -> AbstractContextManager:
    """Limit numpy's BLAS thread pool to ``threads`` while the context is open (restored
    afterwards); None leaves it alone."""
    if threads is None:
        return nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")
