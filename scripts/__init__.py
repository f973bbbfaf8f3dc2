"""Benchmarks and measurements (each script's docstring says how to run it).

Where their inputs are: the sample call ships with the repository (``SAMPLE_CALL``); the dev
set, pyannote's fixture arrays and the int8 export are in ``SHARED`` (../shared beside the
checkout, or $WITNESS_SHARED_DIR).
"""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("WITNESS_SHARED_DIR", REPO.parent / "shared"))
SAMPLE_CALL = REPO / "tests" / "data" / "sample-call"
