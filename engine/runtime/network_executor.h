// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file network_executor.h
/// \brief The device side of `tunebench.graph_executor.benchmark` (rpc/network_call.h): load an
/// uploaded export, run it on the given inputs, time it as TVM's `module.benchmark` does.
///
/// Why a function of its own: the AArch64 device server (tools/arm, compiled without the engine
/// libraries) calls it in a forked child, and host-side servers or tests can call it as is. It needs
/// DeployedNetwork (graph executor, dlopen) and measure/timer (TVM's time evaluator), no compiler.
///
/// Steps: DeployedNetwork::load (a failure is COMPILE_DEVICE); inputs set by name (a missing,
/// unknown or misshapen input is UNKNOWN_ERROR naming it); one run, whose outputs (and the values of
/// the requested debug nodes) are returned (a kernel error or bad node id is RUNTIME_DEVICE); then timeEvaluate with number / repeat / min_repeat_ms and no
/// further warm-up (the first run was it). A crash or hang is the caller's to contain (the device
/// server's forked child and its timeout).

#include <string>

#include "engine/rpc/network_call.h"

namespace tb::runtime {

/// Runs `request` with the export's files at libPath / graphPath / paramsPath (the uploads it
/// names). `threads` is reported back as the device's kernel thread count. Never throws for a bad
/// export or a failing kernel: the reply carries the error number and message.
rpc::NetworkRunReply runNetworkRequest(const rpc::NetworkRunRequest& request, const std::string& libPath,
                                       const std::string& graphPath, const std::string& paramsPath, int threads);

}  // namespace tb::runtime
