"""Both engines on the sample call through worker processes: serial and parallel give the
same transcript, devices and the plan are recorded, and a worker killed by a signal is one
clear line from the CLI."""

from __future__ import annotations

import logging
import re
from dataclasses import replace

import pytest
from click.testing import CliRunner

from tests.worker_engines import crash_in
from witness.cli import main
from witness.config import Settings
from witness.diarize.config import SpeakerBounds
from witness.errors import UsageError
from witness.merge import merge
from witness.run.flow import FileJob
from witness.models.diarization_choice import DiarizationModels
from witness.run.jobs import diarization_job, resolve_models
from witness.run.orchestrate import Sources, merge_options, run
from witness.run.placement import find_devices
from witness.run.plan import PlanOptions
from witness.transcript import speakers_in_order
from witness.writers import WRITERS, render


@pytest.fixture(scope="module")
def settings(default_models):
    """Both engines on the CPU, on any machine (GPU or not)."""
    s = Settings()
    return replace(s, whisper=replace(s.whisper, use_gpu=False),
                   diarization=replace(s.diarization, segmentation_device="cpu", embedding_device="cpu"))


def transcribe(path, settings, sources=Sources()):
    (result,) = run([FileJob(str(path))], settings, sources)
    assert result.error is None
    return result.transcript


@pytest.fixture(scope="module")
def by_mode(settings, sample_call):
    return {mode: transcribe(sample_call / "sample.wav", replace(settings, plan=PlanOptions(mode=mode)))
            for mode in ("serial", "parallel")}


def test_parallel_and_serial_give_identical_transcripts(by_mode):
    serial, parallel = by_mode["serial"], by_mode["parallel"]
    assert serial.utterances == parallel.utterances and serial.turns == parallel.turns
    assert serial.plan["mode"] == "serial" and parallel.plan["mode"] == "parallel"


def test_the_transcript_says_what_ran_where(by_mode, settings):
    t = by_mode["serial"]
    assert t.speakers == ("SPEAKER_00", "SPEAKER_01")
    assert t.engines["asr"]["model"] == "tiny.en-q8_0" and t.engines["asr"]["device"] == "cpu"
    assert t.engines["diarization"]["path"] == "segmentation"
    assert t.engines["diarization"]["providers"] == {"segmentation": "cpu", "embedding": "cpu"}
    opinion = resolve_models(settings, ("diarization",)).diarization.opinion
    assert t.engines["diarization"]["opinion"] == {"model": opinion.name, "precision": "fp32"}
    assert {"decode", "asr", "diarization", "merge", "total"} <= set(t.timings)
    assert "originally from Chicago" in " ".join(u.text for u in t.utterances)


def test_no_diarize_runs_whisper_alone(settings, sample_call):
    t = transcribe(sample_call / "sample.wav", settings, Sources(turns=False))
    assert t.speakers == () and "diarization" not in t.engines
    assert all(u.speaker is None for u in t.utterances)


def test_without_words_the_second_opinion_is_off(settings, sample_call):
    """``witness diarize``: no words to give a second opinion on, and the transcript says so."""
    t = transcribe(sample_call / "sample.wav", settings, Sources(words=False))
    assert t.speakers == ("SPEAKER_00", "SPEAKER_01") and t.engines["diarization"]["opinion"] == "off"


def test_a_voice_found_twice_leaves_no_gap_in_the_labels(settings, sample_call, monkeypatch, caplog):
    """The real run of the sample call, Sheila (the diarization's speaker at 16 s) found twice:
    her turns from 14 s on SPEAKER_02, as when the clustering splits a voice. The merge's second
    opinion (real CAM++: her two voices 0.95 alike, either 0.5 with Diane's) makes them one,
    under SPEAKER_02 (more words), which left SPEAKER_00 and SPEAKER_02; now the labels are
    SPEAKER_00 and SPEAKER_01 by first appearance in the turns, in words, utterances, turns,
    centroids and every output, each speaker with the words the merge gave it."""
    import witness.run.orchestrate as orchestrate

    assemble, seen = orchestrate.assemble, {}

    def found_twice(meta, words, turns, exclusive, options, **kwargs):
        sheila = next(t.speaker for t in turns if t.start < 16 < t.end)
        turns, exclusive = ([replace(t, speaker="SPEAKER_02") if t.speaker == sheila and t.start > 14 else t
                             for t in seq] for seq in (turns, exclusive))
        seen["centroid"] = kwargs["centroids"][sheila] + 0  # the kept speaker's, told apart by identity
        kwargs["centroids"] = {**kwargs["centroids"], "SPEAKER_02": seen["centroid"]}
        seen["merged"] = merge(words, exclusive, options, kwargs["voices"])
        return assemble(meta, words, turns, exclusive, options, **kwargs)

    monkeypatch.setattr(orchestrate, "assemble", found_twice)
    with caplog.at_level(logging.INFO, logger="witness.assemble"):
        t = transcribe(sample_call / "sample.wav", settings)
    merged = seen["merged"]
    assert set(merged.absorbed.values()) == {"SPEAKER_02"} and len({w.speaker for w in merged.words}) == 2
    assert "SPEAKER_02" not in t.speakers
    labels = dict(zip((w.speaker for w in merged.words), (w.speaker for w in t.words)))  # before -> after
    assert sorted(labels.values()) == ["SPEAKER_00", "SPEAKER_01"]  # no word left unattributed
    assert [(m.text, labels[m.speaker]) for m in merged.words] == [(w.text, w.speaker) for w in t.words]
    two = ("SPEAKER_00", "SPEAKER_01")
    assert t.speakers == two == speakers_in_order(turn.speaker for turn in t.turns)
    assert {u.speaker for u in t.utterances} | {x.speaker for x in t.turns + t.exclusive_turns} == set(two)
    assert set(t.speaker_embeddings) == set(two) and t.speaker_embeddings[labels["SPEAKER_02"]] is seen["centroid"]
    (gone,) = merged.absorbed
    assert f"one voice found twice: {gone} is SPEAKER_02 (now {labels['SPEAKER_02']})" in caplog.text
    for fmt in WRITERS:
        assert set(re.findall(r"SPEAKER_\d+", render(fmt, t))) == set(two), fmt


