"""CAM++ in int8 (``witness.models.campplus_int8``): the shipped activation ranges, and what
int8 costs and gains against fp32.

    PYTHONPATH=. python scripts/campplus_int8.py capture --out /tmp/campplus-feats.pkl     # tune parts only
    PYTHONPATH=. python scripts/campplus_int8.py calibrate --feats /tmp/campplus-feats.pkl  # writes RANGES
    PYTHONPATH=. python scripts/campplus_int8.py compare --feats /tmp/campplus-feats.pkl    # CPU s, cosine
    PYTHONPATH=. python scripts/campplus_int8.py job --call CALL.wav --rounds 2              # the whole job

``capture`` runs the product's diarization on every 7th call of corpus v1's tune part and every
4th of v2's (never the check part, the dev set or the sample call), keeping 8% of the feature
rows CAM++ embeds (windows and the split's turn pieces) and six second-opinion-like pieces
(0.35-4.2 s) per call, seeded. ``calibrate`` runs ONNX Runtime's MinMax calibration of the
fp32 conversion (nodes named as ``campplus_int8.node_names`` names them) over all of them and
writes the ranges of the tensors the quantiser reads, with their provenance. ``compare`` times
fp32 and int8 on the same rows, one thread, one row a call, alternating, and gives the cosine
of int8's unit embeddings to fp32's by kind of row. ``job`` runs ``witness -q CALL -o OUT
--format json`` with ``[diarization] precision`` fp32 and int8 in turn, ``--rounds`` times, and
gives each run's CPU seconds (the job and its workers), wall time and stage times, speakers and
words (``scripts/timeline.py CALL -- --config FILE`` splits the CPU seconds by stage).
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from scripts.counting_sets import corpus_items
from witness.models.campplus_int8 import RANGES, activation_tensors, campplus_int8_path, node_names
from witness.models.campplus_onnx import campplus_onnx_path

CORPORA = {"v1": 7, "v2": 4}  # corpus version: every n-th tune call
ROW_SHARE = 0.08
PIECES_PER_CALL = 6


def capture(out: Path, corpus_root: Path) -> None:
    from witness.audio import load_audio
    from witness.diarize.embedding import CamPlusPlusEmbedder
    from witness.diarize.features import (CAMPPLUS_SCALE, CAMPPLUS_WINDOW, fbank_frames, kaldi_fbank_of_frames,
                                          mean_normalise)
    from witness.diarize.pipeline import Diarizer
    from witness.models.diarization_choice import choose_models

    rows: list[tuple[str, np.ndarray]] = []
    embed_features = CamPlusPlusEmbedder.embed_features

    def spy(self, feats):
        rows.extend(("window", np.array(row, np.float16)) for row in feats if rng.random() < ROW_SHARE)
        return embed_features(self, feats)

    CamPlusPlusEmbedder.embed_features = spy
    diarizer = Diarizer(choose_models("campplus", precision="fp32"))
    for version, every in CORPORA.items():
        rng = random.Random(0)  # each corpus seeded alike
        for item in corpus_items(corpus_root / version, "tune")[::every]:
            samples = load_audio(item.wav).samples
            diarizer.run(samples)
            for _ in range(PIECES_PER_CALL):
                size = int(rng.uniform(0.35, 4.2) * 16000)
                start = rng.randrange(0, max(1, len(samples) - size))
                frames = fbank_frames(samples[None, start:start + size], CAMPPLUS_SCALE)[0]
                feats = mean_normalise(kaldi_fbank_of_frames(frames, CAMPPLUS_WINDOW)[None])[0]
                rows.append(("piece", np.array(feats, np.float16)))
            print(version, item.name, len(rows), flush=True)
    out.write_bytes(pickle.dumps(rows))


def load_rows(path: Path) -> tuple[list[str], list[np.ndarray]]:
    rows = pickle.loads(path.read_bytes())
    return [kind for kind, _ in rows], [np.asarray(feats, np.float32) for _, feats in rows]


def calibrate(feats: Path, out: Path) -> None:
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, create_calibrator

    from witness.models.onnx_convert import CONVERTER_KEY, SOURCE_KEY

    _, rows = load_rows(feats)
    fp32 = campplus_onnx_path()
    model = onnx.load(str(fp32))
    node_names(model)
    props = {p.key: p.value for p in model.metadata_props}

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.rows = iter(rows)

        def get_next(self):
            row = next(self.rows, None)
            return None if row is None else {"feats": row[None]}

    with tempfile.TemporaryDirectory() as tmp:
        named = Path(tmp) / "named.onnx"
        onnx.save(model, str(named))
        calibrator = create_calibrator(named, ["Conv"], augmented_model_path=str(Path(tmp) / "augmented.onnx"),
                                       calibrate_method=CalibrationMethod.MinMax)
        calibrator.collect_data(Reader())
        ranges = calibrator.compute_data()
    tensors = {name: [float(np.ravel(ranges[name].range_value[0])[0]), float(np.ravel(ranges[name].range_value[1])[0])]
               for name in activation_tensors(model)}
    data = {"about": "CAM++ int8: activation ranges (low, high) per tensor, ONNX Runtime MinMax calibration",
            "made_by": "scripts/campplus_int8.py calibrate",
            "calibrated_on": f"{len(rows)} feature rows of corpus tune calls ({CORPORA}; every n-th call), "
                             f"{ROW_SHARE:.0%} of the rows diarization embeds and {PIECES_PER_CALL} pieces a call",
            "converter": props[CONVERTER_KEY], "source_sha256": props[SOURCE_KEY], "tensors": tensors}
    head = json.dumps({k: v for k, v in data.items() if k != "tensors"}, indent=1)[:-2]
    body = ",\n".join(f"  {json.dumps(name)}: {json.dumps(pair)}" for name, pair in tensors.items())
    out.write_text(f'{head},\n "tensors": {{\n{body}\n }}\n}}\n')
    print(f"{len(tensors)} tensors from {len(rows)} rows -> {out}")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def compare(feats: Path, rounds: int) -> None:
    import onnxruntime as ort

    kinds, rows = load_rows(feats)
    kinds = np.asarray(kinds)
    fp32 = campplus_onnx_path()
    paths = {"fp32": fp32, "int8": campplus_int8_path(fp32)}
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    sessions = {k: ort.InferenceSession(str(p), options, providers=["CPUExecutionProvider"]) for k, p in paths.items()}
    seconds = {k: 0.0 for k in sessions}
    out = {}
    for _ in range(rounds):
        for name, session in sessions.items():  # alternating, on the same rows
            began = _cpu()
            vectors = np.stack([session.run(None, {"feats": row[None]})[0][0] for row in rows])
            seconds[name] += _cpu() - began
            out[name] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = np.sum(out["fp32"] * out["int8"], axis=1)
    print(f"{len(rows)} rows, {sum(len(r) for r in rows)} frames, {rounds} rounds: CPU s fp32 {seconds['fp32']:.1f}, "
          f"int8 {seconds['int8']:.1f} ({seconds['int8'] / seconds['fp32']:.2f}x)")
    for kind in sorted(set(kinds)) + ["all"]:
        c = cosine if kind == "all" else cosine[kinds == kind]
        print(f"  {kind:7s} {len(c):4d} rows: cosine mean {c.mean():.4f}, 5th percentile {np.percentile(c, 5):.4f}, "
              f"min {c.min():.4f}")


def job(call: Path, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(1, rounds + 1):
            for precision in ("fp32", "int8"):
                config, out = Path(tmp) / f"{precision}.toml", Path(tmp) / f"{precision}-{round_}"
                config.write_text(f'[diarization]\nprecision = "{precision}"\n')
                before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                subprocess.run([sys.executable, "-m", "witness", "-q", str(call), "-o", str(out), "--format", "json",
                                "--config", str(config)], check=True)
                wall, after = time.perf_counter() - began, resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                result = json.loads((out / f"{call.stem}.json").read_text())
                words = sum(len(u["words"]) for u in result["utterances"])
                stages = ", ".join(f"{k} {v:.1f}" for k, v in result["timings"].items())
                load = Path("/proc/loadavg").read_text().split()[0]
                print(f"round {round_} {precision}: CPU {cpu:.1f} s, wall {wall:.1f} s (stages: {stages}), "
                      f"{len(result['speakers'])} speakers, {words} words, load {load}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("capture", "calibrate", "compare", "job"))
    parser.add_argument("--call", type=Path, help="job: the call to run the whole job on")
    parser.add_argument("--feats", "--out", dest="feats", type=Path, default=Path("/tmp/campplus-feats.pkl"))
    parser.add_argument("--corpus-root", type=Path, default=Path.home() / ".cache" / "witness" / "corpus")
    parser.add_argument("--ranges", type=Path, default=RANGES, help="calibrate: where to write the ranges")
    parser.add_argument("--rounds", type=int, default=2, help="compare, job: rounds of both models")
    args = parser.parse_args()
    if args.what == "capture":
        capture(args.feats, args.corpus_root)
    elif args.what == "calibrate":
        calibrate(args.feats, args.ranges)
    elif args.what == "compare":
        compare(args.feats, args.rounds)
    else:
        job(args.call, args.rounds)


if __name__ == "__main__":
    main()
