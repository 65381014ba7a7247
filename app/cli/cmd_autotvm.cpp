// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli autotvm tune|pick-best`: AutoTVM on one task, as TVM's tune_relay_x86 tutorial
// tunes each task (engine/autotvm).
//   autotvm tune (--template NAME --args JSON | --network NAME [--batch N] | --onnx FILE [--shape B])
//                [--tasks I,J,...] [--tuner NAME]
//                [--n-trial N] [--early-stopping N] [--log FILE] [--target T]
//                [--n-parallel N] [--number N] [--repeat N] [--min-repeat-ms MS] [--timeout S]
//                [--seed N] [--runner local|rpc --tracker HOST:PORT --key KEY]
//                [--transfer-learning [--min-seed-records N]]
//        --tuner: TVM's tutorial names (xgb = itervar features, xgb_knob, xgb_curve, xgb_rank...,
//        xgb_rank_binary..., ga, random, gridsearch; autotvm/tuner.h makeTuner)
//        prints TVM's progress line ("[Task  1/ 1]  Current/Best: ... GFLOPS | Progress: (i/n) |
//        t s") and appends one v0.2 record per measured config to the log (flushed per record);
//        --network / --onnx (kept NCHW) tunes each extracted task (x86, arm_cpu for
//        -device=arm_cpu, mali for opencl -device=mali; autotvm/task_extraction.h) in turn with
//        n_trial = min(N, space size), as TVM's tune_relay_x86 / tune_relay_arm /
//        tune_relay_mobile_gpu tutorials do; --tasks keeps only those numbers; --ops nn.conv2d extracts only the convs' tasks (extract_from_program
//        ops=, as tune_relay_mobile_gpu); a Mali target runs on GPU device servers (--runner rpc);
//        --transfer-learning: before each task, the records already in --log (of any task of the
//        same template) train the XGB tuner's base model (TVM tuner.load_history, as the
//        tutorials' use_transfer_learning), if at least --min-seed-records (TVM: 500) are usable
//   autotvm vta-tune ...   cmd_autotvm_vta.cpp (VTA conv2d_packed tasks on the simulator)
//   autotvm pick-best -i IN [-o OUT]   TVM `autotvm.record.pick_best` (default OUT = IN.best.log)
//   autotvm tasks (--network NAME [--batch N] | --onnx FILE [--shape B]) [--target T]
//        the tasks TVM's autotvm.task.extract_from_program lists for the NCHW network on the
//        target (x86, arm_cpu for `-device=arm_cpu`, mali for `opencl -device=mali`): template,
//        FLOPs, space size, args; --ops keeps the tasks of those ops
#include <QCommandLineParser>
#include <QFileInfo>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "engine/autotvm/task_extraction.h"
#include "engine/autotvm/tuner.h"
#include "engine/codegen/target.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
#include "engine/record/history_best.h"
#include "engine/record/record_io.h"
#include "engine/support/error.h"
#include "engine/tuning/tuning_job.h"

