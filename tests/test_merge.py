"""The merge rule on hand-built words and turns: overlap, gap, tie, empty, boundary repair."""

from __future__ import annotations

import numpy as np

from witness.merge import MergeOptions, exclusive_turns, merge, sentences
from witness.transcript import Turn, Word


def W(start, end, text="w"):
    return Word(start, end, text)


def assign_speakers(words, turns, gap_tolerance):
    """The speaker the merge gives each word (in the order given), before boundary repair."""
    options = MergeOptions(gap_tolerance=gap_tolerance, repair=False, interjections=False)
    merged = merge(words, turns, options).words
    speaker = {(w.start, w.end, w.text): w.speaker for w in merged}
    return [speaker[(w.start, w.end, w.text)] for w in words]


A, B, C = "SPEAKER_00", "SPEAKER_01", "SPEAKER_02"


def test_word_goes_to_the_turn_it_overlaps_most():
    turns = [Turn(0, 1.0, A), Turn(1.0, 2.0, B)]
    assert assign_speakers([W(0.7, 1.2), W(0.9, 1.4)], turns, 0.5) == [A, B]


def test_overlap_is_summed_per_speaker():
    turns = [Turn(0, 0.3, A), Turn(0.3, 0.6, B), Turn(0.6, 0.9, A)]
    assert assign_speakers([W(0.1, 0.8)], turns, 0.5) == [A]


def test_tie_goes_to_the_turn_holding_the_midpoint():
    # equal overlap (0.1 s each): the midpoint (1.0) decides, whichever turn comes first
    assert assign_speakers([W(0.8, 1.2)], [Turn(0, 0.9, A), Turn(0.95, 1.05, B)], 0.5) == [B]
    assert assign_speakers([W(0.8, 1.2)], [Turn(0.95, 1.05, A), Turn(1.1, 2.0, B)], 0.5) == [A]
    assert assign_speakers([W(0.9, 1.1)], [Turn(0, 1.0, A), Turn(1.0, 1.1, B), Turn(1.1, 2, A)], 0.5) == [A]


def test_word_in_a_gap_goes_to_the_nearest_turn_within_tolerance():
    turns = [Turn(0, 1.0, A), Turn(3.0, 4.0, B)]
    words = [W(1.2, 1.4), W(2.7, 2.9), W(1.8, 2.1)]
    assert assign_speakers(words, turns, 0.5) == [A, B, None]


def test_unattributed_words_are_kept_not_dropped():
    words = [W(0, 0.5, "hello"), W(5, 5.5, "there")]
    result = merge(words, [Turn(0, 1, A)], MergeOptions(gap_tolerance=0.5))
    assert [w.text for w in result.words] == ["hello", "there"]
    assert result.unattributed == 1
    assert [u.speaker for u in result.utterances] == [A, None]


def test_no_turns_and_no_words():
    assert merge([], [Turn(0, 1, A)]).utterances == ()
    result = merge([W(0, 1, "solo")], [])
    assert result.unattributed == 1 and result.utterances[0].text == "solo"


def test_zero_length_word_inside_a_turn():
    assert assign_speakers([W(1.5, 1.5)], [Turn(1, 2, B)], 0.0) == [B]


def test_utterances_break_at_speaker_changes_and_long_pauses():
    words = [W(0, 0.4, "Hi."), W(0.5, 0.9, "Hello."), W(1.0, 1.4, "Yes,"), W(4.0, 4.4, "again.")]
    turns = [Turn(0, 0.45, A), Turn(0.45, 5, B)]
    result = merge(words, turns, MergeOptions(utterance_pause=2.0))
    assert [(u.speaker, u.text) for u in result.utterances] == [(A, "Hi."), (B, "Hello. Yes,"), (B, "again.")]


def test_sentences_end_at_punctuation_and_pauses():
    words = [W(0, 0.2, "One"), W(0.3, 0.5, "two."), W(0.6, 0.8, "Three"), W(2.0, 2.2, "four")]
    assert sentences(words, 1.0) == [range(0, 2), range(2, 3), range(3, 4)]


