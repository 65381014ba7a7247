// SPDX-License-Identifier: Apache-2.0
// Benchmark (not a test): does the XGBoost cost model make the search better than the random model?
// Acceptance question of the auto-scheduler issue: "XGBoost-guided search beats the random model
// at equal trials (best latency after 300 trials, median of 3 seeds) on three different tasks; the
// cost model's pairwise ranking accuracy on held-out measured states is reported (Ansor: 0.85)".
//
// What it measures. For each task (zoo: resnet-18 NHWC B1 conv2d 3x3 56x56x64->64 + bias + relu,
// the mobilenet NHWC B1 depthwise conv task with the most FLOPs, resnet-18 dense_add 512->1000), each
// cost model (xgb, random) and each seed (0, 1, 2), the task alone is tuned for N trials (default
// 300) at 64 measures per round through the CLI's engine path (tuning::buildTuner on a job naming
// the network and the task's index, as `tunebench-cli tune --tasks I`: NetworkTuner over one task,
// SketchPolicy, ProgramMeasurer = LocalBuilder + sandboxed LocalRunner, repeat 1, min_repeat_ms
// 100). Every record goes to OUT/<task>_<model>_s<seed>.json (TVM v0.6 lines). Runs of one seed are
// interleaved (xgb then random) so that load drift on this shared machine hits both models alike.
//   - best latency after N trials: the best mean cost among the first N measured candidates in
//     measurement order (the scheduler measures whole rounds, 320 for N = 300; the extra ones are
//     in the log but not in the table), with a best-so-far curve at 64, 128, ... and a re-measure
//     of every run's best state (repeat 5) at the end of the task, all in one batch, to show how
//     much of a gap is timing noise (the best of 300 noisy timings is biased low).
//   - pairwise ranking accuracy (XGBModel::pairwiseAccuracy: fraction of pairs with different
//     measured cost whose predicted order is right). A fresh XGBModel is trained on the states
//     measured by some runs of the task (default: xgb seeds 0,1 + random seed 0; failed candidates
//     included as cost 1e10, as the tuner trains) and evaluated on the valid states measured by the
//     other runs (xgb seed 2 + random seeds 1,2), minus states already in the training set (states
//     are equal when their printed loop nests are, as SketchPolicy dedups). Also reported with the
//     random runs' held-out states alone (an unbiased sample of the space), and the "in-search"
//     accuracy: the score the tuner's own model gave each candidate when it was picked, against its
//     measured cost, over pairs of one round (xgb runs, rounds after warm-up).
//
// How long. A full run (3 tasks x 2 models x 3 seeds x 300 trials, 5760 measurements) takes about
// 72 minutes on this 2-core machine at load 6-9 (see the wall time printed at the end).
// --quick (64 trials, seed 0) takes about 6 minutes; at 64 trials the xgb run is still in warm-up
// (random predictions until 64 measurements), so it only checks the wiring.
//
// How to read it. The table gives per task and model the best latency (ms) after N trials for each
// seed, the median, and ratio = median(random) / median(xgb): > 1 means the XGBoost-guided search
// found faster code. A ratio within a few percent of 1 is inside the timing noise of this loaded
// machine (compare the re-measured column). Ranking accuracy 0.5 is chance, Ansor reports 0.85.
//
//   bench_cost_model [--tasks conv,dwconv,dense] [--models xgb,random] [--seeds 0,1,2]
//                    [--trials 300] [--per-round 64] [--out bench-cost-model] [--quick]
//                    [--seed-default-schedule] [--list] [--remeasure K [--passes P]]
// A task can also be given as NETWORK:INDEX (extraction order, NHWC B1), e.g. resnet-18:3.
// --remeasure K (after a run, same --out/--tasks/--trials): re-times the K best states of every
// run's log in P interleaved passes (median per state), a check of how much of the table is timing
// noise; on this loaded 2-core machine the same state measured twice differs by 1.2-1.5x (median).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/cost_model/xgb_model.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"
#include "engine/tuning/tuning_job.h"

using namespace tb;

namespace {

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    size_t b = 0;
    while (b <= s.size()) {
        size_t e = s.find(',', b);
        if (e == std::string::npos) e = s.size();
        if (e > b) out.push_back(s.substr(b, e - b));
        b = e + 1;
    }
    return out;
}

