// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file sandbox_executor.h
/// \brief SandboxExecutor: what a host RPC server (`tunebench-cli rpc-server`) does with a timing
/// request: it runs the uploaded object in LocalRunner's sandbox worker process. Plus the "check
/// blob", the form in which a CheckSpec travels to an RPC device next to the module it checks.
///
/// Why: engine/rpc serves sessions but deliberately knows nothing about loading code
/// (measure_executor.h). A server that measures for real needs the same isolation as local
/// tuning (DESIGN.md decision 2): a candidate that crashes, hangs, writes out of bounds or computes
/// the wrong answer must cost one error record, never the server. LocalRunner already provides
/// exactly that, with TVM's timer semantics (timer.h), so this executor is a thin adapter:
///   - RunRequest::modulePath must be a relocatable ELF object for this machine's architecture
///     (what codegen::compile emits; RPCRunner uploads it as is for host targets). A shared
///     library or an object of another architecture is reported as COMPILE_DEVICE with the reason;
///   - RunRequest::function is the kernel entry symbol, RunRequest::args give the buffer sizes
///     (shape x dtype size; kernels address float32 buffers);
///   - number / repeat / min_repeat_ms / enable_cpu_cache_flush / timeout are the LocalRunner's
///     options for that request (a new worker is started when they change, else it is reused);
///   - when a blob named `<module>.check` was uploaded in the same session (RPCRunner does this for
///     inputs carrying a CheckSpec), its inputs fill the arguments and its expected outputs are
///     compared after the warm-up call: a mismatch is WRONG_ANSWER.
/// Error numbers come back unchanged from LocalRunner (RUNTIME_DEVICE for a crash or a damaged
/// canary, RUN_TIMEOUT when the worker had to be killed, ...).
///
/// The check blob's format and codec: check_blob.h.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "engine/measure/local_runner.h"
#include "engine/measure/measure.h"
#include "engine/rpc/measure_executor.h"

namespace tb::measure {

struct SandboxExecutorOptions {
    /// Worker executable; empty: as RunnerOptions::workerPath (TB_WORKER_PATH, the built one, or
    /// `tunebench-worker` next to the running executable).
    std::string workerPath;
    int numThreads = 0;  ///< worker thread-pool size; 0 = all cores
    uint64_t seed = 0;   ///< random input seed
};

class SandboxExecutor final : public rpc::MeasureExecutor {
public:
    /// Throws tb::UserError when the worker executable cannot be found.
    explicit SandboxExecutor(SandboxExecutorOptions options = {});
    ~SandboxExecutor() override;

    /// Runs one request (see the file comment). Thread safe (requests are serialized).
    rpc::RunReply run(const rpc::RunRequest& request) override;

    /// Worker processes started so far, over all runner configurations (1 + restarts + changes).
    int workersStarted() const;

private:
    SandboxExecutorOptions m_options;
    mutable std::mutex m_mutex;
    std::unique_ptr<LocalRunner> m_runner;
    RunnerOptions m_current;
    int m_retiredWorkers = 0;
};

}  // namespace tb::measure
