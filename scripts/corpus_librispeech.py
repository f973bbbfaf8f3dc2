"""The speech of corpus v2 (``make_corpus --version v2``): LibriSpeech recordings in
LibriSpeech's own layout, with their HUMAN transcripts and several recordings per speaker.

A source folder holds, anywhere below it, ``LibriSpeech/SPEAKERS.TXT`` and
``LibriSpeech/<subset>/<speaker>/<chapter>/<speaker>-<chapter>-<n>.{flac,wav,mp3}`` with
``<speaker>-<chapter>.trans.txt`` beside. The one used (``SOURCE``): the 20 dev-clean speakers
(10 F, 10 M; 1313 utterances, 2.5 h, 36-101 utterances each) that
felixbastian/Speaker_partition_module keeps in ``data/LibriSpeech`` as 40 kb/s MP3 (in files
named .wav). LibriSpeech is CC BY 4.0 (openslr.org/12); sexes come from its SPEAKERS.TXT.

    git clone https://github.com/felixbastian/Speaker_partition_module /work/corpus-src/Speaker_partition_module

More readers with human transcripts were looked for (2026-11-28); none could be brought here.
Ironmomo/SpeakerVerificationBA (commit 2dd9e41) holds all 40 dev-clean readers' ``trans.txt``
and SPEAKERS.TXT, but its FLACs are Git LFS pointers. shamoons/pytorch-lstm-audio lists
dev-clean FLACs under ``data/dev-clean`` (the 20 readers v2 lacks would pair with those
transcripts), but its 670 MB snapshot is over the 500 MiB the fetch tool brings (content
unchecked). Path searches found no test-clean, dev-other, test-other, LibriTTS, VCTK or CMU
ARCTIC copy.

A second search (2026-11-28, issue 22: >= 6 new readers with >= 3 min each wanted) found none:
dev-clean + test-clean as WAV with trans.txt in RomansWorks/AIND-VUI-Capstone-DS (Git LFS pointers)
and Sparsha-M/Speech-Recognition (1.8 GB snapshot, over the limit); VCTK (CC BY 4.0) only as one
reader, p239 (503 utterances, 26 min, txt beside) in avgaydashenko/speech-recognition-hw commit
68ae136, 12 utterances in LounesAl/WaveNet, 4 readers x 10 without text in auspicious3000/autovc;
no CMU ARCTIC or LibriTTS speaker folder (paths, prompt files and READMEs searched;
nithinyanna10/accent-rvc-mvp stores only the README of its ARCTIC and L2-ARCTIC (CC BY-NC)
folders); Jakobovski/free-spoken-digit-dataset (CC BY-SA 4.0) has 6 readers of 175-287 s, but
isolated digits at 8 kHz, not the shape of a call; Earnings-21/22 (real calls) in
revdotcom/speech-datasets are LFS pointers or files over 4 MiB. Neither the PyPI list nor apt-cache
names a package that ships such speech.

Each recording is cut into pieces at its pauses, and each piece's text is the human words it
holds. Where those words fall in time comes from Whisper tiny.en's timed words matched to the
human transcript (difflib): a pause becomes a cut only where the human words on both sides of
it are matched and lie on their own side; elsewhere the stretches stay one piece, so a piece's
text is never a guess. Single matched words with quiet on both sides are the short words for
backchannels and rapid exchanges, only words such as "yes", "no", "well", "oh", "right" (``SHORT``;
read speech has no "mm-hm").
Whisper's words are made and cached as for v1 (``corpus_sources.WHISPER``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict
from pathlib import Path

import numpy as np

from scripts.corpus_sources import (BACKCHANNELS, Piece, _key, short_words, speaker_prints, speech_regions,
                                    whisper_words)
from witness.audio import SAMPLE_RATE, load_audio
from witness.transcript import Word

SOURCE = "felixbastian/Speaker_partition_module data/LibriSpeech (LibriSpeech dev-clean, 20 speakers, MP3 40 kb/s)"
TRANSCRIPT = ("LibriSpeech's human transcript; each piece holds the human words between its cuts (cuts only "
              "at pauses that Whisper tiny.en's words matched to the transcript confirm)")
PAD = 800  # 50 ms of room each side of a piece's speech
SLACK = 0.15  # seconds a matched word's edge may reach into the pause it is cut at
MIN_MATCHED = 0.5  # below this share of matched words a recording stays whole
_ID = re.compile(r"^(\d+)-(\d+)-(\d+)$")
# the words that may stand alone as a backchannel or a rapid turn (read speech has no "mm-hm")
SHORT = BACKCHANNELS | {"aye", "eh", "hey", "hello", "really", "quite", "exactly", "certainly", "ha", "nay", "thanks",
                        "please", "alas", "hush", "ay", "oho", "ahem"}


def source_files(root: Path) -> list[Path]:
    files = sorted(f for f in root.glob("**/LibriSpeech/*/*/*/*") if _ID.match(f.stem)
                   and f.suffix.lower() in (".flac", ".wav", ".mp3"))
    if not files:
        raise SystemExit(f"{root}: no LibriSpeech/<subset>/<speaker>/<chapter>/ recordings below it")
    return files


def transcripts(files: list[Path]) -> dict[Path, str]:
    """Each recording's human transcript, from the chapter's .trans.txt."""
    text: dict[str, str] = {}
    for trans in sorted({f.parent / f"{f.parent.parent.name}-{f.parent.name}.trans.txt" for f in files}):
        for line in trans.read_text().splitlines():
            if line.strip():
                utt, _, said = line.strip().partition(" ")
                text[utt] = said
    missing = [f for f in files if f.stem not in text]
    if missing:
        raise SystemExit(f"{missing[0]}: no line for it in its chapter's .trans.txt")
    return {f: text[f.stem] for f in files}


def speaker_table(files: list[Path]) -> dict[str, dict]:
    """SPEAKERS.TXT of each LibriSpeech folder: speaker id -> sex, subset, reader's name."""
    table = {}
    for listing in sorted({f.parents[3] / "SPEAKERS.TXT" for f in files}):
        for line in listing.read_text().splitlines():
            cells = [c.strip() for c in line.split("|")]
            if line.startswith(";") or len(cells) < 5:
                continue
            table[cells[0]] = {"sex": cells[1], "subset": cells[2], "name": cells[4]}
    return table


