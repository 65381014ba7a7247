// SPDX-License-Identifier: Apache-2.0
#include "engine/tuning/tuning_job.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "engine/graph/onnx_import.h"
#include "engine/graph/passes/passes.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/codegen/codegen_gpu_source.h"
#include "engine/measure/builder.h"
#include "engine/measure/cpu_caches.h"
#include "engine/measure/gpu_runner.h"
#include "engine/measure/local_runner.h"
#include "engine/measure/machine_peak.h"
#include "engine/measure/roofline.h"
#include "engine/measure/rpc_runner.h"
#include "engine/support/error.h"

namespace tb::tuning {

graph::Graph loadNetwork(const NetworkSource& source) {
    TB_USER_CHECK(source.batch >= 1) << "the batch size must be a positive integer, got " << source.batch;
    TB_USER_CHECK(source.layout == "NHWC" || source.layout == "NCHW")
        << "the layout must be NHWC or NCHW, got '" << source.layout << "'";
    if (source.onnxPath.empty()) return graph::makeNetwork(source.zooName, source.batch, source.layout);
    graph::OnnxImportOptions opt;
    for (const std::string& s : source.shapes)
        for (auto& [name, dims] : graph::parseShapeMap(s)) opt.inputShapes[name] = dims;
    graph::Graph g = graph::importOnnx(source.onnxPath, opt);
    if (source.layout == "NHWC") g = graph::convertLayout(g, "NHWC");
    return g;
}

std::string networkName(const NetworkSource& source) {
    return source.onnxPath.empty() ? source.zooName : std::filesystem::path(source.onnxPath).stem().string();
}

ResolvedTarget resolveTarget(const std::string& text, const std::string& host) {
    TB_USER_CHECK(!text.empty() || host.empty()) << "the target host '" << host << "' is given without a target";
    if (text.empty()) {
        codegen::Target host = codegen::Target::host();
        std::string str = "llvm -keys=cpu -mcpu=" + host.mcpu;
        return {std::move(host), std::move(str)};
    }
    codegen::Target t = codegen::Target::parse(text, host);
    // GPU records carry TVM's printed form ("cuda -keys=cuda,gpu -max_num_threads=1024 ..."), as
    // TVM's logs do; CPU targets keep the string as given (it is what earlier logs hold).
    std::string record = t.isGpu() ? t.str() : text;
    return {std::move(t), std::move(record)};
}

Tuner::~Tuner() = default;

namespace {

// The timing fields LocalRunner's and RpcRunner's options share (TVM's runner arguments).
template <class Options>
void setTiming(Options& o, const RunnerConfig& rc) {
    o.timeoutS = rc.timeoutS;
    o.number = rc.number;
    o.repeat = rc.repeat;
    o.minRepeatMs = rc.minRepeatMs;
    // auto: the runner does not flush; each task's MeasureInput::cacheFlush decides.
    o.enableCpuCacheFlush = rc.cacheFlush == CacheFlushMode::On;
}

// `flush` ends the line: the runner's flag, or with --cache-flush auto what the tasks chose.
template <class Options>
std::string timingSummary(const Options& o, const std::string& flush) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "number %d, repeat %d, min_repeat_ms %g, timeout %g s, ", o.number, o.repeat,
                  double(o.minRepeatMs), o.timeoutS);
    return buf + flush;
}

std::string flushSummary(bool runnerFlushes, const TuningJob& job, const std::vector<TaskMeasurePolicy>& ps) {
    if (job.runner.cacheFlush != CacheFlushMode::Auto || ps.empty())
        return runnerFlushes ? "cache flush on" : "cache flush off";
    if (ps.front().llcBytes <= 0) return "cache flush auto: LLC unknown, every task warm";
    size_t flushed = 0;
    for (const TaskMeasurePolicy& p : ps) flushed += p.flush ? 1 : 0;
    char buf[160];
    std::snprintf(buf, sizeof buf, "cache flush auto: %zu of %zu tasks flushed, LLC %.1f MB measured (sysfs %.1f MB)",
                  flushed, ps.size(), double(ps.front().llcBytes) / 1e6, double(measure::hostLastLevelCacheBytes()) / 1e6);
    return buf;
}

}  // namespace

