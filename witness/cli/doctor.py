"""``witness doctor``: what this machine offers and what a run would do; ``witness warmup``:
fetch, convert and compile everything a run will need, before the first call."""

from __future__ import annotations

import json

import click

from witness.cli.options import config_option, engine_options, engine_settings
from witness.config import Settings

@click.command()
@engine_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON, for scripts.")
@config_option()
def doctor(as_json, config_file, no_diarize, **engine):
    """Show GPUs and free VRAM, ONNX Runtime providers, whisper.cpp backends, cached
    models, and the plan Witness would choose, with its reasons.

    \b
    Examples:
      witness doctor
      witness doctor --device cpu --json
    """
    settings = engine_settings(config_file, **engine)
    report = diagnose(settings)
    click.echo(json.dumps(report, indent=2) if as_json else render(report))


def diagnose(settings: Settings) -> dict:
    """Everything doctor reports, as JSON-ready data (loads the Whisper model in a worker)."""
    import onnxruntime

    from witness.asr.backend import gpu_backend_libraries
    from witness.models.diarization_choice import preview
    from witness.run.placement import find_devices, plan_for, vram_need

    devices = find_devices(settings)
    plan = plan_for(settings, devices)
    need = vram_need(settings, devices)
    return {
        "whisper_model_recommended": _recommendation(devices.gpus, gpu_backend_libraries()),
        "gpus": [g.to_dict() for g in devices.gpus],
        "onnxruntime": {
            "version": onnxruntime.__version__,
            "providers": list(onnxruntime.get_available_providers()),
            "models": {"segmentation": devices.segmentation.to_dict(), "embedding": devices.embedding.to_dict()},
        },
        "whisper_cpp": {"gpu_backends_built_in": list(gpu_backend_libraries()), **_whisper_probe(settings)},
        "diarization_models": preview(settings.diarization.segmentation, settings.diarization.embedding,
                                      settings.models.dir or None, settings.models.offline,
                                      settings.diarization.precision,
                                      settings.merge.opinion_precision if settings.merge.second_opinion else None),
        "models": _cached_models(settings),
        "vram_need": need.to_dict() if need else None,
        "plan": plan.to_dict(),
    }


def _recommendation(gpus, gpu_backends) -> dict:
    """The Whisper model for this machine (``witness.asr.ladder.recommend``): the GPU with the
    most free memory counts only when whisper.cpp was built with a GPU backend; else the CPU
    cores and the memory available now."""
    import os

    import psutil

    from witness.accel.vram import GIB
    from witness.asr.ladder import recommend

    free = max((g.free / GIB for g in gpus), default=None) if gpu_backends else None
    cores, ram = os.cpu_count() or 1, psutil.virtual_memory().available / GIB
    choice = recommend(free, cores, ram)
    return {"model": choice.model, "reason": choice.reason, "gpu_free_gib": None if free is None else round(free, 1),
            "cpu_cores": cores, "ram_available_gib": round(ram, 1)}


def _whisper_probe(settings: Settings) -> dict:
    """Run Whisper alone on a second of silence through the orchestrator, offline (so a GPU
    driver starts in its worker, not here), and report where it ran."""
    from dataclasses import replace

    from witness.errors import WitnessError
    from witness.run.orchestrate import Sources, probe

    offline = replace(settings, models=replace(settings.models, offline=True))
    try:
        info = probe(offline, Sources(turns=False), 1.0).engines["asr"]
    except WitnessError as exc:
        return {"model": settings.asr.model, "device": None, "problem": exc.message}
    return {"model": info["model"], "device": info["device"], "backends": info["backends"],
            "pywhispercpp": info["pywhispercpp"]}


def _cached_models(settings: Settings) -> dict[str, list[dict]]:
    from witness.models.store import search_dirs

    found = {}
    for folder in search_dirs(settings.models.dir or None):
        if folder.is_dir():
            files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in (".bin", ".onnx", ".pt"))
            found[str(folder)] = [{"name": p.name, "mib": round(p.stat().st_size / 2**20, 1)} for p in files]
    return found


