"""The corpus generator's material rules (scripts/make_corpus.py): with ``one_session`` (corpus
v3) each speaker of a call reads from one recording session, the one with the most unused speech;
``--draw`` draws other calls of the same speaker split; the index says what the build depended on;
the words the pieces are cut by are made one way (``corpus_sources.WHISPER``) in streams that do not
depend on what is cached; v4's tune readers are each two readers, played slower and faster."""

import numpy as np

from scripts import corpus_sources
from scripts.corpus_derived import derive_readers, played_at
from scripts.make_corpus import (RECIPES, Material, build_timeline, built_with, call_stream, choose_speakers,
                                 split_speakers)
from witness.audio import SAMPLE_RATE


def _piece(speaker: str, chapter: str, n: int, seconds: float, short: bool = False) -> dict:
    samples = int(seconds * SAMPLE_RATE)
    return {"speaker": speaker, "source": f"LibriSpeech/dev-clean/{speaker}/{chapter}/{speaker}-{chapter}-{n}.flac",
            "start": 0, "end": samples, "regions": [(0, samples)], "short_word": short, "text": "word"}


def _material(one_session: bool) -> Material:
    pieces = []
    for speaker in ("a", "b"):
        pieces += [_piece(speaker, "100", n, 4.0) for n in range(6)]  # 24 s in chapter 100
        pieces += [_piece(speaker, "200", n, 4.0) for n in range(3)]  # 12 s in chapter 200
        pieces += [_piece(speaker, chapter, 9, 0.4, short=True) for chapter in ("100", "200")]
    return Material(pieces, ["a", "b"], max_uses=1, one_session=one_session)


def _chapters(material: Material, indices) -> set[str]:
    return {material.pieces[i]["source"].split("/")[-2] for i in indices}


def test_one_session_takes_the_richest_chapter_then_the_next():
    material = _material(one_session=True)
    assert _chapters(material, material.queue("a", 1, np.random.default_rng(0))) == {"100"}
    assert _chapters(material, material.short_words("a")) == {"100"}
    for i in material.queue("a", 1, np.random.default_rng(0)):
        material.uses[i] = 1  # chapter 100 used up
    assert _chapters(material, material.queue("a", 1, np.random.default_rng(0))) == {"200"}
    assert _chapters(material, material.queue("b", 1, np.random.default_rng(0))) == {"100"}


def test_without_one_session_a_call_mixes_chapters():
    material = _material(one_session=False)
    assert _chapters(material, material.queue("a", 1, np.random.default_rng(0))) == {"100", "200"}


def test_a_v3_call_keeps_each_speaker_in_one_chapter():
    assert RECIPES["v3"].one_session and not RECIPES["v2"].one_session
    material = _material(one_session=True)
    events = build_timeline(["a", "b"], material, 120.0, 1, np.random.default_rng(3))
    for speaker in ("a", "b"):
        assert _chapters(material, [e["piece"] for e in events if e["speaker"] == speaker]) == {"100"}


def _calls(material: Material, info: dict, prints: dict, rng) -> list[list[tuple[str, int]]]:
    """Three calls' speakers and pieces, as make_part draws them."""
    calls = []
    for _ in range(3):
        speakers = choose_speakers(2, material, info, prints, rng)
        events = build_timeline(speakers, material, 30.0, 1, rng)
        calls.append([(e["speaker"], e["piece"]) for e in events])
    return calls


def test_a_draw_keeps_the_split_and_draws_other_calls():
    info = {f"{n}": {"sex": "F" if n % 2 else "M", "subset": "dev-clean"} for n in range(8)}
    prints = {s: np.random.default_rng([int(s)]).normal(size=8) for s in info}
    split = split_speakers(info, 2222, RECIPES["v3"].parts)  # the split takes no draw
    pieces = [_piece(s, "100", n, 4.0) for s in info for n in range(12)]
    seed, tune = 2222, list(RECIPES["v3"].parts).index("tune")
    # draw 0 is the stream the corpus was built from before draws existed
    assert call_stream(seed, tune, 0).random(4).tolist() == np.random.default_rng([seed, 2, tune]).random(4).tolist()
    drawn = {d: _calls(Material(pieces, split["tune"], max_uses=2, one_session=True), info, prints,
                       call_stream(seed, tune, d)) for d in (0, 1, 2)}
    assert drawn[0] != drawn[1] and drawn[1] != drawn[2] and drawn[0] != drawn[2]
    for calls in drawn.values():
        assert {s for call in calls for s, _ in call} <= set(split["tune"])