std::unique_ptr<measure::ProgramRunner> makeRunner(const RunnerConfig& rc, const ResolvedTarget& target, uint64_t seed) {
    TB_USER_CHECK(rc.number >= 1 && rc.repeat >= 1) << "the runner's number and repeat must be >= 1, got number "
                                                    << rc.number << ", repeat " << rc.repeat;
    TB_USER_CHECK(rc.minRepeatMs >= 0 && rc.timeoutS > 0)
        << "the runner needs min_repeat_ms >= 0 and a positive timeout, got " << rc.minRepeatMs << " ms, " << rc.timeoutS << " s";
    if (rc.kind == RunnerConfig::Kind::Rpc) {
        TB_USER_CHECK(!rc.key.empty()) << "the RPC runner needs a device key";
        TB_USER_CHECK(rc.trackerPort > 0 && rc.trackerPort < 65536) << "the tracker port must be 1..65535, got " << rc.trackerPort;
        measure::RpcRunnerOptions o;
        o.trackerHost = rc.trackerHost;
        o.trackerPort = rc.trackerPort;
        o.key = rc.key;
        setTiming(o, rc);
        o.trackerRetryTimeoutS = rc.trackerRetryTimeoutS;
        o.target = target.target;
        return measure::makeRpcRunner(o);
    }
    if (target.target.isGpu()) {
        // A GPU of this machine (PoCL's OpenCL device here, an NVIDIA GPU through CUDA), one forked
        // child per candidate.
        measure::GpuRunnerOptions o;
        o.api = target.target.isCuda() ? gpu::GpuApi::CUDA : gpu::GpuApi::OpenCL;
        o.timeoutS = rc.timeoutS;
        o.number = rc.number;
        o.repeat = rc.repeat;
        o.minRepeatMs = rc.minRepeatMs;
        o.seed = seed;
        return std::make_unique<measure::GpuLocalRunner>(o);
    }
    TB_USER_CHECK(target.target.runsOnHost())
        << "target '" << target.recordString << "' does not run on this machine: use the RPC runner with a device key";
    measure::RunnerOptions o;
    setTiming(o, rc);
    o.rejectPreempted = rc.rejectPreempted;
    TB_USER_CHECK(rc.slices >= 1 && rc.slices <= 1000) << "the number of timing slices must be 1..1000, got " << rc.slices;
    o.slices = rc.rejectPreempted ? 1 : rc.slices;
    TB_USER_CHECK(rc.screenMs > 0) << "the screening time must be > 0 ms, got " << rc.screenMs;
    o.screenMs = rc.screenMs;
    o.seed = seed;
    return std::make_unique<measure::LocalRunner>(o);
}

std::string Tuner::runnerSummary() const {
    if (const auto* r = dynamic_cast<const measure::LocalRunner*>(m_runner.get())) {
        std::string extra;
        if (m_measurer && m_measurer->abandonFactor() > 0) {
            char buf[48];
            std::snprintf(buf, sizeof(buf), "abandon at %gx best", m_measurer->abandonFactor());
            extra = buf;
        }
        if (m_measurer && m_measurer->screenFactor() > 0) {
            char buf[64];
            std::snprintf(buf, sizeof(buf), "%s%g ms screen, whole within %gx best", extra.empty() ? "" : ", ",
                          r->options().screenMs, m_measurer->screenFactor());
            extra += buf;
        }
        if (r->options().rejectPreempted) extra += std::string(extra.empty() ? "" : ", ") + "preempted slices rejected";
        if (r->options().slices > 1)
            extra += std::string(extra.empty() ? "" : ", ") + "fastest of " + std::to_string(r->options().slices) + " slices";
        // What the cost model assumes of this core (measure::fullRateFmaLanes).
        if (m_network) extra += std::string(extra.empty() ? "" : ", ") + std::to_string(m_network->options().fmaLanes) + "-lane FMAs";
        std::string flush = flushSummary(r->options().enableCpuCacheFlush, m_job, m_policies);
        const bool anyFlushed = r->options().enableCpuCacheFlush ||
                                std::any_of(m_policies.begin(), m_policies.end(), [](const TaskMeasurePolicy& p) { return p.flush; });
        if (anyFlushed)  // LocalRunner times a flushed kernel one call per repeat, as TVM's does
            flush += " (a flushed kernel: number 1, repeat " +
                     std::to_string(std::max(r->options().repeat, r->options().flushRepeat)) + ", min_repeat_ms 0)";
        return "local sandbox" + (extra.empty() ? std::string() : " (" + extra + ")") + ": " +
               timingSummary(r->options(), flush);
    }
    if (const auto* r = dynamic_cast<const measure::GpuLocalRunner*>(m_runner.get())) {
        const auto& o = r->options();
        char buf[200];
        std::snprintf(buf, sizeof(buf), "local %s device %d: number %d, repeat %d, min_repeat_ms %g, timeout %g s",
                      gpu::gpuApiName(o.api), o.deviceIndex, o.number, o.repeat, o.minRepeatMs, o.timeoutS);
        return buf;
    }
    if (const auto* r = dynamic_cast<const measure::RpcRunner*>(m_runner.get())) {
        const auto& o = r->options();
        return "rpc key " + o.key + " at " + o.trackerHost + ":" + std::to_string(o.trackerPort) + ": " +
               timingSummary(o, flushSummary(o.enableCpuCacheFlush, m_job, m_policies));
    }
    return "custom runner";
}

