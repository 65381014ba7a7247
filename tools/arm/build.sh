#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cross-compiles tunebench-device-server (tools/arm/device_server.cpp) for aarch64-linux-gnu with
# clang + lld against Debian's -arm64-cross packages (TOOLCHAIN.md pitfall 9). No Qt, no LLVM, no
# engine library: the server is compiled from the engine sources it needs, engine/rpc (plain C++ +
# nlohmann_json headers), engine/measure/timer.cpp, child_run.cpp and check_blob.cpp, the kernel ABI's host side
# (engine/codegen/kernel_runtime.cpp, no LLVM), the graph executor of exported networks
# (engine/runtime's network_executor, deployed_network, graph_runtime, graph_json: no compiler) and the
# dependency-free parts of engine/support.
#
#   tools/arm/build.sh [OUTDIR]      (default OUTDIR: ${TB_BUILD_DIR:-build}/aarch64)
#
# Produces OUTDIR/tunebench-device-server, an AArch64 PIE that runs on a 64-bit ARM Linux board or
# here under `qemu-aarch64-static -L /usr/aarch64-linux-gnu`. Rebuilds only what changed. The
# default OUTDIR is where the CMake build puts the server (its tunebench-device-server-aarch64
# target runs this script into <build>/aarch64; TB_BUILD_DIR names the build folder as for
# scripts/build, relative to the repository root unless absolute), so scripts/arm-board and the
# build share one copy. Progress goes to stderr; stdout gets only the binary's path. Run on an
# aarch64 machine (the board itself), it builds natively with g++ instead (needs g++ >= 10 and
# nlohmann-json3-dev there): use that when the board's glibc/libstdc++ are older than Debian 12's,
# which the cross-built binary needs.
#
# Why the C++ headers come from the host: Debian ships the AArch64 libstdc++ *runtime*
# (libstdc++6-arm64-cross, pulled in by libgcc-12-dev-arm64-cross) but its headers only in
# libstdc++-12-dev-arm64-cross, which is not in the project's package list. libstdc++'s headers are
# the same for both architectures except bits/c++config.h, whose x86-64 and AArch64 variants differ
# only in things this code does not use (float128 under GNU mode: we compile with -std=c++20),
# so the host headers are used with the AArch64 runtime library. Override with CXX, JOBS.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if (( $# )); then
  OUT=$1
