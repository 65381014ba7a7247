// SPDX-License-Identifier: Apache-2.0
// tunebench-worker: the sandbox process of LocalRunner (measure/local_runner.h). It reads one
// candidate at a time from the socket given by --fd=N, loads its object code in memory, fills
// guarded argument buffers, makes the warm-up call, checks the answer and the canaries, times the
// kernel with TVM's evaluator and replies. A candidate that crashes or hangs takes only this
// process down; the runner reports it and starts a fresh worker.
#include <sys/prctl.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include "engine/codegen/jit.h"
#include "engine/measure/timer.h"
#include "engine/measure/worker_protocol.h"

using namespace tb;
using namespace tb::measure;
using namespace tb::measure::detail;

namespace {

RunReply fail(MeasureErrorNo e, const std::string& msg) {
    RunReply r;
    r.errorNo = static_cast<int32_t>(e);
    r.message = msg;
    return r;
}

RunReply handle(const RunRequest& req) {
    std::unique_ptr<codegen::LoadedKernel> kernel;
    try {
        kernel = codegen::LoadedKernel::load(req.object, req.symbol);
    } catch (const std::exception& e) {
        return fail(MeasureErrorNo::CompileDevice, e.what());
    }
    std::vector<GuardedBuffer> bufs;
    std::vector<void*> args;
    for (size_t i = 0; i < req.argElements.size(); ++i) {
        bufs.emplace_back(static_cast<size_t>(req.argElements[i]));
        GuardedBuffer& b = bufs.back();
        const std::vector<float>* given = req.hasCheck && i < req.check.inputs.size() ? &req.check.inputs[i] : nullptr;
        if (given && !given->empty()) {
            if (given->size() != b.size())
                return fail(MeasureErrorNo::UnknownError, "check input " + std::to_string(i) + " has " + std::to_string(given->size()) +
                                                              " elements, the argument has " + std::to_string(b.size()));
            std::memcpy(b.data(), given->data(), b.size() * sizeof(float));
        } else {
            fillRandom(b.data(), b.size(), req.seed + i);
        }
        args.push_back(b.data());
    }
    auto canaries = [&]() -> std::string {
        for (size_t i = 0; i < bufs.size(); ++i)
            if (!bufs[i].intact()) return "out-of-bounds write detected next to argument " + std::to_string(i);
        return {};
    };
    // Warm-up call = the checked call.
    (*kernel)(args.data());
    if (auto m = canaries(); !m.empty()) return fail(MeasureErrorNo::RuntimeDevice, m);
    if (req.hasCheck) {
        for (size_t i = 0; i < req.check.expected.size() && i < bufs.size(); ++i) {
            const auto& want = req.check.expected[i];
            if (want.empty()) continue;
            if (want.size() != bufs[i].size())
                return fail(MeasureErrorNo::UnknownError, "expected output " + std::to_string(i) + " has the wrong size");
            for (size_t k = 0; k < want.size(); ++k) {
                const float got = bufs[i].data()[k];
                if (!(std::abs(double(got) - want[k]) <= req.check.atol + req.check.rtol * std::abs(double(want[k])))) {
                    std::ostringstream os;
                    os << "argument " << i << " element " << k << ": got " << got << ", expected " << want[k];
                    return fail(MeasureErrorNo::WrongAnswer, os.str());
                }
            }
        }
    }
    std::function<void()> flush;
    if (req.flushCache)
        flush = [&] {
            for (int32_t i : req.flushArgs)
                if (i >= 0 && size_t(i) < bufs.size()) flushCache(bufs[size_t(i)].data(), bufs[size_t(i)].size() * sizeof(float));
        };
    TimerOptions t = req.timer;
    t.skipWarmup = true;
    RunReply r;
    r.costs = timeEvaluate([&] { (*kernel)(args.data()); }, t, flush);
    if (auto m = canaries(); !m.empty()) return fail(MeasureErrorNo::RuntimeDevice, m);
    return r;
}

}  // namespace

// In a sanitizer build (scripts/test --sanitize): candidate kernels die here by design (a wild
// store, a guard page), and the runner reads the signal from the exit status ("signal 11"). ASan's
// own SIGSEGV/SIGBUS/SIGFPE handlers would turn that death into "exit status 1" with a report about
// JIT'd code it cannot instrument, so this process leaves those signals alone. ASAN_OPTIONS in the
// environment still overrides these defaults; in a normal build nothing calls this function.
extern "C" __attribute__((used, visibility("default"))) const char* __asan_default_options() {
    return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0";
}

int main(int argc, char** argv) {
    // Die with the runner: a worker stuck in a hung candidate must not outlive a killed parent.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = -1;
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--fd=", 5) == 0) fd = std::atoi(argv[i] + 5);
    if (fd < 0) {
        std::fprintf(stderr, "usage: tunebench-worker --fd=N (started by TuneBench's LocalRunner)\n");
        return 2;
    }
    for (;;) {
        std::string payload;
        if (readFrame(fd, &payload, -1) != 1) return 0;  // runner gone
        RunReply reply;
        try {
            reply = handle(decodeRequest(payload));
        } catch (const std::exception& e) {
            reply = fail(MeasureErrorNo::UnknownError, e.what());
        }
        if (!writeFrame(fd, encode(reply))) return 0;
    }
}
