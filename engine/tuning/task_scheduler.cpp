// SPDX-License-Identifier: Apache-2.0
#include "engine/tuning/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/support/error.h"

namespace tb::tuning {

namespace {
constexpr double kMaxCost = 1e10;  // TVM's cost of a failed / unmeasured task

std::string format(const char* fmt, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}
}  // namespace

TaskScheduler::TaskScheduler(std::vector<SchedulerTask> tasks, std::vector<std::unique_ptr<TaskTuner>> tuners,
                             TaskSchedulerOptions options)
    : m_tasks(std::move(tasks)), m_tuners(std::move(tuners)), m_opt(options), m_rng(options.seed),
      m_tic(std::chrono::steady_clock::now()) {
    TB_CHECK(!m_tasks.empty()) << "a task scheduler needs tasks";
    TB_CHECK(m_tasks.size() == m_tuners.size()) << m_tasks.size() << " tasks but " << m_tuners.size() << " tuners";
    size_t n = m_tasks.size();
    m_bestCosts.assign(n, kMaxCost);
    m_taskCts.assign(n, 0);
    m_taskBestCts.assign(n, 0);
    m_history.assign(n, {});
    m_dead.assign(n, 0);
    m_lastGradients.assign(n, 0.0);
    m_alternatives.assign(n, {});
    for (size_t i = 0; i < n; ++i) {
        const int a = m_tasks[i].alternativeOf;
        if (a < 0) continue;
        TB_CHECK(a < int(n) && a != int(i) && m_tasks[size_t(a)].alternativeOf < 0)
            << "task " << i << " is an alternative of task " << a << ", which is not a primary task";
        m_alternatives[size_t(a)].push_back(int(i));
    }
    // TVM: num_measures_per_round = min(opt.num_measures_per_round, num_measure_trials // n_tasks).
    m_perRound = m_opt.numMeasuresPerRound;
    if (m_opt.numMeasureTrials > 0) m_perRound = std::min(m_perRound, m_opt.numMeasureTrials / int(n));
    m_perRound = std::max(m_perRound, 1);
    m_earlyAll = m_opt.earlyStopping < 0 ? 1e20 : double(m_opt.earlyStopping);
    m_earlyTask = m_opt.perTaskEarlyStopping < 0 ? 1e20 : double(m_opt.perTaskEarlyStopping);
    // Similarity groups: tag + "_" + int(log_1.618(flop + 1)); empty tag = no group.
    std::map<std::string, int> tagToGroup;
    m_groupOf.assign(n, -1);
    for (size_t i = 0; i < n; ++i) {
        if (m_tasks[i].similarityTag.empty()) continue;
        std::string tag = m_tasks[i].similarityTag + "_" +
                          std::to_string(int(std::log(m_tasks[i].flop + 1) / std::log(1.618)));
        auto [it, inserted] = tagToGroup.emplace(tag, int(m_groups.size()));
        if (inserted) m_groups.emplace_back();
        m_groups[size_t(it->second)].push_back(int(i));
        m_groupOf[i] = it->second;
    }
    m_curScore = score(m_bestCosts);
}

void TaskScheduler::restore(int taskId, int trials, double bestCost) {
    TB_CHECK(taskId >= 0 && size_t(taskId) < m_tasks.size()) << "task id " << taskId;
    int rounds = int(double(trials) / m_perRound + 0.5);
    m_taskCts[size_t(taskId)] = rounds;
    m_taskBestCts[size_t(taskId)] = rounds;
    m_bestCosts[size_t(taskId)] = bestCost;
    if (rounds > 0) m_history[size_t(taskId)].assign(size_t(rounds), bestCost);
    m_ct += trials;
    m_curScore = score(m_bestCosts);
}

double TaskScheduler::score(const std::vector<double>& costs) const {
    double s = 0;
    for (size_t i = 0; i < costs.size(); ++i) {
        if (m_tasks[i].alternativeOf >= 0) continue;  // counted with the task it is an alternative of
        double c = costs[i];
        for (int j : m_alternatives[i]) c = std::min(c, costs[size_t(j)]);
        s += m_tasks[i].weight * c;
    }
    return s;
}

double TaskScheduler::chainGradient(size_t i, const std::vector<double>& costs) const {
    const size_t primary = m_tasks[i].alternativeOf >= 0 ? size_t(m_tasks[i].alternativeOf) : i;
    if (m_alternatives[primary].empty()) return m_tasks[i].weight;  // d(w * c) / dc, as TVM's numeric chain rule
    std::vector<size_t> members{primary};
    for (int j : m_alternatives[primary]) members.push_back(size_t(j));
    // Each member against the best of the others at equal effort: j's best after as many rounds as
    // the member has had (a member tuned less is not judged against a partner tuned more).
    auto bestAfter = [&](size_t j, int rounds) {
        if (rounds <= 0) return kMaxCost;
        const auto& h = m_history[j];
        return rounds <= int(h.size()) ? h[size_t(rounds - 1)] : costs[j];
    };
    constexpr double kTemperature = 0.1;  // relative gap that divides a member's share by e
    double sum = 0, mine = 0;
    for (size_t m : members) {
        double other = kMaxCost;
        for (size_t j : members)
            if (j != m) other = std::min(other, bestAfter(j, std::min(m_taskCts[m], m_taskCts[j])));
        const double gap = std::max(0.0, costs[m] / other - 1);
        const double e = std::exp(-std::min(gap / kTemperature, 700.0));
        sum += e;
        if (m == i) mine = e;
    }
    return m_tasks[primary].weight * mine / sum;
}

bool TaskScheduler::allTasksHaveCost() const {
    return std::all_of(m_bestCosts.begin(), m_bestCosts.end(), [](double c) { return c < 1e9; });
}

double TaskScheduler::elapsedSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_tic).count();
}

