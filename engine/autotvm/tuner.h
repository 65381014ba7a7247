// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file tuner.h
/// \brief AutoTVM tuners (TVM python/tvm/autotvm/tuner/, v0.14): the loop that asks a tuner for
/// configs, measures them and feeds the results back (`Tuner.tune`), and the tuners themselves.
///
/// API as TVM's: `nextBatch(n)` proposes up to n configs never proposed before, `update(configs,
/// results)` learns from their measurements, `hasNext()` says whether unvisited configs remain.
/// `tune` runs `nextBatch(min(nParallel, nTrial - i))` batches until nTrial configs were measured,
/// the space is exhausted, or no better config was found for `earlyStopping` trials; after each
/// batch it calls the callbacks (progress line, log writer). A config's speed is `task.flop /
/// mean(costs)` FLOPS (0 for a failed one); `bestFlops`/`bestConfig` track the best.
///
/// Tuners:
///   - RandomTuner: uniformly random unvisited valid indices (index_based_tuner.py).
///   - GridSearchTuner: indices in order (index_based_tuner.py).
///   - GATuner(pop_size=100 in TVM's signature; 50 as the tutorials use, elite_num=3,
///     mutation_prob=0.1): genes = per-knob indices; fitness-proportional selection of two
///     parents, one-point crossover, per-knob mutation; elites carried over (ga_tuner.py).
///   - XGBTuner(plan_size=64, feature_type itervar|knob|curve, loss_type reg|rank|rank-binary,
///     optimizer sa): a ModelBasedTuner (model_based_tuner.py) whose cost model is XGBoost
///     (xgboost_cost_model.py, through the XGBoost C API) trained on the measured configs every
///     plan_size results (normalized speeds as labels, boosting with early stopping on the
///     training set's average recall@plan_size), and whose plan comes from
///     SimulatedAnnealingOptimizer (sa_model_optimizer.py: 128 parallel random walks, 500
///     iterations, temperature 1 -> 0, stop after 50 iterations without a new top point,
///     persistent points). Features: feature.h. Transfer learning: XGBTuner::loadHistory.
///
/// Randomness comes from one std::mt19937_64 per tuner (seeded by the caller), not numpy's
/// stream, so the proposals are TVM's in distribution, not index for index.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/autotvm/feature.h"
#include "engine/autotvm/task.h"
#include "engine/record/autotvm_record.h"

namespace tb::autotvm {

class Tuner;

/// Called after every measured batch (TVM tuner callbacks).
using TuneCallback = std::function<void(const Tuner& tuner, const std::vector<ConfigEntity>& configs,
                                        const std::vector<measure::MeasureResult>& results)>;

struct TuneOptions {
    int nTrial = 1000;
    /// Stop when the best config is this many trials old; <= 0: never (TVM early_stopping=None).
    int earlyStopping = 0;
    /// Configs measured per batch (TVM: the builder's n_parallel, the CPU count by default).
    int nParallel = 1;
};

/// The base tuner (TVM tuner.py `Tuner`).
class Tuner {
public:
    explicit Tuner(const Task& task, std::uint64_t seed = 0);
    virtual ~Tuner() = default;

    /// Up to batchSize configs, never proposed before by this tuner, all valid.
    virtual std::vector<ConfigEntity> nextBatch(int batchSize) = 0;
    /// Learn from measured configs (default: nothing).
    virtual void update(const std::vector<ConfigEntity>& configs, const std::vector<measure::MeasureResult>& results);
    virtual bool hasNext() const = 0;
    /// TVM `Tuner.load_history` (transfer learning from earlier records): only model-based tuners
    /// implement it; the others throw tb::UserError (TVM: NotImplementedError).
    virtual bool loadHistory(const std::vector<record::AutoTvmRecord>& records, int minSeedRecords = 500);

    /// TVM `Tuner.tune(n_trial, measure_option, early_stopping, callbacks)`.
    void tune(const TuneOptions& options, const MeasureOption& measureOption,
              const std::vector<TuneCallback>& callbacks = {});

    const Task& task() const { return m_task; }
    double bestFlops() const { return m_bestFlops; }
    const std::optional<ConfigEntity>& bestConfig() const { return m_bestConfig; }
    int bestIter() const { return m_bestIter; }
    /// Configs measured by tune() so far.
    int trials() const { return m_trials; }

