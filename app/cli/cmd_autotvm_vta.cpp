// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli autotvm vta-tune`: AutoTVM's tuners on VTA tasks (resnet-18's conv2d_packed.vta
// workloads, or its residual blocks' add.vta / multiply.vta), each config measured on the VTA
// simulator (engine/autotvm/vta_tune.h): the cost is SIMULATED time (cycle model at the target's
// clock), not host time. The flow is seed 004's (TVM tune_alu_vta.py tune_tasks).
//   autotvm vta-tune --network resnet-18|resnet-50|... [--ops add,multiply|conv2d|...]
//                    | --workloads resnet-18[:C2,C5,...] | resnet-18-alu[:add_64x56x56,...]
//                    [--target sim|pynq|intelfocl|...] [--vta-config FILE]
//                    [--tuner xgb|xgb_knob|xgb_rank|...|ga|random|gridsearch] [--n-trial N]
//                    [--early-stopping N] [--n-parallel N] [--plan-size N] [--seed N] [--log FILE]
//                    [--tracker HOST:PORT [--key KEY] [--number 5] [--repeat 3] [--timeout 60]
//                     [--cooldown-interval 0.1]]
//        network: seed 004's tasks of a zoo network (NCHW, batch 1): quantized (global_scale 8,
//        skip_conv_layers [0]), graph-packed (nn.max_pool2d .. nn.global_avg_pool2d), the tasks of
//        --ops (default add,multiply: the seed's) filtered (packed, not float) and merged (scalar rhs
//        -> lhs's shape, deduplicated), printed as the seed prints them.
//        workloads: C2..C11 of TVM's VTA conv2d benchmark, or the add/multiply of resnet-18's packed
//        residual blocks (int32 operands; ALU tasks need --target sim or intelfocl, as TVM);
//        a list after ':' keeps those.
//        --tracker: measure on a VTA device server (`rpc-server --device vta`) through the tracker,
//        as TVM's RPCRunner(env.TARGET, host, port, number=5, timeout=60): key default = TARGET.
//        --log FILE: seed 004's records to FILE.tmp (log_to_file, with the scalar-rhs duplicate of
//        every lhs == rhs task), then pick_best into FILE.
//        Per task: TVM's progress line, then a table row (times are simulated).
#include <QCommandLineParser>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/vta_tune_tasks.h"
#include "engine/autotvm/vta_tune.h"
#include "engine/measure/rpc_runner.h"
#include "engine/record/history_best.h"
#include "engine/record/record_io.h"
#include "engine/support/error.h"
#include "engine/support/process.h"
#include "engine/tuning/tuning_job.h"
#include "engine/vta/simulator.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_task.h"

