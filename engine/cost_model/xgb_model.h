// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file xgb_model.h
/// \brief The learned cost model: gradient-boosted trees over per-store features (Ansor §5.2,
/// TVM python/tvm/auto_scheduler/cost_model/xgb_model.py).
///
/// Each candidate state is lowered, its stores featurized (feature.h; for GPU tasks, search_utils.h
/// isGpuTask, with the thread extents of the state: is_gpu and the thread lengths), and XGBoost predicts one
/// value per store; the state's score is their sum ("pack-sum"). Training minimizes TVM's weighted
/// squared error y·(Σ f(s) − y)² with y = (best cost of the task) / (cost), through a custom
/// objective (XGBoosterBoostOneIter). Parameters are TVM's (max_depth 10, gamma 0.001,
/// min_child_weight 0, eta 0.2, seed 43); early stopping after 50 rounds without improvement of
/// the training pack-sum RMSE. Until `numWarmupSamples` measurements exist, predictions are random
/// (TVM does the same). Features are cached per state; extraction runs on the engine thread pool
/// (support/thread_pool.h), XGBoost's own training on `numThreads` OpenMP threads.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/lower/state_lowerer.h"
#include "engine/search/cost_model.h"

namespace tb::cost_model {

struct XGBModelParams {
    int maxDepth = 10;
    double gamma = 0.001;
    double minChildWeight = 0;
    double eta = 0.2;
    int seed = 43;
    int numBoostRound = 400;        ///< TVM: 10000; early stopping ends training long before here
    int earlyStoppingRounds = 50;
    int numWarmupSamples = 100;     ///< random predictions until this many measurements
    int numThreads = 0;             ///< XGBoost's threads; 0 = hardware threads
    bool adaptiveTraining = false;  ///< retrain only when the data grew by >= 20%
};

class XGBModel : public CostModel {
public:
    XGBModel(lower::StateLowerer lowerer, XGBModelParams params = {});
    ~XGBModel() override;

    void update(const search::SearchTask& task, const std::vector<MeasuredState>& measured) override;
    void updateMany(const std::vector<const search::SearchTask*>& tasks,
                    const std::vector<std::vector<MeasuredState>>& measured) override;
    std::vector<float> predict(const search::SearchTask& task, const std::vector<State>& states) override;

    /// Feature rows of a state (cached); empty when lowering fails.
    std::vector<std::vector<float>> features(const search::SearchTask& task, const State& state);
    /// Number of measurements trained on.
    size_t numSamples() const { return m_samples.size(); }
    /// Whether a trained booster exists.
    bool trained() const { return m_booster != nullptr; }
    /// Fraction of pairs (i, j) of `states` whose predicted order matches the measured order of
    /// `costs` (seconds); pairs with equal costs are skipped, equal predictions count one half (so
    /// a constant model scores 0.5). Ansor reports 0.851.
    double pairwiseAccuracy(const search::SearchTask& task, const std::vector<State>& states, const std::vector<double>& costs);

private:
    struct Sample {
        std::string workloadKey;
        std::vector<std::vector<float>> rows;
        double cost;  // seconds, 1e10 = failed
    };
    void train();
    /// Extracts the features of `measured` (in parallel) and appends them to the training data.
    void appendSamples(const search::SearchTask& task, const std::vector<MeasuredState>& measured);
    /// train() unless adaptive training says the data has not grown enough.
    void maybeTrain();

    lower::StateLowerer m_lowerer;
    XGBModelParams m_params;
    std::vector<Sample> m_samples;
    size_t m_trainedOn = 0;
    void* m_booster = nullptr;  // BoosterHandle
    std::mutex m_cacheMutex;
    std::unordered_map<std::string, std::vector<std::vector<float>>> m_cache;
    std::mt19937_64 m_rng{43};
};

}  // namespace tb::cost_model
