"""The whisper.cpp engine on the real converted models and the real sample call."""

from __future__ import annotations

import pickle
import shutil

import numpy as np
import pytest

from tests.asr.conftest import normal
from witness.asr.chunks import chunk_spans
from witness.asr.whisper import AsrResult, WhisperEngine, WhisperOptions
from witness.asr.words import TOKEN_LAG, token_spans
from witness.errors import ModelError, UsageError
from witness.evaluate.wer import word_error_rate
from witness.models.whisper_models import resolve_model
from witness.textnorm import normalize_words

SR = 16000


def wer(words, reference: list[str]) -> float:
    return word_error_rate(reference, normalize_words(" ".join(w.text for w in words))).wer


def test_tiny_en_hears_the_call(tiny_engine, tiny_result: AsrResult, stm_words):
    assert tiny_result.language == "en"
    assert wer(tiny_result.words, stm_words) < 0.25  # measured 0.16 (scripts/asr_accuracy.py)
    text = " ".join(w.text for w in tiny_result.words)
    assert "Diane in New Jersey" in text and "Chicago" in text
    assert tiny_engine.info.weight_type == "f16" and tiny_result.info.timestamps == "dtw"


def test_words_are_real_words_in_time_order(tiny_result: AsrResult):
    words = tiny_result.words
    assert all(w.text and not w.text.startswith(" ") for w in words)
    assert all("[" not in w.text and "_" not in w.text for w in words)  # no special tokens
    assert all(0 <= w.start <= w.end <= tiny_result.duration for w in words)
    assert all(a.start <= b.start for a, b in zip(words, words[1:]))
    assert all(0 < w.probability <= 1 for w in words)
    assert sum(len(s.words) for s in tiny_result.segments) == len(words)


def test_dtw_is_the_default_and_turns_flash_attention_off(tiny_engine, tiny_result, stm_segments):
    assert tiny_engine.options.timestamps == "dtw" and tiny_engine.options.effective_flash_attention is False
    assert "dtw        = 1" in tiny_engine.init_log and "flash attn = 0" in tiny_engine.init_log
    first = {s.text.split()[0].strip("?,.").lower(): s.start for s in stm_segments}
    words = {normal(w.text): w.start for w in reversed(tiny_result.words)}  # first occurrence wins
    for word in ("this", "and"):  # "This is Diane..." 12.54 s, "And I'm Sheila..." 14.44 s
        assert abs(words[word] - first[word]) < 0.5


def test_silence_and_tones_give_no_words(tiny_engine):
    t = np.arange(SR * 10) / SR
    chord = 0.1 * (np.sin(2 * np.pi * 440 * t) + np.sin(2 * np.pi * 554 * t)) * (1 + 0.5 * np.sin(2 * np.pi * 2 * t))
    for audio in (np.zeros(SR * 10, np.float32), chord.astype(np.float32)):
        result = tiny_engine.transcribe(audio)
        assert result.words == () and result.segments == ()


def test_a_two_second_clip_works(tiny_engine, sample_audio):
    result = tiny_engine.transcribe(sample_audio[int(7.6 * SR) : int(9.6 * SR)])
    assert result.duration == 2.0
    assert {"hello"} <= {normal(w.text) for w in result.words}
    assert tiny_engine.transcribe(np.zeros(800, np.float32)).words == ()  # 50 ms: nothing to decode


def test_long_audio_is_cut_into_pieces_and_times_are_shifted(tiny_en, sample_audio):
    audio = np.concatenate([sample_audio, np.zeros(SR * 2, np.float32), sample_audio[: SR * 20]])
    spans = chunk_spans(audio, SR, 30.0)
    assert len(spans) >= 2 and all(b - a <= 30 * SR for a, b in spans) and spans[-1][1] == len(audio)
    seen = []
    opts = WhisperOptions(threads=2, chunk_seconds=30, timestamps="token")
    assert opts.effective_flash_attention is True
    with WhisperEngine(tiny_en.path, opts, model_name="tiny.en") as engine:
        assert "flash attn = 1" in engine.init_log
        result = engine.transcribe(audio, progress=lambda stage, done, total: seen.append(done))
    assert seen == sorted(seen) and seen[-1] == 100
    assert any(normal(w.text) == "chicago" and 46 < w.start < 51 for w in result.words)  # 32 s + ~16 s