else
  OUT=${TB_BUILD_DIR:-build}/aarch64
  [[ $OUT == /* ]] || OUT=$ROOT/$OUT
fi
JOBS=${JOBS:-2}
CROSS=/usr/aarch64-linux-gnu

die() { echo "tools/arm/build.sh: $*" >&2; exit 1; }
[[ -f /usr/include/nlohmann/json.hpp ]] || die "nlohmann/json.hpp missing (install nlohmann-json3-dev)"
mkdir -p "$OUT/obj" "$OUT/include" "$OUT/lib"
ln -sfn /usr/include/nlohmann "$OUT/include/nlohmann"          # only this header tree, not /usr/include

if [[ $(uname -m) == aarch64 ]]; then
  # On the board itself (or any arm64 Linux): a plain native build with the system's compiler.
  CXX=${CXX_AARCH64:-g++}
  command -v "$CXX" >/dev/null || die "$CXX not found (install g++)"
  TARGET_FLAGS=()
  STD_FLAGS=()
  LINK_FLAGS=()
else
  CXX=${CXX_AARCH64:-clang++}
  command -v "$CXX" >/dev/null || die "$CXX not found (install clang)"
  command -v ld.lld >/dev/null || die "ld.lld not found (install lld)"
  [[ -e $CROSS/lib/libc.so.6 ]] || die "$CROSS/lib/libc.so.6 missing (install libc6-dev-arm64-cross)"
  [[ -e $CROSS/lib/libstdc++.so.6 ]] || die "$CROSS/lib/libstdc++.so.6 missing (install libgcc-12-dev-arm64-cross)"
  GCCVER=$(ls /usr/lib/gcc-cross/aarch64-linux-gnu 2>/dev/null | sort -V | tail -1)
  [[ -n $GCCVER ]] || die "/usr/lib/gcc-cross/aarch64-linux-gnu missing (install libgcc-12-dev-arm64-cross)"
  STDINC=/usr/include/c++/$GCCVER
  STDCFG=/usr/include/x86_64-linux-gnu/c++/$GCCVER
  [[ -d $STDINC && -d $STDCFG ]] || die "host libstdc++ $GCCVER headers missing ($STDINC; install g++)"
  ln -sfn "$CROSS/lib/libstdc++.so.6" "$OUT/lib/libstdc++.so"  # the runtime has no dev symlink
  TARGET_FLAGS=(--target=aarch64-linux-gnu)
  STD_FLAGS=(-nostdinc++ -isystem "$STDINC" -isystem "$STDCFG")
  LINK_FLAGS=(-fuse-ld=lld -L "$OUT/lib")
fi

SOURCES=(
  tools/arm/device_server.cpp
  engine/rpc/protocol.cpp engine/rpc/socket.cpp engine/rpc/tracker_client.cpp
  engine/rpc/session_protocol.cpp engine/rpc/rpc_server.cpp engine/rpc/network_call.cpp
  engine/measure/timer.cpp engine/measure/child_run.cpp engine/measure/check_blob.cpp
  engine/codegen/kernel_runtime.cpp
  engine/runtime/network_executor.cpp engine/runtime/deployed_network.cpp engine/runtime/graph_runtime.cpp
  engine/runtime/graph_json.cpp
  engine/support/py_json.cpp engine/support/thread_pool.cpp engine/support/huge_page_arena.cpp
)
HEADERS=("$ROOT"/engine/rpc/*.h "$ROOT"/engine/measure/timer.h "$ROOT"/engine/measure/child_run.h
         "$ROOT"/engine/measure/check_blob.h "$ROOT"/engine/support/*.h
         "$ROOT"/engine/codegen/kernel_abi.h "$ROOT"/engine/codegen/kernel_runtime.h
         "$ROOT"/engine/runtime/network_executor.h "$ROOT"/engine/runtime/deployed_network.h "$ROOT"/engine/runtime/graph_runtime.h
         "$ROOT"/engine/runtime/graph_json.h "$ROOT"/tools/server_args.h "$ROOT"/tools/arm/build.sh)
CXXFLAGS=("${TARGET_FLAGS[@]}" -std=c++20 -O2 -fPIE -Wall -Wno-unused-parameter
          "${STD_FLAGS[@]}" -isystem "$OUT/include" -I "$ROOT")

newest_header=0
for h in "${HEADERS[@]}"; do
  t=$(stat -c %Y "$h"); (( t > newest_header )) && newest_header=$t
done

objs=()
running=0
for src in "${SOURCES[@]}"; do
  obj="$OUT/obj/$(echo "$src" | tr '/' '_').o"
  objs+=("$obj")
  if [[ -f $obj ]]; then
    to=$(stat -c %Y "$obj"); ts=$(stat -c %Y "$ROOT/$src")
    (( to >= ts && to >= newest_header )) && continue
  fi
  echo "  aarch64 c++ $src" >&2
  "$CXX" "${CXXFLAGS[@]}" -c "$ROOT/$src" -o "$obj.tmp" && mv "$obj.tmp" "$obj" &
  running=$((running + 1))
  if (( running >= JOBS )); then wait -n || die "compiling failed"; running=$((running - 1)); fi
done
while (( running > 0 )); do wait -n || die "compiling failed"; running=$((running - 1)); done

BIN="$OUT/tunebench-device-server"
relink=1
if [[ -f $BIN ]]; then
  relink=0
  for o in "${objs[@]}"; do [[ $o -nt $BIN ]] && relink=1; done
fi
if (( relink )); then
  echo "  aarch64 link $BIN" >&2
  # -rdynamic: the kernels' runtime calls (tb_rt_*) bind to the executable's exported symbols;
  # --no-as-needed -lm: expf & co. must be in the global scope of dlopen()ed kernel libraries.
  "$CXX" "${TARGET_FLAGS[@]}" "${LINK_FLAGS[@]}" -pie -rdynamic -o "$BIN.tmp" "${objs[@]}" \
    -pthread -Wl,--no-as-needed -lm -ldl -Wl,--as-needed
  mv "$BIN.tmp" "$BIN"
fi
echo "$BIN"