def render(report: dict) -> str:
    lines = []
    gpus = report["gpus"]
    lines.append("GPUs:          " + (", ".join(f"{g['index']}: {g['name']} ({g['free_gib']} of {g['total_gib']} GiB free)"
                                            for g in gpus) or "none found (NVML / pyamdgpuinfo see no GPU)"))
    ort = report["onnxruntime"]
    lines.append(f"ONNX Runtime:  {ort['version']}; providers: {', '.join(ort['providers'])}")
    for role, choice in ort["models"].items():
        lines.append(f"  {role:<12} → {choice['provider']} ({choice['reason']})")
    w = report["whisper_cpp"]
    built = ", ".join(w["gpu_backends_built_in"]) or "none (CPU-only build; README: GPU set-up)"
    lines.append(f"whisper.cpp:   pywhispercpp {w.get('pywhispercpp', '?')}; GPU backends built in: {built}")
    lines.append(f"  {w['model']:<12} → " + (w["device"] or f"not loaded: {w.get('problem')}"))
    rec = report["whisper_model_recommended"]
    lines.append(f"  recommended: --model {rec['model']} ({rec['reason']})")
    lines.append("Diarization models a run would use:")
    for role, choice in report["diarization_models"].items():
        lines.append(f"  {role:<12} → {choice['model']}: {choice['source'] or 'not to be had'}")
        if choice["warning"]:
            lines.append(f"    warning: {choice['warning']}")
    lines.append("Models:")
    for folder, files in report["models"].items():
        lines.append(f"  {folder}")
        lines.extend(f"    {f['name']} ({f['mib']} MiB)" for f in files)
        if not files:
            lines.append("    (no model files)")
    need = report["vram_need"]
    if need:
        lines.append(f"VRAM side by side: whisper {need['whisper_gib']} + diarization {need['diarization_gib']} "
                     f"+ GPU runtimes {need['runtime_gib']} = {need['total_gib']} GiB; with "
                     f"{need['margin']:.0%} margin the plan asks {need['floor_gib']} GiB free")
        lines.append(f"  ({need['whisper_source']}; README: GPU memory)")
    else:
        lines.append("VRAM side by side: unknown for this Whisper model (the plan asks 4 GiB free)")
    plan = report["plan"]
    lines.append(f"Plan: {plan['mode']}")
    lines.extend(f"  - {reason}" for reason in plan["reasons"])
    return "\n".join(lines)


WARMUP_SECONDS = 12.0  # longer than one 10 s segmentation window


@click.command()
@engine_options
@config_option()
def warmup(config_file, no_diarize, **engine):
    """Fetch, convert and compile what a run will need, so the first call starts at once.

    Resolves the Whisper model (download or convert once) and the diarization models, then
    runs both engines once on silence the way a run will. On a GPU, whisper.cpp decodes that
    silence (its speech gate is off here), which compiles its GPU shaders: with Vulkan the first
    run on a fresh machine can take many seconds longer, and the driver's shader cache keeps
    them for later runs. On MIGraphX it compiles the pinned shapes into the cache
    (~/.cache/witness/migraphx), once per shape.

    \b
    Examples:
      witness warmup
      witness warmup --model base.en --device migraphx
    """
    from witness.cli.progress import ProgressView, enabled
    from witness.run.orchestrate import Sources, warm_up

    settings = engine_settings(config_file, **engine)
    with ProgressView([], enabled(click.get_current_context())) as view:
        transcript = warm_up(settings, Sources(turns=not no_diarize), WARMUP_SECONDS, view.model)
    engines = transcript.engines
    asr = engines["asr"]
    gpu = "" if asr["device"] == "cpu" else (f" (its first decode took {transcript.timings['asr']:.1f} s, shader "
                                             "compilation included; the driver caches the shaders for later runs)")
    click.echo(f"whisper model {asr['model']} ready on {asr['device']}{gpu}")
    for role, provider in engines.get("diarization", {}).get("providers", {}).items():
        click.echo(f"{role} model ready on {provider}")