std::unique_ptr<Tuner> buildTuner(const TuningJob& job) {
    std::unique_ptr<Tuner> t(new Tuner());
    t->m_job = job;
    t->m_target = resolveTarget(job.target, job.targetHost);
    const bool gpu = t->m_target.target.isGpu();
    if (job.hardware) {
        t->m_hardware = *job.hardware;
    } else if (gpu && job.runner.kind == RunnerConfig::Kind::Rpc) {
        // Seed 003: the hardware parameters are read from the remote device itself
        // (max_shared_memory_per_block, max_threads_per_block, warp_size).
        t->m_hardware = measure::hardwareParamsFromGpu(
            measure::queryRemoteGpuDevice(job.runner.trackerHost, job.runner.trackerPort, job.runner.key,
                                          job.runner.trackerRetryTimeoutS)
                .attributes);
    } else {
        t->m_hardware = measure::defaultHardwareParams(t->m_target.target);
    }

    t->m_layoutRewrite = job.layoutRewrite.value_or(gpu ? LayoutRewriteOption::NoRewrite
                                                         : LayoutRewriteOption::RewriteForPreTransformed);
    TB_USER_CHECK(!gpu || t->m_layoutRewrite == LayoutRewriteOption::NoRewrite)
        << "layout rewrite is implemented for CPU targets only; " << t->m_target.recordString << " needs option 0";
    TB_USER_CHECK(t->m_layoutRewrite != LayoutRewriteOption::InsertTransformStage)
        << "layout rewrite option 1 (InsertTransformStage) is not implemented; use 0 or 2";

    // The runner first: a bad runner choice fails before the slow task extraction.
    measure::BuilderOptions bo;
    // Pipelined (compiles beside the timed kernel): the timed kernel gets the cores first. Measured
    // on 2 cores (bench/search/throughput.sh): the same states timed 1.92x slower (median) beside
    // compiles at nice 0, 1.18x at nice 19; hence no pipeline by default.
    if (job.runner.pipelineSlice > 0) bo.niceness = 19;
    t->m_builder = std::make_unique<measure::LocalBuilder>(t->m_target.target, bo);
    t->m_runner = makeRunner(job.runner, t->m_target, job.search.seed);

    const graph::Graph g = loadNetwork(job.network);
    graph::TaskExtractionOptions eo;
    eo.target = t->m_target.recordString;
    eo.winograd = job.network.winograd;
    eo.winogradAlternatives = job.network.winogradAlternatives;
    const auto extracted = graph::extractTasks(g, eo);
    TB_USER_CHECK(!extracted.empty()) << "the network has no task to tune";
    t->m_extracted = int(extracted.size());
    std::vector<bool> keep(extracted.size(), job.taskIds.empty());
    for (int id : job.taskIds) {
        TB_USER_CHECK(id >= 0 && id < t->m_extracted)
            << "task " << id << " is not a task ID of this network (0.." << t->m_extracted - 1 << ")";
        keep[size_t(id)] = true;
    }
    // The measurement policy: this machine's LLC is known only when candidates run here, and what
    // counts is the part this process keeps (measured: on a VM sysfs reports the host's).
    const int64_t llc = job.runner.kind == RunnerConfig::Kind::Local ? measure::effectiveLastLevelCacheBytes() : 0;
    int64_t networkWeightBytes = 0;
    for (const graph::Node& n : g.nodes())
        if (n.kind == graph::NodeKind::Constant && n.value)
            networkWeightBytes += int64_t(n.value->f.size() * sizeof(float) + n.value->i.size() * sizeof(int64_t));
    std::vector<NetworkTask> tasks;
    for (size_t i = 0; i < extracted.size(); ++i) {
        if (!keep[i]) continue;
        const auto& e = extracted[i];
        NetworkTask nt;
        nt.task.dag = std::make_shared<const te::ComputeDAG>(e.dag);
        nt.task.workloadKey = e.workloadKey;
        nt.task.desc = e.desc;
        nt.task.target = t->m_target.recordString;
        nt.task.hardware = t->m_hardware;
        nt.task.layoutRewrite = t->m_layoutRewrite;
        nt.weight = e.weight;
        if (e.alternativeOf >= 0 && keep[size_t(e.alternativeOf)]) {
            // Its winograd task comes first (alternatives follow TVM's tasks): its new index.
            const auto it = std::find(t->m_taskIndices.begin(), t->m_taskIndices.end(), e.alternativeOf);
            nt.alternativeOf = int(it - t->m_taskIndices.begin());
        }
        if (!gpu) {
            int64_t taskWeightBytes = 0;
            for (int a : e.constantArgs) taskWeightBytes += measure::tensorBytes(e.dag.tensors()[size_t(a)]);
            const TaskMeasurePolicy mp = chooseMeasurePolicy(measure::dagTraffic(e.dag).inputBytes, networkWeightBytes,
                                                             job.runner.cacheFlush, llc, taskWeightBytes);
            nt.task.cacheFlush = mp.flush;
            if (mp.weightsOnly) nt.task.flushArgs = e.constantArgs;
            nt.task.cacheFlushReason = mp.reason();
            t->m_policies.push_back(mp);
        }
        tasks.push_back(std::move(nt));
        t->m_taskIndices.push_back(int(i));
    }

    // GPU states are lowered with their thread bindings kept (the cost model's features read the
    // thread extents) and measured as GPU modules.
    lower::StateLowerer lowerer = gpu ? lower::StateLowerer([](const search::SearchTask& task, const State& s) {
        return lower::lowerStateThreaded(*task.dag, s);
    })
                                      : lower::StateLowerer([](const search::SearchTask& task, const State& s) {
                                            return lower::lowerState(*task.dag, s);
                                        });
    // The measured kernel reads its weights in the state's layout when the task says so (TVM's
    // ProgramBuilder applies the task's layout_rewrite_option); the cost model's features keep the
    // original layout, as TVM's do.
    lower::StateLowerer measureLowerer = lowerer;
    if (!gpu)
        measureLowerer = [](const search::SearchTask& task, const State& s) {
            const LayoutRewrite rw = rewriteLayout(*task.dag, s, task.layoutRewrite);
            return lower::lowerState(rw.dag, rw.state);
        };
    if (!job.logPath.empty())
        t->m_writer = std::make_unique<record::RecordWriter>(job.logPath, record::RecordWriter::Mode::Append);
    t->m_measurer = std::make_unique<ProgramMeasurer>(measureLowerer, *t->m_builder, *t->m_runner, t->m_writer.get(),
                                                      t->m_target.recordString);
    if (gpu) {
        const codegen::GpuLanguage lang =
            t->m_target.target.isCuda() ? codegen::GpuLanguage::CUDA : codegen::GpuLanguage::OpenCL;
        t->m_measurer->setGpuLowerer([lang](const search::SearchTask& task, const State& s) {
            return codegen::buildGpuModule(*task.dag, s, lang, "default_function");
        });
    }
    TB_USER_CHECK(job.runner.pipelineSlice >= 0) << "the pipeline slice must be >= 0, got " << job.runner.pipelineSlice;
    if (!gpu && job.runner.kind == RunnerConfig::Kind::Local) {
        t->m_measurer->setPipelineSlice(job.runner.pipelineSlice);
        t->m_measurer->setAbandonFactor(job.runner.abandonFactor);
        t->m_measurer->setScreen(job.runner.screenFactor);
    }
    TuneOptions search = job.search;
    // The cost model's register-block estimate and the seeded default schedule need the width of a
    // full-rate FMA of the core the candidates run on: known (measured) only when that is this machine.
    if (!gpu && job.runner.kind == RunnerConfig::Kind::Local) search.fmaLanes = measure::fullRateFmaLanes();
    t->m_network = std::make_unique<NetworkTuner>(std::move(tasks), search, lowerer, *t->m_measurer);
    if (!job.latencyLogPath.empty()) {
        t->m_latencyLog = std::make_unique<LogEstimatedLatency>(job.latencyLogPath);
        t->m_network->addSchedulerCallback(t->m_latencyLog.get());
    }
    if (job.resume) {
        TB_USER_CHECK(!job.logPath.empty()) << "resume needs the log to continue from";
        t->m_resume = t->m_network->resume(job.logPath);
    }
    return t;
}

}  // namespace tb::tuning
