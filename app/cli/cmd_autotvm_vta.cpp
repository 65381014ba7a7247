// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli autotvm vta-tune`: AutoTVM's tuners on resnet-18's conv2d_packed.vta tasks, each
// config measured on the VTA simulator (engine/autotvm/vta_tune.h): the cost is simulated time
// (cycle model at the target's clock), not host time.
//   autotvm vta-tune --workloads resnet-18[:C2,C5,...] [--target sim|pynq|intelfocl|...]
//                    [--vta-config FILE] [--tuner NAME] [--n-trial N] [--early-stopping N]
//                    [--n-parallel N] [--plan-size N] [--seed N] [--log FILE]
//        workloads: C2..C11 of TVM's VTA conv2d benchmark (vta/vta_task.h); a list after ':' keeps
//        those. --tuner as `autotvm tune`, xgb tuners with knob features (vta_tune.h vtaTunerName).
//        Per task: TVM's progress line, then a table row: fallback config (every tile 1, index 0)
//        simulated time, best simulated time, its GOPS and % of the model's peak
//        (BATCH x BLOCK_IN x BLOCK_OUT MACs per cycle at the clock), the best config.
//        Records (v0.2, target "ext_dev -keys=vta,cpu -device=vta -model=...") are appended to --log.
#include <QCommandLineParser>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "engine/autotvm/tuner.h"
#include "engine/autotvm/vta_tune.h"
#include "engine/record/record_io.h"
#include "engine/support/error.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_task.h"

namespace tb::cli {

namespace {

int positiveInt(const QCommandLineParser& p, const char* name, bool allowZero = false) {
    bool ok = false;
    const int v = p.value(QString::fromLatin1(name)).toInt(&ok);
    TB_USER_CHECK(ok && (v > 0 || (allowZero && v == 0)))
        << "--" << name << " must be a " << (allowZero ? "non-negative" : "positive") << " integer, not '"
        << p.value(QString::fromLatin1(name)).toStdString() << "'";
    return v;
}

// "resnet-18" or "resnet-18:C2,C11".
std::vector<vta::NamedConv2dWorkload> selectWorkloads(const vta::VtaConfig& cfg, const std::string& spec) {
    const auto colon = spec.find(':');
    const std::string net = spec.substr(0, colon);
    TB_USER_CHECK(net == "resnet-18") << "--workloads: '" << net << "' is not a workload set (resnet-18)";
    std::vector<vta::NamedConv2dWorkload> all = vta::resnet18Conv2dWorkloads(cfg);
    if (colon == std::string::npos) return all;
    std::vector<vta::NamedConv2dWorkload> chosen;
    const QStringList names = QString::fromStdString(spec.substr(colon + 1)).split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString& n : names) {
        const std::string name = n.trimmed().toStdString();
        auto it = std::find_if(all.begin(), all.end(), [&](const auto& w) { return w.name == name; });
        TB_USER_CHECK(it != all.end()) << "--workloads: resnet-18 has no conv2d_packed workload '" << name
                                       << "' (C2..C11)";
        chosen.push_back(*it);
    }
    TB_USER_CHECK(!chosen.empty()) << "--workloads: no workload named after ':'";
    return chosen;
}

}  // namespace

