"""Whisper through whisper.cpp (pywhispercpp's low-level bindings): audio in, words out.

``WhisperEngine(model).transcribe(audio)`` takes 16 kHz mono float32 samples and returns an
``AsrResult`` of words (start, end, text, probability) and segments. The engine loads the
model once and transcribes many files; build it inside a worker process from a path and a
``WhisperOptions`` (both picklable). The file is checked (``inspect_ggml``) before
whisper.cpp sees it: whisper.cpp trusts its input and can crash the process on a bad file.

Word times come from whisper.cpp's token timestamps, or with ``timestamps="dtw"`` from DTW
over the cross-attention of the model's alignment heads (a per-model preset). whisper.cpp
silently drops DTW when flash attention is on, so DTW turns flash attention off.
Only speech is decoded: Silero VAD finds it, and it goes to whisper.cpp in pieces of at most
30 s (``speech``), each with one encoder run: what whisper.cpp's first window leaves of a
piece is decoded with the other pieces' rests (``windows``); pieces that come out as loops
are decoded again hotter, Whisper's stock silence phrases are dropped where the VAD heard
none (``guards``), and speech that came back without words is decoded again alone (``gaps``).
On the CPU several pieces are decoded at once, each by its own whisper.cpp context on a
share of the threads (``WhisperOptions.decoders``); a piece that samples (decoded hotter) does so
on a context whose random generator has not drawn yet (``_undrawn``), so its words are the
same whichever decoder took it, in any run.
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from witness.asr.backend import AsrBackendInfo, backend_info
from witness.asr.cpplog import CPP_LOG, LOG_ERROR
from witness.asr.gaps import kept, redecode_gaps
from witness.asr.guards import LoopOptions, collapse_repeats, is_silence_phrase, longest_run, loop_reason, words_agree
from witness.asr.jobs import MIN_PIECE_SAMPLES, Candidate, Decoded, Job, ProgressTracker, Track
from witness.asr.options import WhisperOptions
from witness.asr.options import WINDOW_SECONDS
from witness.asr.speech import SpeechPiece, plan_pieces, speech_share, whole_file_pieces
from witness.asr.timings import StageClock, parse_print_timings
from witness.asr.windows import OneWindow, rest_jobs
from witness.asr.words import Piece, is_annotation, join_words, monotonic, token_spans
from witness.audio import SAMPLE_RATE
from witness.errors import InputError, ModelError
from witness.models.ggml import GgmlInfo, WhisperHparams, inspect_ggml
from witness.models.whisper_catalogue import WhisperModel
from witness.progress import Progress
from witness.textnorm import normalize_words
from witness.transcript import Word

if TYPE_CHECKING:
    from witness.channels import StereoCall

log = logging.getLogger(__name__)

VAD_WORKERS = 2  # threads that read Silero VAD's lanes (``vad.SileroVad``), at most whisper.cpp's


@dataclass(frozen=True)
class AsrSegment:
    """A stretch Whisper decoded as one piece of text, with its words."""

    start: float
    end: float
    text: str
    words: tuple[Word, ...] = ()


@dataclass
class DecodeStats:
    """What decoding one file took: pieces decoded, seconds of audio in them, pieces decoded
    again because they looked like loops, pieces made of the rests whisper.cpp left of others
    (``windows``), stretches of speech without words decoded again and those kept (``gaps``),
    segments dropped as silence phrases or repeats."""

    pieces: int = 0
    speech_seconds: float = 0.0
    redecoded: int = 0
    rests: int = 0
    gaps: int = 0
    gaps_filled: int = 0
    dropped_silence_phrases: int = 0
    dropped_repeats: int = 0


@dataclass(frozen=True)
class AsrInfo:
    """How a transcription was made: what a transcript records of it (its ``engines.asr``)."""

    model: str
    device: str  # "cpu", or "<ggml GPU backend>: <device>"
    backends: tuple[str, ...]  # ggml devices compiled in
    pywhispercpp: str
    timestamps: str  # "dtw" or "token"
    threads: int
    language: str
    stats: DecodeStats
    channels_decoded: int = 1  # 2: a stereo call's channels, each alone (``transcribe_call``)

    def to_dict(self) -> dict[str, Any]:
        return {"engine": "whisper.cpp", "model": self.model, "device": self.device, "backends": list(self.backends),
                "pywhispercpp": self.pywhispercpp, "timestamps": self.timestamps, "threads": self.threads,
                "language": self.language, "channels_decoded": self.channels_decoded, **asdict(self.stats)}


@dataclass(frozen=True)
class AsrResult:
    """A transcription: words in time order, their segments, and how they were made."""

    words: tuple[Word, ...]
    segments: tuple[AsrSegment, ...]
    language: str
    duration: float
    info: AsrInfo
    channels: tuple[int, ...] | None = None  # each word's channel, when a call's channels were decoded apart


def dtw_preset_name(model_name: str | None, hp: WhisperHparams) -> str:
    """whisper.cpp's alignment-head preset for a catalogue name, else guessed from the header."""
    if model_name:
        return WhisperModel(model_name).dtw_preset
    size = hp.size_name
    if size == "large":
        size = "large-v3" if hp.n_vocab >= 51866 else "large-v2"  # v1 and v2 share a header
    return WhisperModel(size if hp.multilingual or size.startswith("large") else size + ".en").dtw_preset


