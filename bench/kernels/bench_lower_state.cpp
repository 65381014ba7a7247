// SPDX-License-Identifier: Apache-2.0
// bench_lower_state: the cost of lowering auto-scheduler states, and the speed of the kernels the
// lowering produces for TVM's own logged schedules.
//
//   lowering  random states of the sketch policy for resnet-18's 56x56x64 conv2d + bias + relu:
//             microseconds per inferBound and per lowerState (best of 5 passes each), then per
//             lowerState + LLVM compile
//   kernels   TVM's CI matmul_add record (1024^3) and, per resnet-18 conv2d task of
//             tvmsandbox_resnet-18-NHWC-B1-llvm.json, the record TVM measured fastest: our time
//             (measure/timer.h: number grown to min_repeat_ms 100, repeat 3, best) beside the time in
//             the log (another machine: 18-core Xeon for the matmul record; read as a scale only)
// Threads: TB_NUM_THREADS (default: all cores). Run from the repository root (reads ../shared/data).
//
// Usage: bench_lower_state [--quick] [--lowering-only]
//   --quick          100 states instead of 500, 10 compiled instead of 40
//   --lowering-only  only the inferBound and lowerState times (no LLVM, no kernels; a few seconds)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/lower/lower_state.h"
#include "engine/measure/timer.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/search/cost_model.h"
#include "engine/search/sketch_policy.h"
#include "engine/support/error.h"
#include "engine/topi/broadcast.h"
#include "engine/topi/nn.h"
#include "engine/topi/nn/conv2d.h"

using namespace tb;
using namespace tb::te;
using nlohmann::json;

