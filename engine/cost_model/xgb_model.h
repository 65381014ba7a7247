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
/// the training pack-sum RMSE. Until `numWarmupSamples` measurements exist, TVM predicts at
/// random; we predict with the analytic estimate of feature.h (estimatedCycles: the register
/// block's FMA/load/store cycles, the parallel split) unless `warmup` is Random. On resnet-18's
/// conv (pure Ansor, 2 threads) the first round's best went from 79-86% to 95-97% of peak. After
/// warm-up the trees learn the residual of that estimate (`analyticPrior`). Features are cached per
/// state; extraction runs on the engine thread pool (support/thread_pool.h), XGBoost's own training
/// on `numThreads` OpenMP threads.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/cost_model/feature.h"
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
    /// When to retrain. TVM retrains the shared model from scratch after every measured batch, on
    /// every task's records, and its time grows with the log: 17% of a 30-minute resnet50_v1 run
    /// (314 of 1795 s). Lazily, update() only stores the records, and the model retrains when it is
    /// next asked to score a task (prepare(), predict()) whose own records it has not seen, or a
    /// task with no records yet (its first round learns from every other task, as TVM's does), or
    /// when no booster exists. Training starts from scratch on all records either way, so a model
    /// that retrains is TVM's model; one that does not lacks only other tasks' latest batches,
    /// never the scored task's. The search alternates between tasks, so most rounds of a network
    /// skip it. `bench_rank --schedule LOG` replays a network log's rounds both ways: on three
    /// resnet18_v1 logs and one mobilenet_v1 log (66-166 rounds), 25-27 of 66-76 and 80 of 166
    /// trainings, 12.6-16.1 s against 55-71 s and 53 s against 128 s, and an online in-round
    /// pairwise accuracy of +0.013, -0.002, -0.040 and +0.004 against retraining every round.
    /// false (the tuner: TB_EAGER_TRAINING=1): TVM's schedule.
    bool lazyTraining = true;
    /// Memory for cached feature rows, in MiB (features() below). Without a bound the cache held
    /// every state the search ever scored: 850 MB of resident memory after 96 mobilenet trials.
    size_t featureCacheMiB = 256;
    /// What training minimizes. PackSumSquared is TVM's (see the file comment). PackSumPairwise
    /// (issue 20, after the learning-to-rank losses of TenSet/TLP) minimizes the logistic pairwise
    /// loss log(1 + exp(-(s_i - s_j))) of the pack-sums over pairs of one task where i is faster
    /// than j (failed states rank below every valid one), with `pairsPerSample` random partners per
    /// sample drawn once per training: it only asks the model to order states, which is all the
    /// search uses, and weighs near-ties of fast states as much as the rest. Scores are then the
    /// logistic of the pack-sum (in (0, 1), higher = faster), so roulette selection stays valid.
    enum class Objective { PackSumSquared, PackSumPairwise };
    Objective objective = Objective::PackSumSquared;
    int pairsPerSample = 16;
    /// Boosting rounds of the pairwise objective. Its training loss keeps falling for hundreds of
    /// rounds (it fits the training pairs); held-out accuracy on TVM's resnet-18 log is 0.722 /
    /// 0.725 / 0.727 after 25 / 50 / 200 rounds (tst_cost_model), at 4x the time per doubling.
    int pairwiseRounds = 50;
    /// Predictions before warm-up: Random (TVM) or Analytic (analyticScore: the estimated fraction
    /// of the FMA peak, FLOPs / (estimatedCycles x 4 x fmaLanes FLOP/cycle x cores), in (0, 1]).
    /// GPU tasks have no analytic estimate and stay random.
    enum class Warmup { Random, Analytic };
    Warmup warmup = Warmup::Analytic;
    /// Float lanes of one FMA at the target core's full FMA rate, for group 6 of the features and
    /// the analytic score (feature.h extractPerStoreFeatures). The tuner sets this machine's
    /// (measure::fullRateFmaLanes: 16 on this project's current Xeon VM) when candidates run here;
    /// 8 (AVX2, Zen 4) otherwise. On a 16-lane core an 8-lane model sees a block that broadcasts one
    /// input per 16-lane FMA as FMA-bound when it is load-bound.
    int fmaLanes = kDefaultFmaLanes;
    /// Train and predict on TVM's 164 features only (group 6 of feature.h zeroed): TVM's model.
    bool tvmFeaturesOnly = false;
    /// After warm-up, the trees learn the residual of the analytic score (analyticScore, added to
    /// every pack-sum in training and prediction) instead of the whole score, so that a model
    /// trained on few states stays close to the estimate. bench_rank (our resnet-18 conv logs, 768
    /// training states; squared objective): held-out pairwise accuracy 0.686 -> 0.687, online (each
    /// round scored by a model of the earlier rounds, as the search uses it) 0.614 -> 0.680; over
    /// resnet-18's 24 tasks (16-144 states each) held-out 0.553 -> 0.602, online 0.582 -> 0.577.
    bool analyticPrior = true;
    /// Scale of the prior in the pairwise objective's logit space (3: held-out 0.686 -> 0.698 and
    /// online 0.608 -> 0.632 against 1 on the conv logs).
    double priorScale = 3;
};

