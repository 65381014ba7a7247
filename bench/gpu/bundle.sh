#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packs tunebench-cli with the shared libraries the GPU machine of ../shared/GPU-MACHINE.md lacks
# (Qt 6 Core and ICU 72, XGBoost and dmlc, libonnx_proto, ...) into one compressed archive, so that
# the whole tuner (extraction, GPU search, CUDA code generation, the CUDA runner) runs there: that
# machine has CUDA, glibc >= ours, libstdc++ and libLLVM-16 (Ubuntu's 16.0.6), but no Qt, XGBoost
# or libonnx, and takes at most 64 MiB of files per command.
#
#   bench/gpu/bundle.sh [BUILD_DIR] [OUT]    (defaults: build, .gpu-bundle/tunebench.tar.xz)
#
# On the GPU machine:   mkdir -p /tmp/tb && tar -xJf tunebench.tar.xz -C /tmp/tb &&
#                       /tmp/tb/tunebench-cli --help
# (tunebench-cli there is a wrapper that sets LD_LIBRARY_PATH to the bundled libraries.)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
OUT=${2:-$ROOT/.gpu-bundle/tunebench.tar.xz}
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/lib" "$(dirname "$OUT")"
objcopy --strip-debug "$BUILD/bin/tunebench-cli" "$STAGE/lib/tunebench-cli.bin"
# GPU measurements run in tunebench-gpu-worker, found next to the binary (gpu_worker_client.h).
objcopy --strip-debug "$BUILD/bin/tunebench-gpu-worker" "$STAGE/lib/tunebench-gpu-worker"
# Every library the binary loads, except the C/C++ runtime and LLVM (present there).
ldd "$BUILD/bin/tunebench-cli" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*) ;;
    # LLVM and what it loads are the system's there.
    libLLVM-16.so.*|libz3.so.*|libxml2.so.*|libedit.so.*|libffi.so.*|libtinfo.so.*|libbsd.so.*|libmd.so.*|liblzma.so.*) ;;
    *) cp -L "$lib" "$STAGE/lib/" ;;
  esac
done
cat > "$STAGE/tunebench-cli" <<'WRAP'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/lib/tunebench-cli.bin" "$@"
WRAP
chmod +x "$STAGE/tunebench-cli"
tar -C "$STAGE" -cJf "$OUT" .
ls -la "$OUT" >&2
echo "$OUT"
