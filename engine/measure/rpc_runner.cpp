// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/rpc_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/measure/sandbox_executor.h"
#include "engine/rpc/rpc_session.h"
#include "engine/rpc/socket.h"
#include "engine/rpc/tracker_client.h"
#include "engine/support/error.h"
#include "engine/support/process.h"

extern char** environ;

namespace tb::measure {

namespace {

using Clock = std::chrono::steady_clock;

MeasureResult failure(MeasureErrorNo e, std::string msg) {
    MeasureResult r;
    r.costs = {kMaxFloat};
    r.errorNo = e;
    r.errorMsg = std::move(msg);
    r.timestamp = nowTimestamp();
    return r;
}

bool isExecutable(const std::string& p) {
    return !p.empty() && ::access(p.c_str(), X_OK) == 0;
}

std::string onPath(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        const size_t end = std::min(dirs.find(':', start), dirs.size());
        const std::string dir = dirs.substr(start, end - start);
        if (!dir.empty() && isExecutable(dir + "/" + name)) return dir + "/" + name;
        start = end + 1;
    }
    return {};
}

long long toMs(double seconds) {
    return static_cast<long long>(std::llround(seconds * 1000.0));
}

// Sleeps up to `ms`, returning early (true) when `fd` becomes readable.
bool sleepUnlessWoken(int fd, long long ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, int(std::clamp<long long>(ms, 0, 60000))) > 0;
}

}  // namespace

// ---- linking --------------------------------------------------------------------------------

std::string findLinker(const std::string& configured) {
    if (!configured.empty()) {
        TB_USER_CHECK(isExecutable(configured)) << "linker '" << configured << "' is not an executable file";
        return configured;
    }
    for (const char* name : {"ld.lld", "ld.lld-16"})
        if (std::string p = onPath(name); !p.empty()) return p;
    if (isExecutable("/usr/lib/llvm-16/bin/ld.lld")) return "/usr/lib/llvm-16/bin/ld.lld";
    TB_USER_ERROR() << "cannot find ld.lld (tried ld.lld and ld.lld-16 on PATH and /usr/lib/llvm-16/bin/ld.lld; "
                       "install the Debian package lld) to link kernels for the device";
    return {};
}

std::vector<uint8_t> linkSharedLibrary(const std::vector<uint8_t>& object, const std::string& linker) {
    namespace fs = std::filesystem;
    const char* tmp = std::getenv("TMPDIR");
    std::string dirTemplate = std::string(tmp && *tmp ? tmp : "/tmp") + "/tunebench-link-XXXXXX";
    TB_USER_CHECK(::mkdtemp(dirTemplate.data()))
        << "cannot create a temporary directory for linking: " << std::strerror(errno);
    const fs::path dir = dirTemplate;
    struct Cleanup {
        fs::path d;
        ~Cleanup() {
            std::error_code ec;
            fs::remove_all(d, ec);
        }
    } cleanup{dir};
    const std::string in = (dir / "kernel.o").string(), out = (dir / "kernel.so").string(),
                      log = (dir / "ld.log").string();
    {
        std::ofstream f(in, std::ios::binary);
        f.write(reinterpret_cast<const char*>(object.data()), std::streamsize(object.size()));
        TB_USER_CHECK(f.good()) << "cannot write " << in;
    }
    std::vector<std::string> args = {linker, "-shared", "-z", "noexecstack", "-o", out, in};
    const pid_t pid = spawnLogged(args, log, /*append=*/false);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::ifstream lf(log);
    std::string diag((std::istreambuf_iterator<char>(lf)), std::istreambuf_iterator<char>());
    TB_USER_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << linker << " -shared failed" << (diag.empty() ? std::string() : ": " + diag);
    std::ifstream so(out, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(so)), std::istreambuf_iterator<char>());
    TB_USER_CHECK(!bytes.empty()) << linker << " produced no shared library";
    return bytes;
}

// ---- the runner -----------------------------------------------------------------------------

struct RpcRunner::Shared {
    std::mutex mu;
    RpcRunnerStats stats;
    long long batches = 0;
    std::string linker;  // resolved on first use
};

struct RpcRunner::Batch {
    const std::vector<MeasureInput>* inputs = nullptr;
    const std::vector<BuildResult>* builds = nullptr;
    std::vector<MeasureResult>* results = nullptr;
    long long id = 0;
    std::mutex mu;
    std::deque<size_t> queue;  // candidates nobody has taken yet
    size_t remaining = 0;      // candidates without a result yet
    std::vector<char> measured;
    std::string lastError;  // why a thread could not get a device
    rpc::WakePipe wake;     // woken once every candidate has a result
};

