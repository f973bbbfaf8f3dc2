"""Whisper through whisper.cpp (pywhispercpp's low-level bindings): audio in, words out.

``WhisperEngine(model).transcribe(audio)`` takes 16 kHz mono float32 samples and returns an
``AsrResult`` of words (start, end, text, probability) and segments. The engine loads the
model once and transcribes many files; build it inside a worker process from a path and a
``WhisperOptions`` (both picklable). The file is checked (``inspect_ggml``) before
whisper.cpp sees it: whisper.cpp trusts its input and can crash the process on a bad file.

Word times come from whisper.cpp's token timestamps, or with ``timestamps="dtw"`` from DTW
over the cross-attention of the model's alignment heads (a per-model preset). whisper.cpp
silently drops DTW when flash attention is on, so DTW turns flash attention off.
Long audio is handed over in pieces of at most ``chunk_seconds`` (views, not copies).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from witness.asr.backend import AsrBackendInfo, backend_info
from witness.asr.chunks import chunk_spans
from witness.asr.options import WhisperOptions
from witness.asr.words import Piece, is_annotation, join_words
from witness.audio import SAMPLE_RATE
from witness.errors import InputError, ModelError
from witness.models.ggml import GgmlInfo, WhisperHparams, inspect_ggml
from witness.models.whisper_catalogue import WhisperModel
from witness.progress import Progress
from witness.transcript import Word

log = logging.getLogger(__name__)

_LOG_ERROR = 4  # ggml_log_level GGML_LOG_LEVEL_ERROR


@dataclass(frozen=True)
class AsrSegment:
    """A stretch Whisper decoded as one piece of text, with its words."""

    start: float
    end: float
    text: str
    words: tuple[Word, ...] = ()


@dataclass(frozen=True)
class AsrResult:
    """A transcription: words in time order, their segments, and how they were made."""

    words: tuple[Word, ...]
    segments: tuple[AsrSegment, ...]
    language: str
    duration: float
    model: str
    timestamps: str
    engine: dict[str, Any] = field(default_factory=dict)


def dtw_preset_name(model_name: str | None, hp: WhisperHparams) -> str:
    """whisper.cpp's alignment-head preset for a catalogue name, else guessed from the header."""
    if model_name:
        return WhisperModel(model_name).dtw_preset
    size = hp.size_name
    if size == "large":
        size = "large-v3" if hp.n_vocab >= 51866 else "large-v2"  # v1 and v2 share a header
    return WhisperModel(size if hp.multilingual or size.startswith("large") else size + ".en").dtw_preset


