// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the AutoTVM benchmarks (compare_tuners, transfer_learning, tophub_vs_ours) share: option
// parsing, the resnet-18 conv tasks they tune, the measurement setup (this CPU, the CLI's
// `autotvm tune` builder and runner), and one tuning run that keeps its best-so-far curve and its
// records. Not a library: each benchmark includes it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/autotvm/task.h"
#include "engine/autotvm/tuner.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "engine/support/error.h"
#include "engine/tuning/tuning_job.h"

namespace tb::bench {

/// `--key value` options and bare `--flag`s; `usage` is printed on a bad argument or --help.
class BenchArgs {
public:
    BenchArgs(int argc, char** argv, const char* usage) : m_usage(usage) {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "--help" || a == "-h") fail(nullptr);
            if (a.rfind("--", 0) != 0) fail(("unexpected argument " + a).c_str());
            if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) m_values[a.substr(2)] = argv[++i];
            else m_values[a.substr(2)] = "";
        }
    }
    std::string str(const std::string& key, const std::string& def) const {
        auto it = m_values.find(key);
        return it == m_values.end() ? def : it->second;
    }
    int num(const std::string& key, int def) const {
        const std::string v = str(key, std::to_string(def));
        char* end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end) fail(("--" + key + " needs an integer, not '" + v + "'").c_str());
        return int(n);
    }
    double real(const std::string& key, double def) const {
        const std::string v = str(key, std::to_string(def));
        char* end = nullptr;
        const double n = std::strtod(v.c_str(), &end);
        if (v.empty() || *end) fail(("--" + key + " needs a number, not '" + v + "'").c_str());
        return n;
    }
    bool flag(const std::string& key) const { return m_values.count(key) != 0; }
    std::vector<std::string> list(const std::string& key, const std::string& def) const {
        std::vector<std::string> out;
        const std::string s = str(key, def);
        size_t b = 0;
        while (b <= s.size()) {
            size_t e = s.find(',', b);
            if (e == std::string::npos) e = s.size();
            if (e > b) out.push_back(s.substr(b, e - b));
            b = e + 1;
        }
        return out;
    }
    [[noreturn]] void fail(const char* why) const {
        if (why) std::fprintf(stderr, "error: %s\n\n", why);
        std::fprintf(why ? stderr : stdout, "%s", m_usage);
        std::exit(why ? 2 : 0);
    }

private:
    const char* m_usage;
    std::map<std::string, std::string> m_values;
};

/// conv2d_NCHWc.x86 args of an NCHW batch-1 conv, as TVM's task extraction writes them.
inline nlohmann::ordered_json convArgs(int c, int hw, int k, int kernel, int stride, int pad) {
    using nlohmann::ordered_json;
    return ordered_json::array({ordered_json::array({"TENSOR", {1, c, hw, hw}, "float32"}),
                                ordered_json::array({"TENSOR", {k, c, kernel, kernel}, "float32"}),
                                {stride, stride}, {pad, pad, pad, pad}, {1, 1}, "NCHW", "NCHW", "float32"});
}

/// The resnet-18 conv tasks the benchmarks name (all conv2d_NCHWc.x86, 3x3 pad 1 or 1x1 stride 2).
inline const std::map<std::string, nlohmann::ordered_json>& resnet18Convs() {
    static const std::map<std::string, nlohmann::ordered_json> m = {
        {"r18_3x3_56", convArgs(64, 56, 64, 3, 1, 1)},     // layer1
        {"r18_3x3_28", convArgs(128, 28, 128, 3, 1, 1)},   // layer2
        {"r18_3x3_14", convArgs(256, 14, 256, 3, 1, 1)},   // layer3
        {"r18_3x3_7", convArgs(512, 7, 512, 3, 1, 1)},     // layer4
        {"r18_1x1_s2", convArgs(64, 56, 128, 1, 2, 0)},    // layer2 downsample
    };
    return m;
}

inline std::string knownConvs() {
    std::string s;
    for (const auto& [name, args] : resnet18Convs()) s += (s.empty() ? "" : ", ") + name;
    return s;
}

/// The builder and runner of `tunebench-cli autotvm tune` on this CPU, from --number, --repeat,
/// --min-repeat-ms, --timeout; the record target string is the CLI's.
struct Measurer {
    tuning::ResolvedTarget target = tuning::resolveTarget("");
    measure::LocalBuilder builder{target.target};
    std::unique_ptr<measure::LocalRunner> runner;
    int nParallel = 1;

    explicit Measurer(const BenchArgs& a, int defaultRepeat = 1) {
        measure::RunnerOptions ro;
        ro.number = a.num("number", 10);
        ro.repeat = a.num("repeat", defaultRepeat);
        ro.minRepeatMs = a.real("min-repeat-ms", 0);
        ro.timeoutS = a.real("timeout", 10);
        runner = std::make_unique<measure::LocalRunner>(ro);
        nParallel = a.num("n-parallel", int(std::max(1u, std::thread::hardware_concurrency())));
    }
    autotvm::MeasureOption option() { return {&builder, runner.get()}; }
    autotvm::Task task(const std::string& taskName, const nlohmann::ordered_json& args) const {
        return autotvm::Task::create(taskName, args, target.recordString);
    }
};

/// One tuning run: the best GFLOPS after each trial (index i = after i + 1 trials) and the records.
struct TuneRun {
    std::vector<double> bestSoFar;
    std::vector<record::AutoTvmRecord> records;
    double seconds = 0;
    int failed = 0;  ///< trials whose measurement failed (0 GFLOPS)
    double best() const { return bestSoFar.empty() ? 0 : bestSoFar.back(); }
    /// Trials (1-based) until the best reached `gflops`; nullopt if it never did.
    std::optional<int> trialsTo(double gflops) const {
        for (size_t i = 0; i < bestSoFar.size(); ++i)
            if (bestSoFar[i] >= gflops) return int(i + 1);
        return std::nullopt;
    }
};

/// Tunes `task` with `tuner` for nTrial trials (TVM Tuner.tune, batches of nParallel).
inline TuneRun tune(autotvm::Tuner& tuner, const autotvm::Task& task, int nTrial, Measurer& m) {
    TuneRun run;
    const auto tic = std::chrono::steady_clock::now();
    autotvm::TuneOptions to;
    to.nTrial = int(std::min<std::int64_t>(nTrial, task.space.size()));
    to.nParallel = m.nParallel;
    tuner.tune(to, m.option(), {[&](const autotvm::Tuner& t, const std::vector<autotvm::ConfigEntity>& c,
                                    const std::vector<measure::MeasureResult>& r) {
                   for (size_t i = 0; i < c.size(); ++i) {
                       run.records.push_back(autotvm::makeRecord(task, c[i], r[i]));
                       if (!r[i].ok()) ++run.failed;
                       const double prev = run.bestSoFar.empty() ? 0 : run.bestSoFar.back();
                       run.bestSoFar.push_back(std::max(prev, t.flops(r[i]) / 1e9));
                   }
               }});
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tic).count();
    return run;
}

/// The median of values (the mean of the middle two for an even count); +inf counts as a value.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (std::isinf(v[n / 2]) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

}  // namespace tb::bench