int runAutotvmVtaTune(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Tune resnet-18's conv2d_packed.vta tasks with AutoTVM's tuners on the VTA simulator (simulated time)."));
    p.addHelpOption();
    auto add = [&](const char* name, const char* help, const char* valueName, const char* def = nullptr) {
        QCommandLineOption o(QString::fromLatin1(name), QString::fromLatin1(help), QString::fromLatin1(valueName));
        if (def) o.setDefaultValue(QString::fromLatin1(def));
        p.addOption(o);
    };
    add("workloads", "resnet-18, or resnet-18:C2,C5,... for some of its workloads", "set", "resnet-18");
    add("target", "VTA target (TVM vta_config.json TARGET): sim, pynq, intelfocl, ...", "target", "sim");
    add("vta-config", "a vta_config.json instead of --target's defaults", "file");
    add("tuner", "xgb (knob features), xgb_rank, ga, random, grid", "name", "xgb");
    add("n-trial", "configs to measure per task (at most the space size)", "n", "64");
    add("early-stopping", "stop a task when the best is this many trials old (0: never)", "n", "0");
    add("n-parallel", "configs per tuner batch", "n", "8");
    add("plan-size", "xgb tuners: refit the model every N measurements (TVM plan_size)", "n", "64");
    add("seed", "random seed of the tuner and the operands", "n", "1");
    add("log", "AutoTVM log to append records to (empty: none)", "file", "");
    if (const auto rc = parseOrExit(p, args)) return *rc;

    const vta::VtaConfig cfg = p.isSet(QStringLiteral("vta-config"))
                                   ? vta::VtaConfig::fromFile(p.value(QStringLiteral("vta-config")).toStdString())
                                   : vta::VtaConfig::forTarget(p.value(QStringLiteral("target")).toStdString());
    const std::vector<vta::NamedConv2dWorkload> workloads =
        selectWorkloads(cfg, p.value(QStringLiteral("workloads")).toStdString());
    const std::string tunerArg = p.value(QStringLiteral("tuner")).toStdString();
    const std::string tunerName = autotvm::vtaTunerName(tunerArg);
    autotvm::TuneOptions base;
    base.nTrial = positiveInt(p, "n-trial");
    base.earlyStopping = positiveInt(p, "early-stopping", true);
    base.nParallel = positiveInt(p, "n-parallel");
    const int seed = positiveInt(p, "seed", true);
    const int planSize = positiveInt(p, "plan-size");
    const std::string logPath = p.value(QStringLiteral("log")).toStdString();
    std::unique_ptr<record::RecordWriter> writer;
    if (!logPath.empty()) writer = std::make_unique<record::RecordWriter>(logPath);

    const vta::CycleModel model = vta::CycleModel::forConfig(cfg);
    const double peakGops = 2.0 * double(cfg.peakMacsPerCycle()) * model.clockMhz * 1e-3;
    autotvm::MeasureOption measure;
    measure.measureFunction = autotvm::vtaSimMeasureFunction(cfg, std::uint32_t(seed));
    std::fprintf(stdout, "VTA %s, target %s, %.0f MHz: peak %lld MACs/cycle = %.1f GOPS (simulated); tuner %s\n",
                 cfg.model().c_str(), vta::vtaTargetString(cfg).c_str(), model.clockMhz,
                 static_cast<long long>(cfg.peakMacsPerCycle()), peakGops, tunerName.c_str());

    struct Row {
        std::string name, workload, best;
        long long space = 0;
        int trials = 0, failed = 0;
        double fallbackS = 0, bestS = 0, gops = 0;
    };
    std::vector<Row> rows;
    int total = 0, failedTotal = 0, wrongTotal = 0;
    for (size_t ti = 0; ti < workloads.size(); ++ti) {
        const auto& w = workloads[ti];
        const autotvm::Task task = autotvm::makeVtaConv2dTask(cfg, w.wl);
        Row row{w.name, w.wl.str(), "-", static_cast<long long>(task.space.size())};
        const measure::MeasureResult fallback = measure.measureFunction(task, {task.space.get(0)}).front();
        row.fallbackS = fallback.ok() ? fallback.meanCost() : 0;

        std::unique_ptr<autotvm::Tuner> tuner = autotvm::makeVtaTuner(tunerArg, task, std::uint64_t(seed), planSize);
        autotvm::TuneOptions to = base;
        to.nTrial = int(std::min<std::int64_t>(base.nTrial, task.space.size()));
        const auto tic = std::chrono::steady_clock::now();
        autotvm::TuneCallback logAndProgress = [&](const autotvm::Tuner& t, const std::vector<autotvm::ConfigEntity>& c,
                                                   const std::vector<measure::MeasureResult>& r) {
            double cur = 0;
            for (size_t i = 0; i < c.size(); ++i) {
                if (writer) writer->append(autotvm::makeRecord(task, c[i], r[i]));
                if (r[i].ok()) cur = t.flops(r[i]);
                else ++row.failed;
                if (r[i].errorNo == measure::MeasureErrorNo::WrongAnswer) ++wrongTotal;
            }
            row.trials += int(c.size());
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tic).count();
            std::fprintf(stdout, "\r[Task %2d/%2d]  Current/Best: %7.2f/%7.2f GOPS (simulated) | Progress: (%d/%d) | %.2f s",
                         int(ti + 1), int(workloads.size()), cur / 1e9, t.bestFlops() / 1e9, row.trials, to.nTrial, s);
            std::fflush(stdout);
        };
        tuner->tune(to, measure, {logAndProgress});
        std::fprintf(stdout, " Done.\n");
        if (const auto& best = tuner->bestConfig()) {
            row.bestS = task.flop / tuner->bestFlops();
            row.gops = tuner->bestFlops() / 1e9;
            row.best = "#" + std::to_string(best->index) + " " + vta::Conv2dSchedule::fromConfig(*best).str();
        }
        total += row.trials;
        failedTotal += row.failed;
        rows.push_back(row);
    }

    std::fprintf(stdout, "\n%-4s %-48s %6s %9s %12s %12s %8s %6s %8s  %s\n", "task", "workload", "space", "ok/trials",
                 "fallback ms", "best ms", "GOPS", "%peak", "speedup", "best config");
    bool allTuned = true;
    for (const Row& r : rows) {
        char ok[32], fb[32] = "-", best[32] = "-", gops[32] = "-", peak[32] = "-", speedup[32] = "-";
        std::snprintf(ok, sizeof ok, "%d/%d", r.trials - r.failed, r.trials);
        if (r.fallbackS > 0) std::snprintf(fb, sizeof fb, "%.3f", r.fallbackS * 1e3);
        if (r.bestS > 0) {
            std::snprintf(best, sizeof best, "%.3f", r.bestS * 1e3);
            std::snprintf(gops, sizeof gops, "%.2f", r.gops);
            std::snprintf(peak, sizeof peak, "%.1f%%", 100.0 * r.gops / peakGops);
            if (r.fallbackS > 0) std::snprintf(speedup, sizeof speedup, "%.2fx", r.fallbackS / r.bestS);
        } else {
            allTuned = false;
        }
        std::fprintf(stdout, "%-4s %-48s %6lld %9s %12s %12s %8s %6s %8s  %s\n", r.name.c_str(), r.workload.c_str(),
                     r.space, ok, fb, best, gops, peak, speedup, r.best.c_str());
    }
    std::fprintf(stdout, "Tuning finished: %d trials (%d refused by the packed operator, %d wrong answers)%s%s\n",
                 total, failedTotal - wrongTotal, wrongTotal, logPath.empty() ? "" : ", log ", logPath.c_str());
    return allTuned && wrongTotal == 0 ? 0 : 1;
}

}  // namespace tb::cli