def _speaker(path: Path) -> str:
    return "ls" + path.stem.split("-")[0]


def licence(path: Path, table: dict[str, dict]) -> str:
    spk = path.stem.split("-")[0]
    row = table.get(spk, {})
    return (f"LibriSpeech {row.get('subset', path.parents[2].name)} {path.stem}, read by {row.get('name', spk)} "
            f"(LibriVox, public domain); LibriSpeech (openslr.org/12) is CC BY 4.0")


def _norm(word: str) -> str:
    return re.sub(r"[^a-z0-9']", "", word.lower())


def align(human: list[str], heard: list[Word]) -> list[Word | None]:
    """For each human word, Whisper's timed word it matches (same spelling, in order), or None."""
    out: list[Word | None] = [None] * len(human)
    matcher = difflib.SequenceMatcher(None, [_norm(w) for w in human], [_norm(w.text) for w in heard], autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            out[block.a + k] = heard[block.b + k]
    return out


def cuts(regions: list[tuple[int, int]], timed: list[Word | None]) -> list[tuple[int, int]]:
    """The sure cuts: (index of the last region before the pause, number of human words before
    it), where the matched words next to each other straddle that pause."""
    matched = [(i, w) for i, w in enumerate(timed) if w is not None]
    found = []
    for k in range(len(regions) - 1):
        gap_a, gap_b = regions[k][1] / SAMPLE_RATE, regions[k + 1][0] / SAMPLE_RATE
        mid = (gap_a + gap_b) / 2
        before = [(i, w) for i, w in matched if (w.start + w.end) / 2 < mid]
        after = [(i, w) for i, w in matched if (w.start + w.end) / 2 >= mid]
        if before and after and after[0][0] == before[-1][0] + 1 \
                and before[-1][1].end <= gap_a + SLACK and after[0][1].start >= gap_b - SLACK:
            found.append((k, after[0][0]))
    return found


def pieces_of(rel: str, speaker: str, samples: np.ndarray, text: str, heard: list[Word]) -> list[Piece]:
    """One recording's pieces (cut at sure pauses; whole when too few words match) and its
    short words."""
    human = text.split()
    timed = align(human, heard)
    regions = speech_regions(samples)
    if not regions:
        return []
    sure = cuts(regions, timed) if sum(w is not None for w in timed) >= MIN_MATCHED * len(human) else []
    out, first_region, first_word = [], 0, 0
    for k, words_before in sure + [(len(regions) - 1, len(human))]:
        lo = max(0, regions[first_region][0] - PAD)
        hi = min(len(samples), regions[k][1] + PAD)
        inner = speech_regions(samples[lo:hi], 0.15)
        said = human[first_word:words_before]
        if said and inner:
            out.append(Piece(rel, speaker, lo, hi, " ".join(said), len(said), inner, False))
        first_region, first_word = k + 1, words_before
    singles = [Word(w.start, w.end, h) for h, w in zip(human, timed) if w is not None and _norm(h) in SHORT]
    return out + short_words(rel, speaker, samples, singles)


def transcribe_pieces(root: Path, cache: Path, workers: int = 2) -> list[dict]:
    """Every recording's pieces with the human words and their licence."""
    files = source_files(root)
    text, table = transcripts(files), speaker_table(files)
    heard = whisper_words(files, cache, workers)
    pieces = []
    for f in files:
        for p in pieces_of(str(f.relative_to(root)), _speaker(f), load_audio(f).samples, text[f], heard[f]):
            pieces.append({**asdict(p), "licence": licence(f, table)})
    return pieces


def voice_prints(root: Path, cache: Path, seconds: float = 6.0) -> tuple[dict, np.ndarray]:
    """Per speaker: sex (SPEAKERS.TXT), median F0, seconds of speech, recordings, subset; and
    the CAM++ centroid of the first ``seconds`` of each recording (sorted speaker order; cached)."""
    files = source_files(root)
    table = speaker_table(files)

    def describe(speaker: str, found: dict) -> dict:
        row = table[speaker[2:]]
        return {"sex": row["sex"], "f0": round(float(np.nanmedian(found["f0"])), 1), "seconds": round(found["seconds"], 2),
                "recordings": len(found["files"]), "subset": row["subset"],
                "licence": f"LibriSpeech {row['subset']}, read by {row['name']}; CC BY 4.0"}

    return speaker_prints(files, cache, f"speakers-v2-{_key(files, root)}", _speaker, describe, seconds)
