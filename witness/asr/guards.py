"""Loop and hallucination guards: is a decoded piece text a model stuck in a loop, and
which segments are Whisper's stock phrases for silence.

Whisper's reference decoder re-decodes a window hotter when its text compresses too well
(gzip ratio above 2.4). Short pieces compress too little for that to fire on a loop of
three words, so two more signs count: the same n-gram said over and over in a row, and
more words than a person can say in the time (``LoopOptions``). A decoder's loop is brittle:
sampled hotter, the text changes. A repetition that is in the audio (a sentence said again, a
run of "so, so, so") comes back nearly word for word (``words_agree``).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Sequence

from witness.textnorm import normalize_words

# Whisper's stock phrases for silence and music, normalised (``normalize_words``, joined)
SILENCE_PHRASES = frozenset({
    "thank you", "thank you very much", "thanks", "thanks for watching", "thank you for watching",
    "thank you so much", "thanks for watching and i'll see you next time", "please subscribe",
    "bye", "you",
})


@dataclass(frozen=True)
class LoopOptions:
    """When a piece's text counts as a loop.

    compression_ratio: gzip ratio of the text above which it is one (2.4, whisper's).
    max_repeats: an n-gram (1 to ``max_ngram`` words) said more than this many times in a
        row (4: the sample call's "Hello? Hello? Oh, hello." comes out of tiny.en as four
        "Hello."s; a fifth is not believed).
    max_words_per_second: more words than this per second of piece (5.0; fast talkers
        reach about 4).
    min_words: texts shorter than this are never judged (8).
    said_again: when the first hotter decoding of a piece that looked like a loop agrees with
        the greedy one at least this much (``words_agree``: 0.9), the repetition is in the audio
        and no hotter decoding is tried. Measured (tiny.en-q8_0): the two such pieces of the
        30-minute corpus call (a read sentence that recurs) agreed 0.98 and went on failing at
        every temperature up to 1.0; decoder loops in noisy corpus calls agreed 0.20-0.43.
    """

    compression_ratio: float = 2.4
    max_repeats: int = 4
    max_ngram: int = 8
    max_words_per_second: float = 5.0
    min_words: int = 8
    said_again: float = 0.9


def compression_ratio(text: str) -> float:
    """Bytes of ``text`` over bytes of its zlib compression (whisper's measure)."""
    raw = text.encode("utf-8")
    return len(raw) / len(zlib.compress(raw)) if raw else 0.0


def longest_run(words: Sequence[str], max_ngram: int) -> int:
    """Most times any n-gram (n <= ``max_ngram``) occurs back to back in ``words``."""
    best = 1 if words else 0
    for n in range(1, max_ngram + 1):
        for start in range(n):
            run, previous = 1, None
            for i in range(start, len(words) - n + 1, n):
                gram = tuple(words[i:i + n])
                run = run + 1 if gram == previous else 1
                previous = gram
                best = max(best, run)
    return best


def loop_reason(text: str, seconds: float, options: LoopOptions = LoopOptions()) -> str | None:
    """Why ``text`` decoded from ``seconds`` of audio looks like a loop, or None."""
    words = normalize_words(text)
    if len(words) < options.min_words:
        return None
    ratio = compression_ratio(" ".join(words))
    if ratio > options.compression_ratio:
        return f"compression ratio {ratio:.1f}"
    run = longest_run(words, options.max_ngram)
    if run > options.max_repeats:
        return f"a phrase repeated {run} times in a row"
    if seconds > 0 and len(words) / seconds > options.max_words_per_second:
        return f"{len(words) / seconds:.1f} words per second"
    return None


def words_agree(a: Sequence[str], b: Sequence[str]) -> float:
    """How alike two decodings' normalised words are, 0 to 1 (difflib's ratio: twice the words
    they share in order over the words of both)."""
    if not a and not b:
        return 1.0
    return SequenceMatcher(None, list(a), list(b), autojunk=False).ratio()


def is_silence_phrase(text: str) -> bool:
    """True for Whisper's stock phrases over silence ("Thank you.", "Thanks for watching!");
    text with no word at all ("♪", "...") counts too."""
    words = normalize_words(text)
    return not any(any(c.isalnum() for c in w) for w in words) or " ".join(words) in SILENCE_PHRASES


def collapse_repeats(texts: Sequence[str], keep: int = 2) -> list[bool]:
    """Which of ``texts`` (segments in order) to keep: a segment whose normalised text equals
    the ``keep`` segments before it is dropped (a loop the re-decoding did not cure)."""
    keys = [" ".join(normalize_words(t)) for t in texts]
    kept: list[bool] = []
    run = 0
    for i, key in enumerate(keys):
        run = run + 1 if i and key and key == keys[i - 1] else 1
        kept.append(run <= keep)
    return kept