double seconds(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !(x < 1e9); }), v.end());
    if (v.empty()) return 1e10;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string ms(double seconds) {
    char buf[32];
    if (seconds < 1e9)
        std::snprintf(buf, sizeof(buf), "%.4f", seconds * 1e3);
    else
        std::snprintf(buf, sizeof(buf), "-");
    return buf;
}

struct Options {
    std::vector<std::string> tasks{"conv", "dwconv", "dense"};
    std::vector<std::string> models{"xgb", "random"};
    std::vector<uint64_t> seeds{0, 1, 2};
    int trials = 300;
    int perRound = 64;
    std::string out = "bench-cost-model";
    bool seedDefaultSchedule = false;
    bool list = false;
    int remeasure = 0;  ///< > 0: re-time the top-K states of the logs in --out instead of tuning
    int passes = 3;
};

[[noreturn]] void usage(const char* msg) {
    std::fprintf(stderr,
                 "error: %s\nusage: bench_cost_model [--tasks conv,dwconv,dense|NET:IDX,...] [--models xgb,random]\n"
                 "         [--seeds 0,1,2] [--trials 300] [--per-round 64] [--out DIR] [--quick]\n"
                 "         [--seed-default-schedule] [--list] [--remeasure K [--passes P]]\n",
                 msg);
    std::exit(2);
}

Options parseArgs(int argc, char** argv) {
    Options o;
    bool quick = false, trialsSet = false, seedsSet = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(("missing value for " + a).c_str());
            return argv[++i];
        };
        auto integer = [&](const std::string& v, int minV) {
            char* end = nullptr;
            long x = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end || x < minV) usage((a + " needs an integer >= " + std::to_string(minV)).c_str());
            return int(x);
        };
        if (a == "--tasks") {
            o.tasks = splitList(value());
        } else if (a == "--models") {
            o.models = splitList(value());
            for (const auto& m : o.models)
                if (m != "xgb" && m != "random") usage("--models takes xgb and/or random");
        } else if (a == "--seeds") {
            o.seeds.clear();
            for (const auto& s : splitList(value())) o.seeds.push_back(uint64_t(integer(s, 0)));
            seedsSet = true;
        } else if (a == "--trials") {
            o.trials = integer(value(), 1);
            trialsSet = true;
        } else if (a == "--per-round") {
            o.perRound = integer(value(), 1);
        } else if (a == "--out") {
            o.out = value();
        } else if (a == "--quick") {
            quick = true;
        } else if (a == "--seed-default-schedule") {
            o.seedDefaultSchedule = true;
        } else if (a == "--list") {
            o.list = true;
        } else if (a == "--remeasure") {
            o.remeasure = integer(value(), 1);
        } else if (a == "--passes") {
            o.passes = integer(value(), 1);
        } else if (a == "--help" || a == "-h") {
            usage("help");
        } else {
            usage(("unknown argument " + a).c_str());
        }
    }
    if (quick) {
        if (!trialsSet) o.trials = 64;
        if (!seedsSet) o.seeds = {0};
    }
    if (o.tasks.empty() || o.models.empty() || o.seeds.empty()) usage("empty --tasks, --models or --seeds");
    return o;
}

bool hasStage(const te::ComputeDAG& dag, const std::string& name) {
    for (const auto& op : dag.ops())
        if (op->name == name) return true;
    return false;
}

struct BenchTask {
    std::string name;  ///< short name (file names, table)
    std::string network;
    int index = 0;     ///< in the network's extraction order (the job's task ID)
    graph::ExtractedTask task;
};

/// The zoo tasks, extracted as `tunebench-cli tune` does.
class Zoo {
public:
    explicit Zoo(std::string target) : m_target(std::move(target)) {}
    const std::vector<graph::ExtractedTask>& tasks(const std::string& net) {
        auto it = m_cache.find(net);
        if (it != m_cache.end()) return it->second;
        graph::TaskExtractionOptions eo;
        eo.target = m_target;
        return m_cache[net] = graph::extractTasks(graph::makeNetwork(net, 1, "NHWC"), eo);
    }

