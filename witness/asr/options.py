"""How whisper.cpp decodes: ``WhisperOptions``. Kept free of heavy imports (numpy,
whisper.cpp, the model store) because the configuration, and so every command, loads it."""

from __future__ import annotations

import os
from dataclasses import dataclass

from witness.schema import ANY, COUNT, Allowed, violation

TIMESTAMP_MODES = ("token", "dtw")
MAX_DECODERS = 8  # whisper.cpp's WHISPER_MAX_DECODERS: beams or candidates per window
FALLBACKS = ("on-failure", "whisper.cpp")
WINDOW_SECONDS = 30.0  # Whisper's decoding window
AUTO_DECODERS = 2  # ``decoders`` 0: one per thread, at most this many copies of the model


@dataclass(frozen=True)
class WhisperOptions:
    """How to decode. Defaults follow whisper.cpp's, except where noted.

    language: ISO code, or "auto" to detect it (English-only models always use "en").
    initial_prompt: text that conditions the first window (names, spelling).
    threads: CPU threads; 0 means min(4, CPU count).
    beam_size: 1 = greedy (whisper.cpp's default); > 1 = beam search of that width.
    best_of: candidates sampled at each fallback temperature (greedy only): 1, where
        whisper.cpp has 5 (with ``fallback`` "on-failure" the first that passes is kept).
    temperature, temperature_increment: start at 0.0 and retry a piece at +0.2 up to 1.0
        when it fails (``fallback``); an increment of 0 retries only loops (at +0.2).
    no_speech_threshold 0.6, logprob_threshold -1.0: a window whose no-speech probability is
        above 0.6 and whose mean token log-probability is below -1.0 is skipped as silence.
    entropy_threshold 2.4: a window whose token entropy is below this is a repetition loop
        and is decoded again hotter.
    suppress_blank: never start with a blank. suppress_non_speech_tokens: whisper.cpp's
        suppress_nst, off: with it on, tiny.en wrote "." for faint noise and "♪♪" for tones,
        while with it off Whisper marks them ("[BLANK_AUDIO]"), which we drop.
    condition_on_previous_text: feed each piece the text decoded before it (off: with it,
        tiny.en on the sample call tiled to 3 minutes went from 16.7% to 30.2% WER, on the
        call with hold music from 18.8% to 22.2%, with loops to re-decode in 4 of 10 pieces
        instead of none, and twice the time; the single call was 17.3% either way;
        scripts/asr_long.py --variants gated context).
    max_initial_timestamp: latest first timestamp of a window, seconds (1.0).
    timestamps: "dtw" (default) or "token". On the sample call, word edges against the human
        utterance edges were off by 0.18 s (start) / 0.11 s (end) on average (median 0.09 s /
        0.10 s) with DTW and by 0.34 s / 0.36 s with whisper.cpp's token timestamps. Token
        timestamps (flash attention back on) save about a fifth of the CPU time, but their words
        land a median 0.15 s / 0.18 s (start / end; 90th percentile 0.47 s) from DTW's, mostly
        early, and the more so the longer the segment has run (scripts/token_times.py, ten v2
        tune calls). Witness puts them ``words.TOKEN_LAG`` (0.10 s) later: 0.12 / 0.13 s from
        DTW's. Still more words land on the wrong speaker (scripts/end_to_end.py, each digit a
        word / digit runs joined, token against DTW): devcall_02 3.68% / 1.91% against 2.11% /
        0.64%, devcall_03 1.82% / 3.73% against 2.27% / 2.50%, devcall_04 1.66% against 0%
        (issue 24); no correction tried (shifts, snapping to Silero's speech edges, spreading
        by letters, a stretch with the time into the segment) brought every call under 3%.
    without_timestamps: decode without Whisper's segment timestamp tokens (off). Word times
        then come from DTW or token probabilities alone, and the audio goes to whisper.cpp
        in pieces of at most 30 s cut at quiet moments (one decoding window each), so a
        window can never be re-decoded after a mispredicted timestamp. Before the speech
        gate it took base from 53% to 21% WER on the sample call; gated, base with
        timestamps is at 17% and tiny.en at 17% either way.
    keep_annotations: keep "[BLANK_AUDIO]", "(music)" and the like as words (off).
    speech_gate: decode only what Silero VAD calls speech, packed into pieces of at most
        30 s (on). Off: the whole file in pieces of ``chunk_seconds``.
    redecode_loops: a piece whose text looks like a loop (``guards.LoopOptions``) is decoded
        again at rising temperatures, as whisper's reference decoder does (on).
    fallback: who decides that a piece is decoded again. "on-failure" (the default): whisper.cpp
        decodes at one temperature per call, and a piece whose text loops (``redecode_loops``)
        is decoded again one candidate (``best_of``) at a time at each hotter temperature
        until one does not, unless the first hotter one says nearly the same words (a
        repetition that is in the audio: ``guards.LoopOptions.said_again``). "whisper.cpp": its own fallback inside each call, as before: a
        window whose best candidate has token entropy under ``entropy_threshold`` or mean
        log-probability under ``logprob_threshold`` is decoded again at each hotter
        temperature, ``best_of`` candidates each. Its entropy check fires on digit strings
        ("five three four four seven nine six" is few distinct tokens) and the hot candidates
        it keeps garble them ("3.593.10759...", issue 24). On the dev calls and the sample
        call joined it took 52.7 CPU s for 11.2% WER (each digit a word) against 44.2 s and
        10.0%; file by file, 9.19% against 9.08% (scripts/asr_speed.py).
    one_window: one encoder run per speech piece (on). whisper.cpp encodes a second 30 s window
        for the 1-5 s of a piece that its first window's text left (a segment opened and not
        closed); instead the pieces' rests are laid end to end and decoded together
        (``windows``), a second apart. On the 30-minute corpus call: 87 encoder runs -> 80, WER
        22.67% -> 22.61% (each digit a word); no piece of the dev calls leaves a rest (issue 24).
    redecode_gaps: decode again, alone and once, each stretch of a decoded piece that holds at
        least 2.5 s of what the VAD calls speech and no word (``gaps``), a second time for what
        those words leave; kept when its text is no loop and not only Whisper's silence phrases
        (on). whisper.cpp skips speech it hears: on a v2 corpus call tiny.en-q8_0 closed a 24 s
        piece's first segment with a timestamp 22 s on and wrote nothing of five sentences.
        Needs the speech gate.
    chunk_seconds: without the speech gate, the longest piece handed to whisper.cpp at once
        (600 s): bounds its memory.
    decoders: pieces decoded at once on the CPU, each by its own whisper.cpp context (a copy
        of the model and its buffers: with DTW the ASR worker's peak went from 344 to 609 MiB
        for tiny.en, 478 to 843 MiB for base) on an even share of ``threads``; 0: one per
        thread, up to 2. One on a GPU, and with ``condition_on_previous_text``. whisper.cpp's decoder
        gains nothing from a second thread (its threads meet at every step of every token), its
        encoder nearly twice: on 2 cores, two 1-thread decoders took 16-17 s of wall time and
        30 CPU s where one 2-thread decoder took 23-26 s and 35 (scripts/asr_speed.py).
    use_gpu, gpu_device: use a GPU backend when the build has one (on), and which.
    flash_attention: on, unless timestamps is "dtw" (whisper.cpp cannot do DTW with it).
    """

    language: str = "auto"
    initial_prompt: str = ""
    threads: int = 0
    beam_size: int = 1
    best_of: int = 1
    temperature: float = 0.0
    temperature_increment: float = 0.2
    no_speech_threshold: float = 0.6
    logprob_threshold: float = -1.0
    entropy_threshold: float = 2.4
    suppress_blank: bool = True
    suppress_non_speech_tokens: bool = False
    condition_on_previous_text: bool = False
    max_initial_timestamp: float = 1.0
    timestamps: str = "dtw"
    without_timestamps: bool = False
    keep_annotations: bool = False
    speech_gate: bool = True
    redecode_loops: bool = True
    fallback: str = "on-failure"
    one_window: bool = True
    redecode_gaps: bool = True
    chunk_seconds: float = 600.0
    decoders: int = 0
    use_gpu: bool = True
    gpu_device: int = 0
    flash_attention: bool = True

    def __post_init__(self) -> None:
        wrong = violation(self, WHISPER_RULES)
        if wrong:
            raise ValueError(wrong)

    @property
    def effective_flash_attention(self) -> bool:
        return self.flash_attention and self.timestamps != "dtw"

    @property
    def effective_chunk_seconds(self) -> float:
        """Longest piece per whisper_full call: one 30 s window when decoding without timestamps."""
        return WINDOW_SECONDS if self.without_timestamps else self.chunk_seconds

    @property
    def effective_threads(self) -> int:
        return self.threads or min(4, os.cpu_count() or 1)

    @property
    def effective_decoders(self) -> int:
        """Pieces decoded at once on the CPU (before ``WhisperEngine`` caps it by the pieces there are)."""
        return min(self.decoders or AUTO_DECODERS, self.effective_threads)