def test_the_merge_embeds_with_one_blas_thread(settings, sample_call, monkeypatch):
    """The second opinion's filterbanks run in the parent with numpy's BLAS pool at one thread
    (with OpenBLAS's default pool its threads spun between the small matmuls: the merge of a
    30-minute call took 2.4x the CPU), and the pool is given back afterwards."""
    import witness.run.orchestrate as orchestrate
    from threadpoolctl import threadpool_info

    def blas_pools():
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    seen, assemble = [], orchestrate.assemble

    def spy(*args, **kwargs):
        seen.append((kwargs.get("voices") is not None, blas_pools()))
        return assemble(*args, **kwargs)

    monkeypatch.setattr(orchestrate, "assemble", spy)
    before = blas_pools()
    transcribe(sample_call / "sample.wav", settings)
    assert seen == [(True, [1] * len(before))] and blas_pools() == before


@pytest.mark.parametrize("worker", ["asr", "diarization"])
def test_a_worker_killed_by_a_signal_is_one_clear_line(worker, sample_call, default_models, tmp_path, monkeypatch):
    crash_in(monkeypatch, worker)
    result = CliRunner().invoke(main, [str(sample_call / "sample.wav"), "-o", str(tmp_path), "--format", "json"])
    assert result.exit_code == 1
    assert result.stderr == (f"witness: {sample_call / 'sample.wav'}: the {worker} worker died "
                             f"(signal SIGKILL) while working on it\n")
    assert list(tmp_path.iterdir()) == []


def test_the_diarization_job_carries_the_settings_translated_once(settings):
    """The worker builds its Diarizer from the job as is: every user setting is already in the
    pipeline's types (0: the model's default, no bound)."""
    models = DiarizationModels(segmentation=None, vad=None, embedding="campplus", embedding_path=None)
    devices = find_devices(settings, gpus=())
    chosen = replace(settings.diarization, step=2.0, threshold=0.5, max_speakers=3, embedding_batch_size=4,
                     channels="split")
    job = diarization_job(chosen, models, devices, threads=2, channel_vad="vad.onnx")
    assert job.config.segmentation.window_step == 2.0 and job.config.clustering.threshold == 0.5
    assert job.bounds == SpeakerBounds(max_speakers=3)
    assert (job.runtime.segmentation_threads, job.runtime.embedding_threads) == (2, 2)
    assert job.runtime.embedding_batch_size == 4 and job.runtime.segmentation_providers == devices.segmentation
    assert (job.ge2e_variant, job.channels, job.channel_vad) == ("pooled", "split", "vad.onnx")
    defaults = diarization_job(Settings().diarization, models, devices, threads=1)
    assert defaults.bounds == SpeakerBounds() and defaults.runtime.embedding_batch_size is None
    with pytest.raises(UsageError, match=r"\[diarization\] window step must be positive"):
        diarization_job(replace(chosen, step=-1.0), models, devices, threads=1)


def test_a_speaker_count_the_user_asked_for_keeps_a_voice_found_twice():
    """The merge's joins of "one voice found twice" (``split_gap``, ``voice_join``) could leave
    fewer than ``--num-speakers`` or ``--min-speakers``: where three or more are asked for they
    are off (two never need it: neither join goes below two speakers)."""
    settings = Settings()
    assert merge_options(settings).split_gap == settings.merge.split_gap > 0
    assert merge_options(settings).voice_join == settings.merge.voice_join > 0
    for asked in ({"num_speakers": 2}, {"min_speakers": 2}, {"max_speakers": 3}):
        assert merge_options(replace(settings, diarization=replace(settings.diarization, **asked))) == settings.merge
    for asked in ({"num_speakers": 3}, {"min_speakers": 4}):
        options = merge_options(replace(settings, diarization=replace(settings.diarization, **asked)))
        assert options.split_gap == options.voice_join == 0