    /// task.flop / mean(costs), or 0 for a failed result.
    double flops(const measure::MeasureResult& r) const;

protected:
    const Task& m_task;
    const ConfigSpace& m_space;
    std::mt19937_64 m_rng;
    /// A uniformly random valid index in [0, rangeLength) not in `exclude` (TVM get_rand_index).
    std::int64_t randIndex(const std::set<std::int64_t>& exclude);

private:
    double m_bestFlops = 0;
    std::optional<ConfigEntity> m_bestConfig;
    int m_bestIter = 0, m_trials = 0;
};

class RandomTuner final : public Tuner {
public:
    explicit RandomTuner(const Task& task, std::uint64_t seed = 0) : Tuner(task, seed) {}
    std::vector<ConfigEntity> nextBatch(int batchSize) override;
    bool hasNext() const override { return std::int64_t(m_visited.size()) < m_space.size(); }

private:
    std::set<std::int64_t> m_visited;
};

class GridSearchTuner final : public Tuner {
public:
    explicit GridSearchTuner(const Task& task);
    std::vector<ConfigEntity> nextBatch(int batchSize) override;
    bool hasNext() const override { return m_count < m_space.size(); }

private:
    std::int64_t m_index = 0, m_count = 0;
};

class GATuner final : public Tuner {
public:
    GATuner(const Task& task, int popSize = 50, int eliteNum = 3, double mutationProb = 0.1, std::uint64_t seed = 0);
    std::vector<ConfigEntity> nextBatch(int batchSize) override;
    void update(const std::vector<ConfigEntity>& configs, const std::vector<measure::MeasureResult>& results) override;
    bool hasNext() const override;

private:
    using Gene = std::vector<std::int64_t>;
    int m_popSize, m_eliteNum;
    double m_mutationProb;
    std::set<std::int64_t> m_visited;
    std::vector<Gene> m_genes, m_elites;
    std::vector<double> m_scores, m_eliteScores;
    size_t m_trialPt = 0;
};

/// XGBoost cost model (xgboost_cost_model.py `XGBoostCostModel`) over the features of feature.h.
///
/// Training (fit): the features of the measured configs, labels = speeds / max speed, rows
/// shuffled; up to 8000 boosting rounds, stopped 20 evaluations after the best average
/// recall@plan_size on the training set (TVM's CustomCallback, evaluated every other round).
/// loss "reg" = reg:squarederror, "rank" = rank:pairwise, "rank-binary" = rank:pairwise whose
/// recall metric reads labels binarized at 0.5. Features are cached per config index (TVM
/// FeatureCache, cleared at 100000 entries) and extracted on the engine thread pool; a config whose
/// features cannot be extracted gets a row of zeros (TVM: None -> 0). Rows are padded with zeros
/// (or cut) to the width the model was trained on.
///
/// Transfer learning (TVM load_history): `fitLog` trains a base model on earlier records of the
/// same template, each config's features computed on its own task (400 rounds, stop after 100,
/// recall@(2 x plan_size)); `loadBaseModel` makes it this model's prior: while the model has seen
/// n measured configs, the base model's margin x 2^(-n/64) is every row's base margin in fit and
/// predict, and the base model is dropped once that factor is below 0.05 (n > 276). TVM sets the
/// base margins of fit in the unshuffled row order while the rows are shuffled; ours follow their
/// rows.
class XGBCostModel {
public:
    using FeatureCache = std::unordered_map<std::int64_t, std::vector<float>>;

    /// lossType: "reg", "rank" or "rank-binary" (tb::UserError otherwise). The task must outlive
    /// the model.
    XGBCostModel(const Task& task, FeatureType featureType, std::string lossType, std::uint64_t seed);
    ~XGBCostModel();
    XGBCostModel(const XGBCostModel&) = delete;
    XGBCostModel& operator=(const XGBCostModel&) = delete;
    /// Fit on config indices xs and speeds ys (FLOPS, 0 = failed).
    void fit(const std::vector<std::int64_t>& xs, const std::vector<double>& ys, int planSize);
    /// TVM `fit_log`: trains on the records of this task's template (any args), their features
    /// computed on their own tasks, speed = that task's FLOPs / mean cost (0 for an error). Returns
    /// false, leaving the model as it was, when fewer than minSeedRecords records are usable.
    bool fitLog(const std::vector<record::AutoTvmRecord>& records, int planSize, int minSeedRecords = 500);
    /// Predicted scores (higher = faster) of config indices; all 0 before the first fit.
    /// outputMargin: the untransformed margin (the same for our objectives), as a base model gives it.
    std::vector<float> predict(const std::vector<std::int64_t>& xs, bool outputMargin = false) const;
    bool trained() const { return m_booster != nullptr; }
    /// TVM `spawn_base_model`: an untrained model with the same parameters sharing the cache.
    std::unique_ptr<XGBCostModel> spawnBaseModel() const;
    /// TVM `load_basemodel`.
    void loadBaseModel(std::unique_ptr<XGBCostModel> base);
    bool hasBaseModel() const { return m_base != nullptr; }
    FeatureType featureType() const { return m_featureType; }
    /// The features of a config (feature.h configFeatures), cached; empty when extraction failed.
    std::vector<float> features(std::int64_t index) const;

private:
    std::vector<float> matrix(const std::vector<std::int64_t>& xs, size_t width) const;
    double baseModelDiscount() const;
    void train(std::vector<float> data, std::vector<float> labels, size_t width, const std::vector<float>* baseMargin,
               int planSize, int numRounds, int stoppingRounds);