    BenchTask find(const std::string& spec) {
        auto pick = [&](const std::string& net, auto pred) -> std::optional<BenchTask> {
            const auto& ts = tasks(net);
            for (size_t i = 0; i < ts.size(); ++i)
                if (pred(ts[i])) return BenchTask{spec, net, int(i), ts[i]};
            return std::nullopt;
        };
        if (spec == "conv") {
            if (auto b = pick("resnet-18", [](const graph::ExtractedTask& t) {
                    return t.desc == "vm_mod_fused_nn_conv2d_add_nn_relu" && t.flop == 231612416.0;
                }))
                return *b;
            TB_USER_ERROR() << "resnet-18 has no conv2d_add_nn_relu task of 231612416 FLOPs";
        }
        if (spec == "dwconv") {
            double most = -1;
            for (const auto& t : tasks("mobilenet"))
                if (hasStage(t.dag, "DepthwiseConv2d")) most = std::max(most, t.flop);
            if (auto b = pick("mobilenet", [&](const graph::ExtractedTask& t) { return hasStage(t.dag, "DepthwiseConv2d") && t.flop == most; }))
                return *b;
            TB_USER_ERROR() << "mobilenet has no depthwise task";
        }
        if (spec == "dense") {
            if (auto b = pick("resnet-18", [](const graph::ExtractedTask& t) {
                    return t.desc == "vm_mod_fused_nn_dense_add" && t.dag.outputs().front().shape().back() == 1000;
                }))
                return *b;
            TB_USER_ERROR() << "resnet-18 has no dense_add task with 1000 outputs";
        }
        size_t colon = spec.rfind(':');
        TB_USER_CHECK(colon != std::string::npos)
            << "unknown task '" << spec << "' (conv, dwconv, dense or NETWORK:INDEX)";
        std::string net = spec.substr(0, colon);
        int idx = std::atoi(spec.c_str() + colon + 1);
        const auto& ts = tasks(net);
        TB_USER_CHECK(idx >= 0 && idx < int(ts.size())) << spec << ": index out of range 0.." << ts.size() - 1;
        return {net + "_" + std::to_string(idx), net, idx, ts[size_t(idx)]};
    }

private:
    std::string m_target;
    std::map<std::string, std::vector<graph::ExtractedTask>> m_cache;
};

/// One measured candidate of a run, in measurement order.
struct Trial {
    State state;
    double cost = 1e10;  ///< mean seconds, 1e10 = failed
    bool valid = false;
    float predicted = 0;
    int round = 0;
};

struct Run {
    std::string model;
    uint64_t seed = 0;
    std::vector<Trial> trials;
    double bestAtN = 1e10;      ///< best among the first N trials
    State bestState;
    double bestAll = 1e10;      ///< best among all measured (whole rounds)
    std::vector<double> curve;  ///< best-so-far at perRound, 2*perRound, ..., N
    double remeasured = 1e10;   ///< best state re-timed at the end of the task
    double wallS = 0;
    int failed = 0;
};

/// `state` (of any instance of the task's DAG) replayed on `dag`: every buildTuner extracts its own
/// DAG, and a state lowers only on the DAG it was made on.
State onDag(const te::ComputeDAG& dag, const State& state) { return inferBound(replaySteps(dag, state.transformSteps())); }

/// Keeps a run's trials, with states replayed on the bench task's DAG (so states of all runs of
/// a task can be compared, trained on and re-timed together).
class Collector : public tuning::TuneObserver {
public:
    Collector(Run& run, const std::string& label, const te::ComputeDAG& dag) : m_run(run), m_label(label), m_dag(dag) {}
    void onTrials(const std::vector<tuning::MeasuredTrial>& trials) override {
        ++m_round;
        int ok = 0;
        double best = 1e10;
        for (const auto& t : trials) {
            Trial r;
            r.state = onDag(m_dag, t.state);
            r.valid = t.outcome.errorNo == 0;
            r.cost = r.valid ? t.outcome.meanCost() : 1e10;
            r.predicted = t.predicted;
            r.round = m_round;
            ok += r.valid;
            best = std::min(best, r.cost);
            m_bestSoFar = std::min(m_bestSoFar, r.cost);
            m_run.trials.push_back(std::move(r));
        }
        std::fprintf(stdout, "  %s round %d: %zu trials (%d valid), round best %s ms, best so far %s ms [%.0f s]\n",
                     m_label.c_str(), m_round, trials.size(), ok, ms(best).c_str(), ms(m_bestSoFar).c_str(), seconds(m_t0));
        std::fflush(stdout);
    }

private:
    Run& m_run;
    std::string m_label;
    const te::ComputeDAG& m_dag;
    int m_round = 0;
    double m_bestSoFar = 1e10;
    std::chrono::steady_clock::time_point m_t0 = std::chrono::steady_clock::now();
};