RpcRunner::RpcRunner(RpcRunnerOptions options) : m_options(std::move(options)), m_shared(std::make_unique<Shared>()) {
    const RpcRunnerOptions& o = m_options;
    TB_USER_CHECK(!o.key.empty()) << "the RPC runner needs a device key (e.g. --key rasp4b-64)";
    TB_USER_CHECK(o.key.find_first_of(" \t\r\n") == std::string::npos)
        << "the device key '" << o.key << "' must not contain whitespace";
    TB_USER_CHECK(!o.trackerHost.empty() && o.trackerPort > 0 && o.trackerPort < 65536)
        << "the RPC runner needs a tracker HOST:PORT, got '" << o.trackerHost << ":" << o.trackerPort << "'";
    TB_USER_CHECK(o.number >= 1 && o.repeat >= 1) << "number and repeat must be >= 1";
    TB_USER_CHECK(o.minRepeatMs >= 0 && o.minRepeatMs < 2147483647.0) << "min_repeat_ms must be >= 0";
    TB_USER_CHECK(o.timeoutS > 0) << "the run timeout must be > 0 s";
    TB_USER_CHECK(o.nParallel >= 0) << "n_parallel must be >= 0 (0: every device of the key)";
    TB_USER_CHECK(o.requestTimeoutS > 0 && o.trackerRetryTimeoutS >= 0 && o.ioTimeoutS > 0 && o.cooldownIntervalS >= 0)
        << "RPC runner timeouts must be positive";
    TB_USER_CHECK(o.maxRetry >= 1) << "max_retry must be >= 1";
}

RpcRunner::~RpcRunner() = default;

RpcRunnerStats RpcRunner::stats() const {
    std::lock_guard<std::mutex> lock(m_shared->mu);
    return m_shared->stats;
}

int RpcRunner::serversOfKey(std::string* error) const {
    rpc::ConnectOptions co;
    co.retryTimeoutMs = int(toMs(m_options.trackerRetryTimeoutS));
    co.retryPeriodMs = 500;
    co.ioTimeoutMs = int(toMs(m_options.ioTimeoutS));
    try {
        rpc::TrackerSession t = rpc::TrackerSession::connect(m_options.trackerHost, m_options.trackerPort, co);
        const rpc::TrackerSummary s = t.summary();
        int n = 0;
        for (const auto& srv : s.servers)
            if (srv.key == "server:" + m_options.key) ++n;
        return n;
    } catch (const rpc::RpcError& e) {
        *error = e.what();
        return -1;
    }
}

std::vector<MeasureResult> RpcRunner::run(const std::vector<MeasureInput>& inputs,
                                          const std::vector<BuildResult>& builds) {
    TB_CHECK(inputs.size() == builds.size()) << inputs.size() << " inputs but " << builds.size() << " build results";
    std::vector<MeasureResult> results(inputs.size());
    Batch b;
    b.inputs = &inputs;
    b.builds = &builds;
    b.results = &results;
    b.measured.assign(inputs.size(), 0);
    {
        std::lock_guard<std::mutex> lock(m_shared->mu);
        b.id = ++m_shared->batches;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        const BuildResult& br = builds[i];
        if (br.errorNo != MeasureErrorNo::NoError || (!br.kernel && !br.gpuModule && !br.program)) {
            results[i] =
                failure(br.errorNo == MeasureErrorNo::NoError ? MeasureErrorNo::CompileHost : br.errorNo, br.errorMsg);
            results[i].allCost = br.timeCost;
            b.measured[i] = 1;
        } else {
            b.queue.push_back(i);
        }
    }
    b.remaining = b.queue.size();
    if (b.queue.empty()) return results;

    int threads = m_options.nParallel;
    if (threads == 0) {
        std::string err;
        threads = serversOfKey(&err);
        if (threads < 0) {
            for (size_t i : b.queue) {
                results[i] = failure(MeasureErrorNo::CompileDevice,
                                     "cannot reach the RPC tracker " + m_options.trackerHost + ":" +
                                         std::to_string(m_options.trackerPort) + ": " + err);
                results[i].allCost = builds[i].timeCost;
            }
            return results;
        }
        threads = std::max(threads, 1);  // none listed yet: one REQUEST waits for the first device
    }
    threads = int(std::min<size_t>(size_t(threads), b.queue.size()));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([this, &b] {
            try {
                worker(b);
            } catch (const std::exception& e) {  // outside a candidate (no memory...): its work stays queued
                std::lock_guard<std::mutex> lock(b.mu);
                b.lastError = std::string("RPC runner thread: ") + e.what();
            }
        });
    for (auto& t : pool) t.join();

    for (size_t i = 0; i < inputs.size(); ++i) {
        if (b.measured[i]) continue;
        results[i] = failure(MeasureErrorNo::CompileDevice,
                             "no device of key '" + m_options.key + "' could be obtained from the tracker " +
                                 m_options.trackerHost + ":" + std::to_string(m_options.trackerPort) +
                                 (b.lastError.empty() ? std::string() : ": " + b.lastError));
        results[i].allCost = builds[i].timeCost;
    }
    return results;
}