def test_options_are_picklable_and_checked():
    opts = WhisperOptions(language="de", beam_size=5, timestamps="dtw")
    assert pickle.loads(pickle.dumps(opts)) == opts
    with pytest.raises(ValueError, match="timestamps must be one of"):
        WhisperOptions(timestamps="words")
    with pytest.raises(ValueError, match="beam_size"):
        WhisperOptions(beam_size=0)


def test_dtw_stamps_mark_where_a_token_ends():
    class T:  # whisper_token_data's fields, in centiseconds
        def __init__(self, t0, t1, t_dtw):
            self.t0, self.t1, self.t_dtw = t0, t1, t_dtw

    segments = [[T(0, 50, 30), T(50, 90, 60)], [T(200, 260, 250), T(260, 300, -1)]]
    # token times: whisper.cpp's t0/t1, TOKEN_LAG later (they run ahead of the speech)
    assert TOKEN_LAG == 10
    assert token_spans(segments, dtw=False) == [[(10, 60), (60, 100)], [(210, 270), (270, 310)]]
    # the first token starts at its t0; a segment's first token not before its t0 (200);
    # a token without a DTW stamp falls back to its t1
    assert token_spans(segments, dtw=True) == [[(0, 30), (30, 60)], [(200, 250), (250, 300)]]


def test_bad_model_files_are_refused_before_whisper_cpp_sees_them(tmp_path, tiny_en):
    junk = tmp_path / "ggml-junk.bin"
    junk.write_bytes(b"RIFF" + bytes(2000))
    with pytest.raises(ModelError, match="bad magic"):
        WhisperEngine(junk)
    cut = tmp_path / "ggml-cut.bin"
    with open(tiny_en.path, "rb") as src:
        cut.write_bytes(src.read(40_000_000))
    with pytest.raises(ModelError, match="truncated"):
        WhisperEngine(cut)


def test_unknown_names_and_wrong_checksums_are_one_line_errors(cache_env, tmp_path, tiny_en):
    with pytest.raises(UsageError, match="unknown Whisper model 'tiny-en'; known names: tiny, "):  # exit 2
        resolve_model("tiny-en")
    fake = tmp_path / "ggml-base.en.bin"
    shutil.copy(tiny_en.path, fake)  # a real ggml file, but not the one pinned for base.en
    with pytest.raises(ModelError, match="fails its check"):
        resolve_model("base.en", models_dir=tmp_path)
    with pytest.raises(ModelError, match=r"offline: put ggml-small\.bin \(from https://huggingface"):
        resolve_model("small", offline=True)
    assert resolve_model("tiny.en", offline=True).path == tiny_en.path  # converted once, then cached


def test_base_transcribes_too(base_model, sample_audio):
    with WhisperEngine(base_model.path, WhisperOptions(threads=2), model_name="base") as engine:
        result = engine.transcribe(sample_audio[int(12 * SR) : int(21 * SR)])
    assert result.language == "en"  # detected: base is multilingual
    heard = {normal(w.text) for w in result.words}
    assert {"diane", "jersey", "sheila", "texas", "chicago"} <= heard


def _worker_transcribe(path: str, options: WhisperOptions, audio: np.ndarray) -> AsrResult:
    with WhisperEngine(path, options, model_name="tiny.en") as engine:
        return engine.transcribe(audio)


def test_the_engine_runs_in_a_spawned_worker_and_its_result_pickles(tiny_en, sample_audio):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    clip = sample_audio[int(12.5 * SR) : int(14.3 * SR)]  # "This is Diane in New Jersey."
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        result = pool.submit(_worker_transcribe, tiny_en.path, WhisperOptions(threads=1), clip).result()
    assert [normal(w.text) for w in result.words][-3:] == ["in", "new", "jersey"]


def test_language_is_checked_and_english_only_models_stay_english(tiny_engine, base_model):
    from witness.errors import InputError

    assert tiny_engine._language() == "en"
    with WhisperEngine(base_model.path, WhisperOptions(threads=2, language="xx")) as engine:
        with pytest.raises(InputError, match="unknown language code 'xx'"):
            engine.transcribe(np.zeros(SR, np.float32))


def test_without_timestamps_base_does_not_repeat_itself(base_model, sample_audio, stm_words):
    opts = WhisperOptions(threads=2, language="en", without_timestamps=True)
    assert opts.effective_chunk_seconds == 30.0
    with WhisperEngine(base_model.path, opts, model_name="base") as engine:
        result = engine.transcribe(sample_audio)
    said = [normal(w.text) for w in result.words]
    assert said.count("chicago") == 2  # with timestamps base re-decodes the window and says it 4 times
    assert wer(result.words, stm_words) < 0.3
