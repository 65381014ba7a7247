// SPDX-License-Identifier: Apache-2.0
#pragma once
// The window's "Compile && benchmark" (engine side, no widgets): the steps of `tunebench-cli
// compile --bench` for a session job. The network is compiled with the best records of the job's
// log (TVM ApplyHistoryBest + relay.build); with the rpc runner it is cross-compiled for the job's
// target, exported, run on a device of the job's key (runtime::runOnDevice) and checked against
// the graph interpreter, else run and timed here, and then profiled kernel by kernel against the
// machine's roofline (`compile --profile`). The text is the CLI's (engine/runtime/network_eval.h,
// engine/runtime/kernel_roofline.h).
// Runs on whatever thread calls it (TuningSession runs it on its own QThread, never the GUI's).

#include <QString>

#include <functional>

#include "app/session/snapshots.h"

namespace tb::session {

/// The one-line outcome for the status bar, and the kernels on the roofline.
struct BenchOutcome {
    bool ok = false;  ///< ran, and the outputs match the interpreter's
    QString status;   ///< "Benchmark on server:rasp4b-64 (host:port): median 12.345 ms, max error 1.2e-07 (ok)"
    /// A CPU network run here: every kernel profiled (`compile --profile`) against this machine's
    /// measured peak and bandwidth; empty kernels otherwise (a device, a GPU target, a failure).
    RooflineSnapshot roofline = {};
};

/// Compiles and benchmarks `job`'s network (see the file comment). Every step, the compile report,
/// the check lines and TVM's Execution time summary go to `log`, one line per call; failures (a bad
/// job, no device of the key, a lost device, a failing compile) are logged as "error: ..." and
/// returned with ok false, never thrown.
BenchOutcome compileAndBenchmarkJob(const TuningJob& job, const std::function<void(const QString&)>& log);

}  // namespace tb::session