void RpcRunner::worker(Batch& b) {
    const RpcRunnerOptions& o = m_options;
    const int wakeFd = b.wake.readFd();
    std::string server, serverKey;  // the device this thread holds
    auto emit = [&](RpcRunnerEvent e) {
        if (!o.onEvent) return;
        try {
            o.onEvent(e);
        } catch (...) {  // an observer's bug must not end the batch (or the process: a worker thread)
        }
    };
    // The same steps as MeasureEvents (measure.h), for fleet views.
    auto step = [&](MeasureEvent::Kind kind, MeasureEvent::Phase phase, int candidate, double start,
                    MeasureErrorNo err = MeasureErrorNo::NoError, const std::string& msg = {}) {
        if (!hasEventSink()) return;
        MeasureEvent e;
        e.kind = kind;
        e.phase = phase;
        e.batch = b.id;
        e.candidate = candidate;
        if (candidate >= 0) e.workloadKey = (*b.inputs)[size_t(candidate)].workloadKey;
        e.device = server;
        e.deviceKey = serverKey.rfind("server:", 0) == 0 ? serverKey.substr(7) : serverKey;
        e.startTime = start;
        e.endTime = kind == MeasureEvent::Kind::Started ? 0 : nowTimestamp();
        e.errorNo = err;
        e.message = msg;
        emitEvent(e);
    };
    auto queueEmpty = [&] {
        std::lock_guard<std::mutex> lock(b.mu);
        return b.queue.empty();
    };
    auto noteError = [&](const std::string& msg) {
        std::lock_guard<std::mutex> lock(b.mu);
        b.lastError = msg;
    };

    rpc::ConnectOptions co;
    co.connectTimeoutMs = 5000;
    co.retryTimeoutMs = 0;  // retried below, so that a finished batch stops the retries
    co.ioTimeoutMs = int(toMs(o.ioTimeoutS));
    co.interruptFd = wakeFd;
    rpc::SessionOptions so;
    so.token = o.token;
    so.connectTimeoutMs = 5000;
    so.ioTimeoutMs = int(toMs(o.ioTimeoutS));

    rpc::TrackerSession tracker;
    std::optional<rpc::RpcSession> session;

    // Connects to the tracker, retrying for trackerRetryTimeoutS; false when the batch is over or
    // the time ran out.
    auto ensureTracker = [&]() -> bool {
        if (tracker.connected()) return true;
        const auto giveUp = Clock::now() + std::chrono::milliseconds(toMs(o.trackerRetryTimeoutS));
        for (;;) {
            try {
                tracker = rpc::TrackerSession::connect(o.trackerHost, o.trackerPort, co);
                return true;
            } catch (const rpc::RpcError& e) {
                noteError(std::string("tracker: ") + e.what());
                if (e.kind() == rpc::RpcError::Kind::kInterrupted || Clock::now() >= giveUp) return false;
            }
            if (sleepUnlessWoken(wakeFd, 250) || queueEmpty()) return false;
        }
    };

    // TVM request_remote: REQUEST a device and connect to it, maxRetry attempts.
    auto acquire = [&]() -> bool {
        for (int attempt = 0; attempt < o.maxRetry; ++attempt) {
            if (queueEmpty() || !ensureTracker()) return false;
            rpc::DeviceAssignment a;
            try {
                a = tracker.request(o.key, o.priority, int(toMs(o.requestTimeoutS)));
            } catch (const rpc::RpcError& e) {
                if (e.kind() == rpc::RpcError::Kind::kInterrupted) return false;
                noteError(std::string("request for key '") + o.key + "': " + e.what());
                if (e.kind() == rpc::RpcError::Kind::kTimeout) return false;
                continue;  // the tracker went away: reconnect and ask again
            }
            try {
                session = rpc::RpcSession::connect(a.host, a.port, a.matchKey, so);
                server = a.host + ":" + std::to_string(a.port);
                serverKey = session->serverKey();
                {
                    std::lock_guard<std::mutex> lock(m_shared->mu);
                    ++m_shared->stats.sessions;
                }
                RpcRunnerEvent e;
                e.kind = RpcRunnerEvent::Kind::SessionOpened;
                e.server = server;
                e.serverKey = serverKey;
                emit(e);
                return true;
            } catch (const rpc::RpcError& e) {
                noteError("device " + a.host + ":" + std::to_string(a.port) + ": " + e.what());
            }
        }
        return false;
    };

    auto lose = [&](const std::string& why) {
        session.reset();
        {
            std::lock_guard<std::mutex> lock(m_shared->mu);
            ++m_shared->stats.sessionsLost;
        }
        RpcRunnerEvent e;
        e.kind = RpcRunnerEvent::Kind::SessionLost;
        e.server = server;
        e.serverKey = serverKey;
        e.message = why;
        emit(e);
        const double now = nowTimestamp();
        step(MeasureEvent::Kind::DeviceLost, MeasureEvent::Phase::Run, -1, now, MeasureErrorNo::RuntimeDevice, why);
    };

    for (;;) {
        if (!session && !acquire()) break;
        size_t i;
        {
            std::lock_guard<std::mutex> lock(b.mu);
            if (b.queue.empty()) break;
            i = b.queue.front();
            b.queue.pop_front();
        }
        const BuildResult& br = (*b.builds)[i];
        const MeasureInput& in = (*b.inputs)[i];
        const auto t0 = Clock::now();
        const double uploadStart = nowTimestamp();
        double runStart = 0;  // set once the run began
        MeasureResult r;
        bool haveResult = false;
        step(MeasureEvent::Kind::Started, MeasureEvent::Phase::Upload, int(i), uploadStart);

        try {
            // 1. The module for the device: a GPU module's JSON wire form, or the kernel's object
            // (linked into a shared library for a board).
            std::vector<uint8_t> linked;
            std::string name = "b" + std::to_string(b.id) + "_c" + std::to_string(i);
            LinkMode mode = o.link;
            if (br.gpuModule || br.program)
                mode = LinkMode::Object;
            else if (mode == LinkMode::Auto)
                mode = br.kernel->runsOnHost ? LinkMode::Object : LinkMode::SharedLibrary;
            if (br.program) {
                name += br.program->suffix;
                linked.assign(br.program->bytes.begin(), br.program->bytes.end());
            } else if (br.gpuModule) {
                name += ".gpu.json";
                const std::string text = codegen::toJson(*br.gpuModule).dump();
                linked.assign(text.begin(), text.end());
            } else if (mode == LinkMode::SharedLibrary) {
                name += ".so";
                const auto l0 = Clock::now();
                try {
                    std::string linker;
                    {
                        std::lock_guard<std::mutex> lock(m_shared->mu);
                        if (m_shared->linker.empty()) m_shared->linker = findLinker(o.linker);
                        linker = m_shared->linker;
                    }
                    linked = linkSharedLibrary(br.kernel->object, linker);
                } catch (const UserError& e) {
                    r = failure(MeasureErrorNo::CompileHost, e.what());
                    haveResult = true;
                }
                std::lock_guard<std::mutex> lock(m_shared->mu);
                m_shared->stats.linkSeconds += std::chrono::duration<double>(Clock::now() - l0).count();
            } else {
                name += ".o";
            }
            const std::vector<uint8_t>& blob =
                br.program || br.gpuModule || mode == LinkMode::SharedLibrary ? linked : br.kernel->object;

            // 2. Upload (the module, then its check blob).
            if (!haveResult) {
                try {
                    session->upload(name, std::string_view(reinterpret_cast<const char*>(blob.data()), blob.size()));
                    if (in.check) session->upload(name + std::string(kCheckBlobSuffix), encodeCheckBlob(*in.check));
                } catch (const rpc::RpcError& e) {
                    r = failure(MeasureErrorNo::CompileDevice, "upload to " + server + " failed: " + e.what());
                    haveResult = true;
                    lose(e.what());
                }
            }

            step(MeasureEvent::Kind::Finished, MeasureEvent::Phase::Upload, int(i), uploadStart,
                 haveResult ? r.errorNo : MeasureErrorNo::NoError, haveResult ? r.errorMsg : std::string());

            // 3. Run.
            if (!haveResult) {
                rpc::RunRequest req;
                req.module = name;
                req.function = br.gpuModule || br.program ? std::string() : br.kernel->name;
                req.number = o.number;
                req.repeat = o.repeat;
                req.minRepeatMs = int(std::lround(o.minRepeatMs));
                req.enableCpuCacheFlush = in.cacheFlush.value_or(o.enableCpuCacheFlush);
                req.timeoutSec = o.timeoutS;
                if (br.program) {
                    // the program says what to run: no arguments
                } else if (br.gpuModule) {
                    for (int a = 0; a < br.gpuModule->numArgs; ++a)
                        req.args.push_back(rpc::ArgSpec{{br.gpuModule->bufferElements[size_t(a)]}, "float32"});
                } else {
                    for (int64_t n : br.kernel->argElements) req.args.push_back(rpc::ArgSpec{{n}, "float32"});
                }
                {
                    std::lock_guard<std::mutex> lock(m_shared->mu);
                    ++m_shared->stats.candidates;
                }
                RpcRunnerEvent ev;
                ev.kind = RpcRunnerEvent::Kind::Running;
                ev.candidate = int(i);
                ev.server = server;
                ev.serverKey = serverKey;
                emit(ev);
                runStart = nowTimestamp();
                step(MeasureEvent::Kind::Started, MeasureEvent::Phase::Run, int(i), runStart);
                try {
                    const rpc::RunReply reply = session->run(req);
                    const int e = reply.errorNo;
                    r.errorNo = e >= 0 && e <= int(MeasureErrorNo::UnknownError) ? MeasureErrorNo(e)
                                                                                 : MeasureErrorNo::UnknownError;
                    r.errorMsg = reply.errorMsg;
                    if (r.ok() &&
                        (reply.costs.empty() || !std::all_of(reply.costs.begin(), reply.costs.end(),
                                                             [](double c) { return std::isfinite(c) && c >= 0; }))) {
                        r.errorNo = MeasureErrorNo::UnknownError;
                        r.errorMsg = "device " + server + " returned no valid costs";
                    }
                    r.costs = r.ok() ? reply.costs : std::vector<double>{kMaxFloat};
                    if (r.ok()) r.deviceCounters = reply.deviceCounters;
                    r.timestamp = nowTimestamp();
                } catch (const rpc::RpcError& e) {
                    // kRemote: the server refused the request itself (it could not take the module).
                    const bool timeout = e.kind() == rpc::RpcError::Kind::kTimeout;
                    const bool refused = e.kind() == rpc::RpcError::Kind::kRemote;
                    r = failure(timeout   ? MeasureErrorNo::RunTimeout
                                : refused ? MeasureErrorNo::CompileDevice
                                          : MeasureErrorNo::RuntimeDevice,
                                std::string(timeout   ? "no reply from "
                                            : refused ? "refused by "
                                                      : "lost device ") +
                                    server + " while running: " + e.what());
                    lose(e.what());
                }
            }
        } catch (const std::exception& e) {  // a bug or no memory: this candidate only
            r = failure(MeasureErrorNo::UnknownError, std::string("RPC runner: ") + e.what());
            if (session) lose(e.what());
        }
        r.allCost = std::chrono::duration<double>(Clock::now() - t0).count() + br.timeCost;
        {
            RpcRunnerEvent ev;
            ev.kind = RpcRunnerEvent::Kind::Finished;
            ev.candidate = int(i);
            ev.server = server;
            ev.serverKey = serverKey;
            ev.errorNo = r.errorNo;
            ev.message = r.errorMsg;
            emit(ev);
            if (runStart > 0) step(MeasureEvent::Kind::Finished, MeasureEvent::Phase::Run, int(i), runStart, r.errorNo, r.errorMsg);
        }
        {
            std::lock_guard<std::mutex> lock(b.mu);
            (*b.results)[i] = std::move(r);
            b.measured[i] = 1;
            if (--b.remaining == 0) b.wake.wake();  // threads still waiting for a device may stop
        }
        if (o.cooldownIntervalS > 0) sleepUnlessWoken(-1, toMs(o.cooldownIntervalS));
    }
    if (session) session->close();
}

std::unique_ptr<ProgramRunner> makeRpcRunner(const RpcRunnerOptions& options) {
    TB_USER_CHECK(options.target.kind == "llvm" || options.target.kind == "opencl" || options.target.kind == "cuda")
        << "the RPC runner measures llvm (CPU), opencl and cuda targets, not '" << options.target.kind << "'";
    return std::make_unique<RpcRunner>(options);
}

}  // namespace tb::measure