void TaskScheduler::tuneTask(int idx) {
    for (auto* cb : m_callbacks) cb->preTune(*this, idx);
    RoundOutcome out = m_tuners[size_t(idx)]->tuneOneRound(m_perRound);
    size_t i = size_t(idx);
    m_taskCts[i] += 1;
    for (double c : out.costs) {
        if (c < m_bestCosts[i]) {
            m_taskBestCts[i] = m_taskCts[i];
            m_bestCosts[i] = c;
        }
    }
    double noChangeTrials = double(m_taskCts[i] - m_taskBestCts[i]) * m_perRound;
    if (out.costs.empty() || noChangeTrials > m_earlyTask) m_dead[i] = 1;
    m_history[i].push_back(m_bestCosts[i]);
    m_ct += int(out.costs.size());
    m_curScore = score(m_bestCosts);
    for (auto* cb : m_callbacks) cb->postTune(*this, idx);
}

int TaskScheduler::pickNext() {
    size_t n = m_tasks.size();
    if (m_opt.strategy == TaskSchedulerOptions::Strategy::RoundRobin) {
        int idx = m_rrIdx;
        do {
            idx = (idx + 1) % int(n);
        } while (m_dead[size_t(idx)]);
        m_rrIdx = idx;
        return idx;
    }
    std::vector<double> grads(n, 0.0);
    for (size_t i = 0; i < n; ++i) {
        if (m_dead[i]) continue;
        // Chain rule: d(score)/d(best_i) (TVM takes it numerically: the weight).
        const double chain = chainGradient(i, m_bestCosts);
        double backward = 0;
        int t = m_taskCts[i];
        int w = m_opt.backwardWindow;
        if (t - 1 < int(m_history[i].size()) && t - 1 - w >= 0)
            backward = (m_history[i][size_t(t - 1)] - m_history[i][size_t(t - 1 - w)]) / w;
        double gNext1 = m_bestCosts[i] - m_bestCosts[i] / std::max(t, 1);
        double gNext2 = m_opt.beta * 1e30;
        int g = m_groupOf[i];
        if (g >= 0 && m_groups[size_t(g)].size() > 1) {
            double bestFlops = 0;
            for (int j : m_groups[size_t(g)]) bestFlops = std::max(bestFlops, m_tasks[size_t(j)].flop / m_bestCosts[size_t(j)]);
            gNext2 = m_opt.beta * m_tasks[i].flop / bestFlops;
        }
        double forward = std::min(gNext1, gNext2) - m_bestCosts[i];
        grads[i] = chain * (m_opt.alpha * backward + (1 - m_opt.alpha) * forward);
    }
    m_lastGradients = grads;
    auto [mn, mx] = std::minmax_element(grads.begin(), grads.end());
    if (*mn == *mx) {
        // All equal: TVM picks uniformly at random (np.random.choice); we skip dead tasks.
        std::vector<int> live;
        for (size_t i = 0; i < n; ++i)
            if (!m_dead[i]) live.push_back(int(i));
        std::uniform_int_distribution<size_t> d(0, live.size() - 1);
        return live[d(m_rng)];
    }
    return int(mn - grads.begin());
}

