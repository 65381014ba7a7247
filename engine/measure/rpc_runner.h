// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file rpc_runner.h
/// \brief RPCRunner: times built candidates on remote devices handed out by an RPC tracker, on
/// every free device of a key at once (TVM auto_scheduler `RPCRunner` with `n_parallel`,
/// REFERENCE-TVM §4.1; the device fleet of the ARM tutorial, seeds/000).
///
/// Why: tuning for a board (a Raspberry Pi 4B registered as `rasp4b-64`, a phone, a second server)
/// means compiling here and measuring there, and a fleet of N boards should measure N candidates at
/// a time. The tracker (engine/rpc/tracker.h) brokers the boards; this runner is the client side.
///
/// One batch (`run`), step by step:
///  1. Build errors pass through as error records (as LocalRunner does). The other candidates go
///     into a shared queue.
///  2. Parallelism: `nParallel`, or when 0 the number of servers of the key the tracker lists in
///     SUMMARY at the start of the batch (at least 1, at most the number of candidates).
///  3. Each of those worker threads asks the tracker for a device (REQUEST with `priority`, waiting
///     up to `requestTimeoutS`; TVM `request_remote`), opens a session (TVM's data-plane handshake),
///     then takes candidates from the queue one by one and, for each: prepares the module (below),
///     uploads it (plus `<module>.check` when the input carries a CheckSpec: sandbox_executor.h),
///     asks the device to run it with the timer parameters (number, repeat, min_repeat_ms,
///     cache flush, timeout) and records the reply. It keeps its device for the whole batch and
///     releases it at the end, so other tuning jobs get the device between rounds.
///  4. When a device fails (the connection breaks: the board was unplugged or killed, the server
///     crashed) the candidate in flight gets an error record and that thread asks the tracker for
///     another device; the other threads carry on. A thread waiting for a device gives up when the
///     queue is empty. Candidates no thread could measure (no device within requestTimeoutS, or an
///     unreachable tracker) get COMPILE_DEVICE records naming the cause. `run` never throws for a
///     device or network failure.
///  5. The tracker may restart at any time: a REQUEST that fails is retried `maxRetry` times, each
///     reconnection retrying for up to `trackerRetryTimeoutS` (TVM connect_with_retry); devices
///     re-register by themselves (rpc_server.h), and sessions already open do not need the tracker.
///
/// Error numbers (TVM auto_scheduler `_rpc_run`): module preparation fails (linking) ->
/// COMPILE_HOST; no device, the upload fails, or the device cannot load the module ->
/// COMPILE_DEVICE; the connection breaks during the run -> RUNTIME_DEVICE; no reply within
/// timeoutS + ioTimeoutS -> RUN_TIMEOUT; otherwise the device's own error number (RUNTIME_DEVICE for
/// a crash, WRONG_ANSWER, RUN_TIMEOUT when the device killed a hung candidate, ...). Failed results
/// carry the cost kMaxFloat. `allCost` = build time + preparation + upload + run (seconds).
///
/// GPU candidates (BuildResult::gpuModule set, MeasureInput::gpuModule): the module's JSON wire form
/// (codegen::toJson) is uploaded as `<name>.gpu.json` with its check blob, and the run request
/// names no function; the device must be a GPU device server (gpu_executor.h: tools/gpu's
/// tunebench-gpu-server, `tunebench-cli rpc-server --device opencl|cuda`). Linking does not apply.
///
/// Device programs (BuildResult::program, e.g. a VTA program: autotvm/vta_tune.h) are uploaded as
/// `<name><suffix>` as they are and run with no function and no arguments; the reply's device
/// counters (RunReply::deviceCounters) come back in MeasureResult::deviceCounters. Linking does
/// not apply.
///
/// Module preparation ("link for the device", `link`):
///  - Object: the relocatable object from codegen, as is. `tunebench-cli rpc-server` (a host
///    server: sandbox_executor.h) loads objects in its sandbox.
///  - SharedLibrary: the object linked into a shared library with `ld.lld -shared` (no other
///    input). The kernels' runtime calls (tb_rt_parallel_for, tb_rt_alloc/free, expf, ...) stay
///    undefined and are resolved by the device process when it dlopen()s the library: the AArch64
///    device server (tools/arm/) exports them.
///  - Auto (default): Object when the kernel runs on this machine (CompiledKernel::runsOnHost, i.e.
///    the device is a host-architecture tunebench server), else SharedLibrary (a board).
///
/// Threads: run() is called by one thread at a time (the tuning loop); it starts and joins its own
/// worker threads. `onEvent` is called on those worker threads, and so is the event sink
/// (measure.h MeasureEvent): per candidate an Upload step (link + upload) and a Run step, each
/// Started then Finished, with the device's address and key; DeviceLost when a session breaks off.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/codegen/target.h"
#include "engine/measure/measure.h"

