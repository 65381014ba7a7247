// SPDX-License-Identifier: Apache-2.0
// tunebench-device-server: the measurement server that runs ON an AArch64 board (a Raspberry Pi 4B
// with a 64-bit OS, or the emulated board of scripts/arm-board: this binary under
// `qemu-aarch64-static -L /usr/aarch64-linux-gnu`). It is the `python -m tvm.exec.rpc_server
// --tracker HOST:PORT --key rasp4b-64` of the ARM tutorial, for TuneBench.
//
// What it is made of: engine/rpc's RpcServer (tracker registration with TVM's protocol, TVM's
// data-plane handshake, TuneBench's upload/run session protocol) and engine/measure/timer (TVM's
// time evaluator, guarded buffers, cache flush), compiled for aarch64 with no Qt and no LLVM
// (tools/arm/build.sh). What it adds is the executor: the host links each candidate into an
// AArch64 shared library (RPCRunner, LinkMode::SharedLibrary); this server dlopen()s it in a
// forked child, fills the arguments (random, or the `<module>.check` blob's inputs), makes the
// warm-up call, compares the outputs with the check blob's expected values, times the kernel with
// TVM's semantics and sends the costs back. The child isolates the server from the candidate: a
// crash is RUNTIME_DEVICE, a hang past the request's timeout is killed and reported RUN_TIMEOUT.
//
// Whole networks (the ARM tutorial's last step, `remote.upload(lib)` + graph_executor +
// `module.benchmark`): the session's kCall of `tunebench.graph_executor.benchmark`
// (engine/rpc/network_call.h) names an uploaded export (deploy_lib.so linked for aarch64,
// deploy_graph.json, deploy_param.params); a forked child loads it with engine/runtime's
// DeployedNetwork (graph executor, no compiler), sets the inputs, runs once for the outputs and
// times the network with TVM's time evaluator. Same isolation and error numbers as a kernel.
//
// The kernel ABI (engine/codegen/kernel_abi.h: tb_rt_parallel_for, tb_rt_alloc, tb_rt_free) is the
// engine's own implementation, engine/codegen/kernel_runtime.cpp on support/thread_pool.cpp (no
// LLVM in either), exported from the executable (-rdynamic). Parallel loops are split statically
// over --threads threads (default all cores; --threads 1 runs them serially); libm (expf, tanhf,
// ...) and libc (memset, memcpy) come from the server's own dependencies, which are in the global
// scope a dlopen()ed library binds against.
#include <dlfcn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/codegen/kernel_abi.h"
#include "engine/measure/check_blob.h"
#include "engine/measure/child_run.h"
#include "engine/measure/timer.h"
#include "engine/rpc/measure_executor.h"
#include "engine/rpc/network_call.h"
#include "engine/rpc/rpc_server.h"
#include "engine/runtime/network_executor.h"
#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/support/process.h"
#include "tools/server_args.h"

