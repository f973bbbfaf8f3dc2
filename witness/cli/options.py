"""What the commands share: options, their parsers, and the run over FILE arguments."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Sequence

import click

from witness.asr.ladder import ladder_help
from witness.cli.progress import ProgressView, enabled
from witness.config import CHANNEL_MODES, DEVICES, EMBEDDINGS, SEGMENTATIONS
from witness.errors import WitnessError
from witness.writers import FORMATS, HTML_AUDIO, check_not_inputs, check_outputs_free, output_paths, output_stems

STOP_KEY = "witness.run.stop"  # ctx.meta: the StopSignals the command group listens with

if TYPE_CHECKING:
    from witness.transcript import Transcript


def config_option(help_text: str = "A TOML file of settings (see config/default.toml)."):
    return click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), help=help_text)


def output_files(files: Sequence[Path], output_dir: Path | None, formats: Sequence[str],
                 also_read: Sequence[Path | None] = ()) -> dict[Path, list[Path]]:
    """Each FILE's outputs in ``output_dir`` (made and tried first; two inputs with the same
    name but another extension keep it); none without ``-o``. UsageError when an output is
    one of the FILES or of ``also_read`` (``--words``, ``--turns``)."""
    from witness.cli.stdin import STDIN, STDIN_NAME
    from witness.fileio import check_output_folder

    if not output_dir:
        return {}
    folder = check_output_folder(output_dir)
    stems = output_stems([STDIN_NAME if str(f) == STDIN else f.name for f in files])
    outputs = {f: output_paths(stem, folder, formats) for f, stem in zip(files, stems)}
    check_not_inputs([p for paths in outputs.values() for p in paths],
                     [f for f in (*files, *also_read) if f is not None and str(f) != STDIN])
    return outputs


def engine_settings(config_file: Path | None, voices: str | None = None, **engine):
    """The settings of a run with the engine options given on the command line (None: not
    given), checked as the library checks the API's (``witness.options``), errors naming
    the options as the command line spells them."""
    from witness.options import flag, settings_for

    return settings_for({**engine, "voices": voices, "config": config_file}, flag)


def transcripts(ctx: click.Context, files: Sequence[Path], settings, outputs: Mapping[Path, list[Path]],
                overwrite: bool, turns_only: bool = False, **witness) -> Iterator[tuple[Path, Transcript]]:
    """(path, transcript) for each of ``files`` as it finishes, through the Python API
    (``witness.Witness(...).run``: ``witness`` are its no_diarize, words and turns; with
    ``turns_only`` diarization alone) with progress on a terminal; ``-`` is standard
    input. A file whose ``outputs`` exist (unless ``overwrite``) is not run. A single
    file's error goes up (one line, its exit code); with several, each is one line on
    stderr, the others still run, and the command exits 2 at the end. ``--debug`` lets
    every error go up."""
    from witness.api import Witness
    from witness.cli.stdin import readable
    from witness.run.flow import FileJob

    failed = 0
    stop = stop_signals(ctx)

    def report(error: WitnessError) -> None:
        nonlocal failed
        if len(files) == 1 or ctx.find_root().params.get("debug"):
            raise error
        click.echo(f"witness: {error}", err=True)
        failed += 1

    with contextlib.ExitStack() as stack:
        given_as = {str(stack.enter_context(readable(f))): f for f in files}  # stdin: a temp copy

        def jobs() -> Iterator[FileJob]:
            for source, path in given_as.items():
                stop.check()
                try:
                    check_outputs_free(outputs.get(path, []), overwrite)
                except WitnessError as exc:
                    report(exc)
                    continue
                yield FileJob(source)

        engine = stack.enter_context(Witness.from_settings(settings, retries=0, keep_workers=False, **witness))
        view = stack.enter_context(ProgressView(list(given_as), enabled(ctx), len(engine.engines(turns_only))))
        engine.hook = view.hook
        results = stack.enter_context(contextlib.closing(engine.run(
            jobs(), turns_only=turns_only, jobs=None if len(files) > 1 else 1)))
        for result in results:
            stop.check()  # a Ctrl-C that native code swallowed (PyAV's resampler) stops it before writing
            view.file_done(result.path, result.error is None, result.transcript.audio.duration if result.transcript else 0.0)
            path, error = given_as[result.path], result.error
            if error is not None:
                if error.path == result.path != str(path):  # standard input's temp copy: name it "-"
                    error = error.named(path)
                report(error)
            else:
                yield path, result.transcript
    if failed:
        ctx.exit(2)


def stop_signals(ctx: click.Context):
    """The ``StopSignals`` the command group listens with (a fresh one when a command runs alone)."""
    from witness.run.stop import StopSignals

    return ctx.meta.get(STOP_KEY) or StopSignals()


def parse_formats(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    formats = tuple(dict.fromkeys(f.strip().lower() for f in value.split(",") if f.strip()))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise click.BadParameter(f"unknown format {', '.join(map(repr, unknown)) or repr(value)}; choose from {', '.join(FORMATS)}")
    return formats


def html_audio_option(function):
    """``--html-audio embed|link``, for the commands that write ``--format html``."""
    from witness.page import keys_help

    return click.option(
        "--html-audio", type=click.Choice(HTML_AUDIO), default="embed", show_default=True,
        help="How an html page plays its call: embed puts the audio in the page (one file that "
             "plays anywhere; the original file when a browser plays it and it is at most 8 MB, "
             "else Opus at 24 kb/s, ~12 MB an hour); link names the input by a path relative to "
             "the page (a small page that needs the audio beside it; not for standard input). "
             "In the page, click a word to play from it; keys: " f"{keys_help()}.")(function)


def parse_speaker_names(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, str]:
    names: dict[str, str] = {}
    for pair in (value or "").split(","):
        if not pair.strip():
            continue
        label, sep, name = pair.partition("=")
        if not sep or not label.strip() or not name.strip():
            raise click.BadParameter(f"{pair!r} is not LABEL=NAME (e.g. SPEAKER_00=Diane)")
        names[label.strip()] = name.strip()
    return names


def segmentation_option():
    """``--segmentation``: which segmentation model diarizes (transcribe, batch, diarize)."""
    return click.option(
        "--segmentation", type=click.Choice(SEGMENTATIONS),
        help="Segmentation model: auto (default) = pyannote segmentation-3.0 fp32, fetched "
             "once (Silero VAD, with a warning, when it cannot be had); int8 = the smaller "
             "export, which misses speech.")


def embedding_option():
    """``--embedding``: which speaker-embedding model diarizes (transcribe, batch, diarize)."""
    return click.option(
        "--embedding", type=click.Choice(EMBEDDINGS),
        help="Speaker embeddings: auto (default) = 3D-Speaker CAM++, fetched once; ge2e = "
             "lighter and weaker; wespeaker = downloaded from its hub. E.g. --embedding ge2e.")


def channels_option():
    """``--channels``: where a stereo call's speakers come from (transcribe, batch, diarize)."""
    return click.option(
        "--channels", type=click.Choice(CHANNEL_MODES),
        help="Stereo calls: auto (default) takes the speakers from the channels when each channel "
             "holds one party (a call recorder's layout; the record says why), and transcribes each "
             "channel on its own, else diarizes the mix; split always gives each channel its own "
             "speaker (CHANNEL_1, CHANNEL_2: rename with --speaker-names CHANNEL_1=Caller); mix "
             "always diarizes and transcribes the mono mix.")


