"""Pieces decoded at once (``WhisperOptions.decoders``): each on its own whisper.cpp context,
the same words as one at a time; and whisper.cpp's one log hook shared by their threads.
Real tiny.en on the real sample call, tiled into a call of several pieces."""

from __future__ import annotations

import threading
from dataclasses import replace

from scripts.asr_cases import tiled
from witness.asr.cpplog import CPP_LOG, LOG_ERROR
from witness.asr.whisper import WhisperEngine, WhisperOptions
from witness.models.whisper_models import resolve_vad


def _transcribe(tiny_en, options: WhisperOptions, audio):
    progress: list[int] = []
    with WhisperEngine(tiny_en.path, options, model_name="tiny.en", info=tiny_en.info,
                       vad_path=resolve_vad(offline=True)) as engine:
        engine.whisper_timings()
        result = engine.transcribe(audio, lambda stage, done, total: progress.append(done))
        return result, len(engine._contexts), engine.whisper_timings(), progress


def test_two_decoders_give_the_words_one_gives(tiny_en):
    audio = tiled(3).audio  # 90 s: three pieces
    one, contexts_one, timings_one, _ = _transcribe(tiny_en, WhisperOptions(threads=2, decoders=1), audio)
    two, contexts_two, timings_two, progress = _transcribe(tiny_en, WhisperOptions(threads=2), audio)
    assert one.info.stats.pieces == two.info.stats.pieces >= 3
    assert (contexts_one, contexts_two) == (1, 2)
    assert [(w.text, w.start, w.end) for w in two.words] == [(w.text, w.start, w.end) for w in one.words]
    assert [s.text for s in two.segments] == [s.text for s in one.segments]
    assert timings_two["encode runs"] == timings_one["encode runs"]  # counted over both contexts
    assert progress == sorted(progress) and progress[-1] == 100


def test_one_decoder_where_pieces_must_follow_one_another(tiny_en, sample_audio):
    """A piece that sees the text before it waits for it; one piece needs no second context."""
    chained = WhisperOptions(threads=2, condition_on_previous_text=True)
    assert _transcribe(tiny_en, chained, tiled(3).audio)[1] == 1
    assert _transcribe(tiny_en, WhisperOptions(threads=2), sample_audio[: 16000 * 15])[1] == 1


def test_threads_are_shared_out_and_a_gpu_keeps_one_context(tiny_en):
    assert WhisperOptions(threads=4).effective_decoders == 2 and WhisperOptions(threads=1).effective_decoders == 1
    with WhisperEngine(tiny_en.path, WhisperOptions(threads=3, decoders=3), model_name="tiny.en",
                       info=tiny_en.info) as engine:
        assert engine._decoders(jobs=10) == 3 and engine._decoders(jobs=2) == 2
        assert [threads for _, threads in engine._decoder_contexts(2)] == [2, 1]
        engine.backend = replace(engine.backend, gpu_backend="Vulkan0")  # as if whisper.cpp ran on a GPU
        assert engine._decoders(jobs=10) == 1


def test_each_thread_gets_its_own_whisper_cpp_log_lines():
    """whisper.cpp logs an unknown language code as an error, on the calling thread."""
    import _pywhispercpp as pw

    got: dict[str, list] = {}
    start = threading.Barrier(2)

    def ask(language: str) -> None:
        with CPP_LOG.capture() as lines:
            start.wait()
            for _ in range(20):
                pw.whisper_lang_id(language)
        got[language] = lines

    threads = [threading.Thread(target=ask, args=(language,)) for language in ("xx", "zz")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for language in ("xx", "zz"):
        errors = [text for level, text in got[language] if level == LOG_ERROR]
        assert len(errors) == 20 and all(f"'{language}'" in text for text in errors), errors[:2]



def test_sampled_words_are_the_same_in_every_run(tiny_en, sample_audio):
    """A pass above temperature 0 samples from whisper.cpp's random generator, which a context
    seeds once and draws from in every sampling call; each piece's sampling starts on a fresh
    context, so a second file on the same engine (a batch) and a new engine give the same words."""
    hot = WhisperOptions(threads=2, temperature=0.6)
    with WhisperEngine(tiny_en.path, hot, model_name="tiny.en", info=tiny_en.info,
                       vad_path=resolve_vad(offline=True)) as engine:
        runs = [engine.transcribe(sample_audio) for _ in range(2)]
    again, *_ = _transcribe(tiny_en, hot, sample_audio)
    words = [[(w.text, w.start, w.end) for w in run.words] for run in [*runs, again]]
    assert words[0] and words[1] == words[0] and words[2] == words[0]