class WhisperEngine:
    """A loaded whisper.cpp model. ``close()`` (or ``with``) frees it."""

    def __init__(self, model_path: str | Path, options: WhisperOptions = WhisperOptions(),
                 model_name: str | None = None, info: GgmlInfo | None = None):
        import _pywhispercpp as pw

        self._pw = pw
        self.options = options
        self.model_path = str(model_path)
        self.model_name = model_name
        self.info = info or inspect_ggml(model_path)
        self._ctx = self._load()

    def _load(self) -> Any:
        pw, opts = self._pw, self.options
        params = pw.whisper_context_default_params()
        params.use_gpu = opts.use_gpu
        params.gpu_device = opts.gpu_device
        params.flash_attn = opts.effective_flash_attention
        if opts.timestamps == "dtw":
            params.dtw_token_timestamps = True
            params.dtw_aheads_preset = getattr(pw, dtw_preset_name(self.model_name, self.info.hparams))
            log.info("DTW timestamps on: flash attention turned off (whisper.cpp ignores DTW with it)")
        with self._captured_log() as lines:
            ctx = pw.whisper_init_from_file_with_params(self.model_path, params)
        errors = [text.strip() for level, text in lines if level == _LOG_ERROR and text.strip()]
        if errors:
            raise ModelError(f"whisper.cpp could not load the model: {errors[-1]}", self.model_path)
        self.init_log = "".join(text for _, text in lines)
        self.backend: AsrBackendInfo = backend_info(self.init_log)
        return ctx

    @contextmanager
    def _captured_log(self) -> Iterator[list[tuple[int, str]]]:
        """whisper.cpp's log lines go to a list (and our debug log) instead of stderr."""
        lines: list[tuple[int, str]] = []

        def hook(level: int, text: str) -> None:
            lines.append((level, text))

        self._pw.whisper_log_set(hook)
        try:
            yield lines
        finally:
            # a Python hook left installed can fire during interpreter teardown and abort
            self._pw.whisper_log_set(None)
            if lines:
                log.debug("whisper.cpp: %s", "".join(t for _, t in lines).strip())

    def close(self) -> None:
        if self._ctx is not None:
            with self._captured_log():
                self._pw.whisper_free(self._ctx)
            self._ctx = None

    def __enter__(self) -> "WhisperEngine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transcribe(self, audio: np.ndarray, progress: Progress | None = None) -> AsrResult:
        """Words and segments of ``audio``: (samples,) float32, 16 kHz mono.

        A C-contiguous float32 array is used in place (pieces are views); anything else is
        converted once. ``progress`` gets ("transcribe", percent done, 100), never backwards.
        """
        if self._ctx is None:
            raise RuntimeError("this WhisperEngine is closed")
        samples = np.ascontiguousarray(audio, dtype=np.float32)
        if samples.ndim != 1:
            raise InputError(f"audio must be mono with shape (samples,), not {samples.shape}")
        language = self._language()
        segments: list[AsrSegment] = []
        tracker = _ProgressTracker(progress, len(samples))
        for i, (start, end) in enumerate(chunk_spans(samples, SAMPLE_RATE, self.options.effective_chunk_seconds)):
            part = samples[start:end]
            if len(part) < SAMPLE_RATE // 10:  # whisper.cpp refuses under 100 ms
                continue
            self._run(part, language, first=(i == 0), progress=tracker.for_span(start, end))
            if language in ("", "auto"):
                language = self._pw.whisper_lang_str(self._pw.whisper_full_lang_id(self._ctx))
            segments.extend(self._segments(start / SAMPLE_RATE))
        tracker.done()
        return self._result(segments, language, len(samples) / SAMPLE_RATE)

    def _language(self) -> str:
        wanted = self.options.language
        if not self.info.hparams.multilingual:
            if wanted not in (None, "en", "auto"):
                log.warning("model %s is English-only: language %r ignored",
                            self.model_name or Path(self.model_path).name, wanted)
            return "en"
        if wanted in (None, "auto"):
            return "auto"
        with self._captured_log():  # whisper.cpp logs an unknown code as an error
            known = self._pw.whisper_lang_id(wanted) >= 0
        if not known:
            raise InputError(f"unknown language code {wanted!r} (use an ISO 639-1 code such as en, de, fr)")
        return wanted

    def _run(self, part: np.ndarray, language: str, first: bool, progress: Callable[[int], None] | None) -> None:
        params = self._full_params(language, prompt=self.options.initial_prompt if first else "")
        if progress is not None:
            params.print_progress = True  # the bindings call our callback only when this is on
            params.set_progress_callback(progress)
        with self._captured_log() as lines:
            rc = self._pw.whisper_full(self._ctx, params, part, len(part))
        if rc != 0:
            errors = [t.strip() for level, t in lines if level == _LOG_ERROR]
            raise ModelError(f"whisper.cpp failed (code {rc}){': ' + errors[-1] if errors else ''}", self.model_path)

    def _full_params(self, language: str, prompt: str) -> Any:
        pw, o = self._pw, self.options
        beam = o.beam_size > 1
        p = pw.whisper_full_default_params(pw.WHISPER_SAMPLING_BEAM_SEARCH if beam else pw.WHISPER_SAMPLING_GREEDY)
        p.n_threads = o.effective_threads
        p.language = "" if language == "auto" else language
        p.translate = False
        p.no_context = not o.condition_on_previous_text
        p.token_timestamps = True
        p.no_timestamps = o.without_timestamps
        p.print_progress = p.print_realtime = p.print_timestamps = p.print_special = False
        p.suppress_blank = o.suppress_blank
        p.suppress_nst = o.suppress_non_speech_tokens
        p.temperature = o.temperature
        p.temperature_inc = o.temperature_increment
        p.entropy_thold = o.entropy_threshold
        p.logprob_thold = o.logprob_threshold
        p.no_speech_thold = o.no_speech_threshold
        p.max_initial_ts = o.max_initial_timestamp
        p.greedy = {"best_of": o.best_of}
        p.beam_search = {"beam_size": o.beam_size if beam else -1, "patience": -1.0}
        if prompt:
            p.initial_prompt = prompt
        return p

    def _segments(self, offset: float) -> list[AsrSegment]:
        """Segments of the last whisper_full call, times shifted by ``offset`` seconds."""
        pw, ctx = self._pw, self._ctx
        eot = pw.whisper_token_eot(ctx)
        per_segment = [
            [d for d in (pw.whisper_full_get_token_data(ctx, s, t) for t in range(pw.whisper_full_n_tokens(ctx, s)))
             if d.id < eot]  # text tokens only: no timestamps, no special tokens
            for s in range(pw.whisper_full_n_segments(ctx))
        ]
        spans = token_spans(per_segment, self.options.timestamps == "dtw")
        out = []
        for s, (tokens, token_times) in enumerate(zip(per_segment, spans)):
            pieces = [Piece(pw.whisper_token_to_bytes(ctx, d.id), offset + a / 100, offset + b / 100, float(d.p))
                      for d, (a, b) in zip(tokens, token_times)]
            segment = self._segment(s, pieces)
            if segment is not None:
                out.append(segment)
        return out

    def _segment(self, index: int, pieces: list[Piece]) -> AsrSegment | None:
        """A segment spans its words (whisper.cpp's window times are coarser, and DTW moves words)."""
        raw = self._pw.whisper_full_get_segment_text(self._ctx, index)
        text = bytes(raw).decode("utf-8", "replace").strip()
        if not self.options.keep_annotations and is_annotation(text):
            return None
        words = join_words(pieces, keep_annotations=self.options.keep_annotations)
        if not words:
            return None
        return AsrSegment(start=words[0].start, end=words[-1].end, text=text, words=words)

    def _result(self, segments: list[AsrSegment], language: str, duration: float) -> AsrResult:
        words = _monotonic([w for seg in segments for w in seg.words], duration)
        return AsrResult(
            words=words, segments=tuple(segments), language=language, duration=duration,
            model=self.model_name or Path(self.model_path).name, timestamps=self.options.timestamps,
            engine={"engine": "whisper.cpp", "model": self.model_name or Path(self.model_path).name,
                    "model_path": self.model_path, "weights": self.info.weight_type,
                    "timestamps": self.options.timestamps, "without_timestamps": self.options.without_timestamps,
                    "flash_attention": self.options.effective_flash_attention,
                    "threads": self.options.effective_threads, "backend": self.backend.to_dict()},
        )