def test_the_index_names_the_libraries_and_fingerprints_the_cut_pieces():
    pieces = [_piece("a", "100", n, 4.0) for n in range(3)]
    made = built_with(pieces)
    assert made["pieces"] == 3 and made["numpy"] == np.__version__
    assert built_with(pieces) == made  # the same material, the same fingerprint
    moved = [dict(pieces[0], end=pieces[0]["end"] - 160)] + pieces[1:]  # one cut 10 ms earlier
    assert built_with(moved)["pieces_sha256"] != made["pieces_sha256"]


def test_streams_come_from_the_whole_file_list_whatever_is_cached(tmp_path):
    files = []
    for n in range(30):
        files.append(tmp_path / f"84-121550-{n:04d}.wav")
        files[-1].write_bytes(b"x" * n)
    folder = tmp_path / "words"
    folder.mkdir()
    assert [len(s) for s in corpus_sources.pending_streams(files, folder)] == [12, 12, 6]
    for f in files[:20]:  # a build interrupted after 20 files
        corpus_sources._file_cache(folder, f).write_text("[]")
    # it resumes with the second and third stream whole, not with files 20-29 as one stream
    assert corpus_sources.pending_streams(files, folder) == [files[12:24], files[24:]]


def test_words_made_otherwise_are_cached_apart(tmp_path, monkeypatch):
    pinned = corpus_sources.words_dir(tmp_path)
    assert pinned.parent == tmp_path and corpus_sources.words_dir(tmp_path) == pinned
    monkeypatch.setitem(corpus_sources.WHISPER, "env", {**corpus_sources.WHISPER["env"], "CT2_FORCE_CPU_ISA": "AVX"})
    assert corpus_sources.words_dir(tmp_path) != pinned


def test_v4_makes_two_readers_of_each_tune_reader_that_never_share_a_recording():
    pieces = [dict(_piece("a", chapter, n, 2.0), source=f"LibriSpeech/dev-clean/a/{chapter}/a-{chapter}-{n}.flac")
              for chapter in ("100", "200") for n in range(3)]
    pieces += [_piece("b", "300", 0, 2.0)]
    info = {"a": {"sex": "F", "f0": 200.0, "subset": "dev-clean"}, "b": {"sex": "F", "f0": 190.0, "subset": "dev-clean"}}
    derived, described = derive_readers(pieces, info, ["a"], (0.9, 1.1))
    assert sorted(described) == ["a-x0.90", "a-x1.10"] and described["a-x1.10"]["f0"] == 220.0
    by_reader = {name: {p["source"] for p in derived if p["speaker"] == name} for name in described}
    assert not by_reader["a-x0.90"] & by_reader["a-x1.10"]  # no recording read twice
    for name in described:  # each has recordings in both chapters
        assert {source.split("/")[-2] for source in by_reader[name]} == {"100", "200"}
    assert all(p["speaker"] != "b" for p in derived) and RECIPES["v4"].derived == (0.9, 1.1)
    slow = next(p for p in derived if p["speed"] == 0.9)
    assert slow["end"] == round(2.0 * SAMPLE_RATE / 0.9) and slow["regions"] == [(0, slow["end"])]


def test_played_faster_is_shorter_and_higher():
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    tone = np.sin(2 * np.pi * 200 * t).astype(np.float32)
    fast = played_at(tone, 1.1)
    assert abs(len(fast) - SAMPLE_RATE / 1.1) < 1
    peak = np.argmax(np.abs(np.fft.rfft(fast))) * SAMPLE_RATE / len(fast)
    assert abs(peak - 220) < 2 and played_at(tone, 1.0) is tone
