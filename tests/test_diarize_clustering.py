"""Clustering reproduces pyannote's partitions on its own embeddings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.diarize_data import PREFIXES, load, same_partition, segmentations
from witness.diarize.assign import UNASSIGNED, cosine_similarity
from witness.diarize.clustering import ahc, ahc_clusters, cluster, filter_embeddings
from witness.diarize.config import CAMPPLUS_CLUSTERING, PYANNOTE_3_1, ClusteringConfig, SpeakerBounds
from witness.diarize.windows import Segmentations
from witness.rttm import read_rttm

EXPECTED_SPEAKERS = {"pipeline": 2, "3speakers": 3, "single_speaker": 1, "short": 1}


def test_filter_keeps_the_embeddings_pyannote_kept(fixtures_dir):
    seg = segmentations(fixtures_dir, "pipeline")
    embeddings = load(fixtures_dir, "pipeline_embeddings_data.npy")
    train = filter_embeddings(embeddings, seg, min_active_ratio=0.2)
    np.testing.assert_array_equal(train.chunk_idx, load(fixtures_dir, "pipeline_train_chunk_idx.npy"))
    np.testing.assert_array_equal(train.speaker_idx, load(fixtures_dir, "pipeline_train_speaker_idx.npy"))
    np.testing.assert_array_equal(train.embeddings, load(fixtures_dir, "pipeline_train_embeddings.npy"))


def test_ahc_gives_pyannotes_partition(fixtures_dir):
    train = load(fixtures_dir, "pipeline_train_embeddings.npy")
    before = train.copy()
    labels = ahc(train, threshold=0.6, method="centroid")
    assert same_partition(labels, load(fixtures_dir, "pipeline_ahc_clusters.npy"))
    np.testing.assert_array_equal(train, before)  # normalised on a copy, not in place


def test_memory_saving_centroid_linkage_equals_scipys(fixtures_dir):
    from scipy.cluster.hierarchy import fcluster, linkage

    from witness.diarize.clustering import _dendrogram

    normed = load(fixtures_dir, "3speakers_embeddings_data.npy").reshape(-1, 256).astype(np.float64)
    normed = normed[~np.isnan(normed).any(axis=1)]
    normed /= np.linalg.norm(normed, axis=1, keepdims=True)
    ours, scipys = _dendrogram(normed, "centroid"), linkage(normed, "centroid")
    np.testing.assert_allclose(ours[:, 2], scipys[:, 2], atol=1e-9)  # merge heights
    for threshold in (0.3, 0.6, 0.9):  # equal-height merges (duplicate rows) may come in another order
        assert same_partition(fcluster(ours, threshold, "distance"), fcluster(scipys, threshold, "distance"))


@pytest.mark.parametrize("config", [ClusteringConfig(), PYANNOTE_3_1.clustering], ids=["default AHC", "3.1"])
def test_ahc_clustering_without_plda_gives_the_same_partition(fixtures_dir, config):
    seg = segmentations(fixtures_dir, "pipeline")
    clusters = cluster(load(fixtures_dir, "pipeline_embeddings_data.npy"), seg, config)
    assert same_partition(clusters.hard, load(fixtures_dir, "pipeline_hard_clusters.npy"))


@pytest.mark.parametrize("prefix", PREFIXES)
def test_speakers_found_per_fixture_file(fixtures_dir, prefix):
    seg = segmentations(fixtures_dir, prefix)
    clusters = cluster(load(fixtures_dir, f"{prefix}_embeddings_data.npy"), seg)
    reference = read_rttm(fixtures_dir / f"{prefix}_expected.rttm")
    assert {t.speaker for turns in reference.values() for t in turns} == {
        f"SPEAKER_{k:02d}" for k in range(EXPECTED_SPEAKERS[prefix])
    }
    assert clusters.num_clusters == EXPECTED_SPEAKERS[prefix]
    active = seg.active_local_speakers()
    assert np.all((clusters.hard == UNASSIGNED) | active)
    assert np.all(clusters.hard[~active] == UNASSIGNED)


def test_two_local_speakers_of_one_window_never_share_a_speaker(fixtures_dir):
    seg = segmentations(fixtures_dir, "3speakers")
    hard = cluster(load(fixtures_dir, "3speakers_embeddings_data.npy"), seg).hard
    for row in hard:
        assigned = row[row != UNASSIGNED]
        assert len(set(assigned.tolist())) == len(assigned)


@pytest.mark.parametrize(
    "bounds, found",
    [
        (SpeakerBounds(), 3),
        (SpeakerBounds(num_speakers=1), 1),
        (SpeakerBounds(num_speakers=2), 2),
        (SpeakerBounds(num_speakers=4), 4),
        (SpeakerBounds(min_speakers=4), 4),
        (SpeakerBounds(max_speakers=2), 2),
        (SpeakerBounds(min_speakers=2, max_speakers=5), 3),
    ],
)
def test_speaker_bounds_with_ahc(fixtures_dir, bounds, found):
    seg = segmentations(fixtures_dir, "3speakers")
    clusters = cluster(load(fixtures_dir, "3speakers_embeddings_data.npy"), seg, bounds=bounds)
    assert clusters.num_clusters == found
    assert len(np.unique(clusters.hard[clusters.hard != UNASSIGNED])) == found
    assert clusters.found == 3  # what the threshold gave, before the bounds


def test_found_is_reported_when_one_speaker_is_forced(fixtures_dir):
    seg = segmentations(fixtures_dir, "3speakers")
    clusters = cluster(load(fixtures_dir, "3speakers_embeddings_data.npy"), seg, bounds=SpeakerBounds(max_speakers=1))
    assert clusters.num_clusters == 1 and clusters.found == 3


def test_speaker_bounds_are_validated():
    assert SpeakerBounds().target is None and SpeakerBounds().high == float("inf")
    assert SpeakerBounds(num_speakers=3, min_speakers=5).target == 3
    assert SpeakerBounds(min_speakers=2, max_speakers=4).forced_count(5) == 4
    assert SpeakerBounds(min_speakers=2, max_speakers=4).forced_count(1) == 2
    assert SpeakerBounds(min_speakers=2, max_speakers=4).forced_count(3) is None
    assert SpeakerBounds(min_speakers=5).within(3).target == 3  # never more than the embeddings
    with pytest.raises(ValueError, match="must not exceed"):
        SpeakerBounds(min_speakers=4, max_speakers=2)
    with pytest.raises(ValueError, match=">= 1"):
        SpeakerBounds(num_speakers=0)


def test_silence_clusters_nothing(fixtures_dir):
    seg = segmentations(fixtures_dir, "short")
    silent = Segmentations(np.zeros_like(seg.data), seg.window, seg.frame_step, seg.frame_duration)
    clusters = cluster(load(fixtures_dir, "short_embeddings_data.npy"), silent)
    assert np.all(clusters.hard == UNASSIGNED)


def test_cosine_similarity_equals_the_fixture(fixtures_dir):
    vectors = load(fixtures_dir, "cosine_sim_input.npy")
    np.testing.assert_allclose(
        cosine_similarity(vectors, vectors), load(fixtures_dir, "cosine_sim_expected.npy"), rtol=0, atol=1e-6
    )


def _on_circle(degrees):
    """(n, 2) float32 unit vectors at the given angles."""
    radians = np.radians(np.asarray(degrees, dtype=np.float64))
    return np.stack([np.cos(radians), np.sin(radians)], axis=1).astype(np.float32)


def _groups(sizes, rng, spread=0.05, dim=16):
    """Points around random directions: (sum(sizes), dim) float32 and their group ids."""
    centres = rng.normal(size=(len(sizes), dim))
    ids = np.repeat(np.arange(len(sizes)), sizes)
    return (centres[ids] + spread * rng.normal(size=(len(ids), dim))).astype(np.float32), ids


def test_small_clusters_join_the_closest_large_one():
    jitter = [-2.0, -1.0, 0.0, 1.0, 2.0, 0.5]
    groups = [  # (angle in degrees, the large group it belongs with)
        *[(0 + j, 0) for j in jitter],
        *[(90 + j, 1) for j in jitter],
        *[(180 + j, 2) for j in jitter],
        *[(270 + j, 3) for j in jitter],
        (62, 1), (63, 1), (300, 3), (301, 3), (330, 0), (331, 0),  # three stray pairs
    ]
    embeddings = _on_circle([angle for angle, _ in groups])
    assert ahc(embeddings, threshold=0.2).max() + 1 == 7  # each pair is a cluster of its own
    labels = ahc_clusters(embeddings, threshold=0.2, min_cluster_size=3)
    assert same_partition(labels, [group for _, group in groups])


def test_ahc_cuts_the_dendrogram_at_the_requested_count():
    points, ids = _groups([10, 10, 10, 10], np.random.default_rng(1))
    assert same_partition(ahc_clusters(points, threshold=0.5), ids)
    for count in (1, 2, 3, 5):
        labels = ahc_clusters(points, threshold=0.5, bounds=SpeakerBounds(num_speakers=count))
        assert labels.max() + 1 == count
    assert ahc_clusters(points, 0.5, bounds=SpeakerBounds(max_speakers=2)).max() + 1 == 2
    assert ahc_clusters(points, 0.5, bounds=SpeakerBounds(min_speakers=6)).max() + 1 == 6


def test_the_shipped_cohort_is_campplus_sized_with_its_provenance():
    import json
    from importlib import resources

    from witness.diarize.clustering import load_cohort

    cohort = load_cohort(CAMPPLUS_CLUSTERING.cohort)
    assert cohort.shape[1] == 192 and len(cohort) >= CAMPPLUS_CLUSTERING.cohort_top
    np.testing.assert_allclose(np.linalg.norm(cohort, axis=1), 1.0, atol=1e-6)
    provenance = json.loads(resources.files("witness.diarize").joinpath("data", "campplus_cohort.json").read_text())
    assert len(provenance["rows"]) == len(cohort) and provenance["corpus"]["part"] == "tune"


def _clips(campplus_reference, rows):
    clips = campplus_reference["embeddings"][rows].astype(np.float64)
    return clips / np.linalg.norm(clips, axis=1, keepdims=True)


def test_snorm_merge_joins_one_voice_and_keeps_two_apart(campplus_reference):
    """Real CAM++ clips: clips 1 and 2 are one woman of the sample call, clip 3 a man of
    devcall_01; a cluster per clip, the s-norm merge joins only the first two."""
    from witness.diarize.clustering import merge_by_snorm, score_merge

    normed = _clips(campplus_reference, [1, 2, 3])
    merge = score_merge(CAMPPLUS_CLUSTERING)
    assert merge.penalty == CAMPPLUS_CLUSTERING.cannot_link_penalty > 0
    labels = merge_by_snorm(normed, np.arange(3), merge)
    assert same_partition(labels, [0, 0, 1])
    forced = merge_by_snorm(normed, np.arange(3), dataclasses.replace(merge, threshold=-np.inf), floor=1)
    assert same_partition(forced, [0, 0, 0])  # a --max-speakers 1 merges on


def test_a_cannot_link_lowers_the_merge_score_by_the_penalty(campplus_reference):
    """Real CAM++ clips 1 and 2 (one woman) score about 16 by s-norm; with the merge's cut
    between 16 - penalty and 16 they join, unless segmentation heard them in one window."""
    from witness.diarize.clustering import merge_by_snorm, score_merge, snorm_scores

    normed = _clips(campplus_reference, [1, 2, 3])
    merge = score_merge(CAMPPLUS_CLUSTERING)
    pair = snorm_scores(normed, merge.cohort, merge.top)[0, 1]
    cut = dataclasses.replace(merge, threshold=pair - merge.penalty / 2)
    assert same_partition(merge_by_snorm(normed, np.arange(3), cut), [0, 0, 1])
    rivals = np.array([[1, 0]])  # clip 2 and clip 1 as two local speakers of one window
    assert same_partition(merge_by_snorm(normed, np.arange(3), cut, rivals=rivals), [0, 1, 2])
    forced = merge_by_snorm(normed, np.arange(3), dataclasses.replace(cut, threshold=-np.inf), floor=1, rivals=rivals)
    assert same_partition(forced, [0, 0, 0])  # the bounds still win over a cannot-link


def test_a_small_cluster_of_another_voice_stays_and_a_stray_row_joins(campplus_reference):
    """Real CAM++ clips: 12 rows of a woman of the sample call (clip 2), 12 of a man of
    devcall_01 (clip 4), one row of the same woman (clip 3, cosine 0.87: a cluster of its own at
    0.45) and one of a devcall_03 voice (clip 6). Both rows are under ``min_cluster_size``; with
    ``small_apart`` only the other voice's (s-norm -3 at best with the large clusters, under the
    cut 5 less 4) stays a speaker, the woman's stray row (16) still joins her; not where the
    merge finds one voice (``small_speakers``: 2 to 4)."""
    from witness.diarize.clustering import ahc_clusters_found, score_merge

    normed = _clips(campplus_reference, [1] * 12 + [3] * 12 + [2, 5])
    merge = score_merge(CAMPPLUS_CLUSTERING)
    found = {apart: ahc_clusters_found(normed, CAMPPLUS_CLUSTERING.threshold, "centroid", 3, merge=merge,
                                       small_apart=apart)[0] for apart in (None, 4.0)}
    assert same_partition(found[4.0], [0] * 12 + [1] * 12 + [0, 2])
    assert found[None].max() + 1 == 2 and same_partition(found[None][:25], [0] * 12 + [1] * 12 + [0])
    alone = _clips(campplus_reference, [1] * 24 + [2, 5])  # the woman alone: one voice keeps its odd rows
    assert ahc_clusters_found(alone, CAMPPLUS_CLUSTERING.threshold, "centroid", 3, merge=merge,
                              small_apart=4.0)[0].max() == 0


def test_rival_pairs_are_local_speakers_of_one_window():
    from witness.diarize.clustering import TrainingSet, rival_pairs

    chunk = np.array([4, 0, 4, 1, 4, 0])
    speaker = np.array([0, 1, 1, 0, 2, 0])
    train = TrainingSet(np.zeros((6, 2), dtype=np.float32), chunk, speaker)
    pairs = {tuple(sorted(p)) for p in rival_pairs(train).tolist()}
    assert pairs == {(0, 2), (0, 4), (2, 4), (1, 5)}
    assert rival_pairs(TrainingSet(np.zeros((0, 2), dtype=np.float32), chunk[:0], speaker[:0])).shape == (0, 2)


@pytest.mark.parametrize("bounds, count", [(SpeakerBounds(num_speakers=1), 1), (SpeakerBounds(num_speakers=4), 4),
                                           (SpeakerBounds(max_speakers=1), 1)])
def test_speaker_bounds_win_over_the_snorm_merge(fixtures_dir, bounds, count):
    """Real WeSpeaker fixture embeddings cut to CAM++'s 192 dimensions: the bounds are under test."""
    seg = segmentations(fixtures_dir, "3speakers")
    embeddings = load(fixtures_dir, "3speakers_embeddings_data.npy")[:, :, :192]
    clusters = cluster(embeddings, seg, CAMPPLUS_CLUSTERING, bounds)
    assert clusters.num_clusters == count


