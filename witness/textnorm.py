"""Word normalisation shared by scoring (WER, WDER) and quoting (``--grep``).

The rule, kept simple on purpose so that reference and hypothesis go through the same
door:

1. lowercase (``str.lower``); typographic apostrophes (’ ‘ ʼ) become ``'``;
2. every Unicode punctuation character (category P*) becomes a space, except an
   apostrophe with a letter or digit on both sides (``didn't``, ``o'clock`` stay whole;
   ``'quoted'`` loses its quotes); hyphens and dots split words (``well-known`` →
   ``well known``, ``3.5`` → ``3 5``);
3. split on whitespace (so runs of whitespace collapse and empty words vanish).

Symbols that are not punctuation (``$``, ``%``, ``+``) are kept. No number spelling, no
contraction expansion, no filler removal.
"""

from __future__ import annotations

import unicodedata

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def normalize_words(text: str) -> list[str]:
    """The normalised words of ``text`` (see the module docstring for the rule)."""
    chars = list(text.lower().translate(_APOSTROPHES))
    kept = []
    for i, ch in enumerate(chars):
        if ch == "'" and _inner(chars, i):
            kept.append(ch)
        elif unicodedata.category(ch).startswith("P"):
            kept.append(" ")
        else:
            kept.append(ch)
    return "".join(kept).split()


def _inner(chars: list[str], i: int) -> bool:
    """True when position ``i`` has a letter or digit on both sides."""
    return 0 < i < len(chars) - 1 and chars[i - 1].isalnum() and chars[i + 1].isalnum()