namespace tb::cli {

namespace {

void printAutotvmUsage(FILE* out) {
    std::fprintf(out,
                 "Usage: tunebench-cli autotvm <action> [options]\n\n"
                 "Actions:\n"
                 "  tune --template NAME --args JSON   tune one AutoTVM task (args as in a record)\n"
                 "  tune --network NAME [--batch N]    tune every AutoTVM task of a zoo network (NCHW)\n"
                 "  pick-best -i IN [-o OUT]           keep the best record per workload and target\n"
                 "  tasks --network NAME [--target T]  list the AutoTVM tasks of a zoo network (NCHW)\n"
                 "  vta-tune --workloads resnet-18     tune the VTA conv2d_packed tasks on the simulator\n\n"
                 "Run 'tunebench-cli autotvm <action> --help' for the options.\n");
}

int intOption(const QCommandLineParser& p, const QString& name) {
    bool ok = false;
    const int v = p.value(name).toInt(&ok);
    TB_USER_CHECK(ok) << "--" << name.toStdString() << " must be an integer, not '" << p.value(name).toStdString() << "'";
    return v;
}

double doubleOption(const QCommandLineParser& p, const QString& name) {
    bool ok = false;
    const double v = p.value(name).toDouble(&ok);
    TB_USER_CHECK(ok) << "--" << name.toStdString() << " must be a number, not '" << p.value(name).toStdString() << "'";
    return v;
}

// TVM extract_from_program's `ops=`: keep the tasks of these relay ops ("nn.conv2d,nn.dense";
// the `nn.` may be left out). Empty: every op.
void keepOps(autotvm::ExtractedTasks& ex, const QString& ops) {
    if (ops.isEmpty()) return;
    std::vector<std::string> keep;
    for (const QString& o : ops.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        std::string op = o.trimmed().toStdString();
        if (op.rfind("nn.", 0) != 0) op = "nn." + op;
        TB_USER_CHECK(op == "nn.conv2d" || op == "nn.dense")
            << "--ops: '" << o.toStdString() << "' is not an op with AutoTVM templates (nn.conv2d, nn.dense)";
        keep.push_back(op);
    }
    auto filter = [&](std::vector<autotvm::ExtractedTask>& v) {
        std::erase_if(v, [&](const autotvm::ExtractedTask& t) {
            return std::find(keep.begin(), keep.end(), autotvm::relayOpOf(t.taskName)) == keep.end();
        });
    };
    filter(ex.tasks);
    filter(ex.notInstantiable);
    filter(ex.all);
}

int runAutotvmTune(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Tune one AutoTVM task (TVM autotvm tuner.tune)."));
    p.addHelpOption();
    auto add = [&](const char* name, const char* help, const char* valueName, const char* def = nullptr) {
        QCommandLineOption o(QString::fromLatin1(name), QString::fromLatin1(help), QString::fromLatin1(valueName));
        if (def) o.setDefaultValue(QString::fromLatin1(def));
        p.addOption(o);
    };
    add("template", "AutoTVM template (task name), e.g. dense_nopack.x86", "name");
    add("args", "task args as JSON, as in a record's input[2]", "json");
    std::string tunerHelp;
    for (const auto& n : autotvm::tunerNames()) tunerHelp += (tunerHelp.empty() ? "" : ", ") + n;
    add("tuner", ("tuner: " + tunerHelp + " (xgb = itervar features)").c_str(), "name", "xgb");
    add("n-trial", "configs to measure", "n", "100");
    add("early-stopping", "stop when the best is this many trials old (0: never)", "n", "0");
    add("log", "AutoTVM log to append records to (empty: none)", "file", "");
    add("target", "TVM target string (default: this CPU, written as llvm -keys=cpu -mcpu=<cpu>)", "target", "");
    add("n-parallel", "configs per batch (0: hardware threads)", "n", "0");
    add("number", "runs per repeat", "n", "10");
    add("repeat", "repeats", "n", "1");
    add("min-repeat-ms", "minimum time of one repeat (ms)", "ms", "0");
    add("timeout", "per-config run limit (s)", "s", "10");
    add("runner", "local (this machine's sandbox) or rpc (devices of an RPC tracker, TVM RPCRunner)", "kind", "local");
    add("tracker", "RPC tracker of --runner rpc", "host:port", "127.0.0.1:9190");
    add("key", "device key of --runner rpc, e.g. rasp4b-64", "key", "");
    add("seed", "random seed of the tuner", "n", "0");
    add("network", "tune every AutoTVM task of a zoo network (NCHW), instead of --template/--args", "name");
    add("batch", "batch size of --network", "n", "1");
    add("onnx", "tune every AutoTVM task of an ONNX model (kept NCHW), instead of --template/--args", "file");
    add("shape", "an --onnx input shape binding, e.g. x=1,3,224,224 (repeatable)", "name=dims");
    add("tasks", "with --network/--onnx: tune only these tasks, numbered 1.. in extraction order, e.g. 1,3", "list");
    add("ops", "with --network/--onnx: extract the tasks of these ops only (TVM extract_from_program ops=), "
               "e.g. nn.conv2d", "list");
    p.addOption({QStringLiteral("transfer-learning"),
                 QStringLiteral("before each task, fit the XGB tuner's base model on the records in --log "
                                "(TVM load_history)")});
    add("min-seed-records", "records --transfer-learning needs to use the history (TVM: 500)", "n", "500");
    if (const auto rc = parseOrExit(p, args)) return *rc;
    const bool network = p.isSet(QStringLiteral("network")) || p.isSet(QStringLiteral("onnx"));
    TB_USER_CHECK(network != (p.isSet(QStringLiteral("template")) || p.isSet(QStringLiteral("args"))))
        << "autotvm tune needs either --network (or --onnx) or --template with --args";
    TB_USER_CHECK(network || !p.isSet(QStringLiteral("tasks"))) << "--tasks selects among the tasks of --network/--onnx";

    // The target as the auto-scheduler's `tune` resolves it and writes it into records.
    const tuning::ResolvedTarget resolved = tuning::resolveTarget(p.value(QStringLiteral("target")).toStdString());
    const codegen::Target& target = resolved.target;
    tuning::RunnerConfig rc;
    const std::string runnerKind = p.value(QStringLiteral("runner")).toStdString();
    TB_USER_CHECK(runnerKind == "local" || runnerKind == "rpc") << "--runner must be local or rpc, got '" << runnerKind << "'";
    rc.kind = runnerKind == "rpc" ? tuning::RunnerConfig::Kind::Rpc : tuning::RunnerConfig::Kind::Local;
    const QStringList hp = p.value(QStringLiteral("tracker")).split(QLatin1Char(':'));
    TB_USER_CHECK(hp.size() == 2 && !hp[0].isEmpty() && hp[1].toInt() > 0) << "--tracker must be HOST:PORT";
    rc.trackerHost = hp[0].toStdString();
    rc.trackerPort = hp[1].toInt();
    rc.key = p.value(QStringLiteral("key")).toStdString();
    rc.number = intOption(p, QStringLiteral("number"));
    rc.repeat = intOption(p, QStringLiteral("repeat"));
    rc.minRepeatMs = int(doubleOption(p, QStringLiteral("min-repeat-ms")));
    rc.timeoutS = doubleOption(p, QStringLiteral("timeout"));
    TB_USER_CHECK(rc.kind == tuning::RunnerConfig::Kind::Rpc || target.runsOnHost())
        << "target '" << resolved.recordString << "' does not run on this machine: use --runner rpc with a device key";
    std::vector<autotvm::ExtractedTask> tasks;
    if (network) {
        tuning::NetworkSource src;
        src.zooName = p.value(QStringLiteral("network")).toStdString();
        src.onnxPath = p.value(QStringLiteral("onnx")).toStdString();
        for (const QString& s : p.values(QStringLiteral("shape"))) src.shapes.push_back(s.toStdString());
        src.batch = intOption(p, QStringLiteral("batch"));
        src.layout = "NCHW";
        if (!src.onnxPath.empty()) src.zooName = QFileInfo(QString::fromStdString(src.onnxPath)).fileName().toStdString();
        autotvm::ExtractedTasks ex = autotvm::extractTasks(tuning::loadNetwork(src), resolved.recordString);
        keepOps(ex, p.value(QStringLiteral("ops")));
        std::string skipped;
        if (!ex.notInstantiable.empty())
            skipped += ", skipped " + std::to_string(ex.notInstantiable.size()) + " tasks whose templates do not run here";
        if (ex.skippedOps) skipped += ", " + std::to_string(ex.skippedOps) + " conv2d/dense ops without a template";
        std::fprintf(stdout, "Extracted %zu AutoTVM tasks from %s (NCHW, batch %lld)%s\n", ex.tasks.size(),
                     src.zooName.c_str(), static_cast<long long>(src.batch), skipped.c_str());
        tasks = ex.tasks;
        if (p.isSet(QStringLiteral("tasks"))) {
            std::vector<autotvm::ExtractedTask> chosen;
            for (const QString& item : p.value(QStringLiteral("tasks")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                bool ok = false;
                const int i = item.trimmed().toInt(&ok);
                TB_USER_CHECK(ok && i >= 1 && i <= int(tasks.size()))
                    << "--tasks: '" << item.toStdString() << "' is not a task number 1.." << tasks.size();
                chosen.push_back(tasks[size_t(i - 1)]);
            }
            tasks = std::move(chosen);
            std::fprintf(stdout, "Tuning %zu of them (--tasks %s)\n", tasks.size(),
                         p.value(QStringLiteral("tasks")).toStdString().c_str());
        }
    } else {
        TB_USER_CHECK(p.isSet(QStringLiteral("template")) && p.isSet(QStringLiteral("args")))
            << "autotvm tune needs --template and --args";
        const std::string argsText = p.value(QStringLiteral("args")).toStdString();
        const auto argsJson = nlohmann::ordered_json::parse(argsText, nullptr, false);
        TB_USER_CHECK(!argsJson.is_discarded()) << "--args is not valid JSON: " << argsText;
        tasks.push_back({p.value(QStringLiteral("template")).toStdString(), argsJson});
    }

    measure::LocalBuilder builder(target);
    const std::unique_ptr<measure::ProgramRunner> runnerPtr =
        tuning::makeRunner(rc, resolved, std::uint64_t(intOption(p, QStringLiteral("seed"))));
    measure::ProgramRunner& runner = *runnerPtr;

    autotvm::TuneOptions base;
    base.nTrial = intOption(p, QStringLiteral("n-trial"));
    base.earlyStopping = intOption(p, QStringLiteral("early-stopping"));
    base.nParallel = intOption(p, QStringLiteral("n-parallel"));
    if (base.nParallel <= 0) base.nParallel = int(std::max(1u, std::thread::hardware_concurrency()));
    TB_USER_CHECK(base.nTrial > 0) << "--n-trial must be positive";

    std::unique_ptr<record::RecordWriter> writer;
    const std::string logPath = p.value(QStringLiteral("log")).toStdString();
    if (!logPath.empty()) writer = std::make_unique<record::RecordWriter>(logPath);
    const std::string tunerName = p.value(QStringLiteral("tuner")).toStdString();
    const std::uint64_t seed = std::uint64_t(intOption(p, QStringLiteral("seed")));
    const bool transfer = p.isSet(QStringLiteral("transfer-learning"));
    const int minSeedRecords = intOption(p, QStringLiteral("min-seed-records"));
    TB_USER_CHECK(!transfer || !logPath.empty()) << "--transfer-learning reads the records of --log; give --log";
    TB_USER_CHECK(!transfer || tunerName.rfind("xgb", 0) == 0)
        << "--transfer-learning needs an xgb tuner (TVM's other tuners cannot load history)";

    int total = 0, failed = 0, tuned = 0;
    for (size_t ti = 0; ti < tasks.size(); ++ti) {
        const autotvm::Task task = autotvm::Task::create(tasks[ti].taskName, tasks[ti].args, resolved.recordString);
        std::unique_ptr<autotvm::Tuner> tuner = autotvm::makeTuner(tunerName, task, seed);
        autotvm::TuneOptions to = base;  // the tutorials' n_trial=min(n_trial, len(task.config_space))
        to.nTrial = int(std::min<std::int64_t>(base.nTrial, task.space.size()));
        std::fprintf(stdout, "Task %s, args %s, target %s: %lld configs, %.0f FLOPs, tuner %s\n",
                     task.taskName.c_str(), task.args.dump().c_str(), task.target.c_str(),
                     static_cast<long long>(task.space.size()), task.flop, tunerName.c_str());
        if (transfer && std::ifstream(logPath).good()) {
            writer.reset();  // flushed and closed while we read the file
            const auto history = record::readAutoTvmRecords(logPath);
            const auto same = std::count_if(history.records.begin(), history.records.end(),
                                            [&](const record::AutoTvmRecord& r) { return r.taskName == task.taskName; });
            const bool used = tuner->loadHistory(history.records, minSeedRecords);
            std::fprintf(stdout, "Transfer learning: %lld of the %zu records in %s are of %s: %s\n",
                         static_cast<long long>(same), history.records.size(), logPath.c_str(), task.taskName.c_str(),
                         used ? "base model fitted" : "too few (--min-seed-records), not used");
            writer = std::make_unique<record::RecordWriter>(logPath);
        }
        // TVM callback.progress_bar with prefix "[Task %2d/%2d] " and si_prefix G.
        const auto tic = std::chrono::steady_clock::now();
        char prefix[32];
        std::snprintf(prefix, sizeof prefix, "[Task %2d/%2d] ", int(ti + 1), int(tasks.size()));
        int count = 0;
        auto progress = [&](double cur, double best) {
            const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - tic).count();
            std::fprintf(stdout, "\r%s Current/Best: %7.2f/%7.2f GFLOPS | Progress: (%d/%d) | %.2f s", prefix,
                         cur / 1e9, best / 1e9, count, to.nTrial, t);
            std::fflush(stdout);
        };
        progress(0, 0);
        autotvm::TuneCallback logToFile = [&](const autotvm::Tuner&, const std::vector<autotvm::ConfigEntity>& c,
                                              const std::vector<measure::MeasureResult>& r) {
            if (writer)
                for (size_t i = 0; i < c.size(); ++i) writer->append(autotvm::makeRecord(task, c[i], r[i]));
        };
        autotvm::TuneCallback progressBar = [&](const autotvm::Tuner& t, const std::vector<autotvm::ConfigEntity>& c,
                                                const std::vector<measure::MeasureResult>& r) {
            count += int(c.size());
            double flops = 0;
            for (const auto& res : r) {
                if (res.ok()) flops = t.flops(res);
                else ++failed;
            }
            progress(flops, t.bestFlops());
        };
        tuner->tune(to, {&builder, &runner}, {progressBar, logToFile});
        std::fprintf(stdout, " Done.\n");
        total += count;
        if (const auto& best = tuner->bestConfig()) {
            ++tuned;
            std::fprintf(stdout, "Best: %.2f GFLOPS, config #%lld %s (trial %d)\n", tuner->bestFlops() / 1e9,
                         static_cast<long long>(best->index), best->entityJson().dump().c_str(), tuner->bestIter() + 1);
        } else {
            std::fprintf(stdout, "Best: none (every config failed)\n");
        }
    }
    std::fprintf(stdout, "Tuning finished: %d trials (%d failed)%s%s\n", total, failed, logPath.empty() ? "" : ", log ",
                 logPath.c_str());
    return tuned == int(tasks.size()) ? 0 : 1;
}

int runAutotvmTasks(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "List the AutoTVM tasks of a zoo network (NCHW) as TVM autotvm.task.extract_from_program does for the target."));
    p.addHelpOption();
    p.addOption({QStringLiteral("network"), QStringLiteral("zoo network (mobilenet, resnet-18, ...)"), QStringLiteral("name")});
    p.addOption({QStringLiteral("batch"), QStringLiteral("batch size"), QStringLiteral("n"), QStringLiteral("1")});
    p.addOption({QStringLiteral("target"),
                 QStringLiteral("TVM target string (default: this CPU); -device=arm_cpu selects the arm_cpu strategy"),
                 QStringLiteral("target"), QString()});
    p.addOption({QStringLiteral("onnx"), QStringLiteral("an ONNX model (kept NCHW) instead of --network"), QStringLiteral("file")});
    p.addOption({QStringLiteral("ops"), QStringLiteral("list the tasks of these ops only, e.g. nn.conv2d"),
                 QStringLiteral("list")});
    p.addOption({QStringLiteral("shape"), QStringLiteral("an --onnx input shape binding, e.g. x=1,3,224,224"),
                 QStringLiteral("name=dims")});
    if (const auto rc = parseOrExit(p, args)) return *rc;
    TB_USER_CHECK(p.isSet(QStringLiteral("network")) || p.isSet(QStringLiteral("onnx")))
        << "autotvm tasks needs --network or --onnx";
    const std::string target = tuning::resolveTarget(p.value(QStringLiteral("target")).toStdString()).recordString;
    tuning::NetworkSource src;
    src.zooName = p.value(QStringLiteral("network")).toStdString();
    src.onnxPath = p.value(QStringLiteral("onnx")).toStdString();
    for (const QString& s : p.values(QStringLiteral("shape"))) src.shapes.push_back(s.toStdString());
    if (!src.onnxPath.empty()) src.zooName = QFileInfo(QString::fromStdString(src.onnxPath)).fileName().toStdString();
    src.batch = intOption(p, QStringLiteral("batch"));
    src.layout = "NCHW";
    autotvm::ExtractedTasks ex = autotvm::extractTasks(tuning::loadNetwork(src), target);
    keepOps(ex, p.value(QStringLiteral("ops")));
    std::fprintf(stdout, "%zu AutoTVM tasks of %s (NCHW, batch %lld) for %s%s\n", ex.all.size(), src.zooName.c_str(), static_cast<long long>(src.batch),
                 target.c_str(),
                 ex.skippedOps ? (" (" + std::to_string(ex.skippedOps) + " conv2d/dense ops without a template)").c_str()
                               : "");
    std::fprintf(stdout, "  %3s  %-34s %14s %10s  %s\n", "#", "template", "FLOPs", "space", "args");
    int i = 0;
    for (const auto& t : ex.all) {
        const autotvm::Template* tmpl = autotvm::findTemplate(t.taskName);
        const bool runs = tmpl->canInstantiate();
        char flop[32] = "-";
        if (runs) std::snprintf(flop, sizeof flop, "%.0f", autotvm::Task::create(t.taskName, t.args, target).flop);
        std::fprintf(stdout, "  %3d  %-34s %14s %10lld  %s%s\n", ++i, t.taskName.c_str(), flop,
                     static_cast<long long>(tmpl->space(t.args).size()), t.args.dump().c_str(),
                     runs ? "" : "  (no instantiation here)");
    }
    return 0;
}

