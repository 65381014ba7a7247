// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/local_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>

#include "engine/measure/worker_protocol.h"
#include "engine/support/error.h"
#include "engine/support/process.h"

extern char** environ;

namespace tb::measure {
namespace {

bool isExecutable(const std::string& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }

std::string findWorker(const std::string& configured) {
    if (!configured.empty()) {
        TB_USER_CHECK(isExecutable(configured)) << "measure worker '" << configured << "' is not an executable file";
        return configured;
    }
    if (const char* env = std::getenv("TB_WORKER_PATH"); env && *env) {
        TB_USER_CHECK(isExecutable(env)) << "TB_WORKER_PATH='" << env << "' is not an executable file";
        return env;
    }
#ifdef TB_DEFAULT_WORKER_PATH
    if (isExecutable(TB_DEFAULT_WORKER_PATH)) return TB_DEFAULT_WORKER_PATH;
#endif
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        std::string dir(self, size_t(n));
        dir = dir.substr(0, dir.rfind('/'));
        for (const char* rel : {"/tunebench-worker", "/../bin/tunebench-worker"})
            if (isExecutable(dir + rel)) return dir + rel;
    }
    TB_USER_ERROR() << "cannot find the measure worker 'tunebench-worker' (set TB_WORKER_PATH)";
    return {};
}

MeasureResult failure(MeasureErrorNo e, std::string msg) {
    MeasureResult r;
    r.costs = {kMaxFloat};
    r.errorNo = e;
    r.errorMsg = std::move(msg);
    r.timestamp = nowTimestamp();
    return r;
}

}  // namespace

LocalRunner::LocalRunner(RunnerOptions options) : m_options(std::move(options)) {
    m_options.workerPath = findWorker(m_options.workerPath);
}

LocalRunner::~LocalRunner() {
    if (m_pid > 0) stopWorker(true);
}

void LocalRunner::startWorker() {
    int sv[2];
    TB_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) << "socketpair: " << strerror(errno);
    // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
    const std::string fdArg = "--fd=3";
    std::vector<std::string> envStrings;
    for (char** e = environ; e && *e; ++e)
        if (m_options.numThreads <= 0 || std::strncmp(*e, "TB_NUM_THREADS=", 15) != 0) envStrings.emplace_back(*e);
    if (m_options.numThreads > 0) envStrings.push_back("TB_NUM_THREADS=" + std::to_string(m_options.numThreads));
    std::vector<char*> envp;
    for (auto& s : envStrings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<char*> argv = {m_options.workerPath.data(), const_cast<char*>(fdArg.c_str()), nullptr};

    const pid_t pid = fork();
    TB_CHECK(pid >= 0) << "fork: " << strerror(errno);
    if (pid == 0) {
        if (sv[1] == 3) {
            fcntl(3, F_SETFD, 0);
        } else {
            dup2(sv[1], 3);
        }
        const int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        execve(argv[0], argv.data(), envp.data());
        _exit(127);
    }
    close(sv[1]);
    m_fd = sv[0];
    m_pid = pid;
    ++m_started;
}

