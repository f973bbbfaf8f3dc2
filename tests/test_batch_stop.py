"""Ctrl-C and SIGTERM reaching a batch at the exact moments that matter, without models: while
a file's outputs and row are written (the row's write nested in the file's), when native
code loses the KeyboardInterrupt, and while a file is decoded into shared memory. Real
signals (``signal.raise_signal``) reach the handlers ``StopSignals`` installs; the
bookkeeping is the real ``_Batch``, the decoding the real ``SharedAudio.decode``."""

from __future__ import annotations

import contextlib
import shutil
import signal
from pathlib import Path

import pytest

import witness.run.batch
from tests.stm_transcript import transcript_from_stm
from witness.run import shm
from witness.run.batch import BatchItem, BatchOptions, StopSignals, _Batch
from witness.run.flow import FileResult
from witness.run.manifest import MANIFEST_NAME, Manifest
from witness.run.workers import SharedAudio

STOPS = [signal.SIGINT, signal.SIGTERM]


@pytest.fixture
def call(sample_call, tmp_path) -> BatchItem:
    shutil.copy(sample_call / "sample.wav", tmp_path / "call.wav")
    return BatchItem(str(tmp_path / "call.wav"), "call", "h", ("json",))


def swallowed(signum: int) -> None:
    """``signum`` arrives while native code runs that swallows the KeyboardInterrupt raised
    in it (PyAV's resampler does, when the signal comes while it decodes)."""
    with contextlib.suppress(KeyboardInterrupt):
        signal.raise_signal(signum)


@pytest.mark.parametrize("signum", STOPS)
@pytest.mark.parametrize("moment", ["outputs", "row"])
def test_a_signal_while_a_file_is_written_stops_the_batch_once_its_outputs_and_row_are_in(
        signum, moment, call, sample_call, tmp_path, monkeypatch):
    """The signal comes while the file's outputs are written (one held block), or while its
    row is (a held block inside that one): the inner block's end must neither raise nor
    lose it; the outer one's raises it."""
    out = tmp_path / "out"
    transcript = transcript_from_stm(sample_call / "sample.stm", Path(call.input))
    write_outputs = witness.run.batch.write_outputs

    def write_outputs_signalled(*args):
        if moment == "outputs":
            signal.raise_signal(signum)
        write_outputs(*args)

    reported = []

    def report(row):
        reported.append(row)
        if moment == "row":
            signal.raise_signal(signum)

    monkeypatch.setattr(witness.run.batch, "write_outputs", write_outputs_signalled)
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    stop = StopSignals()
    with stop.listening(), Manifest(out / MANIFEST_NAME) as manifest:
        batch = _Batch([call], out, manifest, BatchOptions(), report, stop)
        next(batch.jobs([call]))
        with pytest.raises(KeyboardInterrupt):
            batch.finish(FileResult(call.input, transcript, None, 1, 1.0))
        rows = manifest.rows()
    assert stop.received == [signum]
    assert [r.status for r in rows] == ["ok"] and batch.rows == reported == rows
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["call.json", MANIFEST_NAME]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers


@pytest.mark.parametrize("signum", STOPS)
def test_a_signal_native_code_swallowed_while_a_file_was_decoded_stops_the_batch_when_the_flow_comes_back(
        signum, call, tmp_path):
    """The flow decodes each file it takes before it asks for the next: a stop signal lost in
    the decoding (its KeyboardInterrupt swallowed) ends the batch there, not never."""
    stop = StopSignals()
    with stop.listening(), Manifest(tmp_path / "out" / MANIFEST_NAME) as manifest:
        batch = _Batch([call], tmp_path / "out", manifest, BatchOptions(), None, stop)
        jobs = batch.jobs([call])
        next(jobs)
        swallowed(signum)
        with pytest.raises(KeyboardInterrupt):
            next(jobs, None)
    assert stop.received == [signum]


@pytest.mark.parametrize("signum", STOPS)
def test_an_error_that_follows_a_stop_signal_is_the_stop(signum):
    """numpy's ``tofile`` can turn the KeyboardInterrupt raised in it into a TypeError."""
    stop = StopSignals()
    with pytest.raises(KeyboardInterrupt), stop.listening():
        try:
            signal.raise_signal(signum)
        except KeyboardInterrupt:
            raise TypeError("expected str, bytes or os.PathLike object, not BufferedWriter") from None
    assert stop.received == [signum]
    with pytest.raises(TypeError), StopSignals().listening():  # with no stop signal, an error is itself
        raise TypeError("a bug")


@pytest.mark.parametrize("moment", ["reap", "remove"])
def test_a_signal_while_a_file_is_decoded_leaves_no_decoded_audio(moment, sample_call, tmp_path, monkeypatch):
    """A diarized batch decodes a call into two files (the mix, and a stereo call's channels;
    the second is dropped for a mono call): Ctrl-C while the second is made (the stale files
    are reaped first) or while it is dropped must leave neither behind."""
    monkeypatch.setenv(shm.FOLDER_ENV, str(tmp_path / "audio"))
    real = getattr(shm, moment)
    calls = []

    def signalled(*args):
        calls.append(args)
        if len(calls) == (2 if moment == "reap" else 1):
            signal.raise_signal(signal.SIGINT)
        return real(*args)

    monkeypatch.setattr(shm, moment, signalled)
    with pytest.raises(KeyboardInterrupt), StopSignals().listening():
        SharedAudio.decode(sample_call / "sample.wav", stereo=True)
    assert list((tmp_path / "audio").iterdir()) == []
