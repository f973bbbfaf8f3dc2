"""Speech recognition: Whisper through whisper.cpp.

``whisper.WhisperEngine(ggml_path, WhisperOptions(...))`` (the path resolved by
``witness.models.whisper_models.resolve_model``, in the parent process);
``engine.transcribe(samples)`` -> ``AsrResult`` (words, segments, ``AsrInfo``); ``engine.backend`` ->
``AsrBackendInfo`` (GPU backend and device in use). Nothing heavy is imported here.
"""