namespace {

using tb::rpc::RunReply;
using tb::rpc::RunRequest;

// TVM MeasureErrorNO (engine/measure/measure.h).
constexpr int kCompileDevice = 3, kRuntimeDevice = 4, kWrongAnswer = 5, kRunTimeout = 7, kUnknown = 8;

// Keeps libm in the executable's dependencies (kernels call expf & co. through the global scope;
// the link line also says --no-as-needed -lm).
float (*volatile g_keepLibm[])(float) = {&::expf, &::logf, &::tanhf, &::erff};

bool readFile(const std::string& path, std::string* out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return !f.bad();
}

RunReply fail(int errorNo, std::string msg) {
    RunReply r;
    r.errorNo = errorNo;
    r.errorMsg = std::move(msg);
    return r;
}

// Runs in the forked child: load, fill, warm up, check, time.
RunReply measureHere(const RunRequest& req, const tb::measure::CheckSpec* check, uint64_t seed) {
    void* lib = dlopen(req.modulePath.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) return fail(kCompileDevice, std::string("dlopen: ") + dlerror());
    auto fn = reinterpret_cast<TBKernelFunction>(dlsym(lib, req.function.c_str()));
    if (!fn) return fail(kCompileDevice, "the module has no function '" + req.function + "'");

    std::vector<tb::measure::GuardedBuffer> bufs;
    bufs.reserve(req.args.size());
    std::vector<void*> args;
    for (size_t i = 0; i < req.args.size(); ++i) {
        if (!req.args[i].elementBytes()) return fail(kUnknown, "unsupported dtype '" + req.args[i].dtype + "'");
        bufs.emplace_back(size_t(req.args[i].floatSlots()));
        tb::measure::GuardedBuffer& b = bufs.back();
        const std::vector<float>* given = check && i < check->inputs.size() ? &check->inputs[i] : nullptr;
        if (given && !given->empty()) {
            if (given->size() != b.size())
                return fail(kUnknown, "check input " + std::to_string(i) + " has " + std::to_string(given->size()) +
                                          " elements, the argument has " + std::to_string(b.size()));
            std::memcpy(b.data(), given->data(), b.size() * sizeof(float));
        } else {
            tb::measure::fillRandom(b.data(), b.size(), seed + i);
        }
        args.push_back(b.data());
    }
    auto canaries = [&]() -> std::string {
        for (size_t i = 0; i < bufs.size(); ++i)
            if (!bufs[i].intact()) return "out-of-bounds write detected next to argument " + std::to_string(i);
        return {};
    };
    fn(args.data());  // the warm-up call is the checked call
    if (auto m = canaries(); !m.empty()) return fail(kRuntimeDevice, m);
    if (check) {
        for (size_t i = 0; i < check->expected.size() && i < bufs.size(); ++i) {
            const auto& want = check->expected[i];
            if (want.empty()) continue;
            if (want.size() != bufs[i].size())
                return fail(kUnknown, "expected output " + std::to_string(i) + " has the wrong size");
            for (size_t k = 0; k < want.size(); ++k) {
                const float got = bufs[i].data()[k];
                if (!(std::abs(double(got) - want[k]) <= check->atol + check->rtol * std::abs(double(want[k])))) {
                    std::ostringstream os;
                    os << "argument " << i << " element " << k << ": got " << got << ", expected " << want[k];
                    return fail(kWrongAnswer, os.str());
                }
            }
        }
    }
    std::function<void()> flush;
    if (req.enableCpuCacheFlush)
        flush = [&] {
            for (size_t i = 1; i < bufs.size(); ++i)
                tb::measure::flushCache(bufs[i].data(), bufs[i].size() * sizeof(float));
        };
    tb::measure::TimerOptions t;
    t.number = req.number;
    t.repeat = req.repeat;
    t.minRepeatMs = req.minRepeatMs;
    t.skipWarmup = true;
    RunReply r;
    r.costs = tb::measure::timeEvaluate([&] { fn(args.data()); }, t, flush);
    if (auto m = canaries(); !m.empty()) return fail(kRuntimeDevice, m);
    return r;
}

// Threads of a kernel's parallel loops: the size of ThreadPool::global(), which each measuring
// child creates on its first parallel loop (threads do not survive fork) from TB_NUM_THREADS.
int kernelThreads() {
    const char* env = std::getenv("TB_NUM_THREADS");
    const int n = env ? std::atoi(env) : 0;
    return n > 0 ? n : int(std::max(1u, std::thread::hardware_concurrency()));
}

// A CallReply as bytes through the child's pipe: u64 header length, header JSON, blob.
std::string packReply(const tb::rpc::CallReply& c) {
    const std::string h = c.result.dump();
    std::string out;
    const uint64_t n = h.size();
    out.append(reinterpret_cast<const char*>(&n), 8);
    return out + h + c.blob;
}

tb::rpc::CallReply unpackReply(const std::string& s) {
    uint64_t n = 0;
    if (s.size() < 8) throw std::runtime_error("short reply");
    std::memcpy(&n, s.data(), 8);
    if (n > s.size() - 8) throw std::runtime_error("truncated reply");
    tb::rpc::CallReply c;
    c.result = tb::rpc::Json::parse(s.substr(8, size_t(n)));
    c.blob = s.substr(8 + size_t(n));
    return c;
}

// Each request in a fresh forked child (runInChild).
class ForkingDlopenExecutor final : public tb::rpc::MeasureExecutor {
public:
    explicit ForkingDlopenExecutor(uint64_t seed) : m_seed(seed) {}

    RunReply run(const RunRequest& req) override {
        std::unique_ptr<tb::measure::CheckSpec> check;
        std::string blob;
        if (readFile(req.modulePath + std::string(tb::measure::kCheckBlobSuffix), &blob)) {
            try {
                check = std::make_unique<tb::measure::CheckSpec>(tb::measure::decodeCheckBlob(blob));
            } catch (const std::exception& e) {
                return fail(kUnknown, e.what());
            }
        }
        if (req.function.empty()) return fail(kCompileDevice, "the run request names no entry function");
        const tb::measure::ChildOutcome c = tb::measure::runInChild(req.timeoutSec, [&] {
            RunReply r;
            try {
                r = measureHere(req, check.get(), m_seed);
            } catch (const std::exception& e) {
                r = fail(kUnknown, e.what());
            }
            return tb::rpc::toJson(r).dump();
        });
        if (c.timedOut)
            return fail(kRunTimeout, "run exceeded " + std::to_string(req.timeoutSec) + " s; candidate killed");
        if (!c.ok())
            return fail(kRuntimeDevice, "the candidate crashed the measurement process: " + tb::describeWaitStatus(c.status));
        try {
            return tb::rpc::runReplyFromJson(tb::rpc::Json::parse(c.out));
        } catch (const std::exception& e) {
            return fail(kUnknown, std::string("bad reply from the measurement process: ") + e.what());
        }
    }