namespace tb::cli {

namespace {

// --name as a positive (or, with allowZero, non-negative) int or double.
template <class T>
T positive(const QCommandLineParser& p, const char* name, bool allowZero = false) {
    bool ok = false;
    const QString text = p.value(QString::fromLatin1(name));
    const T v = std::is_integral_v<T> ? T(text.toInt(&ok)) : T(text.toDouble(&ok));
    TB_USER_CHECK(ok && (v > 0 || (allowZero && v == 0)))
        << "--" << name << " must be a " << (allowZero ? "non-negative" : "positive")
        << (std::is_integral_v<T> ? " integer" : " number") << ", not '" << text.toStdString() << "'";
    return v;
}
int positiveInt(const QCommandLineParser& p, const char* name, bool allowZero = false) {
    return positive<int>(p, name, allowZero);
}

// The names after ':' in "set:a,b" (all when there is no ':'), each checked against `all`.
template <class Named>
std::vector<Named> pick(const std::vector<Named>& all, const std::string& spec, const char* what) {
    const auto colon = spec.find(':');
    if (colon == std::string::npos) return all;
    std::vector<Named> chosen;
    std::string known;
    for (const auto& w : all) known += (known.empty() ? "" : ", ") + w.name;
    const QStringList names = QString::fromStdString(spec.substr(colon + 1)).split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString& n : names) {
        const std::string name = n.trimmed().toStdString();
        auto it = std::find_if(all.begin(), all.end(), [&](const auto& w) { return w.name == name; });
        TB_USER_CHECK(it != all.end()) << "--workloads: " << what << " has no workload '" << name << "' (" << known << ")";
        chosen.push_back(*it);
    }
    TB_USER_CHECK(!chosen.empty()) << "--workloads: no workload named after ':'";
    return chosen;
}

// "resnet-18[:C2,C11]" (conv2d_packed.vta) or "resnet-18-alu[:add_64x56x56,...]" (add/multiply.vta).
std::vector<NamedVtaTask> selectTasks(const vta::VtaConfig& cfg, const std::string& spec) {
    const std::string set = spec.substr(0, spec.find(':'));
    std::vector<NamedVtaTask> tasks;
    if (set == "resnet-18") {
        for (const auto& w : pick(vta::resnet18Conv2dWorkloads(cfg), spec, "resnet-18"))
            tasks.push_back({w.name, autotvm::makeVtaConv2dTask(cfg, w.wl), w.wl.str()});
    } else if (set == "resnet-18-alu") {
        TB_USER_CHECK(vta::vtaTargetHasAluOps(cfg))
            << "--workloads resnet-18-alu: ALU only op only available for intelfocl target (TVM also offloads them "
               "for sim); VTA target is '"
            << cfg.target << "'";
        for (const auto& w : pick(vta::resnet18AluWorkloads(cfg), spec, "resnet-18-alu"))
            tasks.push_back({w.name, autotvm::makeVtaAluTask(cfg, w.wl), w.wl.str()});
    } else {
        TB_USER_ERROR() << "--workloads: '" << set << "' is not a workload set (resnet-18, resnet-18-alu)";
    }
    return tasks;
}

// Seed 004's extraction from a zoo network: "Extract tasks...", the filtered tasks, the merge.
std::vector<NamedVtaTask> networkTasks(const vta::VtaConfig& cfg, const std::string& network, const std::string& opList) {
    std::set<std::string> ops;
    for (const QString& o : QString::fromStdString(opList).split(QLatin1Char(','), Qt::SkipEmptyParts))
        ops.insert(o.trimmed().toStdString());
    TB_USER_CHECK(!ops.empty()) << "--ops: no op named (add, multiply, conv2d)";
    std::fprintf(stdout, "Extract tasks...\n");
    tuning::NetworkSource src;
    src.zooName = network;
    src.layout = "NCHW";
    const autotvm::VtaNetworkTasks ex = autotvm::extractVtaNetworkTasks(cfg, tuning::loadNetwork(src), ops);
    std::fprintf(stdout, "Extracted %d tasks of %s; %d packed and not float\n", ex.extracted, opList.c_str(), ex.filtered);
    std::vector<NamedVtaTask> tasks;
    for (const auto& t : ex.tasks) {
        const std::string name = "T" + std::to_string(tasks.size() + 1);
        std::fprintf(stdout, "  %-4s %-18s x%-3d %s %s\n", name.c_str(), t.task.taskName.c_str(), t.count,
                     t.workload.c_str(), t.task.args.dump().c_str());
        tasks.push_back({name, t.task, t.workload});
    }
    std::fprintf(stdout, "After merged, final #tasks=%zu\n", tasks.size());
    TB_USER_CHECK(!tasks.empty()) << "--network " << network << ": no VTA task of " << opList;
    return tasks;
}

// "tile_b=1 tile_h=14 ... oc_nthread=2": the inner factor of each split, the value of each knob.
std::string configText(const autotvm::ConfigEntity& c) {
    std::string out;
    for (const auto& knob : c.entityJson()) {
        const auto& v = knob[2];
        out += (out.empty() ? "" : " ") + knob[0].get<std::string>() + "=" +
               (knob[1] == "sp" && v.is_array() && !v.empty() ? v.back().dump() : v.dump());
    }
    return out;
}

}  // namespace