class XGBModel : public CostModel {
public:
    XGBModel(lower::StateLowerer lowerer, XGBModelParams params = {});
    ~XGBModel() override;

    void update(const search::SearchTask& task, const std::vector<MeasuredState>& measured) override;
    void updateMany(const std::vector<const search::SearchTask*>& tasks,
                    const std::vector<std::vector<MeasuredState>>& measured) override;
    std::vector<float> predict(const search::SearchTask& task, const std::vector<State>& states) override;
    /// Lazy training (XGBModelParams::lazyTraining): retrains now if `task` needs it.
    void prepare(const search::SearchTask& task) override;
    /// Number of times the booster was trained.
    int trainings() const { return m_trainings; }
    /// False during a random warm-up (Warmup::Random, or a GPU task, before numWarmupSamples).
    bool repeatable(const search::SearchTask& task) const override;

    /// Feature rows of a state; empty when lowering fails. Cached: evolutionary search scores the
    /// same state again in later generations and rounds, and measured states were scored before.
    /// The cache holds two generations of at most featureCacheMiB / 2 each; when the young one
    /// fills, it becomes the old one and the previous old one is dropped, and a hit in the old one
    /// moves to the young one.
    std::vector<std::vector<float>> features(const search::SearchTask& task, const State& state);
    /// Bytes of feature rows held by the cache now (at most featureCacheMiB MiB).
    size_t cachedFeatureBytes() const;
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
        double prior;  // analyticScore of the state (0 unless params.analyticPrior)
    };
    /// The analytic estimate as a score: estimated fraction of the FMA peak, in (0, 1].
    double analyticScore(const search::SearchTask& task, const std::vector<std::vector<float>>& rows) const;
    void train();
    /// Past warm-up: a booster exists and numWarmupSamples measurements were made.
    bool warm() const;
    /// The prior's weight in a pack-sum: priorScale under the pairwise loss, else 1.
    double priorWeight() const;
    /// Appends a feature row to a DMatrix buffer (group 6 zeroed under tvmFeaturesOnly).
    void appendRow(std::vector<float>& data, const std::vector<float>& row) const;
    /// Extracts the features of `measured` (in parallel) and appends them to the training data.
    void appendSamples(const search::SearchTask& task, const std::vector<MeasuredState>& measured);
    /// train() unless adaptive training says the data has not grown enough.
    void maybeTrain();
    /// Under lazy training: maybeTrain() when the booster has not seen `task`'s records, `task` has
    /// none, or there is no booster, and some record is untrained.
    void trainIfStale(const search::SearchTask& task);

    lower::StateLowerer m_lowerer;
    XGBModelParams m_params;
    std::vector<Sample> m_samples;
    size_t m_trainedOn = 0;
    int m_trainings = 0;
    std::set<std::string> m_tasksWithSamples;  // workload keys with records
    std::set<std::string> m_untrainedTasks;    // workload keys with records the booster has not seen
    void* m_booster = nullptr;  // BoosterHandle
    using Rows = std::vector<std::vector<float>>;
    /// Keyed by a 64-bit hash of (workload key, State::toStr()).
    struct FeatureCache {
        std::unordered_map<uint64_t, Rows> young, old;
        size_t youngBytes = 0, oldBytes = 0;
    };
    static size_t rowsBytes(const Rows& rows);
    mutable std::mutex m_cacheMutex;
    FeatureCache m_cache;
    std::mt19937_64 m_rng{43};
};

}  // namespace tb::cost_model
