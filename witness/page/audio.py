"""The audio of an HTML transcript: embedded in the page, or linked beside it.

Embedded, the page is one file that plays anywhere. A call a browser can play as it is
(WAV PCM, MP3, AAC in MP4, Opus or Vorbis in Ogg/WebM, FLAC) and of at most
``ORIGINAL_MAX_BYTES`` goes in byte for byte; anything else (a long WAV, a codec browsers
lack such as AMR or WMA) is re-encoded to Opus in WebM at ``OPUS_BITRATE_PER_CHANNEL``
per channel, 16 kHz, channels kept (at most two): about 12 MB per hour of mono speech
instead of 115 MB of WAV. Linked, the page names the original by a path relative to
the page, so the two must travel together.
"""

from __future__ import annotations

import base64
import io
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from witness.errors import InputError

ORIGINAL_MAX_BYTES = 8 * 1024 * 1024  # embed the original up to this; above, re-encode (smaller)
OPUS_BITRATE_PER_CHANNEL = 24_000  # speech stays clear
OPUS_RATE = 16_000  # the re-encode's sample rate (wideband speech)
# constant bit rate at complexity 5: 3x faster than libopus's default 10 (2.9 s against 9.2 s of
# CPU per 10 minutes here), pages a predictable 12 MB an hour; VBR at 10 would be 15% smaller
OPUS_OPTIONS = {"compression_level": "5", "vbr": "off"}

# (container, decoder as PyAV names them) -> MIME type, for what Chromium, Firefox and Safari play
_PLAYABLE = {
    ("wav", "pcm_s16le"): "audio/wav",
    ("wav", "pcm_u8"): "audio/wav",
    ("mp3", "mp3float"): "audio/mpeg",
    ("mp3", "mp3"): "audio/mpeg",
    ("flac", "flac"): "audio/flac",
    ("ogg", "opus"): "audio/ogg",
    ("ogg", "vorbis"): "audio/ogg",
    ("ogg", "flac"): "audio/ogg",
    ("matroska,webm", "opus"): "audio/webm",
    ("matroska,webm", "vorbis"): "audio/webm",
    ("mov,mp4,m4a,3gp,3g2,mj2", "aac"): "audio/mp4",
    ("mov,mp4,m4a,3gp,3g2,mj2", "mp3float"): "audio/mp4",
}


@dataclass(frozen=True)
class PageAudio:
    """What the page's <audio> plays: ``base64`` bytes of type ``mime`` (embedded), or
    ``href``, a URL relative to the page (linked). ``how`` says which, for the page."""

    mime: str = ""
    base64: str = ""
    href: str = ""
    how: str = ""


def browser_mime(path: str | Path) -> str | None:
    """The MIME type a browser plays ``path`` as, or None when it would need converting."""
    from witness.audio import probe  # lazy: numpy and PyAV stay out of `witness --help`

    info = probe(path)
    return _PLAYABLE.get((info.container, info.codec))


def embedded(path: str | Path) -> PageAudio:
    """``path``'s audio as the page carries it: the original bytes when a browser plays
    them and they are small, else an Opus/WebM re-encode (InputError when it cannot be
    read or encoded)."""
    import av  # lazy: only a page with embedded audio needs FFmpeg here

    mime = browser_mime(path)
    try:
        if mime is not None and os.path.getsize(path) <= ORIGINAL_MAX_BYTES:
            data, how = Path(path).read_bytes(), "original file"
        else:
            mime, data, how = "audio/webm", opus_webm(path), "Opus re-encode"
    except (OSError, av.error.FFmpegError) as exc:
        raise InputError(f"cannot embed its audio in the page ({exc})", str(path)) from None
    return PageAudio(mime=mime, base64=base64.b64encode(data).decode("ascii"), how=how)


def linked(audio: str | Path, page_folder: str | Path) -> PageAudio:
    """``audio`` named from a page in ``page_folder``: a relative URL (a file URL where no
    relative path exists, e.g. another Windows drive)."""
    target = Path(audio).resolve()
    try:
        relative = Path(os.path.relpath(target, Path(page_folder).resolve())).as_posix()
    except ValueError:
        return PageAudio(href=target.as_uri(), how="linked")
    return PageAudio(href=quote(relative), how="linked")


def opus_webm(path: str | Path) -> bytes:
    """``path`` decoded and re-encoded as Opus in WebM (16 kHz, its channels, at most two)."""
    return reencoded(path, "libopus", "webm", OPUS_BITRATE_PER_CHANNEL, OPUS_OPTIONS)


def reencoded(path: str | Path, codec: str, container: str, bit_rate_per_channel: int,
              options: dict[str, str] | None = None) -> bytes:
    """``path`` decoded and encoded with ``codec`` in ``container`` at 16 kHz, its channels
    (at most two), ``bit_rate_per_channel``; ``options`` go to the encoder."""
    import av

    out = io.BytesIO()
    with av.open(str(path), metadata_errors="ignore") as source, av.open(out, "w", format=container) as sink:
        stream_in = next(s for s in source.streams if s.type == "audio")
        layout = "stereo" if stream_in.channels >= 2 else "mono"
        stream = sink.add_stream(codec, rate=OPUS_RATE, layout=layout, options=options or {})
        stream.bit_rate = bit_rate_per_channel * (2 if layout == "stereo" else 1)
        resampler = av.AudioResampler(format=stream.format.name, layout=layout, rate=OPUS_RATE)
        for frame in source.decode(stream_in):
            for piece in resampler.resample(frame):
                sink.mux(stream.encode(piece))
        for piece in resampler.resample(None):
            sink.mux(stream.encode(piece))
        sink.mux(stream.encode(None))
    return out.getvalue()