# What each [whisper] setting may hold (config.SCHEMA's "whisper" section).
WHISPER_RULES: dict[str, Allowed] = {
    "language": Allowed(pattern=r"auto|[a-z]{2,3}", means='"auto" or a language code such as en, de, fr'),
    "initial_prompt": ANY, "threads": COUNT,
    "beam_size": Allowed(low=1, high=MAX_DECODERS), "best_of": Allowed(low=1, high=MAX_DECODERS),
    "temperature": Allowed(low=0, high=1), "temperature_increment": Allowed(low=0, high=1),
    "no_speech_threshold": Allowed(low=0, high=1), "logprob_threshold": Allowed(high=0),
    "entropy_threshold": Allowed(low=0), "suppress_blank": ANY, "suppress_non_speech_tokens": ANY,
    "condition_on_previous_text": ANY, "max_initial_timestamp": Allowed(low=0, high=30),
    "timestamps": Allowed(choices=TIMESTAMP_MODES), "without_timestamps": ANY, "keep_annotations": ANY,
    "speech_gate": ANY, "redecode_loops": ANY, "fallback": Allowed(choices=FALLBACKS), "one_window": ANY,
    "redecode_gaps": ANY,
    "chunk_seconds": Allowed(low=30, unset=True), "decoders": COUNT, "use_gpu": ANY, "gpu_device": COUNT, "flash_attention": ANY,
}