def test_repair_gives_a_boundary_word_back_to_its_sentence():
    # "Oh, I'm from Chicago." is B's sentence, but the turn edge is late: "Oh," lands on A.
    words = [W(0, 0.5, "Sure."), W(0.9, 1.1, "Oh,"), W(1.15, 1.4, "I'm"), W(1.45, 1.8, "from"), W(1.85, 2.4, "Chicago.")]
    turns = [Turn(0, 1.15, A), Turn(1.15, 3, B)]
    plain = merge(words, turns, MergeOptions(repair=False))
    fixed = merge(words, turns)
    assert [w.speaker for w in plain.words] == [A, A, B, B, B]
    assert [w.speaker for w in fixed.words] == [A, B, B, B, B] and fixed.repaired == 1


def test_repair_resolves_a_turn_blip_inside_a_sentence():
    words = [W(i * 0.3, i * 0.3 + 0.25, t) for i, t in enumerate("we went to the store today.".split())]
    turns = [Turn(0, 0.85, A), Turn(0.85, 1.2, B), Turn(1.2, 3, A)]
    assert [w.speaker for w in merge(words, turns).words] == [A] * 6


def test_repair_keeps_a_change_marked_by_a_real_pause():
    words = [W(0, 0.4, "Hello"), W(0.9, 1.3, "hello")]  # one "sentence", two speakers, 0.5 s apart
    turns = [Turn(0, 0.6, A), Turn(0.6, 2, B)]
    assert [w.speaker for w in merge(words, turns).words] == [A, B]


def test_repair_leaves_long_runs_alone():
    words = [W(i * 0.3, i * 0.3 + 0.28, "w") for i in range(10)]  # no punctuation, no pause
    turns = [Turn(0, 1.5, A), Turn(1.5, 3, B)]
    assert [w.speaker for w in merge(words, turns).words] == [A] * 5 + [B] * 5


def test_exclusive_turns_keep_the_floor_with_who_spoke_first():
    turns = [Turn(0, 10, A), Turn(4, 5, B), Turn(9, 12, B)]  # a backchannel, then an early start
    assert exclusive_turns(turns) == (Turn(0, 10, A), Turn(10, 12, B))
    assert exclusive_turns([Turn(0, 3, A), Turn(2, 9, B)]) == (Turn(0, 3, A), Turn(3, 9, B))
    assert exclusive_turns([]) == ()
    assert exclusive_turns([Turn(0, 1, A), Turn(1, 2, A)]) == (Turn(0, 2, A),)


def test_a_word_that_fell_into_a_gap_follows_its_sentence_despite_a_pause():
    # "now, though." — ASR put "though." late, into the gap before B's turn; a pause alone
    # is no evidence that B said it, since no turn of B overlaps it.
    words = [W(20.4, 20.9, "Jersey"), W(20.94, 21.3, "now,"), W(21.66, 21.7, "though."), W(21.9, 22.4, "Well,")]
    turns = [Turn(18.0, 21.5, A), Turn(21.77, 28.0, B)]
    assert [w.speaker for w in merge(words, turns).words] == [A, A, A, B]
    assert [w.speaker for w in merge(words, turns, MergeOptions(repair=False)).words] == [A, A, B, B]


def said(start, end, text, speaker):
    return Word(start, end, text, speaker=speaker)


def test_a_word_that_comes_with_its_speaker_keeps_it():
    """A split stereo call's words carry their channel's party: no turn or repair moves them."""
    turns = [Turn(0, 2.0, A)]
    words = [said(0.0, 0.4, "so", A), said(0.5, 0.9, "yeah", B), said(1.0, 1.4, "then.", A)]
    assert [w.speaker for w in merge(words, turns).words] == [A, B, A]


def test_a_backchannel_said_over_a_sentence_does_not_cut_it():
    words = [said(0.0, 0.4, "I", A), said(0.5, 0.9, "went", A), said(0.6, 0.8, "mhm", B),
             said(1.0, 1.4, "home.", A)]
    assert [(u.speaker, u.text) for u in merge(words, []).utterances] == [(A, "I went home."), (B, "mhm")]


