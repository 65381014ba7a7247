// SPDX-License-Identifier: Apache-2.0
// Benchmark (not a test): how much does the time of one state move from one measurement to the next,
// and which timing policy makes it move least at the same cost? Issue 20's goal: "the same state
// measured in different rounds agrees within 3% (coefficient of variation, reported over >= 50
// states), on the shared, noisy machine; say how and what it costs in throughput".
//
// What it does. The valid states of one task's log (deduplicated by printed loop nest, up to
// --states of them, evenly spread over the log's latency range so fast and slow kernels both count)
// are lowered and compiled once (LocalBuilder, this CPU). Then, for --rounds rounds, every timing
// setting times every state once, through the tuner's own runner (LocalRunner: sandboxed worker,
// random inputs, TVM's time evaluator, timer.h). Each round shuffles the states and rotates the
// settings, so that drift of the machine's load hits all of them alike. A setting is
// (number, repeat, min_repeat_ms); a policy is a setting plus the statistic that turns the
// `repeat` per-round results into the state's cost:
//   tvm        repeat 1 x 100 ms, number 3, the round's mean (TVM LocalRunner defaults)
//   r5/mean    repeat 5 x 20 ms, number 1, mean of the 5 rounds (TVM's np.mean(costs) with repeat 5)
//   r5/med     the same timings, their median;  r5/min: their minimum
//   r10/...    repeat 10 x 10 ms
//   s5         repeat 1 x 100 ms, its result the fastest of 5 slices of 20 ms (TimerOptions::slices,
//              `tune --slices 5`: the statistic of r5/min at the budget of tvm)
//   cold       TVM's cache flush before each of 10 repeats of one call each (`--cache-flush on`; what
//              `auto` picks for networks whose weights exceed a quarter of the measured LLC)
//   clean      repeat 1 x 100 ms counting only the slices in which no thread of the worker was
//              preempted (TimerOptions::rejectPreempted, timer.h); clean5/...: 5 x 20 ms of those.
// All policies but cold spend about the same 100 ms per state. For each policy the table gives, over the
// states, the median and 90th percentile of the per-state coefficient of variation across rounds
// (sample stdev / mean), the share of states within 3%, the median max/min ratio, and the wall time
// per measurement (load + warm-up + timing, as the tuner pays it). Two diagnostic columns say how
// much of the spread the states timed together share: the median CV after dividing each result by
// its round's median (rnd-norm: drift of the whole machine between rounds), and by the median of the
// 3 states timed before and the 3 after it (nbr-norm: what timing a reference beside each candidate
// could cancel); both ratios are to each state's own median.
// For a policy of several repeats it also prints how far the repeats of one measurement spread.
// --pairs times every state twice in a row in each round (two measurements, each with its own
// argument buffers) and prints their CV: the spread a measurement has with the machine's state
// held fixed, against the spread across rounds. On the 2-core VM of 2026-11-30 (60 states of
// resnet-18's conv, 4 rounds): back to back 0.94% (r5/med) and 2.74% (tvm), across rounds 2.97%
// and 4.95%; the within-measurement repeats 2.3%. So what moves a state's time between rounds is
// the machine drifting over seconds, not where its buffers land. Two references timed beside
// each state were tried and dropped: the FMA-peak and L3 triad probes (multiplying by their rate
// raised tvm's median CV from 5.3% to 6.7% and 15%), and the log's fastest state, 5 x 4 ms before
// and after each state (r5/med 3.75% -> 2.76%, tvm 3.9% -> 5.4%, for 20% more time per state).
//
//   bench_stability --log FILE [--network resnet-18] [--task 2] [--states 60] [--rounds 5]
//                   [--settings tvm,r5,r10] [--threads N] [--seed S] [--pairs]
// --task is the index in the network's extraction order (NHWC, batch 1), as `tunebench-cli tune
// --tasks`. The log must hold records of that task (e.g. from `tunebench-cli tune --network
// resnet-18 --tasks 2 --trials 128 --no-default-seed --log conv128.json`).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"

using namespace tb;

namespace {

struct Options {
    std::string log;
    std::string network = "resnet-18";
    int task = 2;
    int states = 60;
    int rounds = 5;
    std::vector<std::string> settings{"tvm", "r5", "r10"};
    int threads = 0;
    unsigned seed = 0;
    bool pairs = false;      ///< time each state twice in a row (fresh buffers each time)
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "error: %s\nusage: bench_stability --log FILE [--network NET] [--task I] [--states N] [--rounds R]\n"
                 "                       [--settings tvm,r5,r10] [--threads N] [--seed S] [--pairs]\n",
                 why);
    std::exit(2);
}

