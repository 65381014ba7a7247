// SPDX-License-Identifier: Apache-2.0
// Benchmark (not a test): the cost model's pairwise ranking accuracy on measured states of existing
// logs, per training objective (issue 20: >= 0.85 on held-out states, >= 0.75 within a round).
//
// The states of --train logs (one task of a zoo network) train a fresh XGBModel; the valid states of
// --test logs that are not in the training set (equal printed loop nests) are scored. Printed per
// objective: held-out accuracy over all pairs with different measured cost (XGBModel::
// pairwiseAccuracy: 0.5 is chance, Ansor reports 0.851), and the within-round accuracy: pairs inside
// each block of --per-round consecutive records of a test log (a tuning round measures such a block;
// its states are the ones the search picked together, where near-ties matter), averaged over blocks.
// Objectives: squared (TVM's loss on our features, the default `xgb`), pairwise (`xgb-rank`), tvm (TVM's
// loss on TVM's 164 features, `xgb-tvm`), analytic (no training: the estimate of feature.h
// estimatedCycles that the model predicts with before warm-up).
// Pairs whose costs differ by less than --tie percent are left out of a second pair of columns:
// timing noise on this shared machine (bench_stability) makes their order a coin toss for any model.
//
//   bench_rank --train a.json,b.json --test c.json [--network resnet-18 | --onnx FILE] [--task 2|all]
//              [--per-round 64] [--tie 5] [--objectives squared,pairwise,tvm,analytic]
//
// --schedule LOG (instead of --train/--test): when to retrain, on a whole network's tuning log
// (XGBModelParams::lazyTraining). The log's records, in order, are cut into rounds (runs of
// consecutive records of one task, at most --per-round). One model over all tasks, as the tuner
// keeps it (the default `xgb` parameters, warm-up included), scores each round's valid states before
// it learns the round: eager (TVM: retrained after every round) and lazy (retrained only when the
// scored task has records the booster has not seen, or has none, or there is no booster). Printed
// per schedule: the online pairwise accuracy, mean over rounds (all pairs, and without pairs closer
// than --tie%), the number of trainings and their seconds.
//   bench_rank --schedule r18.json --onnx resnet18_v1.onnx [--per-round 64] [--tie 5]
#include <algorithm>
#include <chrono>
#include <map>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/codegen/target.h"
#include "engine/cost_model/feature.h"
#include "engine/cost_model/xgb_model.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/measure/machine_peak.h"
#include "engine/measure/measure.h"
#include "engine/lower/lower_state.h"
#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"
#include "engine/tuning/tuning_job.h"

using namespace tb;

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    for (size_t b = 0; b <= s.size();) {
        size_t e = s.find(',', b);
        if (e == std::string::npos) e = s.size();
        if (e > b) out.push_back(s.substr(b, e - b));
        b = e + 1;
    }
    return out;
}

struct Sample {
    State state;
    double cost;
    bool valid;
};

/// The task's records of one log, in log order, as states of `dag`.
std::vector<Sample> readLog(const std::string& path, const graph::ExtractedTask& task) {
    std::vector<Sample> out;
    for (const auto& r : record::readMeasureRecords(path).records) {
        if (r.task.workloadKey != task.workloadKey) continue;
        out.push_back({inferBound(replaySteps(task.dag, stepsFromJson(r.steps))), r.valid() ? r.meanCost() : 1e10, r.valid()});
    }
    TB_USER_CHECK(!out.empty()) << path << " holds no record of " << task.workloadKey;
    return out;
}

/// Accuracy over pairs of `idx` whose costs differ by more than `tie` (relative).
double accuracy(const std::vector<float>& score, const std::vector<double>& cost, double tie, long long* pairs);

/// The search task of an extracted task, as `tune` builds it for this CPU.
search::SearchTask searchTaskOf(const graph::ExtractedTask& et) {
    search::SearchTask task;
    task.dag = std::make_shared<te::ComputeDAG>(et.dag);
    task.workloadKey = et.workloadKey;
    task.target = tuning::resolveTarget("").recordString;
    task.hardware = measure::defaultHardwareParams(codegen::Target::host());  // as tune
    return task;
}

