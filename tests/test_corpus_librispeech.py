"""Corpus v2's source (scripts/corpus_librispeech.py): human words matched to Whisper's timed
words, cuts only at pauses the matched words confirm, and the LibriSpeech layout read back."""

import numpy as np

from scripts import corpus_librispeech as c
from witness.audio import SAMPLE_RATE, write_wav
from witness.transcript import Word


def _bursts(spans: list[tuple[float, float]], total: float) -> np.ndarray:
    """A recording: a 220 Hz tone over each span, quiet (-80 dB noise) elsewhere."""
    rng = np.random.default_rng(0)
    samples = rng.normal(0, 1e-4, int(total * SAMPLE_RATE)).astype(np.float32)
    for a, b in spans:
        t = np.arange(int(a * SAMPLE_RATE), int(b * SAMPLE_RATE))
        samples[t] += 0.3 * np.sin(2 * np.pi * 220 * t / SAMPLE_RATE)
    return samples


def test_align_matches_same_spelling_in_order():
    heard = [Word(0.1, 0.3, " Mr."), Word(0.3, 0.6, " Quilter's"), Word(0.6, 0.9, " manner.")]
    timed = c.align("MISTER QUILTER'S MANNER".split(), heard)
    assert timed[0] is None and timed[1] is heard[1] and timed[2] is heard[2]


def test_cut_only_where_both_neighbours_are_matched():
    # three stretches of speech, 0.5 s pauses at 1.0-1.5 s and 2.5-3.0 s
    samples = _bursts([(0.2, 1.0), (1.5, 2.5), (3.0, 3.8)], 4.2)
    text = "ONE TWO THREE FOUR FIVE SIX"
    heard = [Word(0.2, 0.6, "one"), Word(0.6, 1.0, "two"),      # first stretch
             Word(1.5, 2.0, "three"), Word(2.0, 2.5, "for"),    # "FOUR" misheard just before the 2nd pause
             Word(3.0, 3.4, "five"), Word(3.4, 3.8, "six")]
    pieces = [p for p in c.pieces_of("x.flac", "ls1", samples, text, heard) if not p.short_word]
    # the first pause is sure (TWO | THREE matched on their sides); the second is not
    assert [p.text for p in pieces] == ["ONE TWO", "THREE FOUR FIVE SIX"]
    assert pieces[0].end / SAMPLE_RATE < 1.5 and pieces[1].start / SAMPLE_RATE > 1.0
    assert sum(p.word_count for p in pieces) == 6


def test_too_few_matches_keep_the_recording_whole():
    samples = _bursts([(0.2, 1.0), (1.5, 2.5)], 3.0)
    heard = [Word(0.2, 1.0, "something"), Word(1.5, 2.5, "else")]
    pieces = c.pieces_of("x.flac", "ls1", samples, "NOTHING LIKE IT", heard)
    assert [p.text for p in pieces] == ["NOTHING LIKE IT"]


def test_short_words_are_backchannel_like_words_with_quiet_around():
    samples = _bursts([(0.5, 0.8), (1.6, 2.6)], 3.0)
    heard = [Word(0.5, 0.8, "Yes."), Word(1.6, 2.1, "quite"), Word(2.1, 2.6, "so")]
    shorts = [p for p in c.pieces_of("x.flac", "ls1", samples, "YES QUITE SO", heard) if p.short_word]
    assert [p.text for p in shorts] == ["YES"]


def test_librispeech_layout(tmp_path):
    root = tmp_path / "data" / "LibriSpeech"
    chapter = root / "dev-clean" / "84" / "121123"
    chapter.mkdir(parents=True)
    (root / "SPEAKERS.TXT").write_text(";ID  |SEX| SUBSET | MINUTES | NAME\n84   | F | dev-clean        | 8.02  | Christie Nowak\n")
    (chapter / "84-121123.trans.txt").write_text("84-121123-0000 GO DO YOU HEAR\n84-121123-0001 BUT IN LESS\n")
    for n in range(2):
        write_wav(chapter / f"84-121123-000{n}.wav", _bursts([(0.2, 0.9)], 1.0))
    files = c.source_files(tmp_path)
    assert [f.stem for f in files] == ["84-121123-0000", "84-121123-0001"]
    assert c.transcripts(files)[files[1]] == "BUT IN LESS"
    assert c.speaker_table(files)["84"] == {"sex": "F", "subset": "dev-clean", "name": "Christie Nowak"}
    assert "CC BY 4.0" in c.licence(files[0], c.speaker_table(files))
