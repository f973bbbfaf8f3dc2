"""Ctrl-C and SIGTERM reaching a batch at the exact moments that matter, without models: while
a file's outputs and row are written (the row's write nested in the file's), and when native
code loses the KeyboardInterrupt. Real signals (``signal.raise_signal``) reach the handlers
``StopSignals`` installs; the bookkeeping is the real ``_Batch``."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

import witness.batch
from tests.stm_transcript import transcript_from_stm
from witness.batch import BatchItem, BatchOptions, StopSignals, _Batch
from witness.flow import FileResult
from witness.manifest import MANIFEST_NAME, Manifest

STOPS = [signal.SIGINT, signal.SIGTERM]


@pytest.fixture
def call(sample_call, tmp_path) -> BatchItem:
    shutil.copy(sample_call / "sample.wav", tmp_path / "call.wav")
    return BatchItem(str(tmp_path / "call.wav"), "call", "h", ("json",))


def swallowed(signum: int) -> None:
    """``signum`` arrives while native code runs that swallows the KeyboardInterrupt raised
    in it (PyAV's resampler does, when the signal comes while it decodes)."""
    try:
        signal.raise_signal(signum)
    except KeyboardInterrupt:
        pass


@pytest.mark.parametrize("signum", STOPS)
@pytest.mark.parametrize("moment", ["outputs", "row"])
def test_a_signal_while_a_file_is_written_stops_the_batch_once_its_outputs_and_row_are_in(
        signum, moment, call, sample_call, tmp_path, monkeypatch):
    """The signal comes while the file's outputs are written (one held block), or while its
    row is (a held block inside that one): the inner block's end must neither raise nor
    lose it; the outer one's raises it."""
    out = tmp_path / "out"
    transcript = transcript_from_stm(sample_call / "sample.stm", Path(call.input))
    write_outputs = witness.batch.write_outputs

    def write_outputs_signalled(*args):
        if moment == "outputs":
            signal.raise_signal(signum)
        write_outputs(*args)

    reported = []

    def report(row):
        reported.append(row)
        if moment == "row":
            signal.raise_signal(signum)

    monkeypatch.setattr(witness.batch, "write_outputs", write_outputs_signalled)
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
