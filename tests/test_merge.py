"""The merge rule on hand-built words and turns: overlap, gap, tie, empty, boundary repair."""

from __future__ import annotations

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


A, B = "SPEAKER_00", "SPEAKER_01"


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


class Scores:
    """Hand-set voice scores by region start: what ``witness.opinion.Voices`` answers."""

    def __init__(self, by_start):
        self.by_start, self.asked = by_start, []

    def scores(self, regions):
        self.asked.extend(regions)
        return [self.by_start.get(start) for start, _ in regions]


def test_second_opinion_moves_a_doubtful_stretch_to_a_clearly_closer_voice():
    # "…book, Sunday is the best day.": Whisper made one sentence of two speakers' words, and
    # the diarization gave both turns (either side of the pause) to A.
    words = [W(0.0, 0.4, "book,"), W(1.0, 1.4, "Sunday"), W(1.4, 1.6, "is"), W(1.6, 1.8, "the"), W(1.8, 2.1, "best"),
             W(2.1, 2.5, "day.")]
    turns = [Turn(0.0, 0.5, A), Turn(0.9, 2.6, A)]
    voices = Scores({0.0: {A: 0.8, B: 0.2}, 1.0: {A: 0.3, B: 0.75}})
    result = merge(words, turns, voices=voices)
    assert [w.speaker for w in result.words] == [A, B, B, B, B, B]
    assert voices.asked == [(0.0, 0.4), (1.0, 2.5)] and (result.opinions, result.reopined) == (2, 5)
    near = merge(words, turns, voices=Scores({1.0: {A: 0.5, B: 0.55}}))  # within the margin: no move
    assert [w.speaker for w in near.words] == [A] * 6
    off = merge(words, turns, MergeOptions(second_opinion=False), voices=Scores({1.0: {A: 0.3, B: 0.75}}))
    assert [w.speaker for w in off.words] == [A] * 6 and off.opinions == 0


def test_a_sentence_ending_where_the_speaker_changes_is_in_doubt():
    # "Mend the coat before you go out." said by B inside A's turn, which ends as B's begins.
    words = [W(0.5, 1.0, "Unless"), W(1.0, 1.5, "to"), W(1.5, 2.0, "be"), W(2.0, 2.5, "selfish."),
             W(2.6, 2.9, "Mend"), W(2.9, 3.1, "the"), W(3.1, 3.4, "coat"), W(3.4, 3.7, "before"), W(3.7, 4.2, "out."),
             W(6.0, 6.5, "Yes"), W(6.5, 7.0, "it"), W(7.0, 7.5, "is"), W(7.5, 8.0, "done.")]
    turns = [Turn(0.4, 4.0, A), Turn(4.0, 8.5, B)]
    voices = Scores({2.6: {A: 0.1, B: 0.8}})
    result = merge(words, turns, voices=voices)
    assert voices.asked == [(2.6, 4.2)]  # the sentences that neither start nor end at the change are trusted
    assert [w.speaker for w in result.words] == [A] * 4 + [B] * 9
    longest = merge(words, turns, MergeOptions(opinion_seconds=1.0), voices=Scores({2.6: {A: 0.1, B: 0.8}}))
    assert longest.opinions == 0  # a stretch longer than opinion_seconds is trusted


def test_second_opinion_asks_only_about_doubtful_stretches():
    # A sentence well inside its turn is not asked; one that no turn overlaps is, and a
    # region too short to judge (None) leaves the merge's speaker.
    words = [W(3.0, 3.4, "We"), W(3.4, 3.8, "went"), W(3.8, 4.2, "to"), W(4.2, 4.6, "town"), W(4.6, 5.0, "today."),
             W(9.2, 9.5, "Okay"), W(9.5, 9.9, "then.")]
    turns = [Turn(0.0, 8.0, A)]
    voices = Scores({9.2: None})
    result = merge(words, turns, MergeOptions(gap_tolerance=1.5), voices=voices)
    assert voices.asked == [(9.2, 9.9)]
    assert [w.speaker for w in result.words] == [A] * 7


def test_words_that_come_with_their_speaker_get_no_second_opinion():
    words = [said(0.0, 0.4, "Ready?", A), said(0.6, 0.9, "Yes.", B)]
    voices = Scores({0.0: {A: 0.0, B: 1.0}, 0.6: {A: 1.0, B: 0.0}})
    assert [w.speaker for w in merge(words, [Turn(0, 1, A)], voices=voices).words] == [A, B] and voices.asked == []