def test_an_answer_in_a_pause_ends_the_utterance():
    words = [said(0.0, 0.4, "Ready?", A), said(0.6, 0.9, "Yes.", B), said(1.2, 1.6, "Good.", A)]
    assert [(u.speaker, u.text) for u in merge(words, []).utterances] == [
        (A, "Ready?"), (B, "Yes."), (A, "Good.")]


def test_an_interjection_timed_after_a_wordless_turn_goes_to_that_turn():
    # B's "Hello?" was said in B's turn (1.0-1.7) but Whisper timed it just after, in A's turn.
    words = [W(0.2, 0.6, "Hello?"), W(1.72, 1.8, "Hello?"), W(1.9, 2.2, "Oh,"), W(2.3, 2.8, "hello.")]
    turns = [Turn(0, 0.7, A), Turn(1.0, 1.7, B), Turn(1.7, 3.0, A)]
    result = merge(words, turns)
    assert [w.speaker for w in result.words] == [A, B, A, A] and result.interjected == 1
    assert [w.speaker for w in merge(words, turns, MergeOptions(interjections=False)).words] == [A, A, A, A]


def test_an_interjection_stays_when_the_turn_before_it_has_words_or_is_a_blip():
    words = [W(1.1, 1.5, "Right."), W(1.72, 1.8, "Yes.")]
    assert [w.speaker for w in merge(words, [Turn(1.0, 1.7, B), Turn(1.7, 3.0, A)]).words] == [B, A]
    blip = [W(1.72, 1.8, "Yes.")]  # B's "turn" is 0.1 s: too short to be a word said
    assert [w.speaker for w in merge(blip, [Turn(1.6, 1.7, B), Turn(1.7, 3.0, A)]).words] == [A]


class Said:
    """Hand-set voices: what ``witness.opinion.Voices`` answers. ``said``: (start, end, unit
    vector) of who really spoke then; a region gets the vector of the one holding its middle
    (None: nobody, too short to judge). ``centroids``: the diarization's."""

    def __init__(self, said, centroids=None):
        self.said, self.centroids, self.asked = said, centroids or {}, []

    def vectors(self, regions):
        self.asked.extend(regions)
        return [next((np.asarray(v, float) for s, e, v in self.said if s <= (a + b) / 2 <= e), None) for a, b in regions]


VA, VB = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)


def test_second_opinion_moves_a_sentence_the_turns_gave_to_the_wrong_speaker():
    # B said "Sunday is the best day." inside A's turn: A's voice (the mean of A's pieces,
    # B's sentence included) is still closer to A's own pieces than to B's sentence.
    words = [W(0.0, 0.4, "We"), W(0.4, 0.8, "went"), W(0.8, 1.2, "to"), W(1.2, 1.6, "town"), W(1.6, 2.0, "today."),
             W(3.0, 3.4, "Sunday"), W(3.4, 3.8, "is"), W(3.8, 4.2, "the"), W(4.2, 4.6, "best"), W(4.6, 5.0, "day."),
             W(6.0, 6.4, "Yes"), W(6.4, 6.8, "it"), W(6.8, 7.2, "is"), W(7.2, 8.0, "done.")]
    turns = [Turn(0.0, 5.2, A), Turn(5.8, 8.2, B)]
    voices = Said([(0.0, 2.0, VA), (3.0, 5.0, VB), (6.0, 8.0, VB)])
    result = merge(words, turns, voices=voices)
    assert [w.speaker for w in result.words] == [A] * 5 + [B] * 9
    # every stretch is asked, in pieces of at least opinion_piece s (a tail under half joins the piece before)
    assert voices.asked == [(0.0, 1.2), (1.2, 2.0), (3.0, 4.2), (4.2, 5.0), (6.0, 7.2), (7.2, 8.0)]
    assert (result.opinions, result.reopined) == (6, 5)
    whole = Said(voices.said)
    assert merge(words, turns, MergeOptions(opinion_piece=5.0), voices=whole).opinions == 3
    off = merge(words, turns, MergeOptions(second_opinion=False), voices=Said(voices.said))
    assert [w.speaker for w in off.words] == [A] * 10 + [B] * 4 and off.opinions == 0