@pytest.fixture(scope="module")
def ge2e_clips(campplus_reference, shared_dir):
    """Real GE2E rows (unit) of campplus_reference's clips 1-3 (the same audio CAM++ heard)."""
    from tests.conftest import REPO
    from witness.audio import load_audio
    from witness.diarize.embedding import GE2EEmbedder
    from witness.models.ge2e import ge2e_onnx_path

    embedder = GE2EEmbedder(ge2e_onnx_path())
    rows = []
    for i in (1, 2, 3):
        name = str(campplus_reference["files"][i])
        path = REPO / "tests" / name if "sample-call" in name else shared_dir / name
        start, length = int(campplus_reference["starts"][i]), int(campplus_reference["lengths"][i])
        rows.append(embedder.embed(load_audio(path).samples[None, start:start + length])[0])
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_shipped_ge2e_cohort_has_its_provenance():
    import json
    from importlib import resources

    from witness.diarize.clustering import load_cohort

    cohort = load_cohort("ge2e_cohort.npy")
    assert cohort.shape[1] == 256 and len(cohort) >= CAMPPLUS_CLUSTERING.cohort_top
    provenance = json.loads(resources.files("witness.diarize").joinpath("data", "ge2e_cohort.json").read_text())
    assert len(provenance["rows"]) == len(cohort) and provenance["corpus"]["part"] == "tune"