int tuneVtaTasks(const std::vector<NamedVtaTask>& tasks, const VtaTuneSettings& s) {
    TB_USER_CHECK(!tasks.empty()) << "no VTA task to tune";
    const std::string tunerName = autotvm::vtaTunerName(s.tuner);
    const vta::CycleModel model = vta::CycleModel::forConfig(s.cfg);
    const double peakGops = 2.0 * double(s.cfg.peakMacsPerCycle()) * model.clockMhz * 1e-3;
    std::fprintf(stdout,
                 "VTA %s, target %s, %.0f MHz: peak %lld MACs/cycle = %.1f GOPS (simulated); tuner %s; measured on %s\n",
                 s.cfg.model().c_str(), vta::vtaTargetString(s.cfg).c_str(), model.clockMhz,
                 static_cast<long long>(s.cfg.peakMacsPerCycle()), peakGops, tunerName.c_str(), s.measuredOn.c_str());

    // Seed 004: records to FILE.tmp (a fresh one), pick_best into FILE at the end.
    const std::string tmpLog = s.logPath.empty() ? std::string() : s.logPath + ".tmp";
    std::unique_ptr<record::RecordWriter> writer;
    if (!tmpLog.empty())
        writer = std::make_unique<record::RecordWriter>(tmpLog, record::RecordWriter::Mode::Truncate);

    struct Row {
        std::string name, workload, best;
        long long space = 0;
        int trials = 0, failed = 0;
        double fallbackS = 0, bestS = 0, gops = 0;
    };
    std::vector<Row> rows;
    int total = 0, failedTotal = 0, wrongTotal = 0;
    const int n = int(tasks.size());
    for (int ti = 0; ti < n; ++ti) {
        const NamedVtaTask& nt = tasks[size_t(n - 1 - ti)];  // seed 004: reversed(tasks)
        const autotvm::Task& task = nt.task;
        Row row{nt.name.empty() ? "T" + std::to_string(n - ti) : nt.name,
                nt.workload.empty() ? task.taskName + " " + task.args.dump() : nt.workload, "-",
                static_cast<long long>(task.space.size())};
        const measure::MeasureResult fallback = s.measure.measureFunction(task, {task.space.get(0)}).front();
        row.fallbackS = fallback.ok() ? fallback.meanCost() : 0;

        std::unique_ptr<autotvm::Tuner> tuner = autotvm::makeVtaTuner(s.tuner, task, s.seed, s.planSize);
        // Seed 004's use_transfer_learning; TVM's index-based and GA tuners ignore history (load_history: pass).
        if (s.transferLearning && writer && dynamic_cast<autotvm::XGBTuner*>(tuner.get()) &&
            std::filesystem::exists(tmpLog))
            tuner->loadHistory(record::readAutoTvmRecords(tmpLog).records);
        autotvm::TuneOptions to = s.options;
        to.nTrial = int(std::min<std::int64_t>(s.options.nTrial, std::int64_t(task.space.size())));
        const auto tic = std::chrono::steady_clock::now();
        const std::string prefix = [&] {
            char b[32];
            std::snprintf(b, sizeof b, "[Task %2d/%2d] ", ti + 1, n);
            return std::string(b);
        }();
        autotvm::TuneCallback logAndProgress = [&](const autotvm::Tuner& t, const std::vector<autotvm::ConfigEntity>& c,
                                                   const std::vector<measure::MeasureResult>& r) {
            double cur = 0;
            for (size_t i = 0; i < c.size(); ++i) {
                if (writer)
                    for (const auto& rec : autotvm::logToFileRecords(task, c[i], r[i])) writer->append(rec);
                if (r[i].ok()) cur = t.flops(r[i]);
                else ++row.failed;
                if (r[i].errorNo == measure::MeasureErrorNo::WrongAnswer) ++wrongTotal;
            }
            row.trials += int(c.size());
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - tic).count();
            // TVM's progress_bar, with simulated GOPS.
            std::fprintf(stdout, "\r%s Current/Best: %7.2f/%7.2f GOPS (simulated) | Progress: (%d/%d) | %.2f s",
                         prefix.c_str(), cur / 1e9, t.bestFlops() / 1e9, row.trials, to.nTrial, secs);
            std::fflush(stdout);
        };
        tuner->tune(to, s.measure, {logAndProgress});
        std::fprintf(stdout, " Done.\n");
        if (const auto& best = tuner->bestConfig()) {
            row.bestS = task.flop / tuner->bestFlops();
            row.gops = tuner->bestFlops() / 1e9;
            row.best = "#" + std::to_string(best->index) + " " + configText(*best);
        }
        total += row.trials;
        failedTotal += row.failed;
        rows.push_back(row);
    }

    std::string picked;
    if (writer) {
        writer.reset();
        const record::DistillReport rep = record::pickBestFile(tmpLog, s.logPath);
        std::filesystem::remove(tmpLog);
        picked = ", log " + s.logPath + " (pick_best: " + std::to_string(rep.written) + " of " +
                 std::to_string(rep.inputRecords) + " records)";
    }

    std::fprintf(stdout, "\nTimes are simulated (VTA cycle model at %.0f MHz), not measured on hardware.\n", model.clockMhz);
    std::fprintf(stdout, "%-17s %-48s %6s %9s %16s %12s %8s %6s %8s  %s\n", "task", "workload", "space", "ok/trials",
                 "fallback sim ms", "best sim ms", "GOPS", "%peak", "speedup", "best config");
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
        std::fprintf(stdout, "%-17s %-48s %6lld %9s %16s %12s %8s %6s %8s  %s\n", r.name.c_str(), r.workload.c_str(), r.space,
                     ok, fb, best, gops, peak, speedup, r.best.c_str());
    }
    std::fprintf(stdout, "Tuning finished: %d trials (%d refused by the packed operator or the device, %d wrong answers)%s\n",
                 total, failedTotal - wrongTotal, wrongTotal, picked.c_str());
    return allTuned && wrongTotal == 0 ? 0 : 1;
}