def token_spans(segments: list[list[Any]], dtw: bool) -> list[list[tuple[int, int]]]:
    """(start, end) in centiseconds per text token, per segment (whisper_token_data: t0, t1, t_dtw).

    Token mode: whisper.cpp's t0/t1. DTW mode: whisper.cpp stamps token k with the frame
    where the alignment path enters the next row; a decoder row attends to the audio of the
    token it predicts (row 0, the no-timestamps token, predicts the first text token), so
    that frame is where token k's audio *ends*. Token k thus spans t_dtw[k-1]..t_dtw[k]; a
    segment's first token starts no earlier than the segment's own timestamp (t0), which
    keeps a pause between decoding windows out of the next word.
    """
    if not dtw:
        return [[(d.t0, max(d.t0, d.t1)) for d in tokens] for tokens in segments]
    out, previous_end = [], None
    for tokens in segments:
        spans = []
        for i, d in enumerate(tokens):
            end = d.t_dtw if d.t_dtw >= 0 else d.t1
            start = d.t0 if previous_end is None else previous_end
            if i == 0:
                start = max(start, d.t0)
            spans.append((min(start, end), end))
            previous_end = end
        out.append(spans)
    return out


WORD_SECONDS_BASE = 0.2  # a word lasts at most this…
WORD_SECONDS_PER_CHAR = 0.1  # …plus this per letter (speech runs at ~14 letters a second)


def _monotonic(words: list[Word], duration: float) -> tuple[Word, ...]:
    """Clamp word times into [0, duration], make starts non-decreasing, and bound each
    word's length. whisper.cpp knows where a word ends (DTW) but a segment's first word
    starts where the segment does: after a long silence (a ring tone, music) that put
    "Hello" at 0.0-7.1 s when it was said at 6.7 s; its start moves to end - a plausible
    length for its letters (6.4 s here)."""
    out: list[Word] = []
    last = 0.0
    for w in words:
        letters = sum(c.isalnum() for c in w.text)
        plausible_start = w.end - (WORD_SECONDS_BASE + WORD_SECONDS_PER_CHAR * max(1, letters))
        start = min(max(w.start, plausible_start, last), duration)
        end = min(max(w.end, start), duration)
        out.append(Word(start=start, end=end, text=w.text, probability=w.probability))
        last = start
    return tuple(out)


class _ProgressTracker:
    """Maps whisper.cpp's per-piece percentages onto the whole file; never goes backwards."""

    def __init__(self, callback: Progress | None, total: int):
        self.callback, self.total, self.last = callback, max(total, 1), -1

    def for_span(self, start: int, end: int) -> Callable[[int], None] | None:
        if self.callback is None:
            return None
        return lambda percent: self._report(int(100 * (start + (end - start) * percent / 100) / self.total))

    def _report(self, percent: int) -> None:
        if self.callback is not None and percent > self.last:
            self.last = percent
            self.callback("transcribe", min(percent, 100), 100)

    def done(self) -> None:
        self._report(100)


def load_engine(model: str, options: WhisperOptions = WhisperOptions(), models_dir: str | Path | None = None,
                offline: bool = False, progress: Progress | None = None) -> WhisperEngine:
    """Resolve ``model`` (a catalogue name such as ``tiny.en``, an imported name, or a path to
    a ggml file; fetched or converted when needed) and load it."""
    from witness.models.whisper_models import resolve_model

    resolved = resolve_model(model, models_dir, offline=offline, progress=progress)
    return WhisperEngine(resolved.path, options, model_name=resolved.name, info=resolved.info)
