// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli vta`: seed 004's compiler side on VTA (tune_alu_vta.py): a zoo network quantized
// (relay.quantize), graph-packed, its add.vta / multiply.vta / conv2d_packed.vta tasks extracted,
// and the whole network run with the packed operators on the VTA simulator (engine/vta/vta_network.h).
//   vta tasks --network resnet-18|resnet-50 [--target sim|pynq|intelfocl] [--vta-config FILE]
//             [--ops add,multiply,conv2d] [--json]
//        The seed's lines: "Extracted N alu tasks:" (after its rank > 4 and non-float filters;
//        TVM's extract_from_program returns each (name, args) once), "tsk =  Task(...)" per task,
//        "task ... already exists" for a task the scalar-rhs merge folds into another, "After
//        merged, final #tasks=N, tasks = [...]"; then a table with the occurrences in the graph.
//   vta run --network ... [--target ...] [--vta-config FILE] [--log FILE] [--seed N]
//        Quantizes, packs, runs on the simulator (packed convs and add/multiply chains ending in a
//        cast to int8 on VTA, the rest on the host) and on the integer reference interpreter, and
//        prints per task (name, args, occurrences, simulated ms, tuned, config; a tuned task also
//        with its fallback time on the same operands), the whole-network simulated VTA latency,
//        host time, counters, ops on VTA / host with the reasons, and whether the output equals
//        the reference (exit status 1 when not).
//        --log: AutoTVM v0.2 records (e.g. from `autotvm vta-tune`); per (task name, workload)
//        the valid record with the smallest mean cost is used; records of another VTA model than
//        --target's are ignored with a warning line.
#include <QCommandLineParser>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "engine/graph/int_interpreter.h"
#include "engine/graph/passes/quantize.h"
#include "engine/graph/zoo.h"
#include "engine/record/record_io.h"
#include "engine/support/error.h"
#include "engine/vta/graph_pack.h"
#include "engine/vta/vta_config.h"
#include "engine/vta/vta_network.h"
#include "engine/vta/vta_task.h"