int runAutotvmPickBest(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Keep the best AutoTVM record per workload (TVM autotvm.record --mode pick)."));
    p.addHelpOption();
    p.addOption({{QStringLiteral("i"), QStringLiteral("input")}, QStringLiteral("AutoTVM log"), QStringLiteral("file")});
    p.addOption({{QStringLiteral("o"), QStringLiteral("output")}, QStringLiteral("output (default IN.best.log)"),
                 QStringLiteral("file")});
    if (const auto rc = parseOrExit(p, args)) return *rc;
    TB_USER_CHECK(p.isSet(QStringLiteral("input"))) << "autotvm pick-best needs -i IN";
    const std::string in = p.value(QStringLiteral("input")).toStdString();
    const std::string out = p.isSet(QStringLiteral("output")) ? p.value(QStringLiteral("output")).toStdString()
                                                              : in + ".best.log";
    const record::DistillReport report = record::pickBestFile(in, out);
    std::fprintf(stdout, "Picked %d best records of %d in %s into %s\n", report.written, report.inputRecords, in.c_str(),
                 out.c_str());
    return 0;
}

}  // namespace

int runAutotvm(const QStringList& args) {
    if (args.size() < 2 || args[1] == QLatin1String("--help") || args[1] == QLatin1String("-h")) {
        printAutotvmUsage(args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? 2 : 0;
    }
    QStringList sub = args.mid(1);
    sub[0] = args[0] + QLatin1Char(' ') + args[1];
    if (args[1] == QLatin1String("tune")) return runAutotvmTune(sub);
    if (args[1] == QLatin1String("pick-best")) return runAutotvmPickBest(sub);
    if (args[1] == QLatin1String("tasks")) return runAutotvmTasks(sub);
    if (args[1] == QLatin1String("vta-tune")) return runAutotvmVtaTune(sub);
    std::fprintf(stderr, "error: unknown autotvm action '%s'\n\n", qPrintable(args[1]));
    printAutotvmUsage(stderr);
    return 2;
}

}  // namespace tb::cli