def test_a_second_model_adds_its_weighted_snorm_to_the_merge_score(campplus_reference, ge2e_clips):
    """Real CAM++ and GE2E rows of the same three clips (1 and 2 one woman, 3 a man): the merge
    scores each pair by CAM++'s s-norm plus the weight times GE2E's, still joining only the woman."""
    from witness.diarize.clustering import (SecondScore, load_cohort, merge_by_snorm, next_merge, score_merge,
                                            snorm_scores)

    normed = _clips(campplus_reference, [1, 2, 3])
    config = dataclasses.replace(CAMPPLUS_CLUSTERING, second_cohort="ge2e_cohort.npy", second_weight=0.5,
                                 second_snorm_threshold=7.0)
    merge = score_merge(config, ge2e_clips)
    assert merge.second.weight == 0.5 and merge.threshold == 7.0
    camplus = snorm_scores(normed, merge.cohort, merge.top)[0, 1]
    ge2e = snorm_scores(ge2e_clips, load_cohort("ge2e_cohort.npy"), merge.top)[0, 1]
    a, b, score, _ = next_merge(normed, np.arange(3), merge)
    assert {a, b} == {0, 1} and score == pytest.approx(camplus + 0.5 * ge2e)
    assert ge2e > 0  # GE2E too hears one voice in clips 1 and 2
    assert same_partition(merge_by_snorm(normed, np.arange(3), merge), [0, 0, 1])
    alone = score_merge(dataclasses.replace(config, second_weight=0.0), ge2e_clips)
    assert alone.second is None and alone.threshold == CAMPPLUS_CLUSTERING.snorm_threshold
    assert next_merge(normed, np.arange(3), alone)[2] == pytest.approx(camplus)
    zero = dataclasses.replace(merge, second=SecondScore(np.zeros_like(ge2e_clips), merge.second.cohort, 0.5))
    assert next_merge(normed, np.arange(3), zero)[2] == pytest.approx(camplus)  # zero rows (none taken) add nothing


def test_cluster_takes_the_second_rows_of_the_clustered_embeddings(fixtures_dir):
    """Real WeSpeaker fixture embeddings cut to CAM++'s 192 dimensions as CAM++ rows and, as the
    second model's, the same embeddings whole: weight 0 (the default) is CAM++'s merge alone."""
    seg = segmentations(fixtures_dir, "3speakers")
    embeddings = load(fixtures_dir, "3speakers_embeddings_data.npy")
    alone = cluster(embeddings[:, :, :192], seg, CAMPPLUS_CLUSTERING)
    ignored = cluster(embeddings[:, :, :192], seg, CAMPPLUS_CLUSTERING, second=embeddings)
    assert np.array_equal(alone.hard, ignored.hard)
    with pytest.raises(ValueError, match="second_cohort"):
        ClusteringConfig(second_weight=0.5)
