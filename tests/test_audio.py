"""Decoding real call audio in every format users bring, and refusing what is not audio."""

from __future__ import annotations

import wave

import numpy as np
import pytest

from tests.audio_factory import FORMATS, encode, read_wav
from witness.audio import SAMPLE_RATE, load_audio
from witness.errors import InputError


@pytest.fixture(scope="module")
def call(sample_call):
    return read_wav(sample_call / "sample.wav")


@pytest.mark.parametrize("ext", sorted(FORMATS))
def test_every_call_format_decodes_to_16k_mono(ext, call, tmp_path):
    samples, rate = call
    container, codec, out_rate = FORMATS[ext]
    path = encode(samples, rate, tmp_path / f"call.{ext}", codec, container, out_rate)
    audio = load_audio(path)
    assert audio.samples.dtype == np.float32 and audio.samples.ndim == 1
    assert audio.sample_rate == SAMPLE_RATE
    assert audio.duration == pytest.approx(samples.shape[1] / rate, abs=0.08)
    # Same signal: lossy codecs shift by their priming delay, so compare energy envelopes.
    ref = samples[0]
    env = lambda x: np.sqrt(np.convolve(x**2, np.ones(1600) / 1600, "valid")[::1600])
    n = min(len(env(ref)), len(env(audio.samples)))
    assert np.corrcoef(env(ref)[:n], env(audio.samples)[:n])[0, 1] > 0.95


def test_wav_decodes_exactly(sample_call, call):
    samples, _ = call
    audio = load_audio(sample_call / "sample.wav")
    assert audio.info.channels == 1 and audio.info.source_rate == 16000
    np.testing.assert_allclose(audio.samples, samples[0], atol=1e-6)


def test_stereo_keeps_each_party_on_its_channel(call, tmp_path):
    samples, rate = call
    left = samples[0] * (np.arange(samples.shape[1]) < samples.shape[1] // 2)
    right = samples[0] - left
    path = encode(np.stack([left, right]), rate, tmp_path / "stereo.flac", "flac", "flac", 16000)
    audio = load_audio(path, keep_channels=True)
    assert audio.info.channels == 2 and audio.info.layout == "stereo"
    assert audio.channel_samples.shape == (2, len(audio.samples))
    np.testing.assert_allclose(audio.channel_samples[0], left, atol=1e-4)
    np.testing.assert_allclose(audio.channel_samples[1], right, atol=1e-4)
    np.testing.assert_allclose(audio.samples, (left + right) / 2, atol=1e-4)
    assert load_audio(path).channel_samples is None


def test_resampling_preserves_a_tone(tmp_path):
    t = np.arange(44100 * 2) / 44100
    tone = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[None, :]
    audio = load_audio(encode(tone, 44100, tmp_path / "tone.flac", "flac", "flac", 44100))
    spectrum = np.abs(np.fft.rfft(audio.samples[4000:-4000]))
    peak = np.argmax(spectrum) * SAMPLE_RATE / (2 * (len(spectrum) - 1))
    assert peak == pytest.approx(440, abs=2)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p, "no such file"),
        (lambda p: (p.write_bytes(b""), p)[1], "is empty"),
        (lambda p: (p.write_text("hello, I am not audio\n" * 50), p)[1], "not an audio file"),
    ],
)
def test_bad_files_get_one_clear_line(tmp_path, make, message):
    path = make(tmp_path / "bad.wav")
    with pytest.raises(InputError) as err:
        load_audio(path)
    line = str(err.value)
    assert message in line and str(path) in line and "\n" not in line


def test_truncated_file_is_refused(sample_call, tmp_path):
    data = (sample_call / "sample.wav").read_bytes()
    path = tmp_path / "cut.wav"
    path.write_bytes(data[: len(data) // 3])  # header still promises 30 s
    with pytest.raises(InputError, match="truncated"):
        load_audio(path)


def test_zero_length_wav_is_refused(tmp_path):
    path = tmp_path / "zero.wav"
    with wave.open(str(path), "wb") as w:  # a valid header and no samples
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
    with pytest.raises(InputError, match="no audio samples"):
        load_audio(path)


def test_folder_is_refused(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        load_audio(tmp_path)


def test_decode_to_file_streams_the_same_samples(sample_call, tmp_path):
    from witness.audio import decode_to_file

    info, length = decode_to_file(sample_call / "sample.wav", tmp_path / "s.f32")
    samples = np.fromfile(tmp_path / "s.f32", dtype=np.float32)
    assert length == len(samples) and info.channels == 1
    np.testing.assert_array_equal(samples, load_audio(sample_call / "sample.wav").samples)


def test_nan_and_inf_samples_become_silence(call, tmp_path, caplog):
    samples, rate = call
    broken = samples.copy()
    broken[0, 1000:1010] = np.nan
    broken[0, 2000] = np.inf
    path = encode(broken, rate, tmp_path / "nan.wav", "pcm_f32le", "wav", rate)
    with caplog.at_level("WARNING"):
        audio = load_audio(path)
    assert np.isfinite(audio.samples).all() and (audio.samples[1000:1010] == 0).all()
    assert "11 NaN/Inf samples replaced by silence" in caplog.text


@pytest.mark.parametrize("value", [1e30, -100.0])
def test_out_of_range_samples_are_clipped_with_one_warning(call, tmp_path, caplog, value):
    from witness.audio import decode_to_file

    samples, rate = call
    loud = samples.copy()
    loud[0, 5000] = value
    path = encode(loud, rate, tmp_path / "loud.wav", "pcm_f32le", "wav", rate)
    clean = load_audio(encode(samples, rate, tmp_path / "clean.wav", "pcm_f32le", "wav", rate)).samples
    with caplog.at_level("WARNING"):
        audio = load_audio(path)
        decode_to_file(path, tmp_path / "loud.f32")
    assert audio.samples[5000] == np.sign(value) and np.abs(audio.samples).max() <= 1.0
    np.testing.assert_array_equal(np.delete(audio.samples, 5000), np.delete(clean, 5000))
    np.testing.assert_array_equal(np.fromfile(tmp_path / "loud.f32", dtype=np.float32), audio.samples)
    assert caplog.text.count(f"{path}: 1 samples outside [-1, 1] clipped to it") == 2  # once per decode


def test_a_file_whose_level_is_wrong_is_scaled_down_whole(call, tmp_path, caplog):
    """Floats scaled like 16-bit integers: clipping would square off all the speech."""
    from witness.audio import decode_to_file

    samples, rate = call
    path = encode(samples * 32768, rate, tmp_path / "int-scaled.wav", "pcm_f32le", "wav", rate)
    clean = load_audio(encode(samples, rate, tmp_path / "clean.wav", "pcm_f32le", "wav", rate)).samples
    with caplog.at_level("WARNING"):
        audio = load_audio(path)
        decode_to_file(path, tmp_path / "scaled.f32")
    np.testing.assert_allclose(audio.samples, clean / np.abs(clean).max(), atol=1e-6)
    np.testing.assert_array_equal(np.fromfile(tmp_path / "scaled.f32", dtype=np.float32), audio.samples)
    assert f"{path}: " in caplog.text and "of the samples are outside [-1, 1] (peak " in caplog.text
    assert "the whole file scaled down to fit" in caplog.text and "clipped" not in caplog.text