struct Env {
    tuning::ResolvedTarget target;  ///< this CPU, as `tunebench-cli tune` without --target
    HardwareParams hw;
    lower::StateLowerer lowerer;
};

/// The search task of `e` for the held-out cost-model check (the tuner builds its own).
search::SearchTask makeSearchTask(const Env& env, const graph::ExtractedTask& e) {
    search::SearchTask t;
    t.dag = std::make_shared<te::ComputeDAG>(e.dag);
    t.workloadKey = e.workloadKey;
    t.desc = e.desc;
    t.target = env.target.recordString;
    t.hardware = env.hw;
    return t;
}

/// The job `tunebench-cli tune --network NET --tasks INDEX` runs for one bench task, with the CLI's
/// runner defaults (repeat 1, min_repeat_ms 100) and no estimated-latency file.
tuning::TuningJob benchJob(const BenchTask& bt) {
    tuning::TuningJob job;
    job.network.zooName = bt.network;
    job.taskIds = {bt.index};
    job.latencyLogPath.clear();
    return job;
}

/// Tunes one task with one model and seed, as `tunebench-cli tune` does.
Run tuneOne(const BenchTask& bt, const std::string& model, uint64_t seed, const Options& o) {
    Run run;
    run.model = model;
    run.seed = seed;
    tuning::TuningJob job = benchJob(bt);
    job.search.trials = o.trials;
    job.search.perRound = o.perRound;
    job.search.seed = seed;
    job.search.costModel = model;
    // Off by default here, so that both models start from the same pure Ansor search.
    job.search.seedDefaultSchedule = o.seedDefaultSchedule;
    job.logPath = o.out + "/" + bt.name + "_" + model + "_s" + std::to_string(seed) + ".json";
    std::filesystem::remove(job.logPath);  // a fresh log per run (the tuner appends)
    const auto tuner = tuning::buildTuner(job);
    const std::string label = bt.name + " " + model + " s" + std::to_string(seed);
    Collector collector(run, label, bt.task.dag);
    tuner->network().addObserver(&collector);
    auto t0 = std::chrono::steady_clock::now();
    tuner->network().tune();
    run.wallS = seconds(t0);
    run.failed = tuner->measurer().failed();

    double best = 1e10;
    for (size_t i = 0; i < run.trials.size(); ++i) {
        const Trial& t = run.trials[i];
        if (int(i) < o.trials && t.cost < best) {
            best = t.cost;
            run.bestState = t.state;
        }
        run.bestAll = std::min(run.bestAll, t.cost);
        if ((int(i) + 1) % o.perRound == 0 || int(i) + 1 == o.trials) {
            if (int(i) < o.trials) run.curve.push_back(best);
        }
    }
    run.bestAtN = best;
    std::fprintf(stdout, "%s: %zu measured (%d failed) in %.0f s, best after %d trials %s ms (%.2f GFLOPS), log %s\n",
                 label.c_str(), run.trials.size(), run.failed, run.wallS, o.trials, ms(run.bestAtN).c_str(),
                 run.bestAtN < 1e9 ? bt.task.flop / run.bestAtN / 1e9 : 0.0, job.logPath.c_str());
    std::fflush(stdout);
    return run;
}

/// Builds and times `states` of `task` in one batch (TVM timer semantics, `repeat` rounds of at
/// least 100 ms each), so states timed together see the same machine load.
std::vector<search::MeasureOutcome> timeStates(const BenchTask& bt, const std::vector<State>& states, int repeat) {
    tuning::TuningJob job = benchJob(bt);
    job.runner.repeat = repeat;  // no log: these timings are not records
    const auto tuner = tuning::buildTuner(job);
    const search::SearchTask& task = tuner->network().tasks().front().task;
    std::vector<State> own;
    for (const State& st : states) own.push_back(onDag(*task.dag, st));
    return tuner->measurer().measure(task, own);
}

