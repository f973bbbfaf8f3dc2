"""Which whisper.cpp backend and device are in use: this CPU build for real, GPU logs parsed."""

from __future__ import annotations

from witness.asr.backend import AsrBackendInfo, backend_info, parse_init_log, registry_devices

# NOT a captured log: written for this test in the format whisper.cpp 1.8 and ggml-vulkan
# print while loading a model on a Vulkan build (format strings in whisper.cpp's
# whisper_backend_init_gpu / whisper_model_load and ggml-vulkan's device listing).
VULKAN_LOG_SAMPLE = """\
whisper_init_from_file_with_params_no_state: loading model from 'ggml-tiny.en.bin'
whisper_init_with_params_no_state: use gpu    = 1
whisper_init_with_params_no_state: flash attn = 1
whisper_init_with_params_no_state: gpu_device = 0
whisper_init_with_params_no_state: dtw        = 0
ggml_vulkan: Found 1 Vulkan devices:
ggml_vulkan: 0 = NVIDIA H100 80GB HBM3 (NVIDIA) | uma: 0 | fp16: 1 | bf16: 1 | warp size: 32 | shared memory: 49152 | int dot: 1 | matrix cores: NV_coopmat2
whisper_init_with_params_no_state: devices    = 2
whisper_init_with_params_no_state: backends   = 2
whisper_model_load: loading model
whisper_model_load: n_vocab       = 51864
whisper_model_load: type          = 1 (tiny)
whisper_model_load:      Vulkan0 total size =    77.11 MB
whisper_model_load: model size    =   77.11 MB
whisper_backend_init_gpu: device 0: Vulkan0 (type: 1)
whisper_backend_init_gpu: found GPU device 0: Vulkan0 (type: 1, cnt: 0)
whisper_backend_init_gpu: using Vulkan0 backend
whisper_init_state: kv self size  =    3.15 MB
"""

# NOT a captured log either: the shape of ggml-cuda's device listing on a CUDA build.
CUDA_LOG_SAMPLE = """\
ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no
ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes
whisper_backend_init_gpu: using CUDA0 backend
"""


def test_vulkan_log_names_backend_and_device():
    backend, device, devices = parse_init_log(VULKAN_LOG_SAMPLE)
    assert backend == "Vulkan0"
    assert device == "NVIDIA H100 80GB HBM3 (NVIDIA)"
    assert devices == {"Vulkan0": "NVIDIA H100 80GB HBM3 (NVIDIA)"}


def test_cuda_log_names_backend_and_device():
    backend, device, _ = parse_init_log(CUDA_LOG_SAMPLE)
    assert (backend, device) == ("CUDA0", "NVIDIA H100 80GB HBM3")


def test_this_cpu_build_reports_no_gpu(tiny_engine):
    info = tiny_engine.backend
    assert isinstance(info, AsrBackendInfo)
    assert info.gpu_backend is None and info.gpu_device is None
    assert "whisper_backend_init_gpu: no GPU found" in tiny_engine.init_log
    assert [name for name, _ in registry_devices()] == ["CPU"]
    assert [name for name, _ in info.backends] == ["CPU"]


def test_backend_info_without_a_model():
    info = backend_info()
    assert info.version and info.backends
