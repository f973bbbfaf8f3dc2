"""Window embeddings that mix two voices (witness.diarize.mixed), with real segmentation-3.0
and CAM++ on the sample call: where the segmentation gives each voice its own local speaker,
nothing much is mixed; where each window's voices are joined into one local speaker (what the
model does with two similar voices), the windows holding both voices' turns are found, and
those holding one voice's are not. In the pipeline, devcall_03's count is in
test_diarize_split.py."""

from __future__ import annotations

import numpy as np
import pytest

from witness.diarize.clustering import filter_embeddings
from witness.diarize.config import SpeakerBounds, SplitConfig, config_for
from witness.diarize.mixed import mixed_windows
from witness.diarize.pipeline import Diarizer
from witness.diarize.split import embedded_turns, middle
from witness.diarize.windows import Segmentations
from witness.rttm import read_rttm

from tests.test_diarize_split import exclusive


@pytest.fixture(scope="module")
def sample(default_models, sample_audio, sample_call):
    """The sample call's windows, and its reference turns' middle pieces, their embeddings and speakers."""
    diarizer = Diarizer(default_models, config_for("campplus"))
    reference = tuple(read_rttm(sample_call / "sample.rttm")["sample"])
    long, vectors = embedded_turns(exclusive(reference), sample_audio, diarizer.embedder.embed, SplitConfig())
    pieces = np.array([middle(t, SplitConfig().turn_seconds) for t in long])
    return diarizer.embed_windows(sample_audio), pieces, vectors, [t.speaker for t in long]


def test_voices_in_their_own_local_speakers_are_hardly_mixed(sample):
    windows, pieces, vectors, _ = sample
    train = filter_embeddings(windows.embeddings, windows.segmentations)
    mixed = mixed_windows(windows.segmentations, train, pieces, vectors, SplitConfig().mixed_cosine)
    assert mixed.sum() <= 0.05 * len(train.chunk_idx)  # one of 37: a 1.5 s piece scores 0.47 with its own voice


def test_two_voices_in_one_local_speaker_are_found_where_both_talk(sample):
    windows, pieces, vectors, speakers = sample
    seg = windows.segmentations
    joined = np.zeros_like(seg.data)
    joined[:, :, 0] = seg.data.max(axis=2)
    one = Segmentations(joined, seg.window, seg.frame_step, seg.frame_duration)
    embeddings = np.zeros_like(windows.embeddings)  # finite: which rows enter clustering depends on them
    mixed = mixed_windows(one, filter_embeddings(embeddings, one), pieces, vectors, SplitConfig().mixed_cosine)
    assert not mixed[:, 1:].any()
    inside = [{s for (a, b), s in zip(pieces, speakers) if c <= a and b <= c + 10} for c in range(seg.num_chunks)]
    both = [c for c, held in enumerate(inside) if len(held) == 2]
    only = [c for c, held in enumerate(inside) if len(held) == 1 and c <= 5]  # speaker90's first two turns
    assert both and mixed[both, 0].all()
    assert only and not mixed[only, 0].any()


def test_leaving_mixed_windows_out_never_leaves_one_voice(default_models, sample_audio, monkeypatch):
    """When the embeddings left out held the second voice (a quiet party flagged as mixed), the
    second clustering finds one speaker; the first count stands. Faked: which windows are
    flagged (all but two of the first speaker's), not the clustering."""
    diarizer = Diarizer(default_models, config_for("campplus"))
    windows = diarizer.embed_windows(sample_audio)
    first = diarizer.cluster_windows(windows, SpeakerBounds(), len(sample_audio) / 16000)
    assert first.found == 2

    def all_but_two(segmentations, train, *_):
        mixed = np.ones(segmentations.data.shape[::2], dtype=bool)
        mixed[train.chunk_idx[:2], train.speaker_idx[:2]] = False
        return mixed

    monkeypatch.setattr("witness.diarize.pipeline.mixed_windows", all_but_two)
    again = diarizer.cluster_windows(windows, SpeakerBounds(), len(sample_audio) / 16000, signal=sample_audio)
    assert again.found == 2 and len({t.speaker for t in again.turns}) == 2
