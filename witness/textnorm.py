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

``scoring_words`` is what WER and WDER compare: Whisper's English normaliser first
(``EnglishTextNormalizer`` from the ``whisper-normalizer`` package, OpenAI's code: numbers
and currency to digits, "won't" to "will not", British to American spelling, "uh"/"um"
dropped), then the rule above, then runs of digit words joined ("0 6 7 2", which Whisper's
normaliser leaves alone, and "zero six seven two", which it makes "0672", both become "0672").
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Callable

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


def scoring_words(text: str) -> list[str]:
    """The words of ``text`` as WER compares them (see the module docstring)."""
    out: list[str] = []
    for word in normalize_words(_whisper_normalizer()(text)):
        if word.isdigit() and out and out[-1].isdigit():
            out[-1] += word
        else:
            out.append(word)
    return out


@lru_cache(maxsize=1)
def _whisper_normalizer() -> Callable[[str], str]:
    from whisper_normalizer.english import EnglishTextNormalizer

    return EnglishTextNormalizer()