namespace {

std::shared_ptr<const ComputeDAG> matmulAdd(int64_t n) {
    auto A = placeholder({n, n}, "A"), B = placeholder({n, n}, "B"), C = placeholder({n, n}, "C");
    auto k = reduceAxis(n, "k");
    auto mm = compute({n, n}, {"i", "j"}, [&](const std::vector<Var>& v) { return sum(A(v[0], k.var) * B(k.var, v[1]), {k}); },
                      "matmul", ComputeOptions{{}, {}, {B}});
    auto out = compute({n, n}, {"i", "j"}, [&](const std::vector<Var>& v) { return mm(v[0], v[1]) + C(v[0], v[1]); }, "out");
    return std::make_shared<ComputeDAG>(std::vector<Tensor>{A, B, C, out});
}

std::shared_ptr<const ComputeDAG> topiConv(int64_t h, int64_t c, int64_t k, int64_t r, int64_t stride, int64_t pad,
                                           bool biasRelu) {
    auto p0 = placeholder({1, h, h, c}, "p0");
    auto p1 = placeholder({r, r, c, k}, "p1");
    Tensor out = topi::nn::conv2dNhwc(p0, p1, {stride, stride}, {pad, pad});
    if (biasRelu) out = topi::relu(topi::add(out, placeholder({1, 1, 1, k}, "p2")));
    return std::make_shared<ComputeDAG>(ComputeDAG::fromOutputs({out}));
}

std::vector<std::string> recordLines(const char* path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#' && line[0] != ' ') lines.push_back(line);
    return lines;
}

double seconds(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best time of one call of the kernel lowered from `state`, in seconds.
double timeKernel(const ComputeDAG& dag, const State& state) {
    const lower::LoweredFunc f = lower::lowerState(dag, state);
    codegen::CompileOptions co;
    co.emitLlvmIr = co.emitAssembly = false;
    const auto ck = codegen::compile(f, codegen::Target::host(), co);
    const auto k = codegen::LoadedKernel::load(ck.object, ck.name);
    std::vector<std::vector<float>> bufs;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    for (const auto& t : dag.tensors()) {
        bufs.emplace_back(size_t(t.numElements()));
        for (auto& x : bufs.back()) x = d(rng);
    }
    std::vector<void*> args;
    for (auto& b : bufs) args.push_back(b.data());
    measure::TimerOptions o;
    o.number = 1;
    o.repeat = 3;
    o.minRepeatMs = 100;
    const auto costs = measure::timeEvaluate([&] { (*k)(args.data()); }, o);
    return *std::min_element(costs.begin(), costs.end());
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, loweringOnly = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (std::strcmp(argv[i], "--lowering-only") == 0) {
            loweringOnly = true;
        } else {
            std::fprintf(stderr, "usage: bench_lower_state [--quick] [--lowering-only]\n");
            return 2;
        }
    }

    // ---- lowering cost -------------------------------------------------------------------
    {
        const auto dag = topiConv(56, 64, 64, 3, 1, 1, true);
        search::SearchTask task;
        task.dag = dag;
        task.workloadKey = dag->workloadKey();
        task.hardware.numCores = 16;
        search::SketchPolicyParams params;
        params.numThreads = 1;
        search::SketchPolicy policy(task, std::make_shared<cost_model::RandomModel>(1), params, 7);
        std::mt19937_64 rng(99);
        std::vector<State> states;
        const size_t want = quick ? 100 : 500;
        for (int i = 0; states.size() < want && i < 20000; ++i) {
            State s = policy.randomAnnotate(policy.sketches()[size_t(i) % policy.sketches().size()], rng);
            if (!s.defined()) continue;
            try {
                states.push_back(inferBound(s));
            } catch (const UserError&) {
            }
        }
        // Best of five passes over all states, in microseconds per state.
        auto perState = [&](auto&& fn) {
            double best = 1e30;
            for (int pass = 0; pass < 5; ++pass) {
                const auto t0 = std::chrono::steady_clock::now();
                for (const auto& s : states) fn(s);
                best = std::min(best, seconds(t0));
            }
            return best / double(states.size()) * 1e6;
        };
        const double bound = perState([](const State& s) { (void)inferBound(s); });
        std::printf("inferBound, conv2d_nhwc 56x56x64 3x3 + bias + relu: %.1f us per state (%zu random states)\n", bound,
                    states.size());
        const double lowering = perState([&](const State& s) { (void)lower::lowerState(*dag, s); });
        std::printf("lowerState, conv2d_nhwc 56x56x64 3x3 + bias + relu: %.1f us per state (%zu random states)\n",
                    lowering, states.size());
        if (loweringOnly) return 0;
        codegen::CompileOptions co;
        co.emitLlvmIr = co.emitAssembly = false;
        const size_t nc = std::min<size_t>(states.size(), quick ? 10 : 40);
        const auto t0 = std::chrono::steady_clock::now();
        for (size_t i = 0; i < nc; ++i) (void)codegen::compile(lower::lowerState(*dag, states[i]), codegen::Target::host(), co);
        std::printf("lowerState + LLVM compile of the same states: %.1f ms per state (%zu states)\n",
                    seconds(t0) / double(nc) * 1e3, nc);
    }

    // ---- kernels of TVM's records ----------------------------------------------------------
    {
        const auto dag = matmulAdd(1024);
        const auto rec = json::parse(recordLines("../shared/data/logs/ansor/tvm_ci_matmul.json").at(0));
        const State s = inferBound(replaySteps(*dag, stepsFromJson(rec.at("i").at(1).at(1))));
        const double t = timeKernel(*dag, s);
        std::printf("matmul_add 1024^3, TVM CI record: %.3f ms = %.1f GFLOP/s (log: %.3f ms)\n", t * 1e3,
                    2.0 * 1024 * 1024 * 1024 / t / 1e9, rec.at("r").at(0).at(0).get<double>() * 1e3);
    }
    struct Task {
        const char* name;
        const char* keyShapes;
        std::shared_ptr<const ComputeDAG> dag;
    };
    const std::vector<Task> tasks = {
        {"conv 56x56x64 -> 64 3x3 s1 + bias + relu", "[1, 56, 56, 64], [3, 3, 64, 64], [1, 1, 1, 64], [1, 56, 56, 64]]",
         topiConv(56, 64, 64, 3, 1, 1, true)},
        {"conv 56x56x64 -> 128 3x3 s2 + bias + relu", "[1, 56, 56, 64], [3, 3, 64, 128], [1, 1, 1, 128], [1, 28, 28, 128]]",
         topiConv(56, 64, 128, 3, 2, 1, true)},
        {"conv 56x56x64 -> 128 1x1 s2", "[1, 56, 56, 64], [1, 1, 64, 128], [1, 28, 28, 128]]",
         topiConv(56, 64, 128, 1, 2, 0, false)},
        {"conv 224x224x3 -> 64 7x7 s2 + bias + relu", "[1, 224, 224, 3], [7, 7, 3, 64], [1, 1, 1, 64], [1, 112, 112, 64]]",
         topiConv(224, 3, 64, 7, 2, 3, true)},
    };
    const auto lines = recordLines("../shared/data/logs/ansor/tvmsandbox_resnet-18-NHWC-B1-llvm.json");
    for (const auto& t : tasks) {
        double bestLogged = 1e30;
        json bestRec;
        for (const auto& line : lines) {
            const json rec = json::parse(line);
            const std::string key = rec.at("i").at(0).at(0).get<std::string>();
            if (key.find(t.keyShapes) == std::string::npos || key.find("9a8fab9b") != std::string::npos ||
                key.find("9b12f4c4") != std::string::npos || rec.at("r").at(1).get<int>() != 0)
                continue;
            const auto& costs = rec.at("r").at(0);
            double mean = 0;
            for (const auto& c : costs) mean += c.get<double>();
            mean /= double(costs.size());
            if (mean < bestLogged) {
                bestLogged = mean;
                bestRec = rec;
            }
        }
        if (bestRec.is_null()) continue;
        const State s = inferBound(replaySteps(*t.dag, stepsFromJson(bestRec.at("i").at(1).at(1))));
        const double ours = timeKernel(*t.dag, s);
        std::printf("%s, fastest logged record: %.3f ms = %.1f GFLOP/s (log: %.3f ms)\n", t.name, ours * 1e3,
                    t.dag->flopCount() / ours / 1e9, bestLogged * 1e3);
    }
    return 0;
}
