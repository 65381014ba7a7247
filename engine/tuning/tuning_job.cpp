// SPDX-License-Identifier: Apache-2.0
#include "engine/tuning/tuning_job.h"

#include <cstdio>
#include <filesystem>

#include "engine/graph/onnx_import.h"
#include "engine/graph/passes/passes.h"
#include "engine/graph/task_extraction.h"
#include "engine/graph/zoo.h"
#include "engine/lower/lower_state.h"
#include "engine/measure/builder.h"
#include "engine/measure/local_runner.h"
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

ResolvedTarget resolveTarget(const std::string& text) {
    if (text.empty()) {
        codegen::Target host = codegen::Target::host();
        std::string str = "llvm -keys=cpu -mcpu=" + host.mcpu;
        return {std::move(host), std::move(str)};
    }
    return {codegen::Target::parse(text), text};
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
    o.enableCpuCacheFlush = rc.enableCpuCacheFlush;
}

template <class Options>
std::string timingSummary(const Options& o) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "number %d, repeat %d, min_repeat_ms %g, timeout %g s, cache flush %s", o.number,
                  o.repeat, double(o.minRepeatMs), o.timeoutS, o.enableCpuCacheFlush ? "on" : "off");
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
    TB_USER_CHECK(target.target.runsOnHost())
        << "target '" << target.recordString << "' does not run on this machine: use the RPC runner with a device key";
    measure::RunnerOptions o;
    setTiming(o, rc);
    o.seed = seed;
    return std::make_unique<measure::LocalRunner>(o);
}

std::string Tuner::runnerSummary() const {
    if (const auto* r = dynamic_cast<const measure::LocalRunner*>(m_runner.get()))
        return "local sandbox: " + timingSummary(r->options());
    if (const auto* r = dynamic_cast<const measure::RpcRunner*>(m_runner.get())) {
        const auto& o = r->options();
        return "rpc key " + o.key + " at " + o.trackerHost + ":" + std::to_string(o.trackerPort) + ": " +
               timingSummary(o);
    }
    return "custom runner";
}

std::unique_ptr<Tuner> buildTuner(const TuningJob& job) {
    std::unique_ptr<Tuner> t(new Tuner());
    t->m_job = job;
    t->m_target = resolveTarget(job.target);
    // The GPU search (sketch rules, GPU lowering and measurement) is not in this build yet (issue 18).
    TB_USER_CHECK(!t->m_target.target.isGpu())
        << "target '" << job.target << "' is a GPU target: tuning for GPUs needs the GPU search rules, "
        << "code generators and devices, which are not available yet; `tasks` lists its tasks";
    t->m_hardware = job.hardware ? *job.hardware : measure::defaultHardwareParams(t->m_target.target);

    // The runner first: a bad runner choice fails before the slow task extraction.
    t->m_builder = std::make_unique<measure::LocalBuilder>(t->m_target.target);
    t->m_runner = makeRunner(job.runner, t->m_target, job.search.seed);

    const graph::Graph g = loadNetwork(job.network);
    graph::TaskExtractionOptions eo;
    eo.target = t->m_target.recordString;
    eo.winograd = job.network.winograd;
    const auto extracted = graph::extractTasks(g, eo);
    TB_USER_CHECK(!extracted.empty()) << "the network has no task to tune";
    t->m_extracted = int(extracted.size());
    std::vector<bool> keep(extracted.size(), job.taskIds.empty());
    for (int id : job.taskIds) {
        TB_USER_CHECK(id >= 0 && id < t->m_extracted)
            << "task " << id << " is not a task ID of this network (0.." << t->m_extracted - 1 << ")";
        keep[size_t(id)] = true;
    }
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
        nt.weight = e.weight;
        tasks.push_back(std::move(nt));
        t->m_taskIndices.push_back(int(i));
    }

    lower::StateLowerer lowerer = [](const search::SearchTask& task, const State& s) {
        return lower::lowerState(*task.dag, s);
    };
    if (!job.logPath.empty())
        t->m_writer = std::make_unique<record::RecordWriter>(job.logPath, record::RecordWriter::Mode::Append);
    t->m_measurer = std::make_unique<ProgramMeasurer>(lowerer, *t->m_builder, *t->m_runner, t->m_writer.get(),
                                                      t->m_target.recordString);
    t->m_network = std::make_unique<NetworkTuner>(std::move(tasks), job.search, lowerer, *t->m_measurer);
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
