"""Speaker diarization after pyannote community-1.

Model-free numerical stages, one module each (importing this package loads nothing heavy):
- ``config``: hyperparameters with pyannote's defaults; presets COMMUNITY_1, PYANNOTE_3_1.
- ``windows``: time grids and the arrays passed between stages (Segmentations, SpeakerCount).
- ``powerset``: segmentation model output -> per-window local speaker activity.
- ``aggregate``: overlap-add of windows onto the frame grid; per-frame speaker count.
- ``clustering`` (+ ``assign``, ``vbx``, ``plda``): embeddings -> global speaker per
  (window, local speaker).
- ``reconstruct``: clustered windows -> regular and exclusive speaker turns.
"""
