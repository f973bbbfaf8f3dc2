"""DER against pyannote.metrics on real RTTM pairs and deterministic perturbations of them."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from witness.evaluate import CONVENTIONS, diarization_error
from witness.evaluate.corpus import pair_files, score_files
from witness.evaluate.regions import overlaps, scored_regions
from witness.evaluate.stm import read_stm
from witness.rttm import read_rttm
from witness.transcript import Turn

TOLERANCE = 1e-6


# --- deterministic perturbations ------------------------------------------------------


def shifted(turns: list[Turn], seed: int, max_shift: float) -> list[Turn]:
    """Every start and end moved by up to ± max_shift seconds (turns stay non-empty, >= 0)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in turns:
        ds, de = rng.uniform(-max_shift, max_shift, size=2)
        start = max(0.0, t.start + ds)
        out.append(Turn(start, max(start + 0.05, t.end + de), t.speaker))
    return out


def dropped(turns: list[Turn], every: int) -> list[Turn]:
    return [t for i, t in enumerate(turns) if i % every != every - 1]


def relabelled(turns: list[Turn], names: dict[str, str]) -> list[Turn]:
    return [replace(t, speaker=names.get(t.speaker, t.speaker)) for t in turns]


def split_speaker(turns: list[Turn], speaker: str) -> list[Turn]:
    """Every other turn of ``speaker`` goes to a new label (an over-clustered hypothesis)."""
    out, flip = [], False
    for t in turns:
        if t.speaker == speaker:
            out.append(replace(t, speaker=speaker + "_bis") if flip else t)
            flip = not flip
        else:
            out.append(t)
    return out


def with_false_alarms(turns: list[Turn], seed: int) -> list[Turn]:
    """Adds a turn in every gap longer than 0.5 s and a few turns overlapping speech."""
    rng = np.random.default_rng(seed)
    ordered = sorted(turns, key=lambda t: t.start)
    extra = [Turn(a.end + 0.1, b.start - 0.1, "INTRUDER") for a, b in zip(ordered, ordered[1:]) if b.start - a.end > 0.5]
    for t in rng.choice(len(ordered), size=min(3, len(ordered)), replace=False):
        turn = ordered[int(t)]
        extra.append(Turn(turn.start + 0.2, turn.start + 0.9, "INTRUDER"))
    return [*turns, *extra]


def with_overlap(turns: list[Turn], stretch: float) -> list[Turn]:
    """Each turn runs ``stretch`` seconds longer, into the next speaker's turn."""
    return [replace(t, end=t.end + stretch) for t in turns]


# --- real inputs ----------------------------------------------------------------------


def only(rttm: Path) -> list[Turn]:
    (turns,) = read_rttm(rttm).values()
    return turns


def stm_turns(stm: Path) -> list[Turn]:
    return [Turn(s.start, s.end, s.speaker) for s in read_stm(stm)]


def pairs(sample_call: Path, fixtures_dir: Path) -> dict[str, tuple[list[Turn], list[Turn]]]:
    sample = only(sample_call / "sample.rttm")
    stm = stm_turns(sample_call / "sample.stm")
    old, new = only(fixtures_dir / "expected.rttm"), only(fixtures_dir / "pipeline_expected.rttm")
    three = only(fixtures_dir / "3speakers_expected.rttm")
    return {
        "fixtures-old-vs-new": (old, new),
        "sample-rttm-vs-stm": (sample, stm),
        "stm-vs-sample-rttm": (stm, sample),
        "sample-perturbed": (sample, with_false_alarms(relabelled(dropped(shifted(sample, 1, 0.3), 4), {"speaker90": "B", "speaker91": "A"}), 2)),
        "stm-vs-overlapping": (stm, with_overlap(shifted(sample, 3, 0.2), 0.6)),
        "3spk-merged": (three, shifted(relabelled(three, {"SPEAKER_02": "SPEAKER_01"}), 4, 0.25)),
        "3spk-split-overlap": (three, with_overlap(split_speaker(with_false_alarms(three, 5), "SPEAKER_01"), 0.4)),
        "pipeline-dropped": (new, dropped(shifted(new, 6, 0.5), 2)),
        "pipeline-self-overlap": (new, [*new, Turn(new[0].start + 1.0, new[0].start + 3.0, new[0].speaker)]),
        "sample-empty-hypothesis": (sample, []),
    }


