"""Benchmarks and measurements, one question each (each script's docstring says how to run it).

Whole runs of ``witness`` (``process_tree``, the shared harness, runs one and samples its processes):
    end_to_end               how right is the transcript? WER and WDER on calls with a reference
    attribution_errors       where do wrong-speaker words come from? WDER split by cause, per call
    measure_memory           does memory grow with a file's length, or over a long batch?
    measure_small_shm        a long call through a 64 MB shared-memory folder: cost, same transcript?
    measure_threads          does each process run the threads the plan gives it?
    bench_plan               engines side by side or in turn? (the README's GPU table)
    bench_batch              one `witness batch`, or one `witness FILE` process per file?
    bench_ray                what Ray costs on one node (`witness batch` against `--ray local`)
    timeline                 a whole job on the cores: which process works when, idle core-seconds
    html_page                the html page: its size, and a 2-hour page in headless Chromium
Speech recognition (cases in ``asr_cases``):
    asr_accuracy             WER and word timing on the sample call, against faster-whisper
    asr_speed                Witness ASR vs faster-whisper (same weights): wall, CPU, WER, time per stage
    asr_long                 long calls: loops, words over non-speech, WER per decoding setting
    decode_policy            does decoding speech left without words again help? WER, CPU per model, in-process
    token_times              how far whisper.cpp's token word times are from DTW's; can a cheap correction do?
    model_table              which Whisper model as the default? WER, time, RSS per model, `witness FILE` runs
Diarization and the merge (cases in ``diarization_cases``; stereo calls in ``stereo_cases``):
    measure_diarization      DER over the dev set per model pair and clustering setting (tuning)
    measure_segmentation     how much of the reference speech the segmentation model hears
    measure_separation       how well each embedding model tells voices apart (pair EER)
    bench_diarize_pipeline   where diarization's time goes; what one embedding costs
    bench_diarize_trees      diarization cost of two or more checkouts side by side, alternating rounds
    campplus_int8            CAM++ in int8: its shipped ranges (tune part), CPU and cosine against fp32, the job
    merge_benchmark          does the boundary repair help? word-level speaker accuracy
    measure_merge            which merge steps help? WDER per call per step; the second opinion's cost
    turn_edges               short turns, backchannels, turn edges: could frame activity name the speaker?
    voice_pairs              which found speakers are one person? the study behind [merge] voice_join
    outside_engines          a long call's time outside the models' runs: decoding, VAD, the merge, the writers
    measure_stereo           stereo calls, one party per channel: detection and the split path's DER
    calibrate_voices         the known-voice threshold, on the dev set
    measure_counting         speaker counting per clustering setting: count, DER, lone voices (files: counting_sets)
    merge_scores             where the s-norm merge joins two people: each merge's score by band
    stage_confusion          which diarization stage puts two people under one found speaker?
    turn_pair_scores         do the split's turn embeddings tell one voice from two better than windows?
    train_plda               the PLDA of the VBx option, trained on the tune parts only
    channel_compensation     would a channel transform of the embeddings count narrowband calls better? (no)
    codec_share              the same calls through each telephone channel and codec: the codec's own share
    second_voice_study       a call heard as one voice against one voice alone: what CAM++ and GE2E each hear
    measure_corpus           where the diarization error is on a corpus part: DER split and count, per condition
    sherpa_compare           sherpa-onnx with Witness's two models (its own venv), for comparison
    reader_likeness          how alike the corpus's readers are, and calls counted right by their closest pair
The tuning corpus: make_corpus generates it (speech from corpus_sources for v1, corpus_librispeech
for v2 and v3, its tune readers each made two by corpus_derived for v4; conditions from
corpus_acoustics) into ~/.cache/witness/corpus/VERSION/{tune,check}; tune on tune only.
Both engines' models:
    measure_model_memory     what each model needs in memory (the figures of the VRAM estimate)
The package itself:
    module_map               modules and lines per package, and import cycles (tests/test_layout.py keeps them at 0)
    transcript_snapshot      do two versions give the same transcripts? every entry point, every format
References the tests compare with (torch, run once): campplus_reference, make_segmentation_reference.
Building: build_pywhispercpp.sh (whisper.cpp for this CPU, or with Vulkan).

Where their inputs are: the sample call ships with the repository (``SAMPLE_CALL``); the dev
set, pyannote's fixture arrays and the int8 export are in ``SHARED`` (../shared beside the
checkout, or $WITNESS_SHARED_DIR).
"""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("WITNESS_SHARED_DIR", REPO.parent / "shared"))
SAMPLE_CALL = REPO / "tests" / "data" / "sample-call"