namespace tb::cli {

namespace {

struct Common {
    vta::VtaConfig cfg;
    std::string network;
    graph::Graph quantized, packed;
};

void addCommonOptions(QCommandLineParser& p) {
    p.addHelpOption();
    p.addOption({QStringLiteral("network"), QStringLiteral("resnet-18 or resnet-50"), QStringLiteral("name"),
                 QStringLiteral("resnet-18")});
    p.addOption({QStringLiteral("target"), QStringLiteral("VTA target (TVM vta_config.json TARGET): sim, pynq, intelfocl"),
                 QStringLiteral("target"), QStringLiteral("sim")});
    p.addOption({QStringLiteral("vta-config"), QStringLiteral("a vta_config.json instead of --target's defaults"),
                 QStringLiteral("file")});
}

Common loadCommon(const QCommandLineParser& p) {
    Common c;
    c.cfg = p.isSet(QStringLiteral("vta-config")) ? vta::VtaConfig::fromFile(p.value(QStringLiteral("vta-config")).toStdString())
                                                  : vta::VtaConfig::forTarget(p.value(QStringLiteral("target")).toStdString());
    c.network = p.value(QStringLiteral("network")).toStdString();
    TB_USER_CHECK(c.network == "resnet-18" || c.network == "resnet-50")
        << "--network: '" << c.network << "' is not supported here (resnet-18, resnet-50)";
    c.quantized = graph::quantize(graph::makeNetwork(c.network, 1, "NCHW"));
    c.packed = vta::graphPack(c.quantized, c.cfg.batch(), c.cfg.blockOut(), c.cfg.wgtWidth());
    return c;
}

std::string tuple(const std::vector<int64_t>& v) {
    std::string r = "(";
    for (size_t k = 0; k < v.size(); ++k) r += (k ? ", " : "") + std::to_string(v[k]);
    return r + (v.size() == 1 ? ",)" : ")");
}

// Python's repr of the task's args: the tensors, and for conv2d_packed (strides, padding,
// dilation, layout, out_dtype) as vta_conv2d.py's conv2d_packed takes them.
std::string argsRepr(const vta::VtaNetTask& t, const vta::VtaConfig& cfg) {
    std::string r = t.argsString();
    if (!t.conv) return r;
    const vta::Conv2dWorkload& w = *t.conv;
    r.pop_back();
    r += ", " + tuple({w.hstride, w.wstride}) + ", " + tuple({w.hpad, w.wpad, w.hpad, w.wpad}) + ", (1, 1), 'NCHW" +
         std::to_string(cfg.batch()) + "n" + std::to_string(cfg.blockOut()) + "c', 'int32')";
    return r;
}

// TVM's Task.__repr__.
std::string taskRepr(const vta::VtaNetTask& t, const vta::VtaConfig& cfg) {
    const std::string args = argsRepr(t, cfg);
    return "Task(func_name=" + t.name + ", args=" + args + ", kwargs={}, workload=('" + t.name + "', " +
           args.substr(1) + ")";
}

std::set<std::string> parseOps(const QString& spec) {
    std::set<std::string> ops;
    for (const QString& o : spec.split(QLatin1Char(','), Qt::SkipEmptyParts)) ops.insert(o.trimmed().toStdString());
    TB_USER_CHECK(!ops.empty()) << "--ops: no op named (add, multiply, conv2d)";
    return ops;
}

int runVtaTasks(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Seed 004's VTA task extraction from a quantized, packed network."));
    addCommonOptions(p);
    p.addOption({QStringLiteral("ops"), QStringLiteral("ops to extract: add, multiply, conv2d"), QStringLiteral("list"),
                 QStringLiteral("add,multiply")});
    p.addOption({QStringLiteral("json"), QStringLiteral("print JSON instead of text")});
    if (const auto rc = parseOrExit(p, args)) return *rc;
    const std::set<std::string> ops = parseOps(p.value(QStringLiteral("ops")));
    const Common c = loadCommon(p);
    const vta::TaskExtraction ex = vta::extractVtaTasks(c.packed, c.cfg, ops);
    const bool alu = !ops.count("conv2d");
    if (p.isSet(QStringLiteral("json"))) {
        nlohmann::ordered_json j;
        j["network"] = c.network;
        j["target"] = vta::vtaTargetString(c.cfg);
        j["ops_in_graph"] = ex.extracted;
        j["after_filter_occurrences"] = ex.filtered;
        auto list = [&](const std::vector<vta::VtaNetTask>& ts) {
            nlohmann::ordered_json a = nlohmann::ordered_json::array();
            for (const auto& t : ts)
                a.push_back({{"name", t.name}, {"args", argsRepr(t, c.cfg)}, {"occurrences", t.count},
                             {"rhs", t.rhsScalar ? "scalar" : t.rhsBroadcast ? "per-channel" : "tensor"}});
            return a;
        };
        j["extracted"] = list(ex.unmerged);
        j["tasks"] = list(ex.tasks);
        std::printf("%s\n", j.dump(2).c_str());
        return 0;
    }
    if (alu && !vta::vtaTargetHasAluOps(c.cfg)) std::printf("ALU only op only available for intelfocl target\n");
    std::printf("Extract tasks...\n");
    std::printf("Extracted %zu %stasks:\n", ex.unmerged.size(), alu ? "alu " : "");
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& t : ex.unmerged) {
        std::printf("tsk =  %s\n", taskRepr(t, c.cfg).c_str());
        // The seed's merge: a scalar rhs becomes the lhs.
        vta::VtaNetTask merged = t;
        if (merged.tensors.size() == 2 && merged.tensors[1].shape.empty()) merged.tensors[1] = merged.tensors[0];
        if (!seen.insert({merged.name, argsRepr(merged, c.cfg)}).second)
            std::printf("task %s already exists\n", taskRepr(merged, c.cfg).c_str());
    }
    std::string all = "[";
    for (size_t k = 0; k < ex.tasks.size(); ++k) all += (k ? ", " : "") + taskRepr(ex.tasks[k], c.cfg);
    std::printf("After merged, final #tasks=%zu, tasks = %s]\n", ex.tasks.size(), all.c_str());
    std::printf("\n%d %s nodes in the graph, %d after the filter (packed, not float32); %zu tasks:\n", ex.extracted,
                alu ? "add/multiply" : "task", ex.filtered, ex.tasks.size());
    std::printf("  #  %-18s %5s  %-12s %s\n", "name", "occ", "rhs", "args");
    for (size_t k = 0; k < ex.tasks.size(); ++k) {
        const auto& t = ex.tasks[k];
        std::printf("%3zu  %-18s %5d  %-12s %s\n", k + 1, t.name.c_str(), t.count,
                    t.conv ? "-" : t.rhsBroadcast ? "per-channel" : "lhs shape",
                    argsRepr(t, c.cfg).c_str());
    }
    return 0;
}

// ---- --log: the best record per (task, workload) ------------------------------------------------

struct BestRecords {
    std::map<std::string, std::pair<double, autotvm::ConfigEntity>> best;  // name|workload -> (cost, config)
    int used = 0;
};

std::string lookupKey(const std::string& name, const vta::VtaWorkload& wl) { return name + "|" + vta::workloadStr(wl); }

BestRecords readBest(const std::string& path, const vta::VtaConfig& cfg) {
    BestRecords r;
    const auto log = record::readAutoTvmRecords(path);
    std::map<std::string, int> otherModels;
    int skipped = 0;
    for (const auto& rec : log.records) {
        if (rec.isV01() || !rec.valid()) continue;
        if (rec.taskName != "conv2d_packed.vta" && rec.taskName != "add.vta" && rec.taskName != "multiply.vta") continue;
        const std::string model = vta::vtaModelOfTarget(rec.target).value_or("");
        if (model != cfg.model()) {
            ++otherModels[model];
            continue;
        }
        try {
            vta::VtaWorkload wl;
            if (rec.taskName == "conv2d_packed.vta") wl = vta::conv2dWorkloadFromArgs(rec.args);
            else wl = vta::aluWorkloadFromArgs(rec.taskName, rec.args);
            const std::string key = lookupKey(rec.taskName, wl);
            const double cost = rec.meanCost();
            auto it = r.best.find(key);
            if (it == r.best.end() || cost < it->second.first)
                r.best.insert_or_assign(key, std::make_pair(cost, autotvm::ConfigEntity::fromJson(rec.config)));
            ++r.used;
        } catch (const UserError& e) {
            ++skipped;
            std::fprintf(stderr, "warning: %s: a %s record is skipped: %s\n", path.c_str(), rec.taskName.c_str(), e.what());
        }
    }
    for (const auto& [model, n] : otherModels)
        std::printf("warning: %d record(s) of VTA model '%s' in %s ignored (--target's model is %s)\n", n,
                    model.c_str(), path.c_str(), cfg.model().c_str());
    std::printf("Log %s: %d valid VTA records of model %s, best configs for %zu tasks\n", path.c_str(), r.used,
                cfg.model().c_str(), r.best.size());
    return r;
}

graph::HostTensor randomImage(const std::vector<int64_t>& shape, uint32_t seed) {
    graph::HostTensor t;
    t.shape = shape;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int64_t k = 0; k < t.numElements(); ++k) t.f.push_back(u(rng));
    return t;
}

