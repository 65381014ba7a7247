// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file deployed_network.h
/// \brief An exported network loaded for running in a process without the compiler: TVM's
/// `graph_executor.create(graph_json, lib, dev)` + `load_params` for the files
/// CompiledModule::exportLibrary writes (deploy_lib.so, deploy_graph.json, deploy_param.params).
///
/// Why: two programs run exports, `tunebench-runner` on this machine and the AArch64 device server
/// (tools/arm) on a board, and neither links LLVM or the compiler; both need the same steps: open
/// the library (dlopen, RTLD_NOW | RTLD_LOCAL), parse the graph and the params (graph_json.h),
/// resolve every kernel symbol (dlsym), build a GraphRuntime and copy the constants in. The
/// library's undefined symbols (the kernel ABI tb_rt_*, libm) are bound to the loading process,
/// which must export them (codegen/kernel_abi.h). Inputs are set and outputs read through runtime().

#include <memory>
#include <string>

#include "engine/runtime/graph_runtime.h"

namespace tb::runtime {

class DeployedNetwork {
public:
    /// Loads the library at `libPath` and the graph and params given as file contents (`graphSource`
    /// and `paramsSource` name them in messages). Throws UserError naming the file: the library
    /// does not load (dlerror's text), the graph or params are malformed (graph_json.h), a kernel
    /// symbol is missing from the library, or a param is missing or of the wrong size.
    static std::unique_ptr<DeployedNetwork> load(const std::string& libPath, const std::string& graphJson,
                                                 const std::string& paramsBytes, const std::string& graphSource,
                                                 const std::string& paramsSource);
    /// The export directory `dir` (deploy_lib.so, deploy_graph.json, deploy_param.params). Throws
    /// UserError as load(), or when a file cannot be read.
    static std::unique_ptr<DeployedNetwork> loadDirectory(const std::string& dir);

    /// Unloads the library after the runtime that calls into it.
    ~DeployedNetwork();
    DeployedNetwork(const DeployedNetwork&) = delete;
    DeployedNetwork& operator=(const DeployedNetwork&) = delete;

    GraphRuntime& runtime() { return *m_runtime; }

private:
    DeployedNetwork() = default;
    void* m_lib = nullptr;
    std::unique_ptr<GraphRuntime> m_runtime;
};

/// The whole content of a file (binary). Throws UserError "cannot read '<path>'".
std::string readFileBytes(const std::string& path);

}  // namespace tb::runtime