int runAutotvmVtaTune(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Tune VTA tasks (resnet-18's conv2d_packed.vta, or its add.vta / multiply.vta) with AutoTVM's tuners on the "
        "VTA simulator, in process or through an RPC tracker (simulated time)."));
    p.addHelpOption();
    auto add = [&](const char* name, const char* help, const char* valueName, const char* def = nullptr) {
        QCommandLineOption o(QString::fromLatin1(name), QString::fromLatin1(help), QString::fromLatin1(valueName));
        if (def) o.setDefaultValue(QString::fromLatin1(def));
        p.addOption(o);
    };
    add("network", "seed 004: the VTA tasks of this zoo network, quantized and graph-packed (resnet-18, resnet-50, ...)",
        "name");
    add("ops", "--network: the ops whose tasks are extracted (add, multiply, conv2d)", "list", "add,multiply");
    add("workloads", "resnet-18[:C2,C5,...] (conv2d) or resnet-18-alu[:add_64x56x56,...] (add/multiply)", "set",
        "resnet-18");
    add("target", "VTA target (TVM vta_config.json TARGET): sim, pynq, intelfocl, ...", "target", "sim");
    add("vta-config", "a vta_config.json instead of --target's defaults", "file");
    add("tuner", "xgb (knob features), xgb_knob, xgb_rank, ..., ga, random, gridsearch", "name", "xgb");
    add("n-trial", "configs to measure per task (at most the space size)", "n", "64");
    add("early-stopping", "stop a task when the best is this many trials old (0: never)", "n", "0");
    add("n-parallel", "configs per tuner batch", "n", "8");
    add("plan-size", "xgb tuners: refit the model every N measurements (TVM plan_size)", "n", "64");
    add("seed", "random seed of the tuner and the operands", "n", "1");
    add("log", "AutoTVM log: records go to FILE.tmp, then pick_best writes FILE (empty: none)", "file", "");
    add("tracker", "measure on a VTA device server through this RPC tracker (HOST:PORT)", "host:port");
    add("key", "--tracker: the device key (default: the VTA target, as TVM's RPCRunner(env.TARGET))", "key");
    add("number", "--tracker: TVM RPCRunner number", "n", "5");
    add("repeat", "--tracker: TVM RPCRunner repeat", "n", "3");
    add("timeout", "--tracker: TVM RPCRunner timeout per config (s)", "s", "60");
    add("cooldown-interval", "--tracker: TVM RPCRunner cooldown_interval (s)", "s", "0.1");
    if (const auto rc = parseOrExit(p, args)) return *rc;

    VtaTuneSettings s;
    s.cfg = p.isSet(QStringLiteral("vta-config"))
                ? vta::VtaConfig::fromFile(p.value(QStringLiteral("vta-config")).toStdString())
                : vta::VtaConfig::forTarget(p.value(QStringLiteral("target")).toStdString());
    std::vector<NamedVtaTask> tasks;
    if (p.isSet(QStringLiteral("network"))) {
        TB_USER_CHECK(!p.isSet(QStringLiteral("workloads"))) << "--network and --workloads exclude each other";
        tasks = networkTasks(s.cfg, p.value(QStringLiteral("network")).toStdString(),
                             p.value(QStringLiteral("ops")).toStdString());
    } else {
        tasks = selectTasks(s.cfg, p.value(QStringLiteral("workloads")).toStdString());
    }
    s.tuner = p.value(QStringLiteral("tuner")).toStdString();
    autotvm::vtaTunerName(s.tuner);  // a bad name fails before anything is measured
    s.options.nTrial = positiveInt(p, "n-trial");
    s.options.earlyStopping = positiveInt(p, "early-stopping", true);
    s.options.nParallel = positiveInt(p, "n-parallel");
    const int seed = positiveInt(p, "seed", true);
    s.seed = std::uint64_t(seed);
    s.planSize = positiveInt(p, "plan-size");
    s.logPath = p.value(QStringLiteral("log")).toStdString();
    if (p.isSet(QStringLiteral("tracker"))) {
        measure::RpcRunnerOptions o;
        std::tie(o.trackerHost, o.trackerPort) =
            parseHostPort(p.value(QStringLiteral("tracker")).toStdString(), "--tracker");
        o.key = p.isSet(QStringLiteral("key")) ? p.value(QStringLiteral("key")).toStdString() : s.cfg.target;
        o.number = positiveInt(p, "number");
        o.repeat = positiveInt(p, "repeat");
        o.minRepeatMs = 0;  // TVM AutoTVM RPCRunner default
        o.timeoutS = positive<double>(p, "timeout");
        o.cooldownIntervalS = positive<double>(p, "cooldown-interval", true);
        s.measure.measureFunction = autotvm::vtaRpcMeasureFunction(s.cfg, o, std::uint32_t(seed));
        s.measuredOn = "RPC key '" + o.key + "' at " + o.trackerHost + ":" + std::to_string(o.trackerPort);
    } else {
        TB_USER_CHECK(!p.isSet(QStringLiteral("key"))) << "--key needs --tracker HOST:PORT";
        s.measure.measureFunction = autotvm::vtaSimMeasureFunction(s.cfg, std::uint32_t(seed));
        s.measuredOn = "the in-process simulator";
    }
    return tuneVtaTasks(tasks, s);
}

}  // namespace tb::cli
