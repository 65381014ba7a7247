// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file cost_model.h
/// \brief The cost model interface of the search: scores candidate states so that evolutionary
/// search measures only the most promising ones (TVM `auto_scheduler.CostModel`,
/// include/tvm/auto_scheduler/cost_model.h).
///
/// `predict` returns one score per state, higher = faster (TVM's XGBModel predicts normalized
/// throughput); a state whose features cannot be extracted gets -inf and is dropped. `update` trains
/// on measured (state, result) pairs. Implementations: RandomModel (uniform scores, the baseline,
/// here) and XGBModel (per-store features + XGBoost, cost_model/xgb_model.h).
///
/// Where it sits: the search layer owns the interface it consumes (SketchPolicy holds a CostModel),
/// so search/ never depends on the layers that implement it; cost_model/ (features of the lowered
/// IR, XGBoost) builds on search/ and lower/. The namespace `tb::cost_model` names the concept, as
/// TVM's python module `auto_scheduler.cost_model` does, whichever layer declares it.

#include <memory>
#include <random>
#include <vector>

#include "engine/schedule/loop_state.h"
#include "engine/search/search_task.h"

namespace tb::cost_model {

/// What the model learns from: a measured state and its mean cost in seconds (1e10 = failed).
struct MeasuredState {
    State state;
    double meanCost = 1e10;
    bool valid = false;
};

class CostModel {
public:
    virtual ~CostModel() = default;
    /// Train on newly measured states of `task` (accumulated: the model keeps all data).
    virtual void update(const search::SearchTask& task, const std::vector<MeasuredState>& measured) = 0;
    /// Several tasks' measurements at once (resume from a log): a model that retrains on update
    /// retrains once here instead of once per task. `tasks[i]` goes with `measured[i]`.
    virtual void updateMany(const std::vector<const search::SearchTask*>& tasks,
                            const std::vector<std::vector<MeasuredState>>& measured) {
        for (size_t i = 0; i < tasks.size(); ++i) update(*tasks[i], measured[i]);
    }
    /// Called before a round's search of `task`, so that a model that defers training
    /// (XGBModelParams::lazyTraining) pays for it here, where the tuner counts training time,
    /// rather than inside the round's first predict(). Default: nothing.
    virtual void prepare(const search::SearchTask& task) { (void)task; }
    /// Scores of `states` (bound-inferred, concrete); higher is better; -inf = unusable.
    virtual std::vector<float> predict(const search::SearchTask& task, const std::vector<State>& states) = 0;
    /// True for the random baseline (the search then shortens evolution, as TVM does).
    virtual bool isRandom() const { return false; }
    /// Whether predict() scores a state of `task` the same in every call until the next update()
    /// (false while the scores are random draws). The evolutionary search then keeps the score of a
    /// child copied without mutation instead of scoring it again.
    virtual bool repeatable(const search::SearchTask& task) const { return !isRandom(); }
};

/// Uniform random scores in [0, 1) (TVM RandomModel). Seeded.
class RandomModel : public CostModel {
public:
    explicit RandomModel(uint64_t seed = 0) : m_rng(seed) {}
    void update(const search::SearchTask&, const std::vector<MeasuredState>&) override {}
    std::vector<float> predict(const search::SearchTask&, const std::vector<State>& states) override {
        std::uniform_real_distribution<float> d(0.0f, 1.0f);
        std::vector<float> out(states.size());
        for (auto& s : out) s = d(m_rng);
        return out;
    }
    bool isRandom() const override { return true; }

private:
    std::mt19937_64 m_rng;
};

}  // namespace tb::cost_model