def models_dir_option():
    """``--models-dir``: a folder searched first for model files (the engine options, enroll)."""
    return click.option("--models-dir", type=click.Path(file_okay=False), metavar="DIR",
                        help="Folder searched first for model files, e.g. --models-dir ~/witness-models (then "
             "$WITNESS_MODELS_DIR, then ~/.cache/witness/models).")


def offline_option():
    """``--offline``: never download a model (the engine options, enroll)."""
    return click.option("--offline", is_flag=True, default=None, help="Never download; say which file to put where.")


def voices_option(function):
    """``--voices``: which enrolled voices name the speakers (transcribe, batch, diarize)."""
    return click.option(
        "--voices", metavar="all|none|NAME,…",
        help="Enrolled voices (`witness enroll`) that name the speakers who match them: all "
             "(default), none (keep SPEAKER_NN), or only these, e.g. --voices Diane,Sheila.")(function)


def engine_options(function):
    """The options transcribe and batch share: models, devices, plan, speakers."""
    decorators = [
        click.option("--model", metavar="NAME", help="Whisper model: tiny.en-q8_0 (default; converted offline from the "
                     "bundled tiny.en), tiny.en, base, small.en, large-v3-turbo…, an imported name, or a ggml file. "
                     f"Measured here: {ladder_help()}. `witness doctor` recommends one. E.g. --model base."),
        click.option("--language", metavar="CODE", help="Spoken language (ISO 639-1, e.g. de), or auto. "
                     "English-only models always use en."),
        click.option("--no-diarize", is_flag=True, help="Whisper alone: timestamped text without speakers."),
        *_speaker_options(),
        segmentation_option(),
        embedding_option(),
        channels_option(),
        device_option("Where the engines run: auto (default) takes the best GPU path each engine has; cpu "
                      "keeps both on the CPU; an ONNX Runtime provider name forces it for the diarization models."),
        click.option("--serial/--parallel", "serial", default=None,
                     help="Force the engines to take turns, or to run side by side (default: the plan "
                          "decides from free VRAM and cores; see -v)."),
        click.option("--min-free-vram", type=click.FloatRange(0, min_open=True), metavar="GIB",
                     help="Below this much free VRAM the engines take turns (default: what the chosen "
                          "models need plus 25%, shown by witness doctor; 4 when unknown)."),
        click.option("--threads", type=click.IntRange(1), metavar="N", help="CPU threads in all (default: every core; more than the cores are capped, with a warning)."),
        models_dir_option(),
        offline_option(),
    ]
    return _decorated(function, decorators)


def speaker_options(function):
    """``--num-speakers``, ``--min-speakers``, ``--max-speakers`` (transcribe, batch, diarize)."""
    return _decorated(function, _speaker_options())


def _speaker_options() -> list:
    return [click.option("--num-speakers", type=click.IntRange(1), metavar="N", help="Exactly N speakers, e.g. 2."),
            click.option("--min-speakers", type=click.IntRange(1), metavar="N", help="At least N speakers, e.g. 2."),
            click.option("--max-speakers", type=click.IntRange(1), metavar="N",
                         help="At most N speakers (more are merged, with a warning), e.g. 4.")]


def device_option(help_text: str):
    """``--device``: where the engines (or diarize's models) run; ``help_text`` says which."""
    return click.option("--device", type=click.Choice(DEVICES), help=help_text)


def _decorated(function, decorators: list):
    for decorator in reversed(decorators):
        function = decorator(function)
    return function