std::string LocalRunner::stopWorker(bool killIt) {
    if (m_pid <= 0) return "not running";
    if (killIt) kill(m_pid, SIGKILL);
    if (m_fd >= 0) close(m_fd);
    m_fd = -1;
    int status = 0;
    pid_t r;
    do {
        r = waitpid(m_pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    m_pid = -1;
    return describeWaitStatus(status);
}

MeasureResult LocalRunner::runOne(const codegen::CompiledKernel& kernel, const CheckSpec* check,
                                  std::optional<bool> cacheFlush, double abandonAboveS, double screenAboveS,
                                  const std::vector<int>& flushArgs) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
    if (!kernel.runsOnHost) {
        auto r = failure(MeasureErrorNo::CompileDevice, "kernel compiled for '" + kernel.target + "' cannot run on this machine");
        return r;
    }
    detail::RunRequest req;
    req.symbol = kernel.name;
    req.object = kernel.object;
    req.argElements = kernel.argElements;
    req.timer.number = m_options.number;
    req.timer.repeat = m_options.repeat;
    req.timer.minRepeatMs = m_options.minRepeatMs;
    req.timer.cooldownIntervalMs = m_options.cooldownIntervalS * 1e3;
    req.timer.rejectPreempted = m_options.rejectPreempted;
    req.timer.abandonAboveS = abandonAboveS;
    req.timer.screenMs = screenAboveS > 0 ? m_options.screenMs : 0;
    req.timer.screenAboveS = screenAboveS;
    req.timer.slices = m_options.slices;
    req.flushCache = cacheFlush.value_or(m_options.enableCpuCacheFlush);
    for (int a : flushArgs)
        TB_CHECK(a >= 0 && size_t(a) < kernel.argElements.size())
            << "flush argument " << a << " of a kernel with " << kernel.argElements.size() << " arguments";
    if (!flushArgs.empty()) {
        req.flushArgs.assign(flushArgs.begin(), flushArgs.end());
    } else {
        // TVM's cache_flush_cpu_non_first_arg: every argument but the first (the data input).
        for (size_t i = 1; i < kernel.argElements.size(); ++i) req.flushArgs.push_back(int32_t(i));
    }
    if (req.flushCache) {
        // TVM's LocalRunner times a flushed kernel one call per repeat (number 1, min_repeat_ms 0):
        // later calls of a round would find the caches warm again.
        req.timer.number = 1;
        req.timer.minRepeatMs = 0;
        req.timer.repeat = std::max(m_options.repeat, m_options.flushRepeat);
    }
    req.seed = m_options.seed;
    if (check) {
        req.hasCheck = true;
        req.check = *check;
    }
    if (m_pid <= 0) startWorker();
    MeasureResult res;
    if (!detail::writeFrame(m_fd, detail::encode(req))) {
        res = failure(MeasureErrorNo::RuntimeDevice, "the measure worker died before the candidate was sent: " + stopWorker(true));
    } else {
        std::string payload;
        const int got = detail::readFrame(m_fd, &payload, m_options.timeoutS * 1e3);
        if (got < 0) {
            stopWorker(true);
            res = failure(MeasureErrorNo::RunTimeout, "run exceeded " + std::to_string(m_options.timeoutS) + " s; worker killed");
        } else if (got == 0) {
            res = failure(MeasureErrorNo::RuntimeDevice, "the candidate crashed the measure worker: " + stopWorker(false));
        } else {
            detail::RunReply reply = detail::decodeReply(payload);
            res.errorNo = static_cast<MeasureErrorNo>(reply.errorNo);
            res.errorMsg = reply.message;
            res.costs = res.ok() ? reply.costs : std::vector<double>{kMaxFloat};
            res.timestamp = nowTimestamp();
            // Memory of the worker may be damaged (or its state suspect): start afresh next time.
            if (res.errorNo == MeasureErrorNo::WrongAnswer || res.errorNo == MeasureErrorNo::RuntimeDevice) stopWorker(true);
        }
    }
    res.allCost = elapsed();
    return res;
}

std::vector<MeasureResult> LocalRunner::run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds) {
    TB_CHECK(inputs.size() == builds.size()) << inputs.size() << " inputs but " << builds.size() << " build results";
    std::vector<MeasureResult> out;
    out.reserve(inputs.size());
    ++m_batches;
    std::map<std::string, double> batchBest;  // per workload key: best mean cost in this batch (s)
    for (size_t i = 0; i < inputs.size(); ++i) {
        const BuildResult& b = builds[i];
        const MeasureInput& in = inputs[i];
        MeasureResult r;
        if (b.errorNo != MeasureErrorNo::NoError || !b.kernel) {
            r = failure(b.errorNo == MeasureErrorNo::NoError ? MeasureErrorNo::CompileHost : b.errorNo, b.errorMsg);
        } else {
            double ref = in.bestCostS;
            if (auto it = batchBest.find(in.workloadKey); it != batchBest.end() && (ref <= 0 || it->second < ref))
                ref = it->second;
            const double abandonAboveS = ref > 0 && in.abandonFactor > 0 ? ref * in.abandonFactor : 0;
            const double screenAboveS = ref > 0 && in.screenFactor > 0 ? ref * in.screenFactor : 0;
            r = runStep(m_batches, int(i), in.workloadKey, "local sandbox",
                        [&] { return runOne(*b.kernel, in.check.get(), in.cacheFlush, abandonAboveS, screenAboveS, in.flushArgs); });
            if (r.ok()) {
                auto [it, fresh] = batchBest.try_emplace(in.workloadKey, r.meanCost());
                if (!fresh) it->second = std::min(it->second, r.meanCost());
            }
        }
        r.allCost += b.timeCost;
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace tb::measure
