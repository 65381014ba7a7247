// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file vta_sim_executor.h
/// \brief The device side of `tunebench-cli rpc-server --device vta`: a MeasureExecutor that
/// measures uploaded VTA programs (vta/vta_program.h) on this process's VTA simulator.
///
/// Why: TVM tunes VTA operators through an RPC server registered under the key env.TARGET (a
/// Pynq board, an Intel FPGA with intelfocl, or TVM's simulator behind the same server); AutoTVM's
/// RPCRunner then measures every config there (seed 004). This executor is that device for the
/// simulator: the tuning client (autotvm/vta_tune.h vtaRpcMeasureFunction) uploads one program per
/// config and sends a run request; the reply carries the simulated time as TVM's costs and the
/// simulator's counters beside them.
///
/// A run request (RunRequest: module = the uploaded program, number, repeat, timeout):
/// - the program file is read (at most 1 MiB) and parsed: malformed (not JSON, wrong format or
///   version, a bad key) -> COMPILE_DEVICE "malformed VTA program: ...";
/// - its model must be this simulator's (VtaConfig::model()) and its target this VTA's target
///   string: otherwise COMPILE_DEVICE "VTA model mismatch: the program is for <model>, this server
///   simulates <model>" (never a number for another VTA);
/// - its config must decode from the task's space (vta_task.h vtaTaskSpace: the index in range and
///   decoding to the program's entity), and its task and args must be a VTA task's: otherwise
///   COMPILE_DEVICE naming the problem;
/// - then VtaSimMeasurer::measure: a refused config is INSTANTIATION_ERROR, a wrong output
///   WRONG_ANSWER, else costs = `repeat` copies of the simulated seconds (the simulation is
///   deterministic: TVM's `number` calls of a repeat would average to the same value) and
///   deviceCounters = TVM's stats() names.
/// The request's timeout is not enforced (the simulation is in process and not interruptible);
/// every error is a reply, so a bad request never ends the server.
///
/// Threads: the RPC server calls run() on its thread, one request at a time; a mutex guards the
/// measurer anyway.

#include <mutex>

#include "engine/rpc/measure_executor.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_program.h"

namespace tb::measure {

class VtaSimExecutor final : public rpc::MeasureExecutor {
public:
    /// Throws tb::UserError when `cfg` is invalid.
    explicit VtaSimExecutor(vta::VtaConfig cfg);
    rpc::RunReply run(const rpc::RunRequest& request) override;
    const vta::VtaConfig& config() const { return m_measurer.config(); }

private:
    std::mutex m_mu;
    vta::VtaSimMeasurer m_measurer;
};

}  // namespace tb::measure