class WhisperEngine:
    """A loaded whisper.cpp model. ``close()`` (or ``with``) frees it. With ``vad_path`` (Silero
    VAD's ONNX file) and ``options.speech_gate``, only speech is decoded."""

    def __init__(self, model_path: str | Path, options: WhisperOptions = WhisperOptions(),
                 model_name: str | None = None, info: GgmlInfo | None = None, vad_path: str | Path | None = None):
        import _pywhispercpp as pw

        from witness.vad import SileroVad

        self._pw = pw
        self.options = options
        self.model_path = str(model_path)
        self.model_name = model_name
        self.info = info or inspect_ggml(model_path)
        # the VAD's lanes on two threads where there are two: the whole job waits for it (a 30-minute
        # call's 5.0 CPU s on one core became 6.4 on two, about 3.2 s of wall time, the same probabilities)
        workers = min(VAD_WORKERS, options.effective_threads)
        self._vad = SileroVad(vad_path, workers=workers) if vad_path is not None and options.speech_gate else None
        self.clock = StageClock()  # wall seconds per stage since load (or the last reset)
        self._contexts: list[Any] = []  # one per decoder: the first loaded now, more when a file needs them
        self._contexts.append(self._load())
        self._drawn: set[int] = set()  # decoders whose context's random generator has drawn (``_undrawn``)
        self._retired: dict[str, float] = {}  # whisper.cpp's counters of contexts replaced since the last reading
        self._reloading = threading.Lock()
        self.backend: AsrBackendInfo = backend_info(self.init_log)

    def _load(self) -> Any:
        """A new whisper.cpp context of the model (its own copy of the weights and buffers)."""
        pw, opts = self._pw, self.options
        params = pw.whisper_context_default_params()
        params.use_gpu = opts.use_gpu
        params.gpu_device = opts.gpu_device
        params.flash_attn = opts.effective_flash_attention
        if opts.timestamps == "dtw":
            params.dtw_token_timestamps = True
            params.dtw_aheads_preset = getattr(pw, dtw_preset_name(self.model_name, self.info.hparams))
            log.info("DTW timestamps on: flash attention turned off (whisper.cpp ignores DTW with it)")
        with CPP_LOG.capture() as lines:
            ctx = pw.whisper_init_from_file_with_params(self.model_path, params)
        errors = [text.strip() for level, text in lines if level == LOG_ERROR and text.strip()]
        if errors:
            raise ModelError(f"whisper.cpp could not load the model: {errors[-1]}", self.model_path)
        self.init_log = "".join(text for _, text in lines)
        return ctx

    def close(self) -> None:
        with CPP_LOG.capture():
            for ctx in self._contexts:
                self._pw.whisper_free(ctx)
        self._contexts = []

    def __enter__(self) -> "WhisperEngine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transcribe(self, audio: np.ndarray, progress: Progress | None = None) -> AsrResult:
        """Words and segments of ``audio``: (samples,) float32, 16 kHz mono.

        With the speech gate (the default) only what the VAD calls speech is decoded, in
        pieces of at most 30 s (``speech.plan_pieces``). A piece whose text looks like a loop
        is decoded again hotter; Whisper's stock silence phrases are dropped where the VAD
        heard no speech. ``progress`` gets ("transcribe", percent done, 100), never backwards.
        """
        samples = np.ascontiguousarray(audio, dtype=np.float32)
        if samples.ndim != 1:
            raise InputError(f"audio must be mono with shape (samples,), not {samples.shape}")
        with self.clock.stage("vad"):
            probs = self._vad.probabilities(samples) if self._vad is not None else None
        return self._transcribe([Track(samples, probs)], progress)

    def transcribe_call(self, call: StereoCall, progress: Progress | None = None) -> AsrResult:
        """Words of a stereo call with one party per channel, each channel decoded alone where
        its party holds the floor (``StereoCall.own_probabilities``), with the audio outside
        that party's own speech silenced so the other party's bleed is never transcribed;
        ``AsrResult.channels`` gives each word's channel (0 or 1). As ``transcribe`` otherwise."""
        tracks = [Track(call.channels[c], call.own_probabilities(c),
                        tuple((round(s * SAMPLE_RATE), round(e * SAMPLE_RATE)) for s, e in call.speech_regions(c)))
                  for c in (0, 1)]
        return self._transcribe(tracks, progress)

    def _transcribe(self, tracks: list[Track], progress: Progress | None) -> AsrResult:
        """Decode each track's speech (every track of one file: the same length)."""
        if not self._contexts:
            raise RuntimeError("this WhisperEngine is closed")
        with self.clock.stage("packing"):
            planned = [self._pieces(track) for track in tracks]
        stats = DecodeStats(pieces=sum(map(len, planned)),
                            speech_seconds=sum(p.samples for pieces in planned for p in pieces) / SAMPLE_RATE)
        jobs = [Job(k, piece, piece.audio(track.signal, track.own), first=i == 0)
                for k, (track, pieces) in enumerate(zip(tracks, planned))
                for i, piece in enumerate(p for p in pieces if p.samples >= MIN_PIECE_SAMPLES)]
        tracker = ProgressTracker(progress, sum(job.piece.samples for job in jobs))
        decoded, language = self._decode_all(jobs, self._language(), tracker)
        rests = rest_jobs(tracks, jobs, decoded)
        decoded += self._decode_all(rests, language, ProgressTracker(None, 1))[0]
        gaps = self._redecode_gaps(tracks, jobs, jobs + rests, decoded, language) if self.options.redecode_gaps else []
        tracker.done()
        per_track: list[list[AsrSegment]] = [[] for _ in tracks]
        for job, (segments, redecoded, _) in zip(jobs + rests + gaps, decoded):
            per_track[job.track].extend(segments)
            stats.redecoded += redecoded
            stats.gaps_filled += job.speech_gap and bool(segments)
        stats.rests, stats.gaps = len(rests), len(gaps)
        per_track = [self._guarded(sorted(segments, key=lambda s: (s.start, s.end)), track.probabilities, stats)
                     for track, segments in zip(tracks, per_track)]
        return self._result(per_track, language, len(tracks[0].signal) / SAMPLE_RATE, stats)

    def _decode_all(self, jobs: list[Job], language: str,
                    tracker: ProgressTracker) -> tuple[list[Decoded], str]:
        """Each job's segments, whether it was decoded again and its undecoded rest (``_decode``),
        in job order, and the language (with "auto", the one whisper.cpp detects in the first
        piece, which is decoded alone). The others are decoded ``_decoders`` at a time, each on a
        context of its own."""
        out = []
        if jobs and language in ("", "auto"):
            (slot, threads), = self._decoder_contexts(1)
            out.append(self._decode(slot, threads, jobs[0], language, tracker.for_piece(0, jobs[0].piece.samples)))
            language = self._pw.whisper_lang_str(self._pw.whisper_full_lang_id(self._contexts[slot]))
        rest = list(enumerate(jobs))[len(out):]
        free: queue.SimpleQueue = queue.SimpleQueue()
        for context in self._decoder_contexts(self._decoders(len(rest))):
            free.put(context)

        def decode(indexed: tuple[int, Job]) -> Decoded:
            index, job = indexed
            slot, threads = free.get()
            try:
                decode = self._decode_gap if job.speech_gap else self._decode
                return decode(slot, threads, job, language, tracker.for_piece(index, job.piece.samples))
            finally:
                free.put((slot, threads))

        if free.qsize() == 1:
            return out + [decode(indexed) for indexed in rest], language
        with ThreadPoolExecutor(free.qsize(), thread_name_prefix="whisper") as pool:
            return out + list(pool.map(decode, rest)), language

    def _redecode_gaps(self, tracks: list[Track], pieces: list[Job], jobs: list[Job], decoded: list[Decoded],
                       language: str) -> list[Job]:
        """The ``gaps`` pass over the stretches of ``pieces`` that decoding ``jobs`` (pieces,
        rests) left without words: its jobs, their decodings appended to ``decoded``."""
        return redecode_gaps(tracks, pieces, jobs, decoded,
                             lambda gaps: self._decode_all(gaps, language, ProgressTracker(None, 1))[0])

    def _decoders(self, jobs: int) -> int:
        """How many pieces to decode at once (``WhisperOptions.decoders``): one on a GPU, or
        when each piece is to see the text before it."""
        o = self.options
        if self.backend.gpu_backend or o.condition_on_previous_text:
            return 1
        return max(1, min(o.effective_decoders, o.effective_threads, jobs))

    def _decoder_contexts(self, n: int) -> list[tuple[int, int]]:
        """``n`` decoders, each (its context's index in ``_contexts``, its share of the threads),
        loading any missing context."""
        while len(self._contexts) < n:
            self._contexts.append(self._load())
        threads = self.options.effective_threads
        return [(i, threads // n + (i < threads % n)) for i in range(n)]

    def _samples(self, temperature: float) -> bool:
        """Whether a whisper_full call at ``temperature`` may draw from the context's random
        generator: above 0, in a beam search (whisper.cpp samples its beams' candidates), or
        with whisper.cpp's own fallback (hotter windows inside the call)."""
        o = self.options
        return temperature > 0 or o.beam_size > 1 or (o.fallback == "whisper.cpp" and o.temperature_increment > 0)

    def _undrawn(self, slot: int) -> Any:
        """Decoder ``slot``'s context, replaced by a freshly loaded one if its random generator has
        drawn before; it has from now on. whisper.cpp seeds its first decoder's generator once, when
        the context is made, and draws from it in every sampling call, so a piece's hotter words
        would depend on every piece sampled on that context before it, and with two decoders, on
        which one took which piece (timing): v2 check_012 came out at 75.5% and 76.3% WER. The
        bindings expose no state or seed, so a fresh context (0.3 CPU s) is the only reset. Called
        once per piece, before its first sampling pass: a piece's words are the same in any run."""
        if slot in self._drawn:
            with self._reloading:  # one at a time: two decoders may need a fresh context at once
                old = self._contexts[slot]
                with CPP_LOG.capture() as lines:
                    self._pw.whisper_print_timings(old)
                    self._pw.whisper_free(old)
                for key, value in parse_print_timings("".join(t for _, t in lines)).items():
                    self._retired[key] = self._retired.get(key, 0) + value
                self._contexts[slot] = self._load()
        self._drawn.add(slot)
        return self._contexts[slot]

    def _pieces(self, track: Track) -> list[SpeechPiece]:
        if track.probabilities is not None:
            return plan_pieces(track.probabilities, len(track.signal))
        return whole_file_pieces(track.signal, self.options.effective_chunk_seconds)

    def _decode(self, slot: int, threads: int, job: Job, language: str,
                progress: Callable[[int], None] | None) -> Decoded:
        """Segments of one piece (file times), whether it had to be decoded again, and the
        rest of the piece its decoding left (``windows.OneWindow``: with ``job.one_window``,
        each pass ends before a second encoder run), on decoder ``slot``'s context with ``threads``
        threads (a fresh one from the first pass that samples, ``_undrawn``).

        The piece is decoded at the start temperature; a text that looks like a loop
        (``guards.loop_reason``: gzip ratio, repeats, words per second) is decoded again at each
        fallback temperature until one does not, which is kept; if none passes, the least
        repetitive is. When the first hotter pass says nearly the same words as the greedy one
        (``LoopOptions.said_again``), the repetition is in the audio and the ladder stops there:
        on the 30-minute corpus call two such pieces went through all six temperatures only to
        keep the greedy words (14% of the ASR time). A low mean log-probability is no reason
        here: whisper.cpp takes a hot candidate's from the temperature-scaled distribution
        (T = 0.4 looks surer than T = 0), and retrying on it made a noisy corpus call worse
        (scripts/asr_speed.py --each)."""
        o, piece = self.options, job.piece
        tried: list[Candidate] = []
        ctx, sampled = self._contexts[slot], False
        for k, temperature in enumerate([o.temperature, *self._fallback_temperatures()]):
            if self._samples(temperature) and not sampled:
                ctx, sampled = self._undrawn(slot), True
            params = self._full_params(language, o.initial_prompt if job.first and k == 0 else "", temperature,
                                       fresh=job.first or k > 0, threads=threads)
            guard = job.one_window and o.one_window and not o.condition_on_previous_text \
                and piece.samples <= WINDOW_SECONDS * SAMPLE_RATE
            window = OneWindow(piece.samples, progress if k == 0 else None, guard)
            window.arm(params)
            self._run(ctx, job.audio, params, stage="first pass" if k == 0 else f"fallback T={temperature:g}")
            tried.append(self._candidate(ctx, piece, window, k))
            if tried[-1].failure is None:
                return tried[-1].decoded(piece, k > 0)
            if k == 1 and words_agree(tried[0].words, tried[1].words) >= LoopOptions.said_again:
                log.info("piece at %.1f s, T=%g: %s in the greedy pass's words again: said so; no hotter pass",
                         piece.to_file(0.0), temperature, tried[-1].failure)
                break
            log.info("piece at %.1f s, T=%g: %s; decoding it again hotter",
                     piece.to_file(0.0), temperature, tried[-1].failure)
        return min(tried, key=Candidate.rank).decoded(piece, True)

    def _decode_gap(self, slot: int, threads: int, job: Job, language: str,
                    progress: Callable[[int], None] | None) -> Decoded:
        """A stretch of speech left without words (``gaps``), decoded once, greedy, in a window of
        its own (no progress: after the pieces' 100%), on decoder ``slot``'s context."""
        temperature = self.options.temperature
        ctx = self._undrawn(slot) if self._samples(temperature) else self._contexts[slot]
        params = self._full_params(language, "", temperature, fresh=True, threads=threads)
        window = OneWindow(job.piece.samples, guard=False)  # refuses only a window too short for DTW
        window.arm(params)
        self._run(ctx, job.audio, params, stage="gap")
        return kept(self._candidate(ctx, job.piece, window, 0), job.piece)

    def _candidate(self, ctx: Any, piece: SpeechPiece, window: OneWindow, attempt: int) -> Candidate:
        """The last whisper_full call's result on ``piece`` (its ``attempt``-th pass, guarded by
        ``window``), measured over the audio it decoded."""
        segments = self._segments(ctx, piece)
        n = self._pw.whisper_full_n_segments(ctx)
        rest = window.rest(self._pw.whisper_full_get_segment_t1(ctx, n - 1) if n else None)
        text = " ".join(s.text for s in segments)
        seconds = (piece.samples if rest is None else max(rest, MIN_PIECE_SAMPLES)) / SAMPLE_RATE
        loop = loop_reason(text, seconds) if self.options.redecode_loops else None
        words = tuple(normalize_words(text))
        return Candidate(segments, loop, longest_run(words, LoopOptions.max_ngram), attempt, words, rest)

    def _fallback_temperatures(self) -> list[float]:
        o = self.options
        step = o.temperature_increment or 0.2
        return [round(o.temperature + step * k, 3) for k in range(1, int((1.0 - o.temperature) / step + 1e-6) + 1)]

    def _guarded(self, segments: list[AsrSegment], probs: np.ndarray | None, stats: DecodeStats) -> list[AsrSegment]:
        """Segments less Whisper's stock silence phrases where the VAD heard no speech, and
        less a third (or later) copy in a row of the same text."""
        kept = [s for s in segments
                if probs is None or not is_silence_phrase(s.text) or speech_share(probs, s.start, s.end) >= 0.5]
        stats.dropped_silence_phrases += len(segments) - len(kept)
        keep = collapse_repeats([s.text for s in kept])
        stats.dropped_repeats += keep.count(False)
        return [s for s, k in zip(kept, keep) if k]

    def _language(self) -> str:
        wanted = self.options.language
        if not self.info.hparams.multilingual:
            if wanted not in (None, "en", "auto"):
                log.warning("model %s is English-only: language %r ignored",
                            self.model_name or Path(self.model_path).name, wanted)
            return "en"
        if wanted in (None, "auto"):
            return "auto"
        with CPP_LOG.capture():  # whisper.cpp logs an unknown code as an error
            known = self._pw.whisper_lang_id(wanted) >= 0
        if not known:
            raise InputError(f"unknown language code {wanted!r} (use an ISO 639-1 code such as en, de, fr)")
        return wanted

    def _run(self, ctx: Any, part: np.ndarray, params: Any, stage: str) -> None:
        with CPP_LOG.capture() as lines, self.clock.stage(stage):
            rc = self._pw.whisper_full(ctx, params, part, len(part))
        if rc != 0:
            errors = [t.strip() for level, t in lines if level == LOG_ERROR]
            raise ModelError(f"whisper.cpp failed (code {rc}){': ' + errors[-1] if errors else ''}", self.model_path)

    def _full_params(self, language: str, prompt: str, temperature: float, fresh: bool = False,
                     threads: int = 0) -> Any:
        """whisper_full's parameters (``threads``: 0 for all of them); ``fresh``: without the
        previous text as context. The encoder always sees a full 30 s window (``audio_ctx`` 0):
        a shorter one (the removed ``fit_encoder``) let whisper.cpp's DTW median filter abort
        the process (``filter_width < a->ne[2]``) on a 10.9 s piece of the dev calls put end to
        end, and with token timestamps it took tiny.en from 10.2% to 14.5% WER there (3 pieces
        looped, 31 encoder runs instead of 17: slower too)."""
        pw, o = self._pw, self.options
        beam = o.beam_size > 1
        p = pw.whisper_full_default_params(pw.WHISPER_SAMPLING_BEAM_SEARCH if beam else pw.WHISPER_SAMPLING_GREEDY)
        p.n_threads = threads or o.effective_threads
        p.language = "" if language == "auto" else language
        p.translate = False
        p.no_context = fresh or not o.condition_on_previous_text
        p.token_timestamps = True
        p.no_timestamps = o.without_timestamps
        p.print_progress = p.print_realtime = p.print_timestamps = p.print_special = False
        p.suppress_blank = o.suppress_blank
        p.suppress_nst = o.suppress_non_speech_tokens
        p.temperature = temperature
        # "on-failure": whisper.cpp decodes at this one temperature; _decode falls back
        p.temperature_inc = o.temperature_increment if o.fallback == "whisper.cpp" else 0.0
        p.entropy_thold = o.entropy_threshold
        p.logprob_thold = o.logprob_threshold
        p.no_speech_thold = o.no_speech_threshold
        p.max_initial_ts = o.max_initial_timestamp
        p.audio_ctx = 0
        p.greedy = {"best_of": o.best_of}
        p.beam_search = {"beam_size": o.beam_size if beam else -1, "patience": -1.0}
        if prompt:
            p.initial_prompt = prompt
        return p

    def whisper_timings(self) -> dict[str, float]:
        """whisper.cpp's own counters since the last call (or the load), in seconds
        (``timings.parse_print_timings``), summed over the contexts (those ``_undrawn`` replaced
        included); resets them."""
        total, self._retired = self._retired, {}
        for ctx in self._contexts:
            with CPP_LOG.capture() as lines:
                self._pw.whisper_print_timings(ctx)
            self._pw.whisper_reset_timings(ctx)
            for key, value in parse_print_timings("".join(t for _, t in lines)).items():
                total[key] = total.get(key, 0) + value
        return total

    def _segments(self, ctx: Any, piece: SpeechPiece) -> list[AsrSegment]:
        """Segments of the last whisper_full call on ``ctx`` (``piece``), in file times."""
        with self.clock.stage("words"):
            return self._piece_segments(ctx, piece)

    def _piece_segments(self, ctx: Any, piece: SpeechPiece) -> list[AsrSegment]:
        pw = self._pw
        eot = pw.whisper_token_eot(ctx)
        per_segment = [
            [d for d in (pw.whisper_full_get_token_data(ctx, s, t) for t in range(pw.whisper_full_n_tokens(ctx, s)))
             if d.id < eot]  # text tokens only: no timestamps, no special tokens
            for s in range(pw.whisper_full_n_segments(ctx))
        ]
        spans = token_spans(per_segment, self.options.timestamps == "dtw")
        out = []
        for s, (tokens, token_times) in enumerate(zip(per_segment, spans)):
            pieces = [Piece(pw.whisper_token_to_bytes(ctx, d.id), a / 100, b / 100, float(d.p))
                      for d, (a, b) in zip(tokens, token_times)]
            out.extend(self._segments_of(ctx, s, pieces, piece))
        return out

    def _segments_of(self, ctx: Any, index: int, pieces: list[Piece], piece: SpeechPiece) -> list[AsrSegment]:
        """Segment ``index`` of ``piece`` from its text ``pieces`` (times into the piece): its
        words in file times (``SpeechPiece.place``: more than one segment where it ran over a
        seam of rests, each part's text its words'). A segment spans its words (whisper.cpp's
        window times are coarser, and DTW moves words)."""
        raw = self._pw.whisper_full_get_segment_text(ctx, index)
        text = bytes(raw).decode("utf-8", "replace").strip()
        if not self.options.keep_annotations and is_annotation(text):
            return []
        runs = piece.place(join_words(pieces, keep_annotations=self.options.keep_annotations))
        return [AsrSegment(start=run[0].start, end=run[-1].end, words=tuple(run),
                           text=text if len(runs) == 1 else " ".join(w.text for w in run)) for run in runs]

    def _result(self, per_track: list[list[AsrSegment]], language: str, duration: float,
                stats: DecodeStats) -> AsrResult:
        """The result of one file's tracks: each track's words made monotonic, then all of
        them in time order (with their track in ``channels`` when there are several)."""
        tagged = sorted(((w, k) for k, segments in enumerate(per_track)
                         for w in monotonic([w for seg in segments for w in seg.words], duration)),
                        key=lambda wk: (wk[0].start, wk[0].end, wk[1]))
        backend = self.backend
        info = AsrInfo(
            model=self.model_name or Path(self.model_path).name,
            device=f"{backend.gpu_backend}: {backend.gpu_device}" if backend.gpu_backend else "cpu",
            backends=tuple(name for name, _ in backend.backends), pywhispercpp=backend.version,
            timestamps=self.options.timestamps, threads=self.options.effective_threads, language=language,
            stats=stats, channels_decoded=len(per_track))
        segments = sorted((s for segments in per_track for s in segments), key=lambda s: (s.start, s.end))
        return AsrResult(words=tuple(w for w, _ in tagged), segments=tuple(segments), language=language,
                         duration=duration, info=info,
                         channels=tuple(k for _, k in tagged) if len(per_track) > 1 else None)
