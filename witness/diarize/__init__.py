"""Speaker diarization after pyannote community-1.

Models (a frontend, an ONNX Runtime session, a sha256-pinned file each):
- ``features``: the GE2E power mel and the Kaldi fbank in numpy; NaN/Inf guard.
- ``segmentation``: pyannote segmentation-3.0 over lazily cut sliding windows.
- ``embedding`` (+ ``pooled_partials``): GE2E and WeSpeaker speaker embeddings with masks.

Silero VAD (the fallback without segmentation), the stereo channels and the ONNX Runtime
sessions, which Whisper uses too, are ``witness.vad``, ``witness.channels`` and
``witness.accel.onnx_session``.

Model-free numerical stages, one module each (importing this package loads nothing heavy):
- ``config``: hyperparameters with pyannote's defaults; preset PYANNOTE_3_1; per-model tuned settings.
- ``windows``: time grids and the arrays passed between stages (Segmentations, SpeakerCount).
- ``powerset``: segmentation model output -> per-window local speaker activity.
- ``aggregate``: overlap-add of windows onto the frame grid; per-frame speaker count.
- ``clustering`` (+ ``assign``): embeddings -> global speaker per
  (window, local speaker).
- ``reconstruct``: clustered windows -> regular and exclusive speaker turns.
"""

import sys
import types


class _CallableModule(types.ModuleType):
    """``witness.diarize`` is this package and the API's ``witness.diarize(audio, ...)`` at
    once: the package attribute is set to the package whenever it is imported, so the
    function is reached by calling the package."""

    def __call__(self, *args, **kwargs):
        from witness.api import diarize

        return diarize(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
