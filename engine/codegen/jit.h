// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file jit.h
/// \brief Loading a compiled kernel's object file into the running process (ORC JIT, in memory).
///
/// The measure sandbox worker receives object bytes over a pipe and calls this; tests and
/// benchmarks call it directly. The object's undefined symbols are resolved against the kernel
/// runtime (kernel_runtime.h: tb_rt_parallel_for, tb_rt_alloc, tb_rt_free) and then the process (libm's
/// expf, tanhf, ...). Only objects for the host architecture can be loaded.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/codegen/kernel_runtime.h"

namespace tb::codegen {

class LoadedKernel {
public:
    /// Link `object` (an ELF relocatable from compile()) into this process and look up `symbol`.
    /// Throws tb::UserError when the object is malformed, is for another architecture, has an
    /// unresolved symbol, or lacks `symbol` (the measure layer reports this as COMPILE_DEVICE).
    static std::unique_ptr<LoadedKernel> load(const std::vector<uint8_t>& object, const std::string& symbol);
    ~LoadedKernel();
    LoadedKernel(const LoadedKernel&) = delete;
    LoadedKernel& operator=(const LoadedKernel&) = delete;

    KernelFunction function() const { return m_fn; }
    /// Run the kernel: args[i] = data of argument i (see kernel_abi.h). Returns the kernel's status (0).
    int32_t operator()(void* const* args) const { return m_fn(args); }
    /// Convenience: run with float buffers (one pointer per argument).
    int32_t run(const std::vector<float*>& args) const;

private:
    LoadedKernel() = default;
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    KernelFunction m_fn = nullptr;
};

}  // namespace tb::codegen
