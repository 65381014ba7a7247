// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file llvm_init.h
/// \brief (private to codegen) One-time registration of LLVM's targets, printers and parsers.

namespace tb::codegen {
/// Initialise every LLVM target, MC layer, asm printer/parser once per process (thread safe).
void initializeLlvm();
}  // namespace tb::codegen