/// --schedule: eager against lazy training over a network log's rounds (see the file comment).
int compareSchedules(const std::string& logPath, const std::vector<graph::ExtractedTask>& extracted, int perRound, double tie) {
    std::map<std::string, search::SearchTask> tasks;
    for (const auto& et : extracted) tasks.emplace(et.workloadKey, searchTaskOf(et));
    struct Round {
        const search::SearchTask* task;
        std::vector<cost_model::MeasuredState> measured;
    };
    std::vector<Round> rounds;
    size_t skipped = 0;
    for (const auto& r : record::readMeasureRecords(logPath).records) {
        const auto it = tasks.find(r.task.workloadKey);
        if (it == tasks.end()) {
            ++skipped;
            continue;
        }
        if (rounds.empty() || rounds.back().task != &it->second || int(rounds.back().measured.size()) >= perRound)
            rounds.push_back({&it->second, {}});
        const bool valid = r.valid();
        rounds.back().measured.push_back(
            {inferBound(replaySteps(*it->second.dag, stepsFromJson(r.steps))), valid ? r.meanCost() : 1e10, valid});
    }
    std::printf("bench_rank --schedule: %s, %zu rounds of <= %d records (%zu records of other tasks skipped), ties < %.0f%%\n",
                logPath.c_str(), rounds.size(), perRound, skipped, tie);
    std::printf("%-8s %7s %10s %12s %10s %10s\n", "schedule", "scored", "online", "online >tie", "trainings", "train (s)");
    auto lowerer = [](const search::SearchTask& t, const State& s) { return lower::lowerState(*t.dag, s); };
    for (const bool lazy : {false, true}) {
        cost_model::XGBModelParams p;
        p.fmaLanes = measure::fullRateFmaLanes();
        p.lazyTraining = lazy;
        cost_model::XGBModel model(lowerer, p);
        double trainS = 0, acc = 0, accTie = 0;
        int scored = 0, scoredTie = 0;
        using clock = std::chrono::steady_clock;
        for (const Round& r : rounds) {
            auto t0 = clock::now();
            model.prepare(*r.task);
            trainS += std::chrono::duration<double>(clock::now() - t0).count();
            std::vector<State> states;
            std::vector<double> costs;
            for (const auto& m : r.measured)
                if (m.valid) states.push_back(m.state), costs.push_back(m.meanCost);
            if (states.size() >= 2) {
                const std::vector<float> score = model.predict(*r.task, states);
                long long pairs = 0;
                const double a = accuracy(score, costs, 0, &pairs), at = accuracy(score, costs, tie / 100, &pairs);
                if (a >= 0) acc += a, ++scored;
                if (at >= 0) accTie += at, ++scoredTie;
            }
            t0 = clock::now();
            model.update(*r.task, r.measured);
            trainS += std::chrono::duration<double>(clock::now() - t0).count();
        }
        std::printf("%-8s %7d %10.3f %12.3f %10d %10.1f\n", lazy ? "lazy" : "eager", scored, scored ? acc / scored : -1,
                    scoredTie ? accTie / scoredTie : -1, model.trainings(), trainS);
        std::fflush(stdout);
    }
    return 0;
}

/// Accuracy over pairs of `idx` whose costs differ by more than `tie` (relative).
double accuracy(const std::vector<float>& score, const std::vector<double>& cost, double tie, long long* pairs) {
    double ok = 0;
    long long n = 0;
    for (size_t i = 0; i < cost.size(); ++i)
        for (size_t j = i + 1; j < cost.size(); ++j) {
            const double lo = std::min(cost[i], cost[j]), hi = std::max(cost[i], cost[j]);
            if (hi <= lo * (1 + tie)) continue;
            ++n;
            ok += score[i] == score[j] ? 0.5 : double((cost[i] < cost[j]) == (score[i] > score[j]));
        }
    *pairs += n;
    return n ? ok / double(n) : -1;
}

/// The XGBModelParams of an objective name: "squared" (TVM's), "pairwise" (ours, the default of
/// --cost-model xgb-rank), then `--param` overrides (key=value, comma separated: depth, eta, rounds,
/// pairs, min_child_weight, gamma, prior = the analytic prior's scale, 0 = off, lanes = the full-rate
/// FMA width of the features, default this machine's, measure::fullRateFmaLanes: the logs are taken
/// to come from this machine).
cost_model::XGBModelParams paramsFor(const std::string& obj, const std::string& overrides) {
    cost_model::XGBModelParams p;
    TB_USER_CHECK(obj == "squared" || obj == "pairwise" || obj == "tvm" || obj == "analytic") << "unknown objective " << obj;
    p.objective = obj == "pairwise" ? cost_model::XGBModelParams::Objective::PackSumPairwise
                                    : cost_model::XGBModelParams::Objective::PackSumSquared;
    p.tvmFeaturesOnly = obj == "tvm";
    if (obj == "tvm") p.analyticPrior = false;
    p.numWarmupSamples = 0;
    p.fmaLanes = measure::fullRateFmaLanes();
    for (const auto& kv : split(overrides)) {
        const auto eq = kv.find('=');
        TB_USER_CHECK(eq != std::string::npos) << "--param wants key=value, not " << kv;
        const std::string k = kv.substr(0, eq);
        const double v = std::atof(kv.substr(eq + 1).c_str());
        if (k == "depth") p.maxDepth = int(v);
        else if (k == "eta") p.eta = v;
        else if (k == "rounds") p.pairwiseRounds = int(v), p.numBoostRound = int(v);
        else if (k == "pairs") p.pairsPerSample = int(v);
        else if (k == "min_child_weight") p.minChildWeight = v;
        else if (k == "gamma") p.gamma = v;
        else if (k == "prior") p.analyticPrior = v != 0, p.priorScale = v;  // 0 = off, else on with that scale
        else if (k == "lanes") p.fmaLanes = int(v);
        else TB_USER_ERROR() << "unknown --param key " << k;
    }
    return p;
}