    tb::rpc::CallReply call(const tb::rpc::CallRequest& call) override {
        if (call.function != tb::rpc::kGraphBenchmarkFunction) return MeasureExecutor::call(call);
        tb::rpc::NetworkRunRequest req;
        try {
            req = tb::rpc::networkRunRequestFromCall(call);
        } catch (const std::exception& e) {
            return tb::rpc::callError(kUnknown, e.what());
        }
        std::string paths[3];
        const std::string* names[3] = {&req.lib, &req.graph, &req.params};
        for (int i = 0; i < 3; ++i) {
            const auto it = call.uploads.find(*names[i]);
            if (it == call.uploads.end())
                return tb::rpc::callError(kCompileDevice, "'" + *names[i] + "' was not uploaded in this session");
            paths[i] = it->second;
        }
        const tb::measure::ChildOutcome c = tb::measure::runInChild(req.timeoutSec, [&] {
            tb::rpc::NetworkRunReply r;
            try {
                r = tb::runtime::runNetworkRequest(req, paths[0], paths[1], paths[2], kernelThreads());
            } catch (const std::exception& e) {
                r = tb::rpc::NetworkRunReply{};
                r.errorNo = kUnknown;
                r.errorMsg = e.what();
            }
            return packReply(tb::rpc::toCallReply(r));
        });
        if (c.timedOut)
            return tb::rpc::callError(kRunTimeout, "the network run exceeded " + std::to_string(req.timeoutSec) +
                                                       " s and was killed");
        if (!c.ok())
            return tb::rpc::callError(kRuntimeDevice,
                                      "the network crashed the run process: " + tb::describeWaitStatus(c.status));
        try {
            return unpackReply(c.out);
        } catch (const std::exception& e) {
            return tb::rpc::callError(kUnknown, std::string("bad reply from the run process: ") + e.what());
        }
    }

private:
    uint64_t m_seed;
};

void usage(FILE* f) {
    std::fprintf(f,
                 "usage: tunebench-device-server [--tracker HOST:PORT] [--key KEY] [--host ADDR] [--port P]\n"
                 "                               [--port-end P] [--custom-addr ADDR] [--token T] [--work-dir DIR]\n"
                 "                               [--threads N] [--seed N]\n"
                 "Serves TuneBench measurements on this AArch64 machine and registers with an RPC tracker\n"
                 "under KEY (default rasp4b-64), like `python -m tvm.exec.rpc_server`.\n"
                 "  --host ADDR    listen address (default 0.0.0.0, as TVM)\n"
                 "  --port P       first port tried (default 9090; 0: any free port); --port-end P (default 9199)\n"
                 "  --threads N    threads of a kernel's parallel loops (default: all cores)\n");
}

int serve(int argc, char** argv) {
    (void)g_keepLibm;
    tb::rpc::RpcServerOptions o;
    o.host = "0.0.0.0";
    o.key = "rasp4b-64";
    uint64_t seed = 0;
    tb::tools::ArgReader r(argc, argv);
    while (r.next()) {
        if (r.arg() == "-h" || r.arg() == "--help") {
            usage(stdout);
            return 0;
        } else if (tb::tools::applyServerOption(r, o)) {
        } else if (r.is("--threads")) {
            const std::string n = r.value();
            TB_USER_CHECK(std::atoi(n.c_str()) >= 1) << "--threads must be >= 1";
            setenv("TB_NUM_THREADS", n.c_str(), 1);
        } else if (r.is("--seed")) {
            seed = std::strtoull(r.value().c_str(), nullptr, 10);
        } else {
            std::fprintf(stderr, "error: unknown option '%s'\n", r.arg().c_str());
            usage(stderr);
            return 2;
        }
    }
    o.log = tb::logLine;

    const tb::StopSignals signals;  // before the server's threads start
    tb::rpc::RpcServer server(o, std::make_shared<ForkingDlopenExecutor>(seed));
    try {
        server.start();
    } catch (const tb::rpc::RpcError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    tb::logLine("tunebench-device-server (aarch64) key '" + o.key + "' listening on port " +
                std::to_string(server.port()) + ", " + std::to_string(kernelThreads()) + " thread(s) per kernel");
    signals.wait();
    server.stop();
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return tb::runMain([&] { return serve(argc, argv); }); }