namespace tb::measure {

/// How a compiled kernel is packaged for the device (file comment).
enum class LinkMode {
    Auto,           ///< Object for host-architecture kernels, SharedLibrary otherwise
    Object,         ///< the relocatable object as is
    SharedLibrary,  ///< `ld.lld -shared` of the object
};

/// Progress of a batch, reported through RpcRunnerOptions::onEvent (for device views and logs).
struct RpcRunnerEvent {
    enum class Kind {
        SessionOpened,  ///< a worker thread got a device (server, serverKey set)
        Running,        ///< candidate `candidate` was uploaded and is about to run on `server`
        Finished,       ///< candidate `candidate` has its result (errorNo, message)
        SessionLost,    ///< the device broke off (message says how); the thread looks for another
    };
    Kind kind = Kind::SessionOpened;
    int candidate = -1;     ///< index into the batch, or -1
    std::string server;     ///< "host:port" of the device's data plane
    std::string serverKey;  ///< the device's greeting, e.g. "server:rasp4b-64"
    MeasureErrorNo errorNo = MeasureErrorNo::NoError;
    std::string message;
};

struct RpcRunnerOptions {
    // ---- where the devices are (TVM RPCRunner key, host, port, priority, n_parallel) ----
    std::string trackerHost = "127.0.0.1";
    int trackerPort = 9190;
    std::string key;    ///< device key, e.g. "rasp4b-64" (required)
    int priority = 1;   ///< REQUEST priority: higher is served first
    int nParallel = 0;  ///< devices used at once; 0 = every server of the key the tracker lists
    // ---- timing (TVM RPCRunner defaults: timeout 10, number 3, repeat 1, min_repeat_ms 100) ----
    double timeoutS = 10;  ///< per candidate on the device: load + check + timing (s)
    int number = 3;
    int repeat = 1;
    double minRepeatMs = 100;          ///< rounded to whole milliseconds on the wire
    double cooldownIntervalS = 0;      ///< pause of a worker thread after each candidate (s)
    bool enableCpuCacheFlush = false;  ///< flush every argument but the first before each repeat
    // ---- module preparation ----
    /// The target candidates are compiled for (informational: messages, and makeRpcRunner checks
    /// it is an llvm, opencl or cuda target). The link mode follows each kernel's own target (see LinkMode::Auto).
    codegen::Target target;
    LinkMode link = LinkMode::Auto;
    /// ld.lld to use; empty: `ld.lld`, `ld.lld-16`, /usr/lib/llvm-16/bin/ld.lld (first found).
    std::string linker;
    // ---- robustness ----
    double requestTimeoutS = 60;       ///< wait for a free device of the key (s)
    double trackerRetryTimeoutS = 60;  ///< keep retrying an unreachable tracker this long (s)
    double ioTimeoutS = 30;            ///< extra wait for a reply beyond timeoutS (s)
    int maxRetry = 5;                  ///< TVM request max_retry
    std::string token;                 ///< the servers' shared secret (RpcServerOptions::token)
    /// Called on the runner's worker threads; must be thread safe and quick. May be empty.
    std::function<void(const RpcRunnerEvent&)> onEvent;
};

/// Counters over the runner's lifetime (for status displays and the benchmark in the report).
struct RpcRunnerStats {
    long long candidates = 0;    ///< candidates sent to a device
    long long sessions = 0;      ///< sessions opened
    long long sessionsLost = 0;  ///< sessions that broke off
    double linkSeconds = 0;      ///< total time spent in ld.lld
};

class RpcRunner final : public ProgramRunner {
public:
    /// Throws tb::UserError for an empty key, number/repeat < 1, timeoutS <= 0 or a negative
    /// nParallel. Contacts nobody: the tracker is first reached by run().
    explicit RpcRunner(RpcRunnerOptions options);
    ~RpcRunner() override;
    RpcRunner(const RpcRunner&) = delete;
    RpcRunner& operator=(const RpcRunner&) = delete;

    /// One result per input, in order (file comment). Never throws for device or network failures.
    std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                   const std::vector<BuildResult>& builds) override;

    const RpcRunnerOptions& options() const { return m_options; }
    RpcRunnerStats stats() const;

private:
    struct Batch;
    void worker(Batch& batch);
    int serversOfKey(std::string* error) const;

    RpcRunnerOptions m_options;
    struct Shared;
    std::unique_ptr<Shared> m_shared;
};

/// The factory the tune command uses (`--runner rpc --tracker HOST:PORT --key KEY`): an RpcRunner
/// with these options (see RpcRunner's constructor for the errors). Typical use:
/// ```
///   measure::RpcRunnerOptions o;
///   o.trackerHost = "127.0.0.1"; o.trackerPort = 9190; o.key = "rasp4b-64";
///   o.target = codegen::Target::parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
///   o.timeoutS = 30; o.repeat = 1; o.minRepeatMs = 200; o.enableCpuCacheFlush = true;  // tutorial
///   std::unique_ptr<measure::ProgramRunner> runner = measure::makeRpcRunner(o);
/// ```
std::unique_ptr<ProgramRunner> makeRpcRunner(const RpcRunnerOptions& options);

/// The linker RpcRunner uses: `configured` when non-empty (must be executable), else the first of
/// `ld.lld`, `ld.lld-16` on PATH and /usr/lib/llvm-16/bin/ld.lld. Throws tb::UserError naming
/// what was tried when none is found.
std::string findLinker(const std::string& configured = {});

/// Links a relocatable object into a shared library (`<linker> -shared -z noexecstack -o out in`).
/// Undefined symbols stay undefined (the device provides them). Throws tb::UserError with the
/// linker's diagnostics when it fails.
std::vector<uint8_t> linkSharedLibrary(const std::vector<uint8_t>& object, const std::string& linker);

}  // namespace tb::measure