Options parseArgs(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(("missing value after " + a).c_str());
            return argv[++i];
        };
        auto integer = [&](int lo) {
            const std::string v = value();
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end || n < lo || n > 1000000) usage((a + " needs an integer >= " + std::to_string(lo)).c_str());
            return int(n);
        };
        if (a == "--log") o.log = value();
        else if (a == "--network") o.network = value();
        else if (a == "--task") o.task = integer(0);
        else if (a == "--states") o.states = integer(2);
        else if (a == "--rounds") o.rounds = integer(2);
        else if (a == "--threads") o.threads = integer(0);
        else if (a == "--seed") o.seed = unsigned(integer(0));
        else if (a == "--pairs") o.pairs = true;
        else if (a == "--settings") {
            o.settings.clear();
            std::string s = value();
            for (size_t b = 0; b <= s.size();) {
                size_t e = s.find(',', b);
                if (e == std::string::npos) e = s.size();
                if (e > b) o.settings.push_back(s.substr(b, e - b));
                b = e + 1;
            }
        } else usage(("unknown option " + a).c_str());
    }
    if (o.log.empty()) usage("--log is required");
    return o;
}

/// A timing setting of the runner: `repeat` rounds of at least `minRepeatMs` each.
struct Setting {
    std::string name;
    int repeat;
    double minRepeatMs;
    bool rejectPreempted = false;
    int number = 3;
    int slices = 1;
    bool flush = false;  ///< TVM's cache flush before each repeat (the runner then times one call per repeat)
};

Setting settingNamed(const std::string& n) {
    if (n == "tvm") return {n, 1, 100};
    if (n == "r5") return {n, 5, 20, false, 1};
    if (n == "r10") return {n, 10, 10, false, 1};
    if (n == "clean") return {n, 1, 100, true};
    if (n == "clean5") return {n, 5, 20, true, 1};
    if (n == "s5") return {n, 1, 100, false, 3, 5};
    if (n == "cold") return {n, 10, 0, false, 1, 1, true};
    usage(("unknown setting " + n + " (tvm, r5, r10, clean, clean5, s5, cold)").c_str());
}

double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / double(v.size());
}

double medianOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double pos = q * double(v.size() - 1);
    const size_t lo = size_t(pos);
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

/// Sample coefficient of variation (stdev / mean).
double cv(const std::vector<double>& v) {
    const double m = mean(v);
    double ss = 0;
    for (double x : v) ss += (x - m) * (x - m);
    return std::sqrt(ss / double(v.size() - 1)) / m;
}

/// A policy's statistic over one measurement's per-round results.
struct Policy {
    std::string name;
    std::string setting;
    double (*reduce)(const std::vector<double>&);
};

double reduceMean(const std::vector<double>& v) { return mean(v); }
double reduceMedian(const std::vector<double>& v) { return medianOf(v); }
double reduceMin(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

}  // namespace