void TaskScheduler::adjustSimilarityGroup(int idx) {
    int g = m_groupOf[size_t(idx)];
    if (g < 0 || m_groups[size_t(g)].size() <= 1) return;
    auto& ids = m_groups[size_t(g)];
    double bestFlops = 0;
    for (int j : ids) bestFlops = std::max(bestFlops, m_tasks[size_t(j)].flop / m_bestCosts[size_t(j)]);
    double cur = m_tasks[size_t(idx)].flop / m_bestCosts[size_t(idx)];
    int maxOther = 0;
    for (int j : ids)
        if (j != idx) maxOther = std::max(maxOther, m_taskCts[size_t(j)]);
    if (cur < bestFlops / m_opt.beta && m_taskCts[size_t(idx)] > 5 + maxOther) {
        m_groupOf[size_t(idx)] = -1;
        ids.erase(std::remove(ids.begin(), ids.end(), idx), ids.end());
    }
}

bool TaskScheduler::step() {
    if (m_finished) return false;
    size_t n = m_tasks.size();
    // Warm-up: one round for every task that has none (restored tasks are skipped).
    if (!m_warmupDone) {
        while (m_warmupNext < int(n) && m_taskCts[size_t(m_warmupNext)] > 0) ++m_warmupNext;
        if (m_warmupNext < int(n)) {
            m_next = m_warmupNext++;
            tuneTask(m_next);
            return true;
        }
        m_warmupDone = true;
        m_bestCt = m_ct;
        m_bestScore = m_curScore;
    }
    auto live = std::count(m_dead.begin(), m_dead.end(), 0);
    if (m_ct >= m_opt.numMeasureTrials || live == 0) {
        m_finished = true;
        m_next = -1;
        return false;
    }
    m_next = pickNext();
    tuneTask(m_next);
    adjustSimilarityGroup(m_next);
    if (m_curScore < m_bestScore) {
        m_bestScore = m_curScore;
        m_bestCt = m_ct;
    } else if (m_ct - m_bestCt >= m_earlyAll && allTasksHaveCost()) {
        m_finished = true;
    }
    return !m_finished;
}

void TaskScheduler::tune() {
    while (step()) {
    }
}

std::string PrintTableInfo::tableText(const TaskScheduler& ts, int nextTaskId) {
    std::string s;
    s += std::string(70, '-') + "\n" + std::string(30, '-') + "  [ Task Scheduler ]\n" + std::string(70, '-') + "\n";
    s += "|  ID  |                       Task Description                        | Latency (ms) | Speed (GFLOPS) | Trials |\n";
    s += std::string(113, '-') + "\n";
    for (size_t i = 0; i < ts.tasks().size(); ++i) {
        double best = ts.bestCosts()[i];
        std::string lat = best < 1e9 ? format("%.3f", 1e3 * best) : "-";
        std::string speed = best < 1e9 ? format("%.2f", ts.tasks()[i].flop / best / 1e9) : "-";
        std::string trials = format("%d", ts.taskRounds()[i] * ts.numMeasuresPerRound());
        s += format("| %4s | %61s | %12s | % 14s | %6s |\n", std::to_string(i).c_str(), ts.tasks()[i].desc.c_str(),
                    lat.c_str(), speed.c_str(), trials.c_str());
    }
    s += std::string(113, '-') + "\n";
    std::string total = ts.allTasksHaveCost() ? format("%.3f", ts.currentScore() * 1e3) : "-";
    s += format("Estimated total latency: %s ms\tTrials: %d\tUsed time : %.0f s\tNext ID: %d\t\n", total.c_str(),
                ts.totalTrials(), ts.elapsedSeconds(), nextTaskId);
    return s;
}

void PrintTableInfo::preTune(const TaskScheduler& ts, int taskId) { m_out(tableText(ts, taskId)); }

LogEstimatedLatency::LogEstimatedLatency(std::string path) : m_path(std::move(path)) {
    std::remove(m_path.c_str());  // TVM removes an existing file
}

void LogEstimatedLatency::postTune(const TaskScheduler& ts, int) {
    std::string total = ts.allTasksHaveCost() ? format("%.3f", ts.currentScore() * 1e3) : "N/A";
    FILE* f = std::fopen(m_path.c_str(), "a");
    TB_USER_CHECK(f) << "cannot open " << m_path << " for appending";
    std::fprintf(f, "ElapsedTime(s)\t%.0f\tEstimatedLatency(ms)\t%s\tTrials\t%d\n", ts.elapsedSeconds(), total.c_str(),
                 ts.totalTrials());
    std::fflush(f);
    std::fclose(f);
}

}  // namespace tb::tuning
