// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file network_eval.h
/// \brief Evaluating a compiled network the way `tunebench-cli compile --bench` does, shared by the
/// CLI (lines to stdout) and the window's "Compile && benchmark" (lines to the engine log view).
///
/// Why: the evaluation of a tuned network on a device (TVM's ARM tutorial's last step: run on a
/// board, compare with a reference, print `module.benchmark`'s Execution time summary) is one
/// sequence of steps and one text; the CLI and the window must print the same, so it lives here and
/// writes lines to a sink instead of a stream.
///
/// Inputs are seededInputs (the same on the host and on a device); the reference is the graph
/// interpreter (graph/interpreter.h) on this machine with those inputs.

#include <functional>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/runtime/graph_runtime.h"
#include "engine/runtime/remote_network.h"
#include "engine/te/interpreter.h"

namespace tb::runtime {

/// Receives one line of text (no final newline); may be empty (nothing is reported).
using LineSink = std::function<void(const std::string&)>;

/// The inputs a benchmark uses: input i of `g` filled by measure::fillRandom with seed 1 + i, on the
/// host and on a device alike (so a device run can be checked against the interpreter).
std::vector<te::Buffer> seededInputs(const ExecGraph& g);

/// "1x224x224x3".
std::string shapeString(const std::vector<int64_t>& shape);

/// What checkAgainstInterpreter found.
struct OutputCheck {
    bool ok = true;          ///< every tensor within the tolerance, and as many as the reference's
    double maxRelError = 0;  ///< the largest max abs error / max abs value over the tensors
};

/// Compares `outputs` (a run of `g` on `inputs`, in g's output order) with the graph reference
/// interpreter's on this machine, one line per tensor to `out`
/// ("check output 0 (1x10) against the host interpreter: max abs error ..., ... (ok, tolerance 1e-4)"),
/// failing above `tolerance` (max abs error / max abs value, build_module.h relativeMaxError).
OutputCheck checkAgainstInterpreter(const graph::Graph& g, const std::vector<te::Buffer>& inputs,
                                    const std::vector<rpc::NamedTensor>& outputs, double tolerance,
                                    const LineSink& out);

/// What runAndCheckOnDevice did.
struct DeviceRun {
    bool ran = false;      ///< false: the device or the network failed (`error` says how)
    bool checked = true;   ///< false: an output (or the logits) differs from the interpreter's
    double maxRelError = 0;  ///< of the check (0 without one)
    std::string error;     ///< RemoteRunError's message when !ran
    RemoteRunResult result;
};

/// Runs the export in `dir` (compiled from `g`, executable graph `eg`, BuildOptions::load false for
/// a device target) on a device of `ro.key` with `inputs` (in eg's input order) via runOnDevice,
/// writing its steps (ro.progress is replaced by `out`) and where it ran to `out`; with `check`,
/// compares every output with checkAgainstInterpreter (and, for a network ending in softmax, the
/// logits the device returns like TVM's debug_get_output: the zoo's random weights make such outputs
/// uniform). Device and network failures (RemoteRunError) are returned in DeviceRun::error, never
/// thrown; tb::UserError (bad options, unreadable export) is thrown.
DeviceRun runAndCheckOnDevice(const graph::Graph& g, const ExecGraph& eg, const std::string& dir,
                              const std::vector<te::Buffer>& inputs, RemoteRunOptions ro, bool check,
                              double tolerance, const LineSink& out);

class CompiledModule;

/// runAndCheckOnDevice for a network compiled for a GPU target (build_module.h: one GpuModule): it
/// is measured as one candidate on a GPU device server of `ro.key` through the tracker
/// (measure/rpc_runner.h; tools/gpu or `tunebench-cli rpc-server --device opencl|cuda`), its
/// argument buffers filled with `inputs` (eg's input order) and the params. With `check`, the
/// device compares every output with the host interpreter's (g on `inputs`) elementwise,
/// |got - want| <= tolerance * (max|want| + |want|), and a mismatch is WRONG_ANSWER (checked =
/// false). The device times the module with TVM's time evaluator (ro.repeat, number,
/// min_repeat_ms) on device events; result.bench holds the per-repeat means. Lines to `out`: the
/// device, the check, the timing. A device error or no free device is ran = false with the error.
DeviceRun runGpuNetworkOnDevice(const graph::Graph& g, const CompiledModule& mod, const std::vector<te::Buffer>& inputs,
                                const RemoteRunOptions& ro, bool check, double tolerance, const LineSink& out);

/// "Execution time on <server> (<key>):\n" followed by TVM's Execution time summary of the device
/// (BenchmarkResult::summary), no final newline: what `compile --runner rpc --bench` prints.
std::string deviceExecutionSummary(const RemoteRunResult& r);

}  // namespace tb::runtime