int main(int argc, char** argv) try {
    const Options o = parseArgs(argc, argv);
    const auto t0 = std::chrono::steady_clock::now();

    graph::TaskExtractionOptions eo;
    const auto target = codegen::Target::host();
    eo.target = target.str();
    const auto tasks = graph::extractTasks(graph::makeNetwork(o.network, 1, "NHWC"), eo);
    TB_USER_CHECK(o.task < int(tasks.size())) << o.network << " has " << tasks.size() << " tasks; --task " << o.task;
    const graph::ExtractedTask& task = tasks[size_t(o.task)];

    // The log's valid distinct states of the task, sorted by logged latency.
    const auto log = record::readMeasureRecords(o.log);
    struct Cand {
        State state;
        double logged;
    };
    std::vector<Cand> all;
    std::unordered_set<std::string> seen;
    for (const auto& r : log.records) {
        if (!r.valid() || r.task.workloadKey != task.workloadKey) continue;
        State st = inferBound(replaySteps(task.dag, stepsFromJson(r.steps)));
        if (!seen.insert(st.toStr()).second) continue;
        all.push_back({std::move(st), r.meanCost()});
    }
    TB_USER_CHECK(all.size() >= 2) << o.log << " holds " << all.size() << " valid distinct states of task " << o.task
                                   << " of " << o.network << " (" << task.workloadKey << "); need at least 2";
    std::sort(all.begin(), all.end(), [](const Cand& a, const Cand& b) { return a.logged < b.logged; });
    std::vector<Cand> cands;
    const size_t n = std::min(all.size(), size_t(o.states));
    for (size_t k = 0; k < n; ++k) cands.push_back(all[n == 1 ? 0 : k * (all.size() - 1) / (n - 1)]);

    // Lower and compile once.
    std::vector<measure::MeasureInput> inputs;
    for (const auto& c : cands) {
        measure::MeasureInput in;
        in.func = std::make_shared<lower::LoweredFunc>(lower::lowerState(task.dag, c.state));
        in.workloadKey = task.workloadKey;
        inputs.push_back(std::move(in));
    }
    measure::LocalBuilder builder(target);
    const auto builds = builder.build(inputs);
    std::vector<size_t> ok;
    for (size_t i = 0; i < builds.size(); ++i)
        if (builds[i].errorNo == measure::MeasureErrorNo::NoError) ok.push_back(i);
    std::printf("bench_stability: %s task %d (%s, %.0f MFLOP), %zu states of %zu in %s (%zu built), %d rounds, "
                "%d threads\n",
                o.network.c_str(), o.task, task.desc.c_str(), task.flop / 1e6, cands.size(), all.size(), o.log.c_str(),
                ok.size(), o.rounds, o.threads);
    std::printf("logged latency range of the chosen states: %.4f .. %.4f ms\n", cands.front().logged * 1e3,
                cands.back().logged * 1e3);

    std::vector<Setting> settings;
    for (const auto& s : o.settings) settings.push_back(settingNamed(s));
    std::map<std::string, std::unique_ptr<measure::LocalRunner>> runners;
    for (const auto& s : settings) {
        measure::RunnerOptions ro;
        ro.repeat = s.repeat;
        ro.minRepeatMs = s.minRepeatMs;
        ro.number = s.number;
        ro.rejectPreempted = s.rejectPreempted;
        ro.slices = s.slices;
        ro.enableCpuCacheFlush = s.flush;
        ro.numThreads = o.threads;
        runners[s.name] = std::make_unique<measure::LocalRunner>(ro);
    }
    // costs[setting][state][round] = the per-round results of one measurement
    std::map<std::string, std::vector<std::vector<std::vector<double>>>> costs;
    // seq[setting][round] = the states in the order that round timed them
    std::map<std::string, std::vector<std::vector<size_t>>> seq;
    std::map<std::string, double> wall;
    // --pairs: twin[setting][state][round] = the second of two back-to-back measurements
    std::map<std::string, std::vector<std::vector<std::vector<double>>>> twin;
    for (const auto& s : settings) {
        costs[s.name].assign(ok.size(), {});
        twin[s.name].assign(ok.size(), {});
    }
    std::mt19937 rng(o.seed);
    for (int r = 0; r < o.rounds; ++r) {
        std::vector<size_t> order(ok.size());
        for (size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::shuffle(order.begin(), order.end(), rng);
        for (size_t si = 0; si < settings.size(); ++si) {
            const Setting& s = settings[(si + size_t(r)) % settings.size()];
            std::vector<measure::MeasureInput> in;
            std::vector<measure::BuildResult> bu;
            for (size_t k : order) {
                in.push_back(inputs[ok[k]]);
                bu.push_back(builds[ok[k]]);
            }
            const auto ts = std::chrono::steady_clock::now();
            std::vector<measure::MeasureResult> res;
            if (o.pairs) {
                for (size_t j = 0; j < in.size(); ++j) {
                    auto one = runners[s.name]->run({in[j], in[j]}, {bu[j], bu[j]});
                    twin[s.name][order[j]].push_back(one[1].costs);
                    res.push_back(std::move(one.front()));
                }
            } else {
                res = runners[s.name]->run(in, bu);
            }
            wall[s.name] += std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
            seq[s.name].push_back(order);
            for (size_t j = 0; j < res.size(); ++j) {
                TB_CHECK(res[j].ok()) << "state " << ok[order[j]] << " failed in round " << r << ": " << res[j].errorMsg;
                costs[s.name][order[j]].push_back(res[j].costs);
            }
        }
        std::fprintf(stderr, "round %d done [%.0f s]\n", r + 1,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }

    std::vector<Policy> policies;
    for (const auto& s : settings) {
        if (s.repeat == 1) {
            policies.push_back({s.name, s.name, reduceMean});
            continue;
        }
        policies.push_back({s.name + "/mean", s.name, reduceMean});
        policies.push_back({s.name + "/med", s.name, reduceMedian});
        policies.push_back({s.name + "/min", s.name, reduceMin});
    }
    const double measurements = double(ok.size()) * o.rounds;
    std::printf("\n%-11s %-22s %9s %9s %9s %11s %13s %11s %9s %9s %10s\n", "policy", "setting", "CV med", "CV p90", "<=3%",
                "max/min med", "ms/measure", "vs tvm ms", "rnd-norm", "nbr-norm", "state ms");
    for (const auto& p : policies) {
        const Setting& s = *std::find_if(settings.begin(), settings.end(), [&](const Setting& x) { return x.name == p.setting; });
        std::vector<double> cvs, spread, lat;
        int within = 0;
        // Diagnostics: how much of the spread is common to the states timed together. v[i][r] is
        // state i's result in round r, rel = v / the state's median. rnd-norm divides each result
        // by its round's median rel (a drift of the whole machine between rounds); nbr-norm by the
        // median rel of the 3 states timed before and the 3 after it in the same round (what
        // timing a reference kernel beside each candidate would cancel).
        const auto& perStates = costs[p.setting];
        std::vector<std::vector<double>> v(perStates.size()), rel(perStates.size());
        for (size_t i = 0; i < perStates.size(); ++i) {
            for (const auto& round : perStates[i]) v[i].push_back(p.reduce(round));
            const double med = medianOf(v[i]);
            for (double x : v[i]) rel[i].push_back(x / med);
        }
        std::vector<double> cvRound, cvNbr;
        for (size_t i = 0; i < v.size(); ++i) {
            std::vector<double> a, b;
            for (size_t r = 0; r < v[i].size(); ++r) {
                std::vector<double> all, nbr;
                for (size_t k = 0; k < v.size(); ++k) all.push_back(rel[k][r]);
                const auto& order = seq[p.setting][r];
                const size_t pos = size_t(std::find(order.begin(), order.end(), i) - order.begin());
                for (size_t q = pos >= 3 ? pos - 3 : 0; q < std::min(order.size(), pos + 4); ++q)
                    if (q != pos) nbr.push_back(rel[order[q]][r]);
                a.push_back(v[i][r] / medianOf(all));
                b.push_back(v[i][r] / medianOf(nbr));
            }
            cvRound.push_back(cv(a));
            cvNbr.push_back(cv(b));
        }
        for (const auto& vi : v) {
            const std::vector<double>& vv = vi;
            const double c = cv(vv);
            cvs.push_back(c);
            within += c <= 0.03;
            spread.push_back(*std::max_element(vv.begin(), vv.end()) / *std::min_element(vv.begin(), vv.end()));
            lat.push_back(medianOf(vv));
        }
        // How the policy's typical latency compares with TVM's setting (min drops the slow rounds).
        double ratio = 0;
        if (costs.count("tvm") && p.setting != "tvm") {
            std::vector<double> r;
            for (size_t i = 0; i < lat.size(); ++i) {
                std::vector<double> v;
                for (const auto& round : costs["tvm"][i]) v.push_back(round.front());
                r.push_back(lat[i] / medianOf(v));
            }
            ratio = medianOf(r);
        }
        char setting[40];
        std::snprintf(setting, sizeof(setting), "%d x %g ms%s", s.repeat, s.minRepeatMs,
                      s.flush ? " flushed" : s.rejectPreempted ? " clean" : s.slices > 1 ? (" / " + std::to_string(s.slices) + " fastest").c_str() : "");
        std::printf("%-11s %-22s %8.2f%% %8.2f%% %4d/%-4zu %11.3f %13.1f %11s %8.2f%% %8.2f%% %10.4f\n", p.name.c_str(),
                    setting, 100 * medianOf(cvs), 100 * quantile(cvs, 0.9), within, cvs.size(), medianOf(spread),
                    1e3 * wall[p.setting] / measurements, ratio > 0 ? std::to_string(ratio).substr(0, 5).c_str() : "-",
                    100 * medianOf(cvRound), 100 * medianOf(cvNbr), 1e3 * medianOf(lat));
        if (s.repeat > 1) {
            // How far the repeats of one measurement spread, against the spread between measurements.
            std::vector<double> within;
            for (const auto& st : perStates)
                for (const auto& round : st) within.push_back(cv(round));
            std::printf("%-11s   CV of the %d repeats within one measurement: median %.2f%%\n", "", s.repeat,
                        100 * medianOf(within));
        }
        if (o.pairs) {
            // Two measurements in a row, each with fresh buffers: their CV against the CV across rounds.
            std::vector<double> pc;
            for (size_t i = 0; i < v.size(); ++i)
                for (size_t r = 0; r < v[i].size(); ++r) pc.push_back(cv({v[i][r], p.reduce(twin[p.setting][i][r])}));
            std::printf("%-11s   CV of two back-to-back measurements: median %.2f%%\n", "", 100 * medianOf(pc));
        }
    }
    std::printf("\nwall %.0f s. 'vs tvm': median over states of (policy's median latency / tvm's median latency); "
                "'state ms': median over states of each one's median latency.\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_stability: %s\n", e.what());
    return 1;
}
