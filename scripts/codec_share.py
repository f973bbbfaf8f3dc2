"""How much of the narrowband calls' speaker counting errors is the codec's own? The wideband
calls of a corpus part, passed through each narrowband channel (``corpus_acoustics.channel``:
their noise and rooms are already in the mix, so this is the call the corpus would have built
with that band), written as corpora of their own that ``measure_counting.py`` scores: the same
voices and turns, only the channel differs.

    PYTHONPATH=. python scripts/codec_share.py --corpus ~/.cache/witness/corpus/v3 --out /tmp/rechannel-v3
    PYTHONPATH=. python scripts/measure_counting.py --sets tune -v --scores \\
        --corpus /tmp/rechannel-v3/opus-6000 --cache /tmp/count-rechannel-v3/opus-6000

Each variant folder (``BAND-BITRATE``) holds PART/NAME.wav, .rttm and .json (band and bitrate
replaced); calls over ``--max-minutes`` are left out.

Answer (issue 22, corpus v3 tune as built 2026-11-28, its 6 wideband calls under 10 minutes:
five 2-speaker calls and one of 4; at a123bec, before the narrowband silence bias of
``SegmentationConfig``), ``measure_counting.py --sets tune -v --scores``: counted right and
strict DER; different-speaker centroid cosine (mean, p90; same-speaker 0.95-0.96 in every
variant); speech missed: reference speech frames where under half of the cached segmentation
windows covering them hear anyone (a throwaway probe over ``measure_counting``'s cache):

    channel        right  DER     diff. cosine   speech missed
    wide (as built) 6/6   13.6%*      --            1.0%
    telephone       5/6   15.5%   0.60  0.66        4.9%
    amr-nb 7.4k     3/6   17.2%   0.63  0.72        2.8%
    opus 12k        5/6   16.9%   0.65  0.71        6.4%
    opus 8k         4/6   25.0%   0.66  0.73       10.7%
    opus 6k         3/6   37.1%   0.71  0.76       13.9%
    (* the part's 7 wideband calls, its 49-minute call included)

The codec itself, not the voices, costs the count: the same calls through Opus at 6 kbit/s
lose two people (tune_001, tune_013 2 -> 1) and half of one call's speech (tune_008: 51.7% of
its speech heard as nobody, DER 67.7% with the count right). Two things go: segmentation
hears smeared loud speech as silence (tune_008's first turn through Opus 6k is flatter: spectral flatness 0.072 vs
0.050 through the telephone channel, periodicity 0.55 vs 0.63, the long-term spectrum the
same within 1-2 dB), and CAM++ hears different people as more alike (+0.11 cosine over the
telephone channel). On the built corpus the worst Opus calls are the v3 6 kbit/s ones
(tune_002 34.8% of speech missed, tune_014 19.8%; v1 and v2 Opus calls 1-6%).

Where the built v3 tune part's Opus calls go wrong (at 3152883; a throwaway by-band summary of
``stage_confusion.py``'s stages): strict missed / false alarm / confusion, Opus 18.2 / 3.6 /
19.0%, amr-nb 4.5 / 5.2 / 6.7%, wide 1.6 / 9.4 / 2.5%; windows where two reference speakers each
talk 1 s that segmentation splits into two local speakers: Opus 47%, amr-nb 46%, wide 88%;
counts right after clustering, unmixing, split, second voice: Opus 1, 1, 1, 1 of 6 (the loss is
the clustering's; no later stage rescues it). Different-speaker centroid cosine as built (v1, v2,
v3 tune): Opus 0.64, 0.64, 0.62 (p90 0.80, 0.73, 0.78), telephone 0.62, 0.55, 0.41, amr-nb 0.59,
0.56, 0.52. The second voice did not split tune_002 (2 -> 1): its long turns' two groups score
CAM++ 0.755 (cut 0.735; GE2E 0.848 is under its 0.93), by the reference 0.690; segmentation heard
two local speakers in none of its 27 embedded windows. A front-end fix measured and dropped (the
narrowband silence bias in loud frames): ``SegmentationConfig``'s docstring.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np

from scripts.corpus_acoustics import TARGET_DBFS, active_rms, channel
from witness.audio import load_audio, write_wav

BANDS = ("telephone", "amr-nb-7400", "opus-6000", "opus-8000", "opus-12000")


def rechannel(samples: np.ndarray, band: str, bitrate: int | None) -> np.ndarray:
    """16 kHz wideband ``samples`` through ``band`` at ``bitrate``, at the corpus's level
    (``corpus_acoustics.render``'s last steps)."""
    mix = channel(samples.astype(np.float64), band, bitrate)
    mix *= 10 ** (TARGET_DBFS / 20) / active_rms(mix)
    peak = float(np.max(np.abs(mix)))
    return (mix * (0.95 / peak) if peak > 0.95 else mix).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--part", default="tune")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--bands", default=",".join(BANDS), help="comma-separated BAND or BAND-BITRATE")
    parser.add_argument("--max-minutes", type=float, default=10.0)
    args = parser.parse_args()
    calls = [json.loads(p.read_text()) for p in sorted((args.corpus / args.part).glob("*.json")) if p.stem != "index"]
    calls = [c for c in calls if c["band"] == "wide" and c["duration"] <= args.max_minutes * 60]
    for variant in args.bands.split(","):
        band, _, bitrate = variant.rpartition("-") if variant[-1].isdigit() else (variant, "", "")
        folder = args.out / variant / args.part
        folder.mkdir(parents=True, exist_ok=True)
        for call in calls:
            source = args.corpus / args.part / call["uri"]
            wav = folder / f"{call['uri']}.wav"
            if not wav.exists():
                write_wav(wav, rechannel(load_audio(source.with_suffix(".wav")).samples, band,
                                         int(bitrate) if bitrate else None))
            shutil.copyfile(source.with_suffix(".rttm"), wav.with_suffix(".rttm"))
            wav.with_suffix(".json").write_text(json.dumps({**call, "band": band, "bitrate": int(bitrate) if bitrate
                                                            else None, "rechannelled_from": str(source)}))
        print(f"{variant}: {len(calls)} calls in {folder}", flush=True)


if __name__ == "__main__":
    main()