int runVtaRun(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Run a quantized, packed network on the VTA simulator and check it against the int8 reference."));
    addCommonOptions(p);
    p.addOption({QStringLiteral("log"), QStringLiteral("AutoTVM log with VTA records (best per task used)"),
                 QStringLiteral("file")});
    p.addOption({QStringLiteral("seed"), QStringLiteral("seed of the random input image"), QStringLiteral("n"),
                 QStringLiteral("7")});
    if (const auto rc = parseOrExit(p, args)) return *rc;
    bool ok = false;
    const uint32_t seed = p.value(QStringLiteral("seed")).toUInt(&ok);
    TB_USER_CHECK(ok) << "--seed must be a non-negative integer";
    const Common c = loadCommon(p);
    std::printf("VTA %s, target %s; %s quantized (int8, global scale 8) and packed\n", c.cfg.model().c_str(),
                vta::vtaTargetString(c.cfg).c_str(), c.network.c_str());
    vta::VtaRunOptions opt;
    opt.aluOps = vta::vtaTargetHasAluOps(c.cfg);
    BestRecords best;
    if (p.isSet(QStringLiteral("log"))) {
        best = readBest(p.value(QStringLiteral("log")).toStdString(), c.cfg);
        opt.lookup = [&](const std::string& name, const vta::VtaWorkload& wl) -> std::optional<autotvm::ConfigEntity> {
            auto it = best.best.find(lookupKey(name, wl));
            if (it == best.best.end()) return std::nullopt;
            return it->second.second;
        };
    }
    const graph::HostTensor img = randomImage(c.quantized.node(c.quantized.inputs().at(0)).type.shape, seed);
    const auto t0 = std::chrono::steady_clock::now();
    const auto ref = graph::runIntGraph(c.quantized, {img});
    const double refS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const vta::VtaNetworkRun run = vta::runNetworkOnVta(c.packed, c.cfg, {img}, opt);

    std::printf("\n%-18s %-34s %4s %12s %6s %12s  %s\n", "task", "workload", "occ", "sim ms", "tuned", "fallback ms",
                "config");
    for (const auto& t : run.tasks) {
        std::string fb = "-";
        if (t.tuned) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.3f", t.fallbackSeconds * 1e3);
            fb = buf;
        }
        std::printf("%-18s %-34s %4d %12.3f %6s %12s  %s\n", t.name.c_str(), vta::workloadStr(t.wl).c_str(), t.occurrences,
                    t.seconds * 1e3, t.tuned ? "yes" : "no", fb.c_str(), t.schedule.c_str());
        if (t.tuned)
            std::printf("  %s: tuned %s than the fallback (%.2fx), output %s\n", t.name.c_str(),
                        t.seconds < t.fallbackSeconds ? "faster" : "not faster",
                        t.seconds > 0 ? t.fallbackSeconds / t.seconds : 0.0,
                        t.fallbackOutputEqual ? "identical" : "DIFFERENT");
        if (!t.note.empty()) std::printf("  %s: %s\n", t.name.c_str(), t.note.c_str());
        std::printf("  args %s\n", t.args.c_str());
    }
    int kernels = 0;
    for (const auto& t : run.tasks) kernels += t.occurrences;
    std::printf("\nWhole network: simulated VTA time %.3f ms in %d kernels (%d conv2d_packed, %d add/multiply); host part "
                "%.2f s wall; reference interpreter %.2f s wall\n",
                run.vtaSeconds * 1e3, kernels, run.vtaConvs, run.aluKernels, run.hostSeconds, refS);
    std::printf("Counters: %s\n", run.stats.toJson().c_str());
    auto opList = [](const std::map<std::string, int>& m) {
        std::string s;
        for (const auto& [op, n] : m) s += (s.empty() ? "" : ", ") + op + " " + std::to_string(n);
        return s;
    };
    std::printf("Ops on VTA: %s\n", opList(run.vtaOps).c_str());
    std::printf("Ops on the host: %s\n", opList(run.hostOps).c_str());
    std::map<std::pair<std::string, std::string>, int> reasons;
    for (const auto& h : run.hostReasons) ++reasons[{h.op, h.reason}];
    std::printf("conv2d/add/multiply left on the host:\n");
    for (const auto& [k, n] : reasons) std::printf("  %3d %-10s %s\n", n, k.first.c_str(), k.second.c_str());
    bool equal = run.outputs.size() == ref.size();
    double maxDiff = 0;
    for (size_t o = 0; equal && o < ref.size(); ++o) {
        equal = run.outputs[o].shape == ref[o].shape && run.outputs[o].dtype == ref[o].dtype;
        for (int64_t k = 0; equal && k < ref[o].numElements(); ++k)
            maxDiff = std::max(maxDiff, std::fabs(run.outputs[o].value(k) - ref[o].value(k)));
        equal = equal && run.outputs[o] == ref[o];
    }
    std::printf("output equal to the int8 reference: %s (max diff %g)\n", equal ? "yes" : "no", maxDiff);
    return equal ? 0 : 1;
}

void printVtaUsage(FILE* out) {
    std::fprintf(out,
                 "Usage: tunebench-cli vta <action> [options]\n\nActions:\n"
                 "  tasks   extract seed 004's add.vta/multiply.vta (and conv2d_packed.vta) tasks of a network\n"
                 "  run     run the quantized, packed network on the VTA simulator, checked against the reference\n");
}

}  // namespace

int runVta(const QStringList& args) {
    if (args.size() < 2 || args[1] == QLatin1String("--help") || args[1] == QLatin1String("-h")) {
        printVtaUsage(args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? 2 : 0;
    }
    QStringList sub = args.mid(1);
    sub[0] = args[0] + QLatin1Char(' ') + args[1];
    if (args[1] == QLatin1String("tasks")) return runVtaTasks(sub);
    if (args[1] == QLatin1String("run")) return runVtaRun(sub);
    std::fprintf(stderr, "error: unknown vta action '%s'\n\n", qPrintable(args[1]));
    printVtaUsage(stderr);
    return 2;
}

}  // namespace tb::cli