# --- pyannote.metrics ----------------------------------------------------------------


def pyannote_der(reference: list[Turn], hypothesis: list[Turn], collar: float, skip_overlap: bool, uem=None) -> dict:
    from pyannote.core import Annotation, Segment, Timeline
    from pyannote.metrics.diarization import DiarizationErrorRate

    def annotation(turns: list[Turn]) -> Annotation:
        a = Annotation()
        for i, t in enumerate(turns):
            a[Segment(t.start, t.end), i] = t.speaker
        return a

    timeline = None if uem is None else Timeline([Segment(s, e) for s, e in uem])
    metric = DiarizationErrorRate(collar=2 * collar, skip_overlap=skip_overlap)  # pyannote: total width
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return metric(annotation(reference), annotation(hypothesis), uem=timeline, detailed=True)


def differences(reference, hypothesis, collar, skip_overlap, uem=None) -> dict[str, float]:
    ours = diarization_error(reference, hypothesis, collar, skip_overlap, uem)
    theirs = pyannote_der(reference, hypothesis, collar, skip_overlap, uem)
    return {
        "der": abs(ours.der - theirs["diarization error rate"]),
        "missed": abs(ours.missed - theirs["missed detection"]),
        "false_alarm": abs(ours.false_alarm - theirs["false alarm"]),
        "confusion": abs(ours.confusion - theirs["confusion"]),
        "total": abs(ours.total - theirs["total"]),
    }


UEM = [(1.0, 9.5), (12.0, 19.0), (20.5, 60.0)]


def max_differences(sample_call: Path, fixtures_dir: Path) -> dict[str, float]:
    """Largest |ours - pyannote.metrics| over every pair, part and UEM choice, per convention."""
    worst = {}
    for name, (collar, skip) in CONVENTIONS.items():
        worst[name] = max(
            max(differences(ref, hyp, collar, skip, uem).values())
            for ref, hyp in pairs(sample_call, fixtures_dir).values()
            for uem in (None, UEM)
        )
    return worst


@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
@pytest.mark.parametrize("uem", [None, UEM], ids=["no-uem", "uem"])
def test_der_equals_pyannote_metrics(sample_call, fixtures_dir, convention, uem):
    collar, skip = CONVENTIONS[convention]
    for name, (ref, hyp) in pairs(sample_call, fixtures_dir).items():
        diff = differences(ref, hyp, collar, skip, uem)
        assert max(diff.values()) < TOLERANCE, (name, diff)



def test_der_equals_pyannote_metrics_on_coinciding_boundaries():
    # Times on a 0.25 s grid make turns touch, repeat, and end exactly on collar and UEM
    # edges: the corner cases where interval conventions differ.
    rng = np.random.default_rng(0)

    def turns(count: int, speakers: int) -> list[Turn]:
        starts = rng.integers(0, 120, size=count) / 4
        lengths = rng.integers(1, 20, size=count) / 4
        labels = rng.integers(0, speakers, size=count)
        return [Turn(float(s), float(s + d), f"s{k}") for s, d, k in zip(starts, lengths, labels)]

    for case in range(100):
        ref, hyp = turns(int(rng.integers(0, 12)), 3), turns(int(rng.integers(0, 12)), 4)
        for collar, skip in CONVENTIONS.values():
            for uem in (None, [(2.0, 10.0), (10.0, 12.5), (15.0, 40.0)]):
                diff = differences(ref, hyp, collar, skip, uem)
                assert max(diff.values()) < TOLERANCE, (case, collar, skip, uem, diff)

