// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli tune`: TVM's tune_network tutorial in one command — extract the tasks of a
// network, then search schedules with the sketch policy, the XGBoost cost model and the gradient
// task scheduler, measuring candidates in the sandbox (or on RPC devices), printing TVM's
// "[ Task Scheduler ]" table each round and appending every measurement to the log.
#include <QCommandLineParser>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "app/cli/commands.h"
#include "app/cli/tune_options.h"
#include "engine/tuning/tuning_job.h"

namespace tb::cli {

namespace {
// Prints one line per round with what was measured.
class RoundPrinter : public tuning::TuneObserver {
public:
    const tuning::NetworkTuner* tuner = nullptr;
    void onTrials(const std::vector<tuning::MeasuredTrial>& trials) override {
        int ok = 0;
        double best = 1e10;
        std::map<int, int> errors;
        std::map<int, std::string> firstMessage;  // per error_no, as TVM's verbose measure prints them
        for (const auto& t : trials) {
            if (t.outcome.errorNo == 0) {
                ++ok;
                best = std::min(best, t.outcome.meanCost());
            } else {
                if (++errors[t.outcome.errorNo] == 1) firstMessage[t.outcome.errorNo] = t.outcome.errorMsg;
            }
        }
        std::string err;
        for (auto [e, n] : errors) err += " error_no " + std::to_string(e) + " x" + std::to_string(n);
        if (trials.empty()) return;
        std::fprintf(stdout, "Measured task %d: %zu trials, %d valid, best %.4f ms%s\n", trials.front().taskId,
                     trials.size(), ok, best < 1e9 ? best * 1e3 : -1.0, err.c_str());
        if (tuner) {
            const auto& st = tuner->lastRoundStats(trials.front().taskId);
            const auto& ph = st.measurePhases;
            std::fprintf(stdout, "  search: sample %.2f s (%d states), evolve %.2f s, measure %.2f s (lower %.2f, build %.2f, run %.2f), "
                         "train %.2f s\n",
                         st.sampleSeconds, st.sampled, st.evolveSeconds, st.measureSeconds, ph.lowerSeconds,
                         ph.buildSeconds, ph.runSeconds, st.trainSeconds);
        }
        for (const auto& [e, msg] : firstMessage) {
            std::string m = msg.empty() ? std::string("(no message)") : msg;
            for (char& c : m)
                if (c == '\n') c = ' ';
            if (m.size() > 300) m = m.substr(0, 300) + "...";
            std::fprintf(stdout, "  error_no %d, first: %s\n", e, m.c_str());
        }
        std::fflush(stdout);
    }
};

// How each task's candidates are timed (measure_policy.h), once before the first round: the policy
// does not change while tuning, so it is not a column of TVM's per-round table.
void printMeasurePolicies(const tuning::Tuner& tuner) {
    const auto& ps = tuner.measurePolicies();
    if (ps.empty()) return;
    std::fprintf(stdout, "Measurement policy per task (--cache-flush %s):\n",
                 tuning::cacheFlushModeName(tuner.job().runner.cacheFlush));
    std::fprintf(stdout, "|  ID  |                       Task Description                        | Cache  | Inputs+weights (MB) | Why\n");
    for (size_t i = 0; i < ps.size(); ++i) {
        const auto& t = tuner.network().tasks()[i].task;
        std::fprintf(stdout, "| %4zu | %61s | %-6s | %19.2f | %s\n", i, t.desc.c_str(), ps[i].flush ? "flush" : "warm",
                     double(ps[i].taskInputBytes) / 1e6, ps[i].reason().c_str());
    }
    std::fflush(stdout);
}
}  // namespace

int runTune(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Tune every task of a network (TVM auto_scheduler tune_network)."));
    p.addHelpOption();
    TuneCommandLine options;
    options.addTo(p);
    if (!p.parse(TuneCommandLine::normalized(args))) {
        std::fprintf(stderr, "error: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fprintf(stdout, "%s", qPrintable(p.helpText()));
        return 0;
    }
    const tuning::TuningJob job = options.job(p);
    std::unique_ptr<tuning::Tuner> tuner = tuning::buildTuner(job);
    tuning::NetworkTuner& network = tuner->network();
    std::fprintf(stdout, "Extracted %d tasks from %s (target %s)", tuner->extractedTasks(),
                 tuning::networkName(job.network).c_str(), tuner->target().recordString.c_str());
    if (!job.taskIds.empty()) {  // --tasks
        std::string ids;
        for (const int i : tuner->taskIndices()) ids += (ids.empty() ? "" : ",") + std::to_string(i);
        std::fprintf(stdout, "; tuning %zu of %d (tasks %s)", network.tasks().size(), tuner->extractedTasks(), ids.c_str());
    }
    std::fputc('\n', stdout);
    std::fprintf(stdout, "Runner: %s\n", tuner->runnerSummary().c_str());
    printMeasurePolicies(*tuner);
    if (const auto& rs = tuner->resumeStats())
        std::fprintf(stdout, "Resumed from %s: %d records, %d of this network, %d replayed, %d unreadable lines\n",
                     job.logPath.c_str(), rs->records, rs->matched, rs->replayed, rs->badLines);
    tuning::PrintTableInfo table([](const std::string& s) {
        std::fputs(s.c_str(), stdout);
        std::fflush(stdout);
    });
    RoundPrinter printer;
    printer.tuner = &network;
    network.addSchedulerCallback(&table);
    network.addObserver(&printer);
    network.tune();
    std::fputs(tuning::PrintTableInfo::tableText(network.scheduler(), -1).c_str(), stdout);
    std::fprintf(stdout, "Tuning finished: %d trials (%d failed) in %.0f s, log %s\n", network.scheduler().totalTrials(),
                 tuner->measurer().failed(), network.scheduler().elapsedSeconds(), job.logPath.c_str());
    return 0;
}

}  // namespace tb::cli