struct Scores {
    double all = 0, allTie = 0, round = 0, roundTie = 0, online = 0, onlineTie = 0;
    int nAll = 0, nRound = 0, nRoundTie = 0, nOnline = 0, nOnlineTie = 0;
};

double mean(double s, int n) { return n ? s / n : -1; }

}  // namespace

int main(int argc, char** argv) try {
    std::string network = "resnet-18", onnx, objectives = "tvm,squared,pairwise,analytic", taskSpec = "2", overrides;
    std::vector<std::string> train, test;
    int perRound = 64, warmRounds = 2;
    double tie = 5;
    bool online = false;
    std::string scheduleLog;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--online") {
            online = true;
            continue;
        }
        TB_USER_CHECK(i + 1 < argc) << "missing value after " << a;
        const std::string v = argv[++i];
        if (a == "--schedule") scheduleLog = v;
        else if (a == "--train") train = split(v);
        else if (a == "--test") test = split(v);
        else if (a == "--network") network = v;
        else if (a == "--onnx") onnx = v;
        else if (a == "--task") taskSpec = v;
        else if (a == "--per-round") perRound = std::max(2, std::atoi(v.c_str()));
        else if (a == "--warm-rounds") warmRounds = std::max(1, std::atoi(v.c_str()));
        else if (a == "--tie") tie = std::atof(v.c_str());
        else if (a == "--objectives") objectives = v;
        else if (a == "--param") overrides = v;
        else TB_USER_ERROR() << "unknown option " << a;
    }
    TB_USER_CHECK(!scheduleLog.empty() || (!train.empty() && !test.empty())) << "usage: bench_rank --train A,B --test C [--network N | --onnx FILE] [--task I|I,J|all], or bench_rank --schedule LOG [--network N | --onnx FILE]";
    graph::TaskExtractionOptions eo;
    eo.target = codegen::Target::host().str();
    tuning::NetworkSource src;  // a zoo network, or an ONNX model (NHWC, as tune imports it)
    src.zooName = network;
    src.onnxPath = onnx;
    if (!onnx.empty()) network = onnx;
    const auto tasks = graph::extractTasks(tuning::loadNetwork(src), eo);
    if (!scheduleLog.empty()) return compareSchedules(scheduleLog, tasks, perRound, tie);
    std::vector<int> taskIds;
    if (taskSpec == "all")
        for (int t = 0; t < int(tasks.size()); ++t) taskIds.push_back(t);
    else
        for (const auto& t : split(taskSpec)) taskIds.push_back(std::atoi(t.c_str()));
    for (int t : taskIds) TB_USER_CHECK(t >= 0 && t < int(tasks.size())) << "--task " << t << " out of range";

    std::printf("bench_rank: %s tasks %s, rounds of %d, ties < %.0f%%%s%s\n", network.c_str(), taskSpec.c_str(), perRound,
                tie, online ? ", online" : "", overrides.empty() ? "" : (", params " + overrides).c_str());
    std::printf("%-10s %5s %6s %6s %10s %10s %12s %12s %10s %12s\n", "objective", "task", "train", "held", "held-out",
                "in-round", "held >tie", "round >tie", "online", "online >tie");
    for (const auto& obj : split(objectives)) {
        const cost_model::XGBModelParams params = paramsFor(obj, overrides);
        double sum[6] = {0, 0, 0, 0, 0, 0};
        int cnt[6] = {0, 0, 0, 0, 0, 0}, nTasks = 0;
        for (int taskIndex : taskIds) {
            const graph::ExtractedTask& et = tasks[size_t(taskIndex)];
            const search::SearchTask task = searchTaskOf(et);
            auto lowerer = [](const search::SearchTask& t, const State& s) { return lower::lowerState(*t.dag, s); };

            std::vector<cost_model::MeasuredState> trainSet;
            std::unordered_set<std::string> seen;
            std::vector<std::vector<Sample>> trainLogs, testLogs;
            try {
                for (const auto& path : train) trainLogs.push_back(readLog(path, et));
                for (const auto& path : test) testLogs.push_back(readLog(path, et));
            } catch (const UserError&) {
                if (taskSpec == "all") continue;  // a task without records in some log
                throw;
            }
            for (const auto& log : trainLogs)
                for (const auto& s : log) {
                    seen.insert(s.state.toStr());
                    trainSet.push_back({s.state, s.cost, s.valid});
                }
            size_t held = 0;
            Scores sc;
            cost_model::XGBModel model(lowerer, params);
            model.update(task, trainSet);
            for (const auto& log : testLogs) {
                std::vector<State> states;
                std::vector<double> costs;
                for (const auto& s : log)
                    if (s.valid && !seen.count(s.state.toStr())) states.push_back(s.state), costs.push_back(s.cost);
                held += states.size();
                if (states.size() < 2) continue;
                std::vector<float> score = model.predict(task, states);
                if (obj == "analytic")  // untrained: the analytic estimate alone
                    for (size_t i = 0; i < states.size(); ++i) {
                        score[i] = float(-cost_model::estimatedCycles(model.features(task, states[i])));
                        if (std::getenv("TB_RANK_DUMP"))
                            std::fprintf(stderr, "DUMP %g %g %s\n", -score[i], costs[i], states[i].toStr().c_str());
                    }
                long long pairs = 0;
                sc.all += accuracy(score, costs, 0, &pairs);
                sc.allTie += accuracy(score, costs, tie / 100, &pairs);
                ++sc.nAll;
                for (size_t b = 0; b < states.size(); b += size_t(perRound)) {
                    const size_t e = std::min(states.size(), b + size_t(perRound));
                    std::vector<float> s2(score.begin() + long(b), score.begin() + long(e));
                    std::vector<double> c2(costs.begin() + long(b), costs.begin() + long(e));
                    const double a = accuracy(s2, c2, 0, &pairs), at = accuracy(s2, c2, tie / 100, &pairs);
                    if (a >= 0) sc.round += a, ++sc.nRound;
                    if (at >= 0) sc.roundTie += at, ++sc.nRoundTie;
                }
            }
            // Online: as the search uses the model. For each test log, round r (perRound records of
            // this task in log order) is scored by a model trained on the log's rounds before r.
            if (online)
                for (const auto& log : testLogs)
                    for (size_t b = size_t(warmRounds) * size_t(perRound); b < log.size(); b += size_t(perRound)) {
                        std::vector<cost_model::MeasuredState> before;
                        for (size_t i = 0; i < b; ++i) before.push_back({log[i].state, log[i].cost, log[i].valid});
                        cost_model::XGBModel m(lowerer, params);
                        m.update(task, before);
                        std::vector<State> states;
                        std::vector<double> costs;
                        for (size_t i = b; i < std::min(log.size(), b + size_t(perRound)); ++i)
                            if (log[i].valid) states.push_back(log[i].state), costs.push_back(log[i].cost);
                        if (states.size() < 2) continue;
                        std::vector<float> score = m.predict(task, states);
                        if (obj == "analytic")
                            for (size_t i = 0; i < states.size(); ++i)
                                score[i] = float(-cost_model::estimatedCycles(m.features(task, states[i])));
                        long long pairs = 0;
                        const double a = accuracy(score, costs, 0, &pairs), at = accuracy(score, costs, tie / 100, &pairs);
                        if (a >= 0) sc.online += a, ++sc.nOnline;
                        if (at >= 0) sc.onlineTie += at, ++sc.nOnlineTie;
                    }
            std::printf("%-10s %5d %6zu %6zu %10.3f %10.3f %12.3f %12.3f %10.3f %12.3f\n", obj.c_str(), taskIndex,
                        trainSet.size(), held, mean(sc.all, sc.nAll), mean(sc.round, sc.nRound), mean(sc.allTie, sc.nAll),
                        mean(sc.roundTie, sc.nRoundTie), mean(sc.online, sc.nOnline), mean(sc.onlineTie, sc.nOnlineTie));
            std::fflush(stdout);
            // Tasks weigh equally in the mean over tasks.
            const double per[6] = {mean(sc.all, sc.nAll), mean(sc.round, sc.nRound), mean(sc.allTie, sc.nAll),
                                   mean(sc.roundTie, sc.nRoundTie), mean(sc.online, sc.nOnline),
                                   mean(sc.onlineTie, sc.nOnlineTie)};
            for (int k = 0; k < 6; ++k)
                if (per[k] >= 0) sum[k] += per[k], ++cnt[k];
            ++nTasks;
        }
        if (taskIds.size() > 1)
            std::printf("%-10s %5s %6d %6s %10.3f %10.3f %12.3f %12.3f %10.3f %12.3f\n", obj.c_str(), "mean", nTasks, "",
                        mean(sum[0], cnt[0]), mean(sum[1], cnt[1]), mean(sum[2], cnt[2]), mean(sum[3], cnt[3]),
                        mean(sum[4], cnt[4]), mean(sum[5], cnt[5]));
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_rank: %s\n", e.what());
    return 1;
}
