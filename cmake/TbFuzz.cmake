# SPDX-License-Identifier: Apache-2.0
# TB_FUZZ=ON: the libFuzzer build of bench/fuzz (bench/fuzz/run.sh configures it in build-fuzz/).
# Needs clang: every target is instrumented for coverage (-fsanitize=fuzzer-no-link) and built with
# ASan + UBSan (no recovery), and the harnesses link libFuzzer's main (bench/fuzz/CMakeLists.txt).
# Off (the default), the harnesses build as plain executables that replay tests/fuzz/regressions.
option(TB_FUZZ "Build bench/fuzz as libFuzzer harnesses with ASan+UBSan (clang only)" OFF)
if(TB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TB_FUZZ=ON needs clang (-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang)")
  endif()
  set(TB_FUZZ_SANITIZE -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options(-fsanitize=fuzzer-no-link ${TB_FUZZ_SANITIZE})
  add_link_options(${TB_FUZZ_SANITIZE})
endif()