    const Task& m_task;
    FeatureType m_featureType;
    std::string m_lossType;
    std::uint64_t m_seed;
    mutable std::mt19937_64 m_rng;
    void* m_booster = nullptr;
    size_t m_width = 0;  ///< features per row of the trained booster
    std::shared_ptr<FeatureCache> m_cache;
    std::unique_ptr<XGBCostModel> m_base;
    size_t m_sampleSize = 0;
};

/// TVM `SimulatedAnnealingOptimizer.find_maximums`.
class SimulatedAnnealingOptimizer {
public:
    SimulatedAnnealingOptimizer(const ConfigSpace& space, std::uint64_t seed, int nIter = 500, int parallelSize = 128,
                                int earlyStop = 50);
    /// Up to `num` indices not in `exclusive` with the highest predicted scores, best first.
    std::vector<std::int64_t> findMaximums(const XGBCostModel& model, int num, const std::set<std::int64_t>& exclusive);

private:
    const ConfigSpace& m_space;
    std::mt19937_64 m_rng;
    int m_nIter, m_parallelSize, m_earlyStop;
    std::vector<std::int64_t> m_points;  ///< persistent walkers
};

/// TVM `XGBTuner` (xgboost_tuner.py) = ModelBasedTuner (model_based_tuner.py) + XGBCostModel +
/// SimulatedAnnealingOptimizer: proposes the optimizer's plan of planSize configs, the last 5% of
/// each plan (and everything before the first fit) random; refits every planSize measurements.
class XGBTuner final : public Tuner {
public:
    /// featureType: "itervar" (TVM's default), "knob" or "curve"; lossType: "reg", "rank" or
    /// "rank-binary". tb::UserError for other values.
    XGBTuner(const Task& task, int planSize = 64, const std::string& featureType = "itervar",
             const std::string& lossType = "reg", std::uint64_t seed = 0);
    std::vector<ConfigEntity> nextBatch(int batchSize) override;
    void update(const std::vector<ConfigEntity>& configs, const std::vector<measure::MeasureResult>& results) override;
    bool hasNext() const override { return std::int64_t(m_visited.size()) < m_space.size(); }
    /// TVM `ModelBasedTuner.load_history`: fits a base model on the records (XGBCostModel::fitLog);
    /// when that succeeds and no plan exists yet, the first plan is the base model's maximums, and
    /// the base model becomes the cost model's prior. Returns whether the history was used.
    bool loadHistory(const std::vector<record::AutoTvmRecord>& records, int minSeedRecords = 500) override;
    int trainCount() const { return m_trainCt; }
    const XGBCostModel& costModel() const { return m_model; }

private:
    int m_planSize;
    XGBCostModel m_model;
    SimulatedAnnealingOptimizer m_optimizer;
    std::vector<std::int64_t> m_trials;
    size_t m_trialPt = 0;
    std::set<std::int64_t> m_visited;
    std::vector<std::int64_t> m_xs;
    std::vector<double> m_ys;
    double m_flopsMax = 0;
    int m_trainCt = 0;
};

/// A tuner by the names of TVM's tune_relay_x86 tutorial: "xgb" (= "xgb_itervar"), "xgb_knob",
/// "xgb_curve" (loss reg); "xgb_rank", "xgb_rank_knob", "xgb_rank_itervar", "xgb_rank_curve";
/// "xgb_rank_binary", "xgb_rank_binary_knob", "xgb_rank_binary_itervar", "xgb_rank_binary_curve";
/// "ga" (pop_size 50), "random", "gridsearch". Throws tb::UserError for another name.
std::unique_ptr<Tuner> makeTuner(const std::string& name, const Task& task, std::uint64_t seed = 0);
/// The names makeTuner accepts, in the tutorial's order.
const std::vector<std::string>& tunerNames();

}  // namespace tb::autotvm
