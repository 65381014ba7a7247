#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds ONLY the GPU device side: tunebench-gpu-server and tunebench-gpu-selftest (tools/gpu), as
# a project of their own (tools/gpu/CMakeLists.txt), on a machine with just g++ (>= 10), cmake,
# ninja (or make) and nlohmann-json: no Qt, no LLVM, no XGBoost. CUDA needs no toolkit to build (the
# driver API and NVRTC are dlopen()ed at run time); OpenCL is included when its headers and the ICD
# loader are installed.
#
#   tools/gpu/build.sh [OUTDIR]     (default OUTDIR: build-gpu in the repository root)
#
# Prints the two binaries' paths on stdout; progress goes to stderr. Then, e.g. on the H100:
#   OUTDIR/bin/tunebench-gpu-selftest --device cuda
#   OUTDIR/bin/tunebench-gpu-server --device cuda --tracker HOST:9190 --key h100
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:-$ROOT/build-gpu}
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
[[ -f $OUT/CMakeCache.txt ]] || cmake -S "$ROOT/tools/gpu" -B "$OUT" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release >&2
cmake --build "$OUT" -j "${JOBS:-$(nproc)}" >&2
echo "$OUT/bin/tunebench-gpu-server"
echo "$OUT/bin/tunebench-gpu-selftest"
