#!/usr/bin/env python3
"""Compare the headers of two ggml Whisper files: hparams, mel filterbank, vocabulary.

Used to check witness's CTranslate2 conversion against whisper.cpp's own files (e.g. the
``models/for-tests-ggml-*.bin`` in whisper.cpp's repository: real headers, no weights).

    python scripts/compare_ggml_headers.py CONVERTED.bin REFERENCE.bin
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from witness.models.ggml import read_header  # noqa: E402

def _replaced(token: bytes) -> bytes:
    """``token`` after a UTF-8 decode that replaces what is not valid with U+FFFD."""
    return token.decode("utf-8", "replace").encode()


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    (hp_a, mel_a, tok_a), (hp_b, mel_b, tok_b) = read_header(sys.argv[1]), read_header(sys.argv[2])
    same = [f for f in hp_a.__dataclass_fields__ if getattr(hp_a, f) == getattr(hp_b, f)]
    print(f"hparams: {len(same)}/11 equal" + ("" if len(same) == 11 else f" ({hp_a} vs {hp_b})"))
    if mel_a.shape == mel_b.shape:
        differ = int(np.count_nonzero(mel_a.view(np.int32) != mel_b.view(np.int32)))
        print(f"mel filters {mel_a.shape}: {differ} of {mel_a.size} float32 values differ "
              f"(max |diff| {float(np.max(np.abs(mel_a - mel_b))):.3g})")
    else:
        print(f"mel filters: shapes differ {mel_a.shape} vs {mel_b.shape}")
    differ = [i for i, (a, b) in enumerate(zip(tok_a, tok_b)) if a != b]
    lossy = [i for i in differ if _replaced(tok_a[i]) == tok_b[i] or _replaced(tok_b[i]) == tok_a[i]]
    print(f"vocabulary: {len(tok_a)} vs {len(tok_b)} tokens; {len(differ)} differ, {len(lossy)} of them only "
          f"because one file stores the token decoded as text (U+FFFD for bytes that are not whole UTF-8)")
    for i in [i for i in differ if i not in set(lossy)][:10]:
        print(f"  token {i}: {tok_a[i]!r} vs {tok_b[i]!r}")


if __name__ == "__main__":
    main()
