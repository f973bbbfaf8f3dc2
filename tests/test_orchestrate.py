"""Both engines on the sample call through worker processes: serial and parallel give the
same transcript, devices and the plan are recorded, and a worker killed by a signal is one
clear line from the CLI."""

from __future__ import annotations

from dataclasses import replace

import pytest
from click.testing import CliRunner

from tests.worker_engines import crash_in
from witness.cli import main
from witness.config import Settings
from witness.diarize.config import SpeakerBounds
from witness.errors import UsageError
from witness.run.flow import FileJob
from witness.models.diarization_choice import DiarizationModels
from witness.run.jobs import diarization_job
from witness.run.orchestrate import Sources, merge_options, run
from witness.run.placement import find_devices
from witness.run.plan import PlanOptions


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


def test_the_transcript_says_what_ran_where(by_mode):
    t = by_mode["serial"]
    assert t.speakers == ("SPEAKER_00", "SPEAKER_01")
    assert t.engines["asr"]["model"] == "tiny.en-q8_0" and t.engines["asr"]["device"] == "cpu"
    assert t.engines["diarization"]["path"] == "segmentation"
    assert t.engines["diarization"]["providers"] == {"segmentation": "cpu", "embedding": "cpu"}
    assert {"decode", "asr", "diarization", "merge", "total"} <= set(t.timings)
    assert "originally from Chicago" in " ".join(u.text for u in t.utterances)


def test_no_diarize_runs_whisper_alone(settings, sample_call):
    t = transcribe(sample_call / "sample.wav", settings, Sources(turns=False))
    assert t.speakers == () and "diarization" not in t.engines
    assert all(u.speaker is None for u in t.utterances)


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
    """The merge's "one voice found twice" could leave fewer than ``--num-speakers`` or
    ``--min-speakers``: where three or more are asked for it is off."""
    settings = Settings()
    assert merge_options(settings).split_gap == settings.merge.split_gap > 0
    for asked in ({"num_speakers": 2}, {"max_speakers": 3}):
        assert merge_options(replace(settings, diarization=replace(settings.diarization, **asked))) == settings.merge
    for asked in ({"num_speakers": 3}, {"min_speakers": 4}):
        assert merge_options(replace(settings, diarization=replace(settings.diarization, **asked))).split_gap == 0
