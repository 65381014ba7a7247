// SPDX-License-Identifier: Apache-2.0
#include "engine/cost_model/xgb_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <thread>

#include "engine/cost_model/feature.h"
#include "engine/search/search_utils.h"
#include "engine/support/error.h"
#include "engine/support/thread_pool.h"

namespace tb::cost_model {

namespace {
void check(int rc, const char* what) {
    TB_CHECK(rc == 0) << "XGBoost " << what << " failed: " << XGBGetLastError();
}
int hwThreads(int n) { return n > 0 ? n : int(std::max(1u, std::thread::hardware_concurrency())); }

struct DMatrix {
    DMatrixHandle h = nullptr;
    ~DMatrix() {
        if (h) XGDMatrixFree(h);
    }
};
}  // namespace

XGBModel::XGBModel(lower::StateLowerer lowerer, XGBModelParams params) : m_lowerer(std::move(lowerer)), m_params(params) {
    TB_CHECK(m_lowerer) << "XGBModel needs a state lowerer";
}

void XGBModel::appendRow(std::vector<float>& data, const std::vector<float>& row) const {
    data.insert(data.end(), row.begin(), row.end());
    // TVM's model: group 6 zeroed, so no tree splits on it.
    if (m_params.tvmFeaturesOnly) std::fill(data.end() - kBlockFeatureLength, data.end(), 0.0f);
}

double XGBModel::analyticScore(const search::SearchTask& task, const std::vector<std::vector<float>>& rows) const {
    if (search::isGpuTask(task)) return 0.0;
    const double peakFlopPerCycle = 2 * 2 * double(m_params.fmaLanes) * std::max(1, task.hardware.numCores);
    const double flops = task.dag ? std::max(1.0, task.dag->flopCount()) : 1.0;
    return std::min(1.0, flops / std::max(1.0, estimatedCycles(rows) * peakFlopPerCycle));
}

double XGBModel::priorWeight() const {
    return m_params.objective == XGBModelParams::Objective::PackSumPairwise ? m_params.priorScale : 1.0;
}

XGBModel::~XGBModel() {
    if (m_booster) XGBoosterFree(m_booster);
}

size_t XGBModel::rowsBytes(const Rows& rows) {
    size_t b = sizeof(Rows) + 64;  // the vector and the map node
    for (const auto& r : rows) b += sizeof(r) + r.capacity() * sizeof(float);
    return b;
}

size_t XGBModel::cachedFeatureBytes() const {
    std::lock_guard<std::mutex> lock(m_cacheMutex);
    return m_cache.youngBytes + m_cache.oldBytes;
}

std::vector<std::vector<float>> XGBModel::features(const search::SearchTask& task, const State& state) {
    const uint64_t key = std::hash<std::string>{}(state.toStr()) * 0x9E3779B97F4A7C15ull ^ std::hash<std::string>{}(task.workloadKey);
    {
        std::lock_guard<std::mutex> lock(m_cacheMutex);
        auto& c = m_cache;
        if (auto it = c.young.find(key); it != c.young.end()) return it->second;
        if (auto it = c.old.find(key); it != c.old.end()) {
            Rows rows = std::move(it->second);
            const size_t b = rowsBytes(rows);
            c.old.erase(it);
            c.oldBytes -= std::min(c.oldBytes, b);
            c.youngBytes += b;
            return c.young.emplace(key, std::move(rows)).first->second;
        }
    }
    Rows rows;
    try {
        if (search::isGpuTask(task)) {
            const GpuStoreContext gpu = gpuStoreContext(state);
            rows = extractPerStoreFeatures(m_lowerer(task, state), task.hardware.cacheLineBytes, &gpu);
        } else {
            rows = extractPerStoreFeatures(m_lowerer(task, state), task.hardware.cacheLineBytes, nullptr,
                                           task.hardware.numCores, m_params.fmaLanes);
        }
    } catch (const std::exception&) {
        rows.clear();  // TVM: a state whose features cannot be extracted scores -inf
    }
    const size_t b = rowsBytes(rows);
    std::lock_guard<std::mutex> lock(m_cacheMutex);
    auto& c = m_cache;
    if (c.young.emplace(key, rows).second) c.youngBytes += b;
    if (c.youngBytes > (m_params.featureCacheMiB << 20) / 2) {
        c.old = std::move(c.young);
        c.oldBytes = c.youngBytes;
        c.young.clear();
        c.youngBytes = 0;
    }
    return rows;
}

void XGBModel::appendSamples(const search::SearchTask& task, const std::vector<MeasuredState>& measured) {
    std::vector<std::vector<std::vector<float>>> rows(measured.size());
    // One job per state (lowering dominates), balanced by the pool; each writes only its own slot.
    ThreadPool::global().parallelFor(int64_t(measured.size()),
                                     [&](int64_t i) { rows[size_t(i)] = features(task, measured[size_t(i)].state); });
    for (size_t i = 0; i < measured.size(); ++i) {
        if (rows[i].empty()) continue;
        const double prior = m_params.analyticPrior ? analyticScore(task, rows[i]) : 0.0;
        m_samples.push_back({task.workloadKey, std::move(rows[i]), measured[i].valid ? measured[i].meanCost : 1e10, prior});
        m_tasksWithSamples.insert(task.workloadKey);
        m_untrainedTasks.insert(task.workloadKey);
    }
}

void XGBModel::maybeTrain() {
    if (m_samples.empty()) return;
    if (m_params.adaptiveTraining && m_trainedOn > 0 && double(m_samples.size()) < 1.2 * double(m_trainedOn)) return;
    train();
}

void XGBModel::update(const search::SearchTask& task, const std::vector<MeasuredState>& measured) {
    appendSamples(task, measured);
    if (!m_params.lazyTraining) maybeTrain();
}

void XGBModel::trainIfStale(const search::SearchTask& task) {
    if (!m_params.lazyTraining || m_untrainedTasks.empty()) return;
    if (m_untrainedTasks.count(task.workloadKey) || !m_tasksWithSamples.count(task.workloadKey) || !m_booster) maybeTrain();
}

void XGBModel::prepare(const search::SearchTask& task) { trainIfStale(task); }

void XGBModel::updateMany(const std::vector<const search::SearchTask*>& tasks,
                          const std::vector<std::vector<MeasuredState>>& measured) {
    TB_CHECK(tasks.size() == measured.size()) << "updateMany: " << tasks.size() << " tasks, " << measured.size() << " batches";
    for (size_t i = 0; i < tasks.size(); ++i) appendSamples(*tasks[i], measured[i]);
    maybeTrain();
}

void XGBModel::train() {
    // Normalized throughput per task: y = min cost / cost.
    std::map<std::string, double> best;
    for (const auto& s : m_samples)
        if (s.cost < 1e9) {
            auto [it, ins] = best.emplace(s.workloadKey, s.cost);
            if (!ins) it->second = std::min(it->second, s.cost);
        }
    std::vector<float> data;
    std::vector<int> pack;    // row -> sample index
    std::vector<double> y;    // per sample
    for (size_t i = 0; i < m_samples.size(); ++i) {
        const auto& s = m_samples[i];
        auto it = best.find(s.workloadKey);
        y.push_back(s.cost < 1e9 && it != best.end() ? it->second / s.cost : 0.0);
        for (const auto& r : s.rows) {
            appendRow(data, r);
            pack.push_back(int(i));
        }
    }
    const bst_ulong nrow = bst_ulong(pack.size());
    m_untrainedTasks.clear();  // seen, whether or not they give anything to train on
    if (nrow == 0) return;
    DMatrix dm;
    check(XGDMatrixCreateFromMat(data.data(), nrow, kFeatureLength, std::numeric_limits<float>::quiet_NaN(), &dm.h),
          "DMatrix creation");
    BoosterHandle bst = nullptr;
    check(XGBoosterCreate(&dm.h, 1, &bst), "booster creation");
    auto set = [&](const char* k, const std::string& v) { check(XGBoosterSetParam(bst, k, v.c_str()), "set param"); };
    set("max_depth", std::to_string(m_params.maxDepth));
    set("gamma", std::to_string(m_params.gamma));
    set("min_child_weight", std::to_string(m_params.minChildWeight));
    set("eta", std::to_string(m_params.eta));
    set("seed", std::to_string(m_params.seed));
    set("nthread", std::to_string(hwThreads(m_params.numThreads)));
    // Histogram splits: TVM leaves XGBoost's default ("exact" at our sizes), whose retraining on a
    // whole network's log (~10^5 per-store rows) takes minutes on 2 cores; "hist" takes seconds.
    set("tree_method", "hist");
    set("verbosity", "0");
    set("base_score", "0");
    set("disable_default_eval_metric", "1");

    std::vector<float> grad(nrow), hess(nrow);
    double bestLoss = std::numeric_limits<double>::infinity();
    int bestIter = 0;
    std::vector<double> packSum(m_samples.size());
    // Pairwise: (faster, slower) sample pairs of one task, drawn once so that the loss is comparable
    // from one iteration to the next (early stopping).
    std::vector<std::pair<int, int>> pairs;
    if (m_params.objective == XGBModelParams::Objective::PackSumPairwise) {
        std::map<std::string, std::vector<int>> byTask;
        for (size_t i = 0; i < m_samples.size(); ++i) byTask[m_samples[i].workloadKey].push_back(int(i));
        std::mt19937_64 rng(uint64_t(m_params.seed));
        for (const auto& [key, members] : byTask) {
            if (members.size() < 2) continue;
            std::uniform_int_distribution<size_t> pick(0, members.size() - 1);
            for (int i : members)
                for (int k = 0; k < m_params.pairsPerSample; ++k) {
                    const int j = members[pick(rng)];
                    if (y[size_t(i)] == y[size_t(j)]) continue;
                    const bool iFaster = y[size_t(i)] > y[size_t(j)];
                    pairs.emplace_back(iFaster ? i : j, iFaster ? j : i);
                }
        }
        if (pairs.empty()) {  // nothing to order yet: keep the previous booster
            XGBoosterFree(bst);
            return;
        }
    }
    std::vector<double> sampleGrad(m_samples.size()), sampleHess(m_samples.size());
    const double priorWeight = this->priorWeight();
    const int rounds = m_params.objective == XGBModelParams::Objective::PackSumPairwise
                           ? std::min(m_params.numBoostRound, m_params.pairwiseRounds)
                           : m_params.numBoostRound;
    for (int it = 0; it < rounds; ++it) {
        bst_ulong len = 0;
        const float* pred = nullptr;
        check(XGBoosterPredict(bst, dm.h, 1 /*output margin*/, 0, 1 /*training*/, &len, &pred), "predict");
        std::fill(packSum.begin(), packSum.end(), 0.0);
        for (bst_ulong r = 0; r < len; ++r) packSum[size_t(pack[r])] += pred[r];
        for (size_t i = 0; i < packSum.size(); ++i) packSum[i] += priorWeight * m_samples[i].prior;
        double loss = 0;
        if (m_params.objective == XGBModelParams::Objective::PackSumSquared) {
            for (size_t i = 0; i < packSum.size(); ++i) loss += (packSum[i] - y[i]) * (packSum[i] - y[i]);
            loss = std::sqrt(loss / double(packSum.size()));
            for (size_t i = 0; i < packSum.size(); ++i) {
                sampleGrad[i] = (packSum[i] - y[i]) * y[i];  // TVM: weight = normalized throughput
                sampleHess[i] = y[i];
            }
        } else {
            std::fill(sampleGrad.begin(), sampleGrad.end(), 0.0);
            std::fill(sampleHess.begin(), sampleHess.end(), 0.0);
            for (auto [i, j] : pairs) {
                const double d = packSum[size_t(i)] - packSum[size_t(j)];
                const double p = 1.0 / (1.0 + std::exp(-d));  // P(i faster than j)
                loss += d > 0 ? std::log1p(std::exp(-d)) : -d + std::log1p(std::exp(d));
                sampleGrad[size_t(i)] -= 1.0 - p;
                sampleGrad[size_t(j)] += 1.0 - p;
                const double h = std::max(p * (1.0 - p), 1e-6);
                sampleHess[size_t(i)] += h;
                sampleHess[size_t(j)] += h;
            }
            loss /= double(pairs.size());
        }
        if (loss < bestLoss - 1e-9) {
            bestLoss = loss;
            bestIter = it;
        } else if (it - bestIter >= m_params.earlyStoppingRounds) {
            break;
        }
        for (bst_ulong r = 0; r < len; ++r) {
            grad[r] = float(sampleGrad[size_t(pack[r])]);
            hess[r] = float(sampleHess[size_t(pack[r])]);
        }
        check(XGBoosterBoostOneIter(bst, dm.h, grad.data(), hess.data(), nrow), "boost");
    }
    if (m_booster) XGBoosterFree(m_booster);
    m_booster = bst;
    m_trainedOn = m_samples.size();
    ++m_trainings;
}

bool XGBModel::warm() const { return m_booster && int(m_samples.size()) >= m_params.numWarmupSamples; }

bool XGBModel::repeatable(const search::SearchTask& task) const {
    return warm() || (m_params.warmup == XGBModelParams::Warmup::Analytic && !search::isGpuTask(task));
}

std::vector<float> XGBModel::predict(const search::SearchTask& task, const std::vector<State>& states) {
    trainIfStale(task);
    std::vector<float> scores(states.size(), 0.0f);
    const bool warm = this->warm();
    // Group 6 (and so the analytic estimate) exists for CPU tasks only.
    if (!warm && (m_params.warmup == XGBModelParams::Warmup::Random || search::isGpuTask(task))) {
        // Warm-up: random scores, as TVM does, without paying for feature extraction.
        std::uniform_real_distribution<float> u(0.0f, 1.0f);
        for (auto& s : scores) s = u(m_rng);
        return scores;
    }
    std::vector<std::vector<std::vector<float>>> rows(states.size());
    ThreadPool::global().parallelFor(int64_t(states.size()), [&](int64_t i) { rows[size_t(i)] = features(task, states[size_t(i)]); });
    if (!warm) {
        // Warm-up, analytic: the estimated fraction of the FMA peak (feature.h estimatedCycles).
        for (size_t i = 0; i < states.size(); ++i)
            scores[i] = rows[i].empty() ? -std::numeric_limits<float>::infinity() : float(analyticScore(task, rows[i]));
        return scores;
    }
    std::vector<float> data;
    std::vector<int> pack;
    for (size_t i = 0; i < states.size(); ++i) {
        if (rows[i].empty()) {
            scores[i] = -std::numeric_limits<float>::infinity();
            continue;
        }
        for (const auto& r : rows[i]) {
            appendRow(data, r);
            pack.push_back(int(i));
        }
    }
    if (pack.empty()) return scores;
    DMatrix dm;
    check(XGDMatrixCreateFromMat(data.data(), bst_ulong(pack.size()), kFeatureLength,
                                 std::numeric_limits<float>::quiet_NaN(), &dm.h),
          "DMatrix creation");
    bst_ulong len = 0;
    const float* pred = nullptr;
    check(XGBoosterPredict(m_booster, dm.h, 1, 0, 0, &len, &pred), "predict");
    for (bst_ulong r = 0; r < len; ++r) scores[size_t(pack[r])] += pred[r];
    if (m_params.analyticPrior)
        for (size_t i = 0; i < scores.size(); ++i)
            if (!rows[i].empty()) scores[i] += float(priorWeight() * analyticScore(task, rows[i]));
    if (m_params.objective == XGBModelParams::Objective::PackSumPairwise)
        for (size_t i = 0; i < scores.size(); ++i)
            if (!rows[i].empty()) scores[i] = 1.0f / (1.0f + std::exp(-scores[i]));
    return scores;
}

double XGBModel::pairwiseAccuracy(const search::SearchTask& task, const std::vector<State>& states,
                                  const std::vector<double>& costs) {
    TB_CHECK(states.size() == costs.size()) << "states and costs differ in size";
    int saved = m_params.numWarmupSamples;
    m_params.numWarmupSamples = 0;
    std::vector<float> s = predict(task, states);
    m_params.numWarmupSamples = saved;
    double ok = 0;
    long long total = 0;
    for (size_t i = 0; i < states.size(); ++i)
        for (size_t j = i + 1; j < states.size(); ++j) {
            if (costs[i] == costs[j]) continue;
            ++total;
            if (s[i] == s[j]) {
                ok += 0.5;  // a tie orders no pair: what a constant predictor gets
                continue;
            }
            ok += (costs[i] < costs[j]) == (s[i] > s[j]);
        }
    return total ? ok / double(total) : 0.0;
}

}  // namespace tb::cost_model
