// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/build_module.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "engine/autotvm/apply_history_best.h"
#include "engine/codegen/codegen_gpu_source.h"
#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/target.h"
#include "engine/graph/fuse_ops.h"
#include "engine/graph/passes/passes.h"
#include "engine/graph/task_extraction.h"
#include "engine/lower/lower_dag.h"
#include "engine/lower/lower_state.h"
#include "engine/measure/gpu_device.h"
#include "engine/measure/gpu_worker_client.h"
#include "engine/measure/machine_peak.h"
#include "engine/measure/timer.h"
#include "engine/record/history_best.h"
#include "engine/record/record_io.h"
#include "engine/runtime/memory_plan.h"
#include "engine/schedule/infer_bound.h"
#include "engine/schedule/layout_rewrite.h"
#include "engine/search/default_schedule_gpu.h"
#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"
#include "engine/support/md5.h"
#include "engine/support/thread_pool.h"

namespace tb::runtime {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A C identifier from a fused name (letters, digits, '_'), at most `max` characters.
std::string symbolPart(const std::string& name, size_t max) {
    std::string s;
    for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (s.size() > max) s.resize(max);
    return s;
}

/// One distinct DAG to compile.
struct KernelJob {
    te::ComputeDAG dag;
    KernelReport report;
    lower::LoweredFunc func;
    codegen::GpuModule gpu;  ///< GPU targets: the group's kernels (instead of func)
    std::optional<autotvm::ExtractedTask> autotvmWorkload;  ///< the group's AutoTVM workload, if any
    /// Argument positions that are constants (params) in every call: the weights a layout rewrite
    /// may pre-transform.
    std::set<int> constantArgs;
    /// The weights the kernel reads in a rewritten layout (schedule/layout_rewrite.h).
    std::vector<PlaceholderLayout> layouts;
};

/// One kernel call of the network: the job it runs and its Op exec node.
struct Call {
    int job;
    int node;
};

/// The best record of the job's workload for `target` (TVM's key, or the pre-v0.8 key, noted), or null.
const record::MeasureRecord* findRecord(KernelJob& job, const record::HistoryBest& history, const std::string& target) {
    const record::MeasureRecord* rec = history.query(target, job.report.workloadKey);
    if (!rec) {
        rec = history.query(target, graph::legacyTvmWorkloadKey(job.dag));  // a log of TVM < 0.8
        if (rec) job.report.note = "record found under the pre-v0.8 TVM key";
    }
    return rec;
}

/// The AutoTVM config of the job's workload applied to its DAG (apply_history_best.h); false (with
/// the reason in the note) when the template cannot schedule it.
bool lowerAutotvm(KernelJob& job, const autotvm::ApplyHistoryBest& dispatch) {
    KernelReport& r = job.report;
    try {
        const autotvm::DispatchedConfig d = dispatch.query(job.autotvmWorkload->taskName, job.autotvmWorkload->args);
        auto dag = std::make_shared<const te::ComputeDAG>(job.dag);
        const State s = d.tmpl->scheduleFused(autotvm::TaskArgs(d.tmpl->name(), d.args), d.config, dag);
        job.func = lower::lowerState(*dag, s, r.symbol);
        r.autotvmConfig = d.tmpl->name() + (d.isFallback() ? " fallback" : " #" + std::to_string(d.config.index));
        r.source = d.isFallback() ? ScheduleSource::Default : ScheduleSource::Tuned;
        if (!d.isFallback()) r.recordMs = d.record->meanCost() * 1e3;
        r.steps = int(s.transformSteps().size());
        return true;
    } catch (const std::exception& e) {
        r.note = std::string("the AutoTVM config does not apply: ") + e.what();
        return false;
    }
}

/// The layout the kernel of `job` reads its weights in: rewritten as the record was timed
/// (`layoutRewriteOption`: its task's layout_rewrite_option 1 or 2, or 2 for a default schedule
/// that asks for it; TVM's relay build rewrites the layout-free weights of every auto-scheduled
/// CPU kernel), when the weights are constants of every call, so that they can
/// be transformed once at compile time. Otherwise, and when the rewrite fails (noted), `s` as it is.
LayoutRewrite layoutRewriteOf(KernelJob& job, const State& s, int layoutRewriteOption, const BuildOptions& options) {
    LayoutRewrite none{job.dag, s, {}};
    if (!options.layoutRewrite || layoutRewriteOption == 0) return none;
    try {
        LayoutRewrite rw = rewriteLayout(job.dag, s, LayoutRewriteOption::RewriteForPreTransformed);
        for (const PlaceholderLayout& l : rw.layouts) {
            if (!job.constantArgs.count(l.tensorIndex)) {
                job.report.note += std::string(job.report.note.empty() ? "" : "; ") + "weight " + l.placeholder +
                                   " is not a constant: its layout is not rewritten";
                return none;
            }
        }
        return rw;
    } catch (const std::exception& e) {
        job.report.note += std::string(job.report.note.empty() ? "" : "; ") + "no layout rewrite: " + e.what();
        return none;
    }
}

/// The weights of every call whose kernel reads rewritten layouts, transformed once into those
/// layouts (TVM's AutoSchedulerLayoutRewrite pass followed by FoldConstant): the call reads a new
/// param in the new layout; a param that no node reads any more is dropped. Calls sharing a weight
/// and a layout share the new param. New params are placed right before their first reader, so the
/// node order stays topological; `calls` and the graph's inputs and outputs follow the renumbering.
void preTransformWeights(ExecGraph& eg, std::vector<Call>& calls, const std::vector<KernelJob>& jobs,
                         std::map<std::string, NamedArray>& params) {
    int nextParam = 0;
    for (const auto& [name, a] : params) nextParam = std::max(nextParam, std::stoi(name.substr(1)) + 1);
    std::vector<ExecNode> added;
    std::vector<NamedArray> addedData;
    std::map<std::pair<int, std::string>, int> addedOf;  // (old param node, layout) -> index in `added`
    std::map<int, std::vector<int>> addedBefore;         // op node -> new params it reads
    std::vector<std::vector<int>> newInputs(eg.nodes.size());  // -(k+1) = added[k]
    for (const Call& c : calls) {
        const KernelJob& job = jobs[size_t(c.job)];
        if (job.layouts.empty()) continue;
        std::vector<int>& in = newInputs[size_t(c.node)];
        in = eg.nodes[size_t(c.node)].inputs;
        for (const PlaceholderLayout& l : job.layouts) {
            TB_CHECK(l.tensorIndex >= 0 && size_t(l.tensorIndex) < in.size()) << "layout of " << l.placeholder;
            const int old = in[size_t(l.tensorIndex)];
            const ExecNode& p = eg.nodes[size_t(old)];
            TB_CHECK(p.kind == ExecNode::Kind::Param) << "rewritten weight " << l.placeholder << " is not a param";
            auto [it, fresh] = addedOf.try_emplace({old, l.origLayout() + ">" + l.newLayout()}, int(added.size()));
            if (fresh) {
                ExecNode n;
                n.kind = ExecNode::Kind::Param;
                n.name = "p" + std::to_string(nextParam++);
                n.shape = l.newShape;
                NamedArray a;
                a.shape = l.newShape;
                a.data = transformLayout(l, params.at(p.name).data);
                added.push_back(std::move(n));
                addedData.push_back(std::move(a));
            }
            in[size_t(l.tensorIndex)] = -(it->second + 1);
            addedBefore[c.node].push_back(it->second);
        }
    }
    if (added.empty()) return;
    std::vector<bool> used(eg.nodes.size(), false);
    for (size_t i = 0; i < eg.nodes.size(); ++i)
        for (int in : newInputs[i].empty() ? eg.nodes[i].inputs : newInputs[i])
            if (in >= 0) used[size_t(in)] = true;
    for (int o : eg.outputs) used[size_t(o)] = true;
    std::vector<ExecNode> out;
    std::vector<int> newIndex(eg.nodes.size(), -1), addedIndex(added.size(), -1);
    for (size_t i = 0; i < eg.nodes.size(); ++i) {
        ExecNode n = std::move(eg.nodes[i]);
        if (n.kind == ExecNode::Kind::Param && !used[i]) {
            params.erase(n.name);
            continue;
        }
        if (n.kind == ExecNode::Kind::Op) {
            for (int a : addedBefore[int(i)]) {
                if (addedIndex[size_t(a)] >= 0) continue;
                addedIndex[size_t(a)] = int(out.size());
                params[added[size_t(a)].name] = std::move(addedData[size_t(a)]);
                out.push_back(std::move(added[size_t(a)]));
            }
            if (!newInputs[i].empty()) n.inputs = newInputs[i];
            for (int& in : n.inputs) in = in >= 0 ? newIndex[size_t(in)] : addedIndex[size_t(-in - 1)];
        }
        newIndex[i] = int(out.size());
        out.push_back(std::move(n));
    }
    eg.nodes = std::move(out);
    for (int& i : eg.inputs) i = newIndex[size_t(i)];
    for (int& o : eg.outputs) o = newIndex[size_t(o)];
    for (Call& c : calls) c.node = newIndex[size_t(c.node)];
}

/// Lowers `rw`'s state as the kernel of `job`, which then reads the weights of rw.layouts in their
/// new layouts (listed in the report).
void lowerWithLayouts(KernelJob& job, const LayoutRewrite& rw) {
    KernelReport& r = job.report;
    job.func = lower::lowerState(rw.dag, rw.state, r.symbol);
    job.layouts = rw.layouts;
    for (const PlaceholderLayout& l : rw.layouts)
        r.layoutRewrite += (r.layoutRewrite.empty() ? "" : "; ") + l.placeholder + " " + l.origLayout() + " -> " +
                           l.newLayout();
}

/// For each convolution that TVM's rule rewrites to winograd (in the order AlterOpLayout meets
/// them): keep winograd (true) or compile it direct (false), by the log. `wg` / `wgroups`: the
/// network optimized and partitioned under the rule. Each such conv's group is a winograd task
/// there and a conv2d task with every such conv direct (graph::winogradDirectPairs); the cheaper
/// record of the two wins, a record beats none, and with no record for either the rule stands. Empty when the log decides nothing differently from the
/// rule, or when the variants do not pair up (then the rule, as TVM).
std::vector<bool> chooseWinogradPerConv(const graph::Graph& g, const graph::Graph& wg,
                                        const std::vector<graph::FusedGroup>& wgroups,
                                        const graph::AlterLayoutOptions& ao, const record::HistoryBest& history,
                                        const std::string& target) {
    std::vector<bool> keep;
    bool differs = false;
    for (const graph::WinogradDirectPair& p : graph::winogradDirectPairs(g, wg, wgroups, ao)) {
        const double wc = history.queryCost(target, p.winogradKey);
        const double dc = history.queryCost(target, p.direct.workloadKey());
        const bool useWinograd = !(dc < wc);  // +inf when there is no record
        differs |= !useWinograd;
        keep.push_back(useWinograd);
    }
    return differs ? keep : std::vector<bool>{};
}

/// Chooses the schedule of one DAG and lowers it (never throws for a bad record or a default
/// schedule that does not lower: it falls back and says so in the report).
void lowerJob(KernelJob& job, const record::HistoryBest* history, const autotvm::ApplyHistoryBest* autotvm,
              const std::string& target, const BuildOptions& options) {
    KernelReport& r = job.report;
    if (autotvm && job.autotvmWorkload && lowerAutotvm(job, *autotvm)) return;
    if (history) {
        if (const record::MeasureRecord* rec = findRecord(job, *history, target)) {
            try {
                State s = replaySteps(job.dag, stepsFromJson(rec->steps));
                s = inferBound(s);
                lowerWithLayouts(job, layoutRewriteOf(job, s, rec->task.layoutRewriteOption, options));
                r.source = ScheduleSource::Tuned;
                r.recordMs = rec->meanCost() * 1e3;
                r.steps = int(s.transformSteps().size());
                return;
            } catch (const std::exception& e) {
                r.note += std::string(r.note.empty() ? "" : "; ") + "the record does not replay: " + e.what();
            }
        }
    }
    if (options.defaultSchedules) {
        try {
            // The default reads its constant weights rewritten into its tiles' loop order, once, here
            // (as a tuned option-2 record does; TVM's relay build rewrites every auto-scheduled CPU
            // kernel): the tile then streams its weights contiguously instead of one cache line per
            // input channel, 2 KB apart in HWIO, which page-walks when the weights come cold from
            // DRAM, as they do in resnet-50 (102 MB of weights: 80 -> 63 ms at 1 thread). A default
            // that tiles a dense weight across its layout needs the rewrite; when a weight is not a
            // constant or the rewrite fails, the default without it, in the original layouts.
            if (options.layoutRewrite) {
                search::DefaultScheduleOptions relaid = options.defaults;
                relaid.layoutFreeContiguous = true;
                bool needsRewrite = false;
                const State s = inferBound(search::defaultSchedule(job.dag, relaid, &needsRewrite));
                const std::string noteBefore = r.note;
                const LayoutRewrite rw =
                    layoutRewriteOf(job, s, int(LayoutRewriteOption::RewriteForPreTransformed), options);
                r.note = noteBefore;  // a default without a rewrite is no news
                if (!rw.layouts.empty() || !needsRewrite) {
                    lowerWithLayouts(job, rw);
                    r.source = ScheduleSource::Default;
                    r.steps = int(s.transformSteps().size());
                    return;
                }
            }
            State s = inferBound(search::defaultSchedule(job.dag, options.defaults));
            job.func = lower::lowerState(job.dag, s, r.symbol);
            r.source = ScheduleSource::Default;
            r.steps = int(s.transformSteps().size());
            return;
        } catch (const std::exception& e) {
            r.note += std::string(r.note.empty() ? "" : "; ") + "the default schedule does not lower: " + e.what();
        }
    }
    job.func = lower::lowerComputeDag(job.dag, r.symbol);
    r.source = ScheduleSource::Unscheduled;
    r.steps = 0;
}

/// lowerJob for a GPU target: the best record's state, else the GPU default schedule
/// (default_schedule_gpu.h), lowered and emitted as the job's GpuModule. A GPU has no unscheduled
/// fallback (every loop must be bound), so a default schedule that does not lower is a UserError
/// naming the group.
void lowerGpuJob(KernelJob& job, const record::HistoryBest* history, const autotvm::ApplyHistoryBest* autotvm,
                 const codegen::Target& target, const std::string& targetString) {
    KernelReport& r = job.report;
    const codegen::GpuLanguage lang = target.isCuda() ? codegen::GpuLanguage::CUDA : codegen::GpuLanguage::OpenCL;
    if (autotvm && job.autotvmWorkload) {
        // The template's GPU schedule under the dispatched config (a Mali template; TVM relay.build
        // under apply_history_best).
        try {
            const autotvm::DispatchedConfig d = autotvm->query(job.autotvmWorkload->taskName, job.autotvmWorkload->args);
            auto dag = std::make_shared<const te::ComputeDAG>(job.dag);
            const State s = d.tmpl->scheduleFused(autotvm::TaskArgs(d.tmpl->name(), d.args), d.config, dag);
            job.gpu = codegen::buildGpuModule(*dag, s, lang, r.symbol);
            r.autotvmConfig = d.tmpl->name() + (d.isFallback() ? " fallback" : " #" + std::to_string(d.config.index));
            r.source = d.isFallback() ? ScheduleSource::Default : ScheduleSource::Tuned;
            if (!d.isFallback()) r.recordMs = d.record->meanCost() * 1e3;
            r.steps = int(s.transformSteps().size());
            return;
        } catch (const std::exception& e) {
            r.note = std::string("the AutoTVM config does not apply: ") + e.what();
        }
    }
    if (history) {
        if (const record::MeasureRecord* rec = findRecord(job, *history, targetString)) {
            try {
                State s = inferBound(replaySteps(job.dag, stepsFromJson(rec->steps)));
                job.gpu = codegen::buildGpuModule(job.dag, s, lang, r.symbol);
                r.source = ScheduleSource::Tuned;
                r.recordMs = rec->meanCost() * 1e3;
                r.steps = int(s.transformSteps().size());
                return;
            } catch (const std::exception& e) {
                r.note += std::string(r.note.empty() ? "" : "; ") + "the record does not replay: " + e.what();
            }
        }
    }
    try {
        State s = inferBound(search::defaultGpuSchedule(job.dag, target.gpuHardwareParams()));
        job.gpu = codegen::buildGpuModule(job.dag, s, lang, r.symbol);
        r.source = ScheduleSource::Default;
        r.steps = int(s.transformSteps().size());
    } catch (const std::exception& e) {
        throw UserError("group " + r.funcName + " (" + r.workloadKey + ") has no GPU schedule: " + e.what());
    }
}

/// The whole network as one GpuModule: every storage of the memory plan is a buffer (those of the
/// inputs, params and outputs first: they are the module's arguments, in that order), then each
/// job's workspaces; the launches of every call in execution order, their arguments mapped to
/// those buffers; one source with one copy of the helper prelude. `argNodes` receives the exec
/// node of each argument buffer.
codegen::GpuModule assembleGpuNetwork(const ExecGraph& eg, const std::vector<KernelJob>& jobs,
                                      const std::vector<std::pair<int, int>>& calls, codegen::GpuLanguage lang,
                                      std::vector<int>* argNodes) {
    codegen::GpuModule net;
    net.language = lang;
    std::vector<int> bufferOfStorage(eg.storageBytes.size(), -1);
    auto addStorage = [&](int storage) {
        if (bufferOfStorage[size_t(storage)] >= 0) return false;
        bufferOfStorage[size_t(storage)] = int(net.bufferElements.size());
        net.bufferElements.push_back(std::max<int64_t>(1, eg.storageBytes[size_t(storage)] / 4));
        return true;
    };
    for (int i : eg.inputs)
        if (addStorage(eg.nodes[size_t(i)].storage)) argNodes->push_back(i);
    for (size_t i = 0; i < eg.nodes.size(); ++i)
        if (eg.nodes[i].kind == ExecNode::Kind::Param && addStorage(eg.nodes[i].storage)) argNodes->push_back(int(i));
    for (int o : eg.outputs)
        if (addStorage(eg.nodes[size_t(o)].storage)) argNodes->push_back(o);
    net.numArgs = int(net.bufferElements.size());
    for (size_t st = 0; st < eg.storageBytes.size(); ++st) addStorage(int(st));
    std::vector<int> workspaceBase(jobs.size(), -1);
    const std::string prelude = codegen::gpuSourcePrelude(lang);
    net.source = "// a network of " + std::to_string(jobs.size()) + " kernels generated by TuneBench\n" + prelude;
    for (size_t j = 0; j < jobs.size(); ++j) {
        const codegen::GpuModule& m = jobs[j].gpu;
        workspaceBase[j] = int(net.bufferElements.size());
        for (size_t k = size_t(m.numArgs); k < m.bufferElements.size(); ++k) net.bufferElements.push_back(m.bufferElements[k]);
        std::string src = m.source;
        const size_t at = src.find(prelude);
        TB_CHECK(at != std::string::npos) << "kernel source of " << jobs[j].report.symbol << " lacks the prelude";
        src.erase(at, prelude.size());
        net.source += src;
    }
    for (const auto& [job, node] : calls) {
        const codegen::GpuModule& m = jobs[size_t(job)].gpu;
        const ExecNode& n = eg.nodes[size_t(node)];
        TB_CHECK(m.numArgs == int(n.inputs.size()) + 1) << "kernel " << n.func << " takes " << m.numArgs
                                                        << " arguments, the call passes " << n.inputs.size() + 1;
        auto bufferOf = [&](int k) {
            if (k >= m.numArgs) return workspaceBase[size_t(job)] + (k - m.numArgs);
            const int node2 = k < int(n.inputs.size()) ? n.inputs[size_t(k)] : node;
            return bufferOfStorage[size_t(eg.nodes[size_t(node2)].storage)];
        };
        for (codegen::GpuLaunch l : m.launches) {
            for (int& a : l.args) a = bufferOf(a);
            net.launches.push_back(std::move(l));
        }
    }
    return net;
}

/// Runs argv (no shell), returns the exit status and the combined output.
int runProgram(const std::vector<std::string>& argv, std::string* output) {
    int pipefd[2];
    TB_CHECK(pipe(pipefd) == 0) << "pipe failed";
    const pid_t pid = fork();
    TB_CHECK(pid >= 0) << "fork failed";
    if (pid == 0) {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        close(pipefd[1]);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    close(pipefd[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) > 0) output->append(buf, size_t(n));
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

const char* scheduleSourceName(ScheduleSource s) {
    switch (s) {
        case ScheduleSource::Tuned: return "tuned";
        case ScheduleSource::Default: return "default";
        case ScheduleSource::Unscheduled: return "unscheduled";
    }
    return "?";
}

std::string hostTargetString() { return "llvm -keys=cpu -mcpu=" + codegen::Target::host().mcpu; }

double relativeMaxError(const float* got, const float* want, size_t n) {
    double maxErr = 0, maxRef = 0;
    for (size_t i = 0; i < n; ++i) {
        const double e = std::fabs(double(got[i]) - double(want[i]));
        maxErr = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(maxErr, e);
        maxRef = std::max(maxRef, std::fabs(double(want[i])));
    }
    if (maxRef == 0) return maxErr == 0 ? 0 : std::numeric_limits<double>::infinity();
    return maxErr / maxRef;
}

std::string BuildReport::text() const {
    std::ostringstream os;
    char line[640];
    char hugeLine[96] = "";
    if (hugePageBytes >= 0)
        std::snprintf(hugeLine, sizeof hugeLine, "; %.2f MB of them on 2 MiB pages", hugePageBytes / 1e6);
    const std::string hugePages = hugeLine;
    std::snprintf(line, sizeof line,
                  "Compiled for %s: %d graph nodes, %d kernel calls, %zu distinct kernels\n"
                  "  schedules: %d calls tuned, %d default, %d unscheduled (%s log: %d records, %d bad lines)\n"
                  "  memory: %.2f MB intermediates (%.2f MB without reuse), %.2f MB constants%s\n"
                  "  time: passes %.2f s, lowering %.2f s, LLVM %.2f s, loading %.2f s\n",
                  target.c_str(), graphNodes, groups, kernels.size(), tunedCalls, defaultCalls, unscheduledCalls,
                  logFormat.c_str(), logRecords, logBadLines, plannedBytes / 1e6, naiveBytes / 1e6, paramBytes / 1e6, hugePages.c_str(), passSeconds,
                  lowerSeconds, compileSeconds, loadSeconds);
    os << line;
    if (!winogradChoice.empty()) {
        const auto kept = std::count(winogradChoice.begin(), winogradChoice.end(), true);
        os << "  winograd: " << kept << " of " << winogradChoice.size() << " convolutions kept winograd, "
           << winogradChoice.size() - size_t(kept) << " compiled direct (the log's direct record is faster, or the only one)\n";
    }
    if (logFormat == "autotvm" &&
        std::none_of(kernels.begin(), kernels.end(), [](const KernelReport& k) { return !k.autotvmConfig.empty(); }))
        os << "  note: no kernel is an AutoTVM workload (AutoTVM's x86 records apply to NCHW conv2d)\n";
    os << "  kernel                                                   calls  schedule     record(ms)    MFLOP  LLVM(s)\n";
    for (const auto& k : kernels) {
        std::string name = k.funcName.size() > 56 ? k.funcName.substr(0, 53) + "..." : k.funcName;
        char rec[32] = "-";
        if (k.recordMs >= 0) std::snprintf(rec, sizeof rec, "%.4f", k.recordMs);
        std::snprintf(line, sizeof line, "  %-56s %5d  %-11s %11s %8.2f %8.2f%s\n", name.c_str(), k.calls,
                      scheduleSourceName(k.source), rec, k.flop / 1e6, k.compileSeconds,
                      k.hasReduce && k.source != ScheduleSource::Tuned ? "  (task not tuned)" : "");
        os << line;
        if (!k.autotvmConfig.empty()) os << "      autotvm: " << k.autotvmConfig << "\n";
        if (!k.layoutRewrite.empty()) os << "      layout rewrite: " << k.layoutRewrite.substr(0, 300) << "\n";
        if (!k.note.empty()) os << "      note: " << k.note.substr(0, 300) << "\n";
    }
    return os.str();
}

/// A GPU network's module, and the inputs of its last run (benchmark() times with them).
struct GpuNetworkState {
    codegen::GpuModule module;
    std::vector<int> argNodes;  // exec node of each argument buffer
    std::string api;            // "cuda" or "opencl"
    std::vector<te::Buffer> lastInputs;
};

CompiledModule::CompiledModule() = default;
CompiledModule::~CompiledModule() {
    m_runtime.reset();  // before the kernels it calls are unloaded
    m_loaded.clear();
}

const codegen::GpuModule* CompiledModule::gpuModule() const { return m_gpu ? &m_gpu->module : nullptr; }

const std::vector<int>& CompiledModule::gpuArgumentNodes() const {
    static const std::vector<int> kNone;
    return m_gpu ? m_gpu->argNodes : kNone;
}

gpu::GpuMeasureResult CompiledModule::runGpu(const gpu::GpuMeasureOptions& o, bool returnOutputs) const {
    const GpuNetworkState& g = *m_gpu;
    gpu::GpuCheck data;  // only inputs: the arguments' contents
    data.inputs.resize(g.argNodes.size());
    std::vector<int> outputs;
    for (size_t b = 0; b < g.argNodes.size(); ++b) {
        const ExecNode& n = m_graph.nodes[size_t(g.argNodes[b])];
        if (n.kind == ExecNode::Kind::Param) data.inputs[b] = m_params.at(n.name).data;
        for (size_t i = 0; i < m_graph.inputs.size(); ++i)
            if (m_graph.inputs[i] == g.argNodes[b] && i < g.lastInputs.size()) data.inputs[b] = g.lastInputs[i].data;
        for (int o2 : m_graph.outputs)
            if (o2 == g.argNodes[b] && returnOutputs) outputs.push_back(int(b));
    }
    // In tunebench-gpu-worker: this process links LLVM, which the OpenCL/CUDA runtimes must not
    // share a process with (measure/gpu_worker_client.h). A network gets a generous deadline.
    gpu::GpuMeasureResult r = measure::measureGpuModuleInWorker(gpu::parseGpuApi(g.api), 0, g.module, o, &data, 3600, outputs);
    TB_USER_CHECK(r.ok()) << "the " << g.api << " network for " << m_report.target << " failed on this machine's device: "
                          << r.errorMsg;
    return r;
}

CompiledModule::CompiledModule(CompiledModule&&) noexcept = default;
CompiledModule& CompiledModule::operator=(CompiledModule&&) noexcept = default;

GraphRuntime& CompiledModule::runtime() {
    TB_USER_CHECK(m_runtime) << "the network was compiled for " << m_report.target
                             << " without loading it (a cross-compiled module runs on its device, not here)";
    return *m_runtime;
}

std::vector<te::Buffer> CompiledModule::run(const std::vector<te::Buffer>& inputs) {
    if (m_gpu) {
        TB_USER_CHECK(inputs.size() == m_graph.inputs.size())
            << "the network has " << m_graph.inputs.size() << " inputs, got " << inputs.size();
        for (size_t i = 0; i < inputs.size(); ++i) {
            const ExecNode& n = m_graph.nodes[size_t(m_graph.inputs[i])];
            TB_USER_CHECK(inputs[i].shape == n.shape) << "input '" << n.name << "' has the wrong shape";
        }
        m_gpu->lastInputs = inputs;
        gpu::GpuMeasureOptions o;
        o.number = 1;
        o.repeat = 1;
        o.minRepeatMs = 0;
        const gpu::GpuMeasureResult r = runGpu(o, true);
        std::vector<te::Buffer> out;
        for (int node : m_graph.outputs) {
            for (size_t b = 0; b < m_gpu->argNodes.size(); ++b)
                if (m_gpu->argNodes[b] == node) out.push_back(te::Buffer{m_graph.nodes[size_t(node)].shape, r.outputs.at(b)});
        }
        return out;
    }
    GraphRuntime& rt = runtime();
    TB_USER_CHECK(inputs.size() == rt.numInputs())
        << "the network has " << rt.numInputs() << " inputs, got " << inputs.size();
    for (size_t i = 0; i < inputs.size(); ++i) {
        const ExecNode& n = rt.graph().nodes[size_t(rt.graph().inputs[i])];
        TB_USER_CHECK(inputs[i].shape == n.shape) << "input '" << n.name << "' has the wrong shape";
        rt.setInput(i, inputs[i].data.data(), inputs[i].data.size());
    }
    rt.run();
    std::vector<te::Buffer> out;
    for (size_t i = 0; i < rt.numOutputs(); ++i) out.push_back(te::Buffer{rt.outputShape(i), rt.output(i)});
    return out;
}

BenchmarkResult CompiledModule::benchmark(int repeat, int number, double minRepeatMs) {
    measure::TimerOptions o;
    o.repeat = std::max(1, repeat);
    o.number = std::max(1, number);
    o.minRepeatMs = minRepeatMs;
    if (m_gpu) {
        // TVM's time evaluator on the device (warm-up, then repeat rounds of number runs).
        gpu::GpuMeasureOptions go;
        go.number = o.number;
        go.repeat = o.repeat;
        go.minRepeatMs = o.minRepeatMs;
        return BenchmarkResult::fromResults(runGpu(go, false).costs);
    }
    GraphRuntime& rt = runtime();
    return BenchmarkResult::fromResults(measure::timeEvaluate([&rt] { rt.run(); }, o));
}

void CompiledModule::exportLibrary(const std::string& dir) const {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    TB_USER_CHECK(!ec) << "cannot create directory '" << dir << "': " << ec.message();
    const fs::path objDir = fs::path(dir) / "objects";
    fs::create_directories(objDir, ec);
    TB_USER_CHECK(!ec) << "cannot create directory '" << objDir.string() << "': " << ec.message();
    std::vector<std::string> objects;
    for (const auto& k : m_kernels) {
        const fs::path p = objDir / (k->name + ".o");
        std::ofstream f(p, std::ios::binary);
        f.write(reinterpret_cast<const char*>(k->object.data()), std::streamsize(k->object.size()));
        TB_USER_CHECK(f.good()) << "cannot write '" << p.string() << "'";
        objects.push_back(p.string());
    }
    const std::string lib = (fs::path(dir) / "deploy_lib.so").string();
    // ld.lld first (no driver needed), then compiler drivers. Unresolved symbols (the kernel
    // runtime tb_rt_*, libm) are bound by the process that loads the library.
    const std::vector<std::vector<std::string>> linkers = {
        {"ld.lld", "-shared", "-o", lib}, {"ld.lld-16", "-shared", "-o", lib},
        {"clang", "-shared", "-o", lib},  {"cc", "-shared", "-o", lib}};
    std::string log;
    bool linked = false;
    for (auto argv : linkers) {
        argv.insert(argv.end(), objects.begin(), objects.end());
        if (argv[0] != "ld.lld" && argv[0] != "ld.lld-16") argv.push_back("-lm");
        std::string out;
        const int rc = runProgram(argv, &out);
        if (rc == 0) {
            linked = true;
            break;
        }
        log += argv[0] + " exited with " + std::to_string(rc) + (out.empty() ? "" : ": " + out.substr(0, 2000)) + "\n";
    }
    TB_USER_CHECK(linked) << "cannot link '" << lib << "':\n" << log;
    fs::remove_all(objDir, ec);
    {
        std::ofstream f(fs::path(dir) / "deploy_graph.json");
        f << graphToJson(graph()) << "\n";
        TB_USER_CHECK(f.good()) << "cannot write the graph JSON in '" << dir << "'";
    }
    {
        std::ofstream f(fs::path(dir) / "deploy_param.params", std::ios::binary);
        const std::string bytes = saveParams(m_params);
        f.write(bytes.data(), std::streamsize(bytes.size()));
        TB_USER_CHECK(f.good()) << "cannot write the params in '" << dir << "'";
    }
}

CompiledModule build(const graph::Graph& g, const BuildOptions& options) {
    CompiledModule mod;
    BuildReport& rep = mod.m_report;
    rep.target = options.target.empty() ? hostTargetString() : options.target;
    const codegen::Target target = codegen::Target::parse(rep.target);
    const bool gpu = target.isGpu();
    TB_USER_CHECK(gpu || !options.load || target.runsOnHost())
        << "target '" << rep.target << "' does not run on this machine";
    BuildOptions opts = options;
    if (!gpu) opts.defaults.vectorLanes = std::max(4, target.vectorBits() / 32);
    // The default schedule's tile follows the full-rate FMA width of the core that runs it, as the
    // tuner's seed does (tuning::TuneOptions::fmaLanes): measured when that core is this one.
    if (!gpu && target.runsOnHost()) opts.defaults.fmaLanes = measure::fullRateFmaLanes();
    graph::AlterLayoutOptions ao = graph::alterOptionsForTarget(rep.target);
    ao.winograd = opts.winograd;

    // The log: auto-scheduler records (ApplyHistoryBest) or AutoTVM records (apply_history_best),
    // told apart by their lines.
    std::unique_ptr<record::HistoryBest> history;
    std::unique_ptr<autotvm::ApplyHistoryBest> autotvmDispatch;
    if (!options.logPath.empty()) {
        const std::string text = record::readTextFile(options.logPath);
        rep.logFormat = record::logFormatName(record::detectLogFormat(text));
        if (record::detectLogFormat(text) == record::LogFormat::AutoTvm) {
            TB_USER_CHECK(!gpu || target.isMali())
                << "AutoTVM logs are applied to CPU and Mali targets only so far; '" << options.logPath
                << "' is an AutoTVM log and the target is " << rep.target;
            auto log = record::parseAutoTvmRecords(text);
            rep.logRecords = int(log.records.size());
            rep.logBadLines = int(log.badLines.size());
            autotvmDispatch = std::make_unique<autotvm::ApplyHistoryBest>(log.records, rep.target, ao.simdLanes);
            // relay.build with AutoTVM: no auto-scheduler layout rewrites; NCHW convs blocked by
            // their configs (TVM _alter_conv2d_layout).
            ao.autoScheduler = false;
            ao.nchwcBlocks = [d = autotvmDispatch.get()](const graph::Node& conv, const std::vector<int64_t>& data,
                                                         const std::vector<int64_t>& kernel) {
                return d->nchwcBlocks(conv, data, kernel);
            };
            // arm_cpu: TVM's arm_cpu _alter_conv2d_layout (spatial_pack pre-pack / winograd pre-transform).
            if (autotvmDispatch->armCpu() || autotvmDispatch->mali())
                ao.armCpuConv = [d = autotvmDispatch.get()](const graph::Node& conv, const std::vector<int64_t>& data,
                                                            const std::vector<int64_t>& kernel) {
                    return d->armCpuConv(conv, data, kernel);
                };
        } else {
            auto log = record::parseMeasureRecords(text);
            rep.logRecords = int(log.records.size());
            rep.logBadLines = int(log.badLines.size());
            history = std::make_unique<record::HistoryBest>(log.records, options.includeCompatible);
        }
    }

    // 1. The graph as task extraction sees it, partitioned into primitive functions. With a log,
    // winograd or direct per convolution: whichever of its two tasks has the faster record
    // (chooseWinogradPerConv); the graph is rebuilt only when the log overrides TVM's rule.
    auto t0 = std::chrono::steady_clock::now();
    graph::Graph opt = graph::optimizeForTasks(g, ao);
    std::vector<graph::FusedGroup> groups = graph::fuseOps(opt);
    if (history && !gpu && opts.winograd && ao.autoScheduler) {
        rep.winogradChoice = chooseWinogradPerConv(g, opt, groups, ao, *history, rep.target);
        if (!rep.winogradChoice.empty()) {
            ao.winogradAt = [keep = rep.winogradChoice](int k) { return k >= int(keep.size()) || keep[size_t(k)]; };
            opt = graph::optimizeForTasks(g, ao);
            groups = graph::fuseOps(opt);
        }
    }
    rep.graphNodes = int(opt.size());
    rep.passSeconds = secondsSince(t0);

    // 2. One te DAG per group; identical DAGs share a kernel.
    t0 = std::chrono::steady_clock::now();
    ExecGraph eg;
    std::unordered_map<graph::NodeId, int> nodeOf;  // optimized-graph node -> exec node
    for (graph::NodeId id : opt.inputs()) {
        ExecNode n;
        n.kind = ExecNode::Kind::Input;
        n.name = opt.node(id).name;
        n.shape = opt.node(id).type.shape;
        nodeOf[id] = int(eg.nodes.size());
        eg.inputs.push_back(int(eg.nodes.size()));
        eg.nodes.push_back(std::move(n));
    }
    auto paramNode = [&](graph::NodeId id) {
        auto it = nodeOf.find(id);
        if (it != nodeOf.end()) return it->second;
        const graph::Node& c = opt.node(id);
        TB_CHECK(c.kind == graph::NodeKind::Constant && c.value) << "node %" << id << " is not a constant";
        ExecNode n;
        n.kind = ExecNode::Kind::Param;
        n.name = "p" + std::to_string(mod.m_params.size());
        n.shape = c.type.shape;
        NamedArray a;
        a.shape = c.type.shape;
        if (!c.value->f.empty()) {
            a.data = c.value->f;
        } else {
            for (int64_t v : c.value->i) a.data.push_back(float(v));
        }
        TB_CHECK(int64_t(a.data.size()) == n.numElements()) << "constant %" << id << " has the wrong size";
        rep.paramBytes += int64_t(a.data.size() * 4);
        mod.m_params[n.name] = std::move(a);
        nodeOf[id] = int(eg.nodes.size());
        eg.nodes.push_back(std::move(n));
        return int(eg.nodes.size()) - 1;
    };

    std::vector<KernelJob> jobs;
    std::unordered_map<std::string, int> jobOf;  // md5 of the full DAG print -> job
    std::vector<Call> calls;
    for (const graph::FusedGroup& fg : groups) {
        bool hasOp = false;
        for (graph::NodeId id : fg.nodes) hasOp |= opt.node(id).kind == graph::NodeKind::Op;
        if (!hasOp) continue;
        std::optional<autotvm::ExtractedTask> autotvmWorkload;
        if (autotvmDispatch) autotvmWorkload = autotvmDispatch->implementationOf(opt, fg);
        graph::LoweredGroup lg = graph::lowerGroup(
            opt, fg, autotvmWorkload ? autotvmDispatch->opImplementation(*autotvmWorkload) : graph::OpImplementation{});
        const auto outs = lg.dag.outputs();
        TB_CHECK(outs.size() == 1 && outs[0].shape() == opt.node(fg.root).type.shape)
            << "group " << fg.name << " does not compute its root's shape";
        std::vector<int> args;  // exec nodes in kernel argument order (output excluded)
        for (const te::Tensor& t : lg.dag.inputs()) {
            const std::string& pn = t.name();
            TB_CHECK(pn.size() > 1 && pn[0] == 'p') << "unexpected placeholder " << pn << " in " << fg.name;
            const size_t index = size_t(std::stoul(pn.substr(1)));
            TB_CHECK(index < fg.params.size()) << "placeholder " << pn << " of " << fg.name;
            const graph::NodeId pid = fg.params[index];
            auto it = nodeOf.find(pid);
            args.push_back(it != nodeOf.end() ? it->second : paramNode(pid));
        }
        const std::string print = lg.dag.print(false);
        const std::string hash = md5Hex(print + lg.dag.workloadKey());
        auto [it, fresh] = jobOf.emplace(hash, int(jobs.size()));
        if (fresh) {
            KernelJob job;
            job.report.funcName = fg.name;
            job.report.symbol = "tb_" + symbolPart(fg.name, 48) + "_" + hash.substr(0, 8);
            job.report.workloadKey = lg.dag.workloadKey();
            job.report.flop = std::max(0.0, lg.dag.flopCount());
            job.report.hasReduce = lg.hasReduce;
            job.autotvmWorkload = autotvmWorkload;
            job.dag = std::move(lg.dag);
            jobs.push_back(std::move(job));
        }
        KernelJob& job = jobs[size_t(it->second)];
        job.report.calls += 1;
        ExecNode n;
        n.kind = ExecNode::Kind::Op;
        n.name = job.report.funcName;
        n.func = job.report.symbol;
        n.inputs = std::move(args);
        n.shape = opt.node(fg.root).type.shape;
        n.flop = job.report.flop;
        nodeOf[fg.root] = int(eg.nodes.size());
        calls.push_back({it->second, int(eg.nodes.size())});
        eg.nodes.push_back(std::move(n));
    }

    // Arguments that are constants in every call of a kernel (weights a layout rewrite may transform).
    {
        std::vector<bool> seen(jobs.size(), false);
        for (const Call& c : calls) {
            std::set<int> constants;
            const ExecNode& n = eg.nodes[size_t(c.node)];
            for (size_t k = 0; k < n.inputs.size(); ++k)
                if (eg.nodes[size_t(n.inputs[k])].kind == ExecNode::Kind::Param) constants.insert(int(k));
            KernelJob& job = jobs[size_t(c.job)];
            if (!seen[size_t(c.job)]) {
                job.constantArgs = std::move(constants);
                seen[size_t(c.job)] = true;
            } else {
                std::set<int> both;
                std::set_intersection(job.constantArgs.begin(), job.constantArgs.end(), constants.begin(),
                                      constants.end(), std::inserter(both, both.begin()));
                job.constantArgs = std::move(both);
            }
        }
    }

    // 3. Schedules (parallel: lowering a tuned state is the expensive part).
    if (gpu) {
        // Exceptions leave parallelFor on the first failing job; a GPU job has no fallback.
        std::vector<std::string> errors(jobs.size());
        ThreadPool::global().parallelFor(int64_t(jobs.size()), [&](int64_t i) {
            try {
                lowerGpuJob(jobs[size_t(i)], history.get(), autotvmDispatch.get(), target, rep.target);
            } catch (const std::exception& e) {
                errors[size_t(i)] = e.what();
            }
        });
        for (const std::string& e : errors) TB_USER_CHECK(e.empty()) << e;
    } else {
        ThreadPool::global().parallelFor(int64_t(jobs.size()), [&](int64_t i) {
            lowerJob(jobs[size_t(i)], history.get(), autotvmDispatch.get(), rep.target, opts);
        });
    }
    rep.lowerSeconds = secondsSince(t0);

    // 4. Machine code, through the kernel cache, then loaded in process (CPU targets; a GPU
    // network's source is assembled after the memory plan and compiled by the device).
    t0 = std::chrono::steady_clock::now();
    if (!gpu) {
        mod.m_kernels.resize(jobs.size());
        codegen::CompileOptions co{false, false, {}};
        ThreadPool::global().parallelFor(int64_t(jobs.size()), [&](int64_t i) {
            auto k = codegen::compileCached(jobs[size_t(i)].func, target, co);
            mod.m_kernels[size_t(i)] = k;
            jobs[size_t(i)].report.compileSeconds = k->compileSeconds;
        });
    }
    rep.compileSeconds = secondsSince(t0);
    t0 = std::chrono::steady_clock::now();
    if (options.load && !gpu)
        for (const auto& k : mod.m_kernels) mod.m_loaded.push_back(codegen::LoadedKernel::load(k->object, k->name));
    rep.loadSeconds = secondsSince(t0);

    // 5. Functions of the Op nodes, graph outputs, memory plan.
    for (const Call& c : calls) {
        switch (jobs[size_t(c.job)].report.source) {
            case ScheduleSource::Tuned: ++rep.tunedCalls; break;
            case ScheduleSource::Default: ++rep.defaultCalls; break;
            case ScheduleSource::Unscheduled: ++rep.unscheduledCalls; break;
        }
    }
    for (graph::NodeId o : opt.outputs()) {
        auto it = nodeOf.find(o);
        eg.outputs.push_back(it != nodeOf.end() ? it->second : paramNode(o));
    }
    if (!gpu) {
        preTransformWeights(eg, calls, jobs, mod.m_params);
        rep.paramBytes = 0;
        for (const auto& [name, a] : mod.m_params) rep.paramBytes += int64_t(a.data.size() * 4);
    }
    std::vector<KernelFn> funcs(eg.nodes.size(), nullptr);
    if (options.load && !gpu)
        for (const Call& c : calls) funcs[size_t(c.node)] = mod.m_loaded[size_t(c.job)]->function();
    rep.groups = int(calls.size());

    std::vector<PlanTensor> pt(eg.nodes.size());
    int step = 0;
    for (size_t i = 0; i < eg.nodes.size(); ++i) {
        const ExecNode& n = eg.nodes[i];
        pt[i].bytes = std::max<int64_t>(4, n.numElements() * 4);
        pt[i].pinned = n.kind != ExecNode::Kind::Op;
        if (n.kind == ExecNode::Kind::Op) {
            pt[i].defStep = step;
            for (int in : n.inputs) pt[size_t(in)].lastUse = std::max(pt[size_t(in)].lastUse, step);
            ++step;
        }
    }
    for (int o : eg.outputs) pt[size_t(o)].pinned = true;
    const MemoryPlan plan = planMemory(pt);
    for (size_t i = 0; i < eg.nodes.size(); ++i) eg.nodes[i].storage = plan.storageOf[i];
    eg.storageBytes = plan.storageBytes;
    rep.plannedBytes = plan.plannedBytes;
    rep.naiveBytes = plan.naiveBytes;

    for (auto& job : jobs) rep.kernels.push_back(job.report);
    if (gpu) {
        std::vector<std::pair<int, int>> callPairs;
        for (const Call& c : calls) callPairs.emplace_back(c.job, c.node);
        mod.m_gpu = std::make_unique<GpuNetworkState>();
        mod.m_gpu->module = assembleGpuNetwork(eg, jobs, callPairs,
                                               target.isCuda() ? codegen::GpuLanguage::CUDA : codegen::GpuLanguage::OpenCL,
                                               &mod.m_gpu->argNodes);
        mod.m_gpu->api = target.isCuda() ? "cuda" : "opencl";
        rep.compileSeconds = secondsSince(t0);
        eg.validate();
        mod.m_graph = std::move(eg);
        return mod;
    }
    if (!options.load) {
        eg.validate();
        mod.m_graph = std::move(eg);
        return mod;
    }
    mod.m_runtime = std::make_unique<GraphRuntime>(std::move(eg), std::move(funcs));
    for (const auto& n : mod.m_runtime->graph().nodes) {
        if (n.kind != ExecNode::Kind::Param) continue;
        const NamedArray& a = mod.m_params.at(n.name);
        const int id = int(&n - mod.m_runtime->graph().nodes.data());
        mod.m_runtime->setParam(id, a.data.data(), a.data.size());
    }
    rep.hugePageBytes = mod.m_runtime->hugePageBytes();
    return mod;
}

}  // namespace tb::runtime
