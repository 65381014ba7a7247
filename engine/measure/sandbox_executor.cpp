// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/sandbox_executor.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "engine/support/error.h"

namespace tb::measure {

namespace {

rpc::RunReply fail(MeasureErrorNo e, std::string msg) {
    rpc::RunReply r;
    r.errorNo = static_cast<int>(e);
    r.errorMsg = std::move(msg);
    return r;
}

// The reason an ELF image cannot be run by the sandbox worker, or "" when it looks loadable.
std::string elfProblem(const std::string& bytes) {
    if (bytes.size() < 20 || bytes.compare(0, 4, "\177ELF") != 0) return "the module is not an ELF file";
    uint16_t type = 0, machine = 0;
    std::memcpy(&type, bytes.data() + 16, 2);
    std::memcpy(&machine, bytes.data() + 18, 2);
#if defined(__x86_64__)
    constexpr uint16_t kHostMachine = 62;
    constexpr const char* kHostName = "x86-64";
#elif defined(__aarch64__)
    constexpr uint16_t kHostMachine = 183;
    constexpr const char* kHostName = "aarch64";
#else
    constexpr uint16_t kHostMachine = 0;
    constexpr const char* kHostName = "this";
#endif
    if (kHostMachine && machine != kHostMachine) {
        const char* what = machine == 183 ? "aarch64" : machine == 62 ? "x86-64" : "another architecture";
        return std::string("the module is code for ") + what + "; this server runs " + kHostName +
               " code (use a device server of that architecture)";
    }
    if (type == 3)
        return "the module is a shared library; this server loads relocatable objects in its sandbox "
               "(upload the object: RpcRunnerOptions::link = Object)";
    if (type != 1) return "the module is not a relocatable object (ELF type " + std::to_string(type) + ")";
    return {};
}

bool readFile(const std::string& path, std::string* out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return !f.bad();
}

bool sameRunner(const RunnerOptions& a, const RunnerOptions& b) {
    return a.timeoutS == b.timeoutS && a.number == b.number && a.repeat == b.repeat && a.minRepeatMs == b.minRepeatMs &&
           a.enableCpuCacheFlush == b.enableCpuCacheFlush;
}

}  // namespace

SandboxExecutor::SandboxExecutor(SandboxExecutorOptions options) : m_options(std::move(options)) {
    m_current.workerPath = m_options.workerPath;
    m_current.numThreads = m_options.numThreads;
    m_current.seed = m_options.seed;
    m_runner = std::make_unique<LocalRunner>(m_current);  // resolves the worker path now (UserError if absent)
    m_current.workerPath = m_runner->options().workerPath;
}

SandboxExecutor::~SandboxExecutor() = default;

int SandboxExecutor::workersStarted() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_retiredWorkers + (m_runner ? m_runner->workersStarted() : 0);
}

rpc::RunReply SandboxExecutor::run(const rpc::RunRequest& req) {
    std::lock_guard<std::mutex> lock(m_mutex);
    std::string bytes;
    if (!readFile(req.modulePath, &bytes))
        return fail(MeasureErrorNo::CompileDevice, "cannot read module '" + req.module + "'");
    if (std::string p = elfProblem(bytes); !p.empty()) return fail(MeasureErrorNo::CompileDevice, p);
    if (req.function.empty()) return fail(MeasureErrorNo::CompileDevice, "the run request names no entry function");

    codegen::CompiledKernel kernel;
    kernel.name = req.function;
    kernel.runsOnHost = true;
    kernel.object.assign(bytes.begin(), bytes.end());
    for (size_t i = 0; i < req.args.size(); ++i) {
        if (!req.args[i].elementBytes())
            return fail(MeasureErrorNo::UnknownError,
                        "argument " + std::to_string(i) + " has the unsupported dtype '" + req.args[i].dtype + "'");
        kernel.argElements.push_back(req.args[i].floatSlots());  // the worker allocates float32 slots
    }

    std::unique_ptr<CheckSpec> check;
    std::string checkBytes;
    if (readFile(req.modulePath + std::string(kCheckBlobSuffix), &checkBytes)) {
        try {
            check = std::make_unique<CheckSpec>(decodeCheckBlob(checkBytes));
        } catch (const UserError& e) {
            return fail(MeasureErrorNo::UnknownError, std::string("bad check blob: ") + e.what());
        }
    }

    RunnerOptions wanted = m_current;
    wanted.timeoutS = req.timeoutSec;
    wanted.number = req.number;
    wanted.repeat = req.repeat;
    wanted.minRepeatMs = req.minRepeatMs;
    wanted.enableCpuCacheFlush = req.enableCpuCacheFlush;
    if (!sameRunner(wanted, m_runner->options())) {
        m_retiredWorkers += m_runner->workersStarted();
        m_runner = std::make_unique<LocalRunner>(wanted);
        m_current = wanted;
    }
    const MeasureResult r = m_runner->runOne(kernel, check.get());
    rpc::RunReply reply;
    reply.errorNo = static_cast<int>(r.errorNo);
    reply.errorMsg = r.errorMsg;
    if (r.ok()) reply.costs = r.costs;
    return reply;
}

}  // namespace tb::measure