def test_pairs_are_not_trivial(sample_call, fixtures_dir):
    # The perturbations must actually produce every kind of error, or the cross-check proves little.
    results = [diarization_error(r, h) for r, h in pairs(sample_call, fixtures_dir).values()]
    assert sum(r.der == 0 for r in results) == 1  # only the two fixture outputs agree exactly
    assert all(max(getattr(r, part) for r in results) > 1.0 for part in ("missed", "false_alarm", "confusion"))
    sample = only(sample_call / "sample.rttm")
    assert (18.15, 18.59) in overlaps(sample)  # the reference itself has overlapped speech


def test_several_files_sum_their_parts_like_pyannote(sample_call, fixtures_dir):
    from pyannote.core import Annotation, Segment
    from pyannote.metrics.diarization import DiarizationErrorRate

    chosen = pairs(sample_call, fixtures_dir)
    ids = ["sample-perturbed", "3spk-merged", "pipeline-dropped"]
    files = pair_files({i: chosen[i][0] for i in ids}, {i: chosen[i][1] for i in ids})
    report = score_files(files, *CONVENTIONS["paper"])
    metric = DiarizationErrorRate(collar=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in ids:
            ref, hyp = (Annotation(uri=i), Annotation(uri=i))
            for k, t in enumerate(chosen[i][0]):
                ref[Segment(t.start, t.end), k] = t.speaker
            for k, t in enumerate(chosen[i][1]):
                hyp[Segment(t.start, t.end), k] = t.speaker
            metric(ref, hyp)
    assert list(report.files) == ids
    assert abs(report.total.der - abs(metric)) < TOLERANCE
    assert abs(report.total.confusion - metric["confusion"]) < TOLERANCE
    assert abs(report.total.total - sum(r.total for r in report.files.values())) < 1e-9


def test_hand_computed_example():
    # ref: A 0-10, B 10-20.  hyp: x 0-12, y 12-20, z 20-21.
    ref = [Turn(0, 10, "A"), Turn(10, 20, "B")]
    hyp = [Turn(0, 12, "x"), Turn(12, 20, "y"), Turn(20, 21, "z")]
    strict = diarization_error(ref, hyp)
    assert strict.mapping == {"x": "A", "y": "B"}
    assert (strict.missed, strict.false_alarm, strict.confusion, strict.total) == (0, 1, 2, 20)
    assert strict.der == pytest.approx(3 / 20)
    # ± 0.25 s around 0, 10 (twice) and 20: 1 s of reference speech is not scored; the
    # false alarm loses 20-20.25 and the confusion 9.75-10.25 (what is left: 10.25-12).
    paper = diarization_error(ref, hyp, collar=0.25)
    assert paper.total == pytest.approx(19)
    assert paper.false_alarm == pytest.approx(0.75)
    assert paper.confusion == pytest.approx(1.75)


def test_collar_and_overlap_regions():
    ref = [Turn(0, 10, "A"), Turn(8, 12, "B")]
    assert scored_regions(ref, [], collar=0.5) == [(0.5, 7.5), (8.5, 9.5), (10.5, 11.5)]
    assert scored_regions(ref, [], skip_overlap=True) == [(0, 8), (10, 12)]
    assert scored_regions(ref, [], uem=[(5, 9), (1, 2), (8.5, 20)]) == [(1, 2), (5, 20)]


def test_empty_inputs():
    assert diarization_error([], []).der == 0.0
    only_fa = diarization_error([], [Turn(0, 1, "x")])
    assert (only_fa.der, only_fa.false_alarm, only_fa.total) == (1.0, 1.0, 0.0)
    missed = diarization_error([Turn(0, 2, "A")], [])
    assert (missed.der, missed.missed) == (1.0, 2.0)


def test_inputs_are_not_mutated(sample_call):
    ref = only(sample_call / "sample.rttm")
    hyp = shifted(ref, 9, 0.3)
    before = (list(ref), list(hyp))
    diarization_error(ref, hyp, 0.25, True)
    assert (ref, hyp) == before
