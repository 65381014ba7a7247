// SPDX-License-Identifier: Apache-2.0
#include "engine/tuning/network_tuner.h"

#include <cstdlib>
#include <map>

#include "engine/record/record_io.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"

namespace tb::tuning {

class NetworkTuner::PolicyTuner : public TaskTuner {
public:
    PolicyTuner(NetworkTuner* owner, int taskId, std::unique_ptr<search::SketchPolicy> policy)
        : m_owner(owner), m_taskId(taskId), m_policy(std::move(policy)) {}
    RoundOutcome tuneOneRound(int numMeasures) override {
        auto res = m_policy->continueSearchOneRound(numMeasures, m_owner->m_measurer);
        m_owner->onMeasured(m_taskId, res);
        RoundOutcome out;
        for (const auto& [p, o] : res) out.costs.push_back(o.errorNo == 0 ? o.meanCost() : 1e10);
        return out;
    }
    search::SketchPolicy* policy() { return m_policy.get(); }

private:
    NetworkTuner* m_owner;
    int m_taskId;
    std::unique_ptr<search::SketchPolicy> m_policy;
};

NetworkTuner::NetworkTuner(std::vector<NetworkTask> tasks, TuneOptions options, lower::StateLowerer lowerer,
                           search::Measurer& measurer)
    : m_tasks(std::move(tasks)), m_options(std::move(options)), m_measurer(measurer) {
    TB_USER_CHECK(!m_tasks.empty()) << "the network has no search task to tune";
    const int n = int(m_tasks.size());
    if (m_options.trials <= 0) m_options.trials = 64 * n;
    int perRound = std::max(1, std::min(m_options.perRound, m_options.trials / n));
    if (m_options.costModel == "random") {
        m_model = std::make_shared<cost_model::RandomModel>(m_options.seed);
    } else if (m_options.costModel == "xgb" || m_options.costModel == "xgb-rank" || m_options.costModel == "xgb-tvm") {
        cost_model::XGBModelParams xp = m_options.xgb;
        if (m_options.costModel == "xgb-rank") xp.objective = cost_model::XGBModelParams::Objective::PackSumPairwise;
        if (m_options.costModel == "xgb-tvm") {  // TVM's model: its 164 features, random until warm-up
            xp.tvmFeaturesOnly = true;
            xp.warmup = cost_model::XGBModelParams::Warmup::Random;
            xp.analyticPrior = false;
        }
        xp.numWarmupSamples = n * perRound;  // TVM: task scheduler's warm-up = tasks x per-round
        xp.fmaLanes = m_options.fmaLanes;
        // TVM's training schedule (after every round) instead of the lazy one, for A/B runs.
        if (const char* e = std::getenv("TB_EAGER_TRAINING"); e && *e && std::string(e) != "0") xp.lazyTraining = false;
        m_model = std::make_shared<cost_model::XGBModel>(std::move(lowerer), xp);
    } else {
        TB_USER_ERROR() << "unknown cost model '" << m_options.costModel << "' (expected xgb, xgb-rank, xgb-tvm or random)";
    }
    std::vector<SchedulerTask> st;
    std::vector<std::unique_ptr<TaskTuner>> tuners;
    for (int i = 0; i < n; ++i) {
        const auto& t = m_tasks[size_t(i)];
        std::string tag;
        if (auto ops = t.task.dag->ops(); !ops.empty())
            if (auto* a = ops.back()->attr(te::attr::kTaskSchedulerTag))
                if (auto* s = std::get_if<std::string>(a)) tag = *s;
        st.push_back({t.task.workloadKey, t.task.desc, t.task.flop(), t.weight, tag, t.alternativeOf});
        auto policy = std::make_unique<search::SketchPolicy>(t.task, m_model, m_options.policy, m_options.seed + uint64_t(i) * 7919);
        if (m_options.seedDefaultSchedule) {
            search::DefaultScheduleOptions dso;
            if (t.task.hardware.vectorUnitBytes >= 4) dso.vectorLanes = t.task.hardware.vectorUnitBytes / 4;
            dso.fmaLanes = m_options.fmaLanes;
            // The measurer rewrites an option-2 task's weights for every candidate (tuning_job.cpp),
            // so the seed may tile dense weights across their layout, as the compiled default does.
            dso.layoutFreeContiguous = t.task.layoutRewrite == LayoutRewriteOption::RewriteForPreTransformed;
            try {
                policy->addSeedStates({search::defaultSchedule(*t.task.dag, dso)});
            } catch (const std::exception&) {
                // No default schedule for this DAG: the search alone covers it.
            }
        }
        m_policies.push_back(policy.get());
        tuners.push_back(std::make_unique<PolicyTuner>(this, i, std::move(policy)));
    }
    TaskSchedulerOptions so;
    so.strategy = m_options.strategy;
    so.numMeasureTrials = m_options.trials;
    so.numMeasuresPerRound = m_options.perRound;
    so.earlyStopping = m_options.earlyStopping;
    so.perTaskEarlyStopping = m_options.perTaskEarlyStopping;
    so.seed = m_options.seed;
    m_scheduler = std::make_unique<TaskScheduler>(std::move(st), std::move(tuners), so);
    m_best.resize(size_t(n));
    m_bestCost.assign(size_t(n), 1e10);
}

NetworkTuner::~NetworkTuner() = default;

void NetworkTuner::onMeasured(int taskId, const std::vector<std::pair<search::PickedState, search::MeasureOutcome>>& res) {
    std::vector<MeasuredTrial> trials;
    for (const auto& [p, o] : res) {
        double c = o.errorNo == 0 ? o.meanCost() : 1e10;
        if (c < m_bestCost[size_t(taskId)]) {
            m_bestCost[size_t(taskId)] = c;
            m_best[size_t(taskId)] = p.state;
        }
        trials.push_back({taskId, m_trialCounter++, p.state, p.predicted, o});
    }
    for (auto* obs : m_observers) obs->onTrials(trials);
}

ResumeStats NetworkTuner::resume(const std::string& logPath) {
    ResumeStats stats;
    auto log = record::readMeasureRecords(logPath);
    stats.records = int(log.records.size());
    stats.badLines = int(log.badLines.size());
    std::map<std::string, int> taskOf;
    for (size_t i = 0; i < m_tasks.size(); ++i) taskOf[m_tasks[i].task.workloadKey] = int(i);
    struct Acc {
        int count = 0;
        double best = 1e10;
        std::vector<State> states;
        std::vector<double> costs;
        std::vector<cost_model::MeasuredState> train;
    };
    std::vector<Acc> acc(m_tasks.size());
    for (const auto& r : log.records) {
        auto it = taskOf.find(r.task.workloadKey);
        if (it == taskOf.end()) continue;
        ++stats.matched;
        Acc& a = acc[size_t(it->second)];
        ++a.count;
        double c = r.valid() ? r.meanCost() : 1e10;
        a.best = std::min(a.best, c);
        try {
            // Bound-inferred, as the search's states are, so that dedup by the printed loop nest matches.
            State s = inferBound(replaySteps(*m_tasks[size_t(it->second)].task.dag, stepsFromJson(r.steps)));
            a.states.push_back(s);
            a.costs.push_back(c);
            a.train.push_back({s, c, r.valid()});
            ++stats.replayed;
            if (c < m_bestCost[size_t(it->second)]) {
                m_bestCost[size_t(it->second)] = c;
                m_best[size_t(it->second)] = s;
            }
        } catch (const UserError&) {
            // A record from another schedule space (e.g. a different TVM version): counted, not replayed.
        }
    }
    std::vector<const search::SearchTask*> trainTasks;
    std::vector<std::vector<cost_model::MeasuredState>> trainData;
    for (size_t i = 0; i < acc.size(); ++i) {
        if (acc[i].count == 0) continue;
        m_scheduler->restore(int(i), acc[i].count, acc[i].best);
        m_policies[i]->preloadMeasured(acc[i].states, acc[i].costs);
        if (!acc[i].train.empty()) {
            trainTasks.push_back(&m_tasks[i].task);
            trainData.push_back(std::move(acc[i].train));
        }
        m_trialCounter += acc[i].count;
    }
    // One retraining on the whole log, not one per task.
    if (!trainTasks.empty()) m_model->updateMany(trainTasks, trainData);
    return stats;
}

State NetworkTuner::bestState(int taskId) const { return m_best.at(size_t(taskId)); }
double NetworkTuner::bestCost(int taskId) const { return m_bestCost.at(size_t(taskId)); }

}  // namespace tb::tuning
