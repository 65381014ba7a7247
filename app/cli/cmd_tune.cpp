// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli tune`: TVM's tune_network tutorial in one command — extract the tasks of a
// network, then search schedules with the sketch policy, the XGBoost cost model and the gradient
// task scheduler, measuring candidates in the sandbox (or on RPC devices), printing TVM's
// "[ Task Scheduler ]" table each round and appending every measurement to the log.
#include <QCommandLineParser>

#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/network_loader.h"
#include "engine/codegen/target.h"
#include "engine/graph/task_extraction.h"
#include "engine/lower/lower_state.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "engine/record/record_io.h"
#include "engine/support/error.h"
#include "engine/tuning/network_tuner.h"
#include "engine/tuning/program_measurer.h"
#if __has_include("engine/measure/rpc_runner.h")
#include "engine/measure/rpc_runner.h"
#define TB_HAVE_RPC_RUNNER 1
#endif

namespace tb::cli {

namespace {
int intValue(const QCommandLineParser& p, const QCommandLineOption& o, int minValue) {
    bool ok = false;
    int v = p.value(o).toInt(&ok);
    TB_USER_CHECK(ok && v >= minValue) << "--" << o.names().first().toStdString() << " must be an integer >= "
                                       << minValue << ", got '" << p.value(o).toStdString() << "'";
    return v;
}

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
            std::fprintf(stdout, "  search: sample %.2f s (%d states), evolve %.2f s, measure %.2f s\n", st.sampleSeconds,
                         st.sampled, st.evolveSeconds, st.measureSeconds);
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
}  // namespace

int runTune(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Tune every task of a network (TVM auto_scheduler tune_network)."));
    p.addHelpOption();
    NetworkOptions net;
    net.addTo(p);
    QCommandLineOption target(QStringLiteral("target"), QStringLiteral("TVM target string (default: this CPU)."),
                              QStringLiteral("TARGET"));
    QCommandLineOption trials(QStringLiteral("trials"), QStringLiteral("Total measured trials (default 64 x tasks)."),
                              QStringLiteral("N"), QStringLiteral("0"));
    QCommandLineOption log(QStringLiteral("log"), QStringLiteral("Measure-record log to append to (TVM v0.6 lines)."),
                           QStringLiteral("FILE"));
    QCommandLineOption resume(QStringLiteral("resume"), QStringLiteral("Continue from the records already in --log."));
    QCommandLineOption strategy(QStringLiteral("strategy"), QStringLiteral("gradient or round-robin (default gradient)."),
                                QStringLiteral("S"), QStringLiteral("gradient"));
    QCommandLineOption perRound(QStringLiteral("per-round"), QStringLiteral("Measures per round (default 64)."),
                                QStringLiteral("N"), QStringLiteral("64"));
    QCommandLineOption seed(QStringLiteral("seed"), QStringLiteral("Random seed (default 0)."), QStringLiteral("S"),
                            QStringLiteral("0"));
    QCommandLineOption costModel(QStringLiteral("cost-model"), QStringLiteral("xgb or random (default xgb)."),
                                 QStringLiteral("M"), QStringLiteral("xgb"));
    QCommandLineOption early(QStringLiteral("early-stopping"),
                             QStringLiteral("Stop after this many trials without improvement (default off)."),
                             QStringLiteral("N"), QStringLiteral("-1"));
    QCommandLineOption runner(QStringLiteral("runner"), QStringLiteral("local or rpc (default local)."),
                              QStringLiteral("R"), QStringLiteral("local"));
    QCommandLineOption tracker(QStringLiteral("tracker"), QStringLiteral("Tracker HOST:PORT for --runner rpc."),
                               QStringLiteral("HOST:PORT"), QStringLiteral("127.0.0.1:9190"));
    QCommandLineOption key(QStringLiteral("key"), QStringLiteral("Device key for --runner rpc."), QStringLiteral("KEY"));
    QCommandLineOption tsv(QStringLiteral("tsv"), QStringLiteral("Estimated-latency log (default total_latency.tsv)."),
                           QStringLiteral("FILE"), QStringLiteral("total_latency.tsv"));
    QCommandLineOption repeat(QStringLiteral("repeat"), QStringLiteral("Runner repeat (default 1)."), QStringLiteral("N"),
                              QStringLiteral("1"));
    QCommandLineOption minRepeat(QStringLiteral("min-repeat-ms"), QStringLiteral("Runner min_repeat_ms (default 100)."),
                                 QStringLiteral("MS"), QStringLiteral("100"));
    QCommandLineOption flush(QStringLiteral("cache-flush"), QStringLiteral("Flush caches before each repeat (TVM enable_cpu_cache_flush)."));
    QCommandLineOption only(QStringLiteral("tasks"),
                            QStringLiteral("Tune only these task IDs of the extraction order (comma list, e.g. 2,5)."),
                            QStringLiteral("IDS"));
    QCommandLineOption noSeed(QStringLiteral("no-default-seed"),
                              QStringLiteral("Do not measure each task's default schedule in its first round (pure Ansor)."));
    p.addOptions({target, trials, log, resume, strategy, perRound, seed, costModel, early, runner, tracker, key, tsv,
                  repeat, minRepeat, flush, only, noSeed});
    if (!p.parse(args)) {
        std::fprintf(stderr, "error: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fprintf(stdout, "%s", qPrintable(p.helpText()));
        return 0;
    }
    TB_USER_CHECK(p.isSet(log)) << "--log FILE is required (every measurement is appended to it)";
    const std::string strat = p.value(strategy).toStdString();
    TB_USER_CHECK(strat == "gradient" || strat == "round-robin") << "--strategy must be gradient or round-robin, got '"
                                                                  << strat << "'";
    const std::string runnerKind = p.value(runner).toStdString();
    TB_USER_CHECK(runnerKind == "local" || runnerKind == "rpc") << "--runner must be local or rpc, got '" << runnerKind << "'";

    codegen::Target tgt = p.isSet(target) ? codegen::Target::parse(p.value(target).toStdString()) : codegen::Target::host();
    const std::string targetString =
        p.isSet(target) ? p.value(target).toStdString() : "llvm -keys=cpu -mcpu=" + tgt.mcpu;
    HardwareParams hw = measure::defaultHardwareParams(tgt);

    graph::Graph g = net.load(p);
    graph::TaskExtractionOptions eo;
    eo.target = targetString;
    eo.winograd = net.winograd(p);
    auto extracted = graph::extractTasks(g, eo);
    TB_USER_CHECK(!extracted.empty()) << "the network has no task to tune";
    std::vector<bool> keep(extracted.size(), !p.isSet(only));
    if (p.isSet(only)) {
        for (const QString& id : p.value(only).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            bool ok = false;
            const int k = id.trimmed().toInt(&ok);
            TB_USER_CHECK(ok && k >= 0 && k < int(extracted.size()))
                << "--tasks: '" << id.toStdString() << "' is not a task ID of this network (0.." << extracted.size() - 1 << ")";
            keep[size_t(k)] = true;
        }
    }
    std::vector<tuning::NetworkTask> tasks;
    for (size_t ei = 0; ei < extracted.size(); ++ei) {
        if (!keep[ei]) continue;
        const auto& e = extracted[ei];
        tuning::NetworkTask t;
        t.task.dag = std::make_shared<te::ComputeDAG>(e.dag);
        t.task.workloadKey = e.workloadKey;
        t.task.desc = e.desc;
        t.task.target = targetString;
        t.task.hardware = hw;
        t.weight = e.weight;
        tasks.push_back(std::move(t));
    }
    std::fprintf(stdout, "Extracted %zu tasks from %s (target %s)\n", tasks.size(), qPrintable(net.name(p)),
                 targetString.c_str());

    tuning::TuneOptions to;
    to.trials = intValue(p, trials, 0);
    to.perRound = intValue(p, perRound, 1);
    to.earlyStopping = p.value(early).toInt();
    to.strategy = strat == "gradient" ? tuning::TaskSchedulerOptions::Strategy::Gradient
                                      : tuning::TaskSchedulerOptions::Strategy::RoundRobin;
    to.seed = p.value(seed).toULongLong();
    to.costModel = p.value(costModel).toStdString();
    to.seedDefaultSchedule = !p.isSet(noSeed);

    cost_model::StateLowerer lowerer = [](const search::SearchTask& t, const State& s) {
        return lower::lowerState(*t.dag, s);
    };
    measure::LocalBuilder builder(tgt);
    measure::RunnerOptions ro;
    ro.repeat = intValue(p, repeat, 1);
    ro.minRepeatMs = p.value(minRepeat).toDouble();
    ro.enableCpuCacheFlush = p.isSet(flush);
    ro.seed = to.seed;
    std::unique_ptr<measure::ProgramRunner> run;
    if (runnerKind == "local") {
        TB_USER_CHECK(tgt.runsOnHost()) << "target '" << targetString
                                        << "' does not run on this machine: use --runner rpc with a device key";
        run = std::make_unique<measure::LocalRunner>(ro);
    } else {
#ifdef TB_HAVE_RPC_RUNNER
        TB_USER_CHECK(p.isSet(key)) << "--runner rpc needs --key DEVICE_KEY";
        const QStringList hp = p.value(tracker).split(QLatin1Char(':'));
        TB_USER_CHECK(hp.size() == 2 && hp[1].toInt() > 0) << "--tracker must be HOST:PORT";
        measure::RpcRunnerOptions rr;
        rr.trackerHost = hp[0].toStdString();
        rr.trackerPort = hp[1].toInt();
        rr.key = p.value(key).toStdString();
        rr.target = tgt;
        rr.repeat = ro.repeat;
        rr.minRepeatMs = ro.minRepeatMs;
        rr.enableCpuCacheFlush = ro.enableCpuCacheFlush;
        run = measure::makeRpcRunner(rr);
#else
        TB_USER_ERROR() << "--runner rpc is not available in this build";
#endif
    }
    const std::string logPath = p.value(log).toStdString();
    std::unique_ptr<tuning::NetworkTuner> tuner;
    tuning::ResumeStats rs;
    record::RecordWriter writer(logPath, record::RecordWriter::Mode::Append);
    tuning::ProgramMeasurer measurer(lowerer, builder, *run, &writer, targetString);
    tuner = std::make_unique<tuning::NetworkTuner>(std::move(tasks), to, lowerer, measurer);
    if (p.isSet(resume)) {
        rs = tuner->resume(logPath);
        std::fprintf(stdout, "Resumed from %s: %d records, %d of this network, %d replayed, %d unreadable lines\n",
                     logPath.c_str(), rs.records, rs.matched, rs.replayed, rs.badLines);
    }
    tuning::PrintTableInfo table([](const std::string& s) {
        std::fputs(s.c_str(), stdout);
        std::fflush(stdout);
    });
    tuning::LogEstimatedLatency tsvLog(p.value(tsv).toStdString());
    RoundPrinter printer;
    printer.tuner = tuner.get();
    tuner->addSchedulerCallback(&table);
    tuner->addSchedulerCallback(&tsvLog);
    tuner->addObserver(&printer);
    tuner->tune();
    std::fputs(tuning::PrintTableInfo::tableText(tuner->scheduler(), -1).c_str(), stdout);
    std::fprintf(stdout, "Tuning finished: %d trials (%d failed) in %.0f s, log %s\n", tuner->scheduler().totalTrials(),
                 measurer.failed(), tuner->scheduler().elapsedSeconds(), logPath.c_str());
    return 0;
}

}  // namespace tb::cli