/// Re-times the best state of every run in one batch (repeat 5), at the same moment.
void remeasureBest(const BenchTask& bt, std::vector<Run>& runs) {
    std::vector<State> states;
    std::vector<size_t> idx;
    for (size_t i = 0; i < runs.size(); ++i)
        if (runs[i].bestAtN < 1e9) {
            states.push_back(runs[i].bestState);
            idx.push_back(i);
        }
    if (states.empty()) return;
    auto res = timeStates(bt, states, 5);
    for (size_t k = 0; k < res.size(); ++k)
        if (res[k].errorNo == 0) runs[idx[k]].remeasured = res[k].meanCost();
}

struct Sample {
    State state;
    double cost;
    bool valid;
};

/// States of `runs` (deduplicated by printed loop nest, first occurrence kept), skipping `exclude`.
std::vector<Sample> collect(const std::vector<const Run*>& runs, const std::unordered_set<std::string>& exclude,
                            bool validOnly, std::unordered_set<std::string>* seenOut = nullptr) {
    std::unordered_set<std::string> seen;
    std::vector<Sample> out;
    for (const Run* r : runs)
        for (const auto& t : r->trials) {
            if (validOnly && !t.valid) continue;
            std::string key = t.state.toStr();
            if (exclude.count(key) || !seen.insert(key).second) continue;
            out.push_back({t.state, t.cost, t.valid});
        }
    if (seenOut) *seenOut = std::move(seen);
    return out;
}

struct AccuracyReport {
    std::string trainDesc, testDesc;
    size_t train = 0, test = 0, testRandom = 0, overlap = 0;
    double acc = -1, accRandom = -1;
};

std::string runsDesc(const std::vector<const Run*>& runs) {
    std::string s;
    for (const Run* r : runs) s += (s.empty() ? "" : "+") + r->model + "/s" + std::to_string(r->seed);
    return s.empty() ? "-" : s;
}

/// Held-out pairwise ranking accuracy of a fresh XGBModel (see the file comment for the split).
AccuracyReport heldOutAccuracy(const Env& env, const BenchTask& bt, const std::vector<Run>& runs,
                               const std::vector<uint64_t>& seeds) {
    std::vector<const Run*> train, test, testRandom;
    const uint64_t lastSeed = seeds.back(), firstSeed = seeds.front();
    for (const auto& r : runs) {
        if (seeds.size() >= 2) {
            if (r.model == "xgb") (r.seed == lastSeed ? test : train).push_back(&r);
            if (r.model == "random") (r.seed == firstSeed ? train : test).push_back(&r);
        } else {
            // One seed: train on the xgb run, test on the random run.
            (r.model == "xgb" ? train : test).push_back(&r);
        }
        if (r.model == "random" && std::find(test.begin(), test.end(), &r) != test.end()) testRandom.push_back(&r);
    }
    AccuracyReport rep;
    rep.trainDesc = runsDesc(train);
    rep.testDesc = runsDesc(test);
    if (train.empty() || test.empty()) return rep;
    std::unordered_set<std::string> trainKeys;
    std::vector<Sample> tr = collect(train, {}, false, &trainKeys);
    std::vector<Sample> te = collect(test, {}, true);
    std::vector<Sample> teR = collect(testRandom, {}, true);
    size_t before = te.size();
    te.erase(std::remove_if(te.begin(), te.end(), [&](const Sample& s) { return trainKeys.count(s.state.toStr()) > 0; }),
             te.end());
    rep.overlap = before - te.size();
    teR.erase(std::remove_if(teR.begin(), teR.end(), [&](const Sample& s) { return trainKeys.count(s.state.toStr()) > 0; }),
              teR.end());
    rep.train = tr.size();
    rep.test = te.size();
    rep.testRandom = teR.size();

    search::SearchTask task = makeSearchTask(env, bt.task);
    cost_model::XGBModel model(env.lowerer);
    std::vector<cost_model::MeasuredState> data;
    for (const auto& s : tr) data.push_back({s.state, s.cost, s.valid});
    model.update(task, data);
    auto eval = [&](const std::vector<Sample>& v) {
        std::vector<State> st;
        std::vector<double> c;
        for (const auto& s : v) {
            st.push_back(s.state);
            c.push_back(s.cost);
        }
        return v.size() >= 2 ? model.pairwiseAccuracy(task, st, c) : -1.0;
    };
    rep.acc = eval(te);
    rep.accRandom = eval(teR);
    return rep;
}

