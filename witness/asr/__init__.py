"""Speech recognition: Whisper through whisper.cpp.

``whisper.load_engine(name_or_path, WhisperOptions(...))`` -> ``WhisperEngine``;
``engine.transcribe(samples)`` -> ``AsrResult`` (words, segments); ``engine.backend`` ->
``AsrBackendInfo`` (GPU backend and device in use). Nothing heavy is imported here.
"""