def test_a_piece_moves_only_by_the_margin():
    words = [W(0.0, 0.5, "We"), W(0.5, 1.0, "went"), W(1.0, 1.5, "home."), W(2.0, 2.5, "It"), W(2.5, 3.0, "rained.")]
    turns = [Turn(0.0, 3.2, A)]
    near = (0.96, 0.28, 0.0)  # cosine 0.96 with A, 0.28 with B
    voices = Said([(0.0, 1.5, VA), (2.0, 3.0, near)], centroids={A: VA, B: VB})
    assert [w.speaker for w in merge(words, turns, voices=voices).words] == [A] * 5
    # B has no words: the diarization's centroid is no voice to move to
    far = Said([(0.0, 1.5, VA), (2.0, 3.0, VB)], centroids={A: VA, B: VB})
    assert [w.speaker for w in merge(words, turns, voices=far).words] == [A] * 5


def test_a_speaker_without_a_long_piece_is_judged_by_its_diarization_centroid():
    # B's only words are one short answer (under opinion_piece): its voice is B's centroid, and
    # A's word that the turns gave B goes back to A; a region too short to judge (None) stays.
    words = [W(0.0, 0.5, "Are"), W(0.5, 1.0, "you"), W(1.0, 1.5, "there?"), W(2.0, 2.6, "Yes."),
             W(4.0, 4.6, "Good."), W(6.0, 6.1, "So")]
    turns = [Turn(0.0, 1.6, A), Turn(1.9, 2.7, B), Turn(3.9, 4.7, B), Turn(5.9, 6.2, B)]
    voices = Said([(0.0, 1.5, VA), (2.0, 2.6, VB), (4.0, 4.6, VA)], centroids={A: (0.0, 0.0, 1.0), B: VB})
    result = merge(words, turns, MergeOptions(interjections=False, repair=False), voices=voices)
    assert [w.speaker for w in result.words] == [A, A, A, B, A, B]


def test_a_voice_found_twice_goes_to_its_twin_and_three_voices_stay():
    # three speakers with words; C's voice is B's (cosine 0.995) and nobody else's: C, with less
    # word time, is B found twice. A voice of its own (VC) keeps three speakers.
    words = [W(0.0, 0.5, "We"), W(0.5, 1.0, "went"), W(1.0, 1.5, "out."), W(2.0, 2.5, "It"), W(2.5, 3.0, "was"),
             W(3.0, 3.5, "cold."), W(4.0, 4.5, "Very"), W(4.5, 5.0, "cold.")]
    turns = [Turn(0.0, 1.6, A), Turn(1.9, 3.6, B), Turn(3.9, 5.1, C)]
    twin = (0.0, 0.995, 0.0999)
    result = merge(words, turns, voices=Said([(0.0, 1.5, VA), (2.0, 3.5, VB), (4.0, 5.0, twin)]))
    assert [w.speaker for w in result.words] == [A] * 3 + [B] * 5 and result.absorbed == {C: B}
    off = merge(words, turns, MergeOptions(split_gap=0.0), voices=Said([(0.0, 1.5, VA), (2.0, 3.5, VB), (4.0, 5.0, twin)]))
    assert [w.speaker for w in off.words] == [A] * 3 + [B] * 3 + [C] * 2 and off.absorbed == {}
    own = merge(words, turns, voices=Said([(0.0, 1.5, VA), (2.0, 3.5, VB), (4.0, 5.0, (0.0, 0.0, 1.0))]))
    assert [w.speaker for w in own.words] == [A] * 3 + [B] * 3 + [C] * 2 and own.absorbed == {}


def test_words_that_come_with_their_speaker_get_no_second_opinion():
    words = [said(0.0, 0.4, "Ready?", A), said(0.6, 0.9, "Yes.", B)]
    voices = Said([(0.0, 0.4, VB), (0.6, 0.9, VA)], centroids={A: VA, B: VB})
    assert [w.speaker for w in merge(words, [Turn(0, 1, A)], voices=voices).words] == [A, B] and voices.asked == []