/// The online model's score at pick time vs the measured cost, over pairs of valid candidates of one
/// round that the search picked (score != 0: not seeds, not eps-greedy random picks), rounds >= 2.
double inSearchAccuracy(const Run& r, long long* pairs) {
    long long ok = 0, total = 0;
    std::map<int, std::vector<const Trial*>> byRound;
    for (const auto& t : r.trials)
        if (t.round >= 2 && t.valid && t.predicted != 0.0f) byRound[t.round].push_back(&t);
    for (const auto& [rd, v] : byRound)
        for (size_t i = 0; i < v.size(); ++i)
            for (size_t j = i + 1; j < v.size(); ++j) {
                if (v[i]->cost == v[j]->cost) continue;
                ++total;
                ok += (v[i]->cost < v[j]->cost) == (v[i]->predicted > v[j]->predicted);
            }
    *pairs = total;
    return total ? double(ok) / double(total) : -1.0;
}

/// --remeasure K: a noise check of a finished experiment. For every run of a task, the K best
/// distinct records among the first N trials of its log are replayed and re-timed (repeat 3) in P
/// passes; each pass times the states of all runs of the task in one batch, in an order rotated
/// from pass to pass, so load drift hits every run alike. A state's latency is the median over the
/// passes; a run's is the best of its K states. Prints the same table as the experiment.
void remeasureLogs(const std::vector<BenchTask>& tasks, const Options& o) {
    std::printf("\n==== re-measured: best of each run's top %d states (median of %d passes, repeat 3), ms ====\n",
                o.remeasure, o.passes);
    std::printf("%-8s %-7s", "task", "model");
    for (auto s : o.seeds) std::printf(" %10s", ("seed" + std::to_string(s)).c_str());
    std::printf(" %10s %10s\n", "median", "ratio");
    for (const auto& bt : tasks) {
        struct Cand {
            size_t run;
            State state;
            double logged;
            std::vector<double> costs;
        };
        std::vector<std::pair<std::string, uint64_t>> runs;
        std::vector<Cand> cands;
        for (uint64_t seed : o.seeds)
            for (const auto& m : o.models) {
                const std::string path = o.out + "/" + bt.name + "_" + m + "_s" + std::to_string(seed) + ".json";
                auto log = record::readMeasureRecords(path);
                std::vector<const record::MeasureRecord*> recs;
                for (size_t i = 0; i < log.records.size() && int(i) < o.trials; ++i)
                    if (log.records[i].valid() && log.records[i].task.workloadKey == bt.task.workloadKey)
                        recs.push_back(&log.records[i]);
                std::stable_sort(recs.begin(), recs.end(),
                                 [](auto* a, auto* b) { return a->meanCost() < b->meanCost(); });
                std::unordered_set<std::string> seen;
                runs.push_back({m, seed});
                for (auto* r : recs) {
                    if (int(seen.size()) >= o.remeasure) break;
                    State st = inferBound(replaySteps(bt.task.dag, stepsFromJson(r->steps)));
                    if (!seen.insert(st.toStr()).second) continue;
                    cands.push_back({runs.size() - 1, st, r->meanCost(), {}});
                }
            }
        for (int p = 0; p < o.passes; ++p) {
            std::vector<size_t> order(cands.size());
            for (size_t i = 0; i < order.size(); ++i) order[i] = (i + size_t(p) * cands.size() / size_t(o.passes)) % cands.size();
            std::vector<State> states;
            for (size_t i : order) states.push_back(cands[i].state);
            auto res = timeStates(bt, states, 3);
            for (size_t k = 0; k < res.size(); ++k)
                cands[order[k]].costs.push_back(res[k].errorNo == 0 ? res[k].meanCost() : 1e10);
        }
        std::vector<double> runBest(runs.size(), 1e10), runLogged(runs.size(), 1e10);
        for (auto& c : cands) {
            double med = median(c.costs);
            if (med < runBest[c.run]) runBest[c.run] = med;
            runLogged[c.run] = std::min(runLogged[c.run], c.logged);
        }
        std::map<std::string, double> med;
        for (const auto& m : o.models) {
            std::vector<double> v;
            std::printf("%-8s %-7s", bt.name.c_str(), m.c_str());
            for (size_t r = 0; r < runs.size(); ++r)
                if (runs[r].first == m) {
                    std::printf(" %10s", ms(runBest[r]).c_str());
                    v.push_back(runBest[r]);
                }
            med[m] = median(v);
            std::printf(" %10s", ms(med[m]).c_str());
            if (m == o.models.back() && med.count("xgb") && med.count("random")) std::printf(" %10.3f", med["random"] / med["xgb"]);
            std::printf("\n");
        }
        std::printf("%-8s   per state (run: logged ms -> re-measured passes ms):\n", bt.name.c_str());
        for (const auto& c : cands) {
            std::printf("%-8s     %s/s%llu: %.4f ->", bt.name.c_str(), runs[c.run].first.c_str(),
                        (unsigned long long)runs[c.run].second, c.logged * 1e3);
            for (double x : c.costs) std::printf(" %s", ms(x).c_str());
            std::printf("\n");
        }
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parseArgs(argc, argv);
    auto tStart = std::chrono::steady_clock::now();
    Env env;
    env.target = tuning::resolveTarget("");
    env.hw = measure::defaultHardwareParams(env.target.target);
    env.lowerer = [](const search::SearchTask& t, const State& s) { return lower::lowerState(*t.dag, s); };

    try {
        Zoo zoo(env.target.recordString);
        if (o.list) {
            for (const char* net : {"resnet-18", "mobilenet"}) {
                const auto& ts = zoo.tasks(net);
                for (size_t i = 0; i < ts.size(); ++i)
                    std::printf("%s:%zu  %-48s flop %.0f weight %d%s\n", net, i, ts[i].desc.c_str(), ts[i].flop,
                                ts[i].weight, hasStage(ts[i].dag, "DepthwiseConv2d") ? "  [depthwise]" : "");
            }
            return 0;
        }
        std::vector<BenchTask> tasks;
        for (const auto& spec : o.tasks) tasks.push_back(zoo.find(spec));
        if (o.remeasure > 0) {
            remeasureLogs(tasks, o);
            std::printf("\nTotal wall time %.1f min\n", seconds(tStart) / 60);
            return 0;
        }
        std::filesystem::create_directories(o.out);

        std::string seedsStr;
        for (auto s : o.seeds) seedsStr += (seedsStr.empty() ? "" : ",") + std::to_string(s);
        std::printf("bench_cost_model: %zu task(s), models", tasks.size());
        for (const auto& m : o.models) std::printf(" %s", m.c_str());
        std::printf(", seeds %s, %d trials, %d per round, target %s (%d cores), default-schedule seed %s, out %s\n",
                    seedsStr.c_str(), o.trials, o.perRound, env.target.recordString.c_str(), env.hw.numCores,
                    o.seedDefaultSchedule ? "on" : "off", o.out.c_str());
        for (const auto& bt : tasks) {
            const auto& out = bt.task.dag.outputs().front().shape();
            std::string shape;
            for (auto d : out) shape += (shape.empty() ? "" : "x") + std::to_string(d);
            std::printf("  task %-8s %s %s  flop %.0f  output %s  key %s\n", bt.name.c_str(), bt.network.c_str(),
                        bt.task.desc.c_str(), bt.task.flop, shape.c_str(), bt.task.workloadKey.c_str());
        }
        std::fflush(stdout);

        std::vector<std::vector<Run>> results(tasks.size());
        std::vector<AccuracyReport> acc(tasks.size());
        for (size_t ti = 0; ti < tasks.size(); ++ti) {
            for (uint64_t seed : o.seeds)
                for (const auto& m : o.models) results[ti].push_back(tuneOne(tasks[ti], m, seed, o));
            remeasureBest(tasks[ti], results[ti]);
            acc[ti] = heldOutAccuracy(env, tasks[ti], results[ti], o.seeds);
        }

        // ---- the table ------------------------------------------------------------------------
        std::printf("\n==== best latency after %d trials (ms; per-round %d; lower is better) ====\n", o.trials, o.perRound);
        std::printf("%-8s %-7s", "task", "model");
        for (auto s : o.seeds) std::printf(" %10s", ("seed" + std::to_string(s)).c_str());
        std::printf(" %10s %8s %12s %10s\n", "median", "GFLOPS", "remeas.med", "ratio");
        for (size_t ti = 0; ti < tasks.size(); ++ti) {
            std::map<std::string, double> med, remed;
            for (const auto& m : o.models) {
                std::vector<double> v, rv;
                std::printf("%-8s %-7s", tasks[ti].name.c_str(), m.c_str());
                for (auto s : o.seeds)
                    for (const auto& r : results[ti])
                        if (r.model == m && r.seed == s) {
                            std::printf(" %10s", ms(r.bestAtN).c_str());
                            v.push_back(r.bestAtN);
                            rv.push_back(r.remeasured);
                        }
                med[m] = median(v);
                remed[m] = median(rv);
                std::printf(" %10s %8.2f %12s", ms(med[m]).c_str(), med[m] < 1e9 ? tasks[ti].task.flop / med[m] / 1e9 : 0.0,
                            ms(remed[m]).c_str());
                if (m == o.models.back() && med.count("xgb") && med.count("random"))
                    std::printf(" %10.3f", med["random"] / med["xgb"]);
                std::printf("\n");
            }
            if (med.count("xgb") && med.count("random"))
                std::printf("%-8s ratio median(random)/median(xgb) = %.3f (%s); re-measured: %.3f\n", tasks[ti].name.c_str(),
                            med["random"] / med["xgb"], med["random"] > med["xgb"] ? "XGB wins" : "XGB does NOT win",
                            remed["random"] / remed["xgb"]);
        }

        std::printf("\n==== best-so-far curve (ms at trial");
        for (int k = o.perRound; k < o.trials; k += o.perRound) std::printf(" %d", k);
        std::printf(" %d; then best over all %s measured) ====\n", o.trials, "round-whole");
        for (size_t ti = 0; ti < tasks.size(); ++ti)
            for (const auto& r : results[ti]) {
                std::printf("%-8s %-7s s%-3llu", tasks[ti].name.c_str(), r.model.c_str(), (unsigned long long)r.seed);
                for (double c : r.curve) std::printf(" %9s", ms(c).c_str());
                std::printf("  | all %zu: %s ms, failed %d, %.0f s\n", r.trials.size(), ms(r.bestAll).c_str(), r.failed, r.wallS);
            }

        std::printf("\n==== pairwise ranking accuracy of a fresh XGBModel on held-out measured states (Ansor: 0.85) ====\n");
        for (size_t ti = 0; ti < tasks.size(); ++ti) {
            const auto& a = acc[ti];
            std::printf("%-8s train %s: %zu states; test %s: %zu valid states (%zu dropped as in train) -> accuracy %s\n",
                        tasks[ti].name.c_str(), a.trainDesc.c_str(), a.train, a.testDesc.c_str(), a.test, a.overlap,
                        a.acc >= 0 ? std::to_string(a.acc).substr(0, 5).c_str() : "n/a");
            std::printf("%-8s   random-model runs' held-out states only: %zu -> accuracy %s\n", tasks[ti].name.c_str(),
                        a.testRandom, a.accRandom >= 0 ? std::to_string(a.accRandom).substr(0, 5).c_str() : "n/a");
            for (const auto& r : results[ti]) {
                if (r.model != "xgb") continue;
                long long pairs = 0;
                double x = inSearchAccuracy(r, &pairs);
                std::printf("%-8s   in-search (xgb s%llu, model at pick time, pairs within a round): %s over %lld pairs\n",
                            tasks[ti].name.c_str(), (unsigned long long)r.seed,
                            x >= 0 ? std::to_string(x).substr(0, 5).c_str() : "n/a", pairs);
            }
        }
        std::printf("\nTotal wall time %.1f min\n", seconds(tStart) / 60);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
