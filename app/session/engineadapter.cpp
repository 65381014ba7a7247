// SPDX-License-Identifier: Apache-2.0
#include "app/session/engineadapter.h"

#include <QStringList>

#include <algorithm>

#include "engine/codegen/codegen_gpu_source.h"
#include "engine/codegen/codegen_llvm.h"
#include "engine/lower/lower_gpu.h"
#include "engine/lower/lower_state.h"
#include "engine/schedule/infer_bound.h"
#include "engine/search/default_schedule_gpu.h"

namespace tb::session::adapter {

namespace {
std::string sstr(const QString& s) { return s.toStdString(); }

QString dims(const std::array<int64_t, 3>& d) { return QStringLiteral("(%1, %2, %3)").arg(d[0]).arg(d[1]).arg(d[2]); }

// A GPU task's program: `state` (or, undefined, the GPU default schedule for the target's limits)
// lowered to kernels and emitted as OpenCL C or CUDA C, as the tuner measures it.
void fillGpuKernels(DagSnapshot& s, const te::ComputeDAG& dag, const State& best, const codegen::Target& target) {
    s.kernelLanguage = target.isCuda() ? QStringLiteral("CUDA C") : QStringLiteral("OpenCL C");
    s.kernelFromDefault = !best.defined();
    const State state = best.defined() ? best : inferBound(search::defaultGpuSchedule(dag, target.gpuHardwareParams()));
    const codegen::GpuLanguage lang = target.isCuda() ? codegen::GpuLanguage::CUDA : codegen::GpuLanguage::OpenCL;
    const lower::GpuLoweredFunc f = lower::lowerStateGpu(dag, state, "default_function");
    s.loopNest = qstr(f.print());
    const codegen::GpuModule m = codegen::makeGpuModule(f, lang);
    s.kernelSource = qstr(m.source);
    for (const codegen::GpuLaunch& l : m.launches) {
        s.kernelEntries.append(qstr(l.entry));
        s.launches.append(QStringLiteral("%1 grid=%2 block=%3 shared=%4 B")
                              .arg(qstr(l.entry), dims(l.grid), dims(l.block))
                              .arg(l.sharedBytes));
    }
}
}  // namespace

tuning::TuningJob engineJob(const TuningJob& j) {
    tuning::TuningJob e;
    e.network.zooName = sstr(j.network);
    e.network.onnxPath = sstr(j.onnxPath);
    for (const QString& s : j.shapes) e.network.shapes.push_back(sstr(s));
    e.network.batch = j.batch;
    e.network.layout = sstr(j.layout);
    e.network.winograd = j.winograd;
    e.network.winogradAlternatives = j.winograd && j.winogradOrDirect;
    e.target = sstr(j.target);
    e.targetHost = sstr(j.targetHost);

    e.search.trials = j.trials;
    e.search.perRound = j.perRound;
    e.search.earlyStopping = j.earlyStopping;
    e.search.strategy = j.strategy == QLatin1String("round-robin") ? tuning::TaskSchedulerOptions::Strategy::RoundRobin
                                                                    : tuning::TaskSchedulerOptions::Strategy::Gradient;
    e.search.seed = j.seed;
    e.search.costModel = sstr(j.costModel);
    e.search.seedDefaultSchedule = j.seedDefaultSchedule;
    if (j.layoutRewrite >= 0) e.layoutRewrite = LayoutRewriteOption(j.layoutRewrite);
    e.taskIds.assign(j.taskIds.begin(), j.taskIds.end());

    auto& r = e.runner;
    r.kind = j.runner == QLatin1String("rpc") ? tuning::RunnerConfig::Kind::Rpc : tuning::RunnerConfig::Kind::Local;
    r.trackerHost = sstr(j.trackerHost);
    r.trackerPort = j.trackerPort;
    r.key = sstr(j.deviceKey);
    r.number = j.number;
    r.repeat = j.repeat;
    r.minRepeatMs = j.minRepeatMs;
    r.timeoutS = j.timeoutS;
    r.cacheFlush = tuning::parseCacheFlushMode(sstr(j.cacheFlush));
    r.pipelineSlice = j.pipelineSlice;
    r.abandonFactor = j.abandonFactor;
    r.screenFactor = j.screenFactor;
    r.screenMs = j.screenMs;
    r.rejectPreempted = j.rejectPreempted;
    r.slices = j.slices;
    r.trackerRetryTimeoutS = j.trackerRetryTimeoutS;

    e.logPath = sstr(j.logPath);
    e.resume = j.resume;
    e.latencyLogPath = sstr(j.latencyLogPath);
    return e;
}

TuningJob sessionJob(const tuning::TuningJob& e) {
    TuningJob j;
    j.network = qstr(e.network.zooName);
    j.onnxPath = qstr(e.network.onnxPath);
    for (const auto& s : e.network.shapes) j.shapes.append(qstr(s));
    j.batch = int(e.network.batch);
    j.layout = qstr(e.network.layout);
    j.winograd = e.network.winograd;
    j.winogradOrDirect = e.network.winogradAlternatives;
    j.target = qstr(e.target);
    j.targetHost = qstr(e.targetHost);

    j.trials = e.search.trials;
    j.perRound = e.search.perRound;
    j.earlyStopping = e.search.earlyStopping;
    j.strategy = e.search.strategy == tuning::TaskSchedulerOptions::Strategy::RoundRobin ? QStringLiteral("round-robin")
                                                                                        : QStringLiteral("gradient");
    j.seed = e.search.seed;
    j.costModel = qstr(e.search.costModel);
    j.seedDefaultSchedule = e.search.seedDefaultSchedule;
    j.layoutRewrite = e.layoutRewrite ? int(*e.layoutRewrite) : -1;
    j.taskIds = QList<int>(e.taskIds.begin(), e.taskIds.end());

    const auto& r = e.runner;
    j.runner = r.kind == tuning::RunnerConfig::Kind::Rpc ? QStringLiteral("rpc") : QStringLiteral("local");
    j.trackerHost = qstr(r.trackerHost);
    j.trackerPort = r.trackerPort;
    j.deviceKey = qstr(r.key);
    j.number = r.number;
    j.repeat = r.repeat;
    j.minRepeatMs = r.minRepeatMs;
    j.timeoutS = r.timeoutS;
    j.cacheFlush = QString::fromLatin1(tuning::cacheFlushModeName(r.cacheFlush));
    j.pipelineSlice = r.pipelineSlice;
    j.abandonFactor = r.abandonFactor;
    j.screenFactor = r.screenFactor;
    j.screenMs = r.screenMs;
    j.rejectPreempted = r.rejectPreempted;
    j.slices = r.slices;
    j.trackerRetryTimeoutS = r.trackerRetryTimeoutS;

    j.logPath = qstr(e.logPath);
    j.resume = e.resume;
    j.latencyLogPath = qstr(e.latencyLogPath);
    return j;
}

QList<TaskRow> taskRows(const tuning::NetworkTuner& tuner, int tuningTask) {
    const tuning::TaskScheduler& ts = tuner.scheduler();
    const int next = tuningTask >= 0 ? tuningTask : ts.nextTask();
    // Share of the estimated total latency; during the warm-up, of the tasks measured so far.
    double total = 0;
    for (size_t i = 0; i < ts.tasks().size(); ++i)
        if (ts.bestCosts()[i] < 1e9) total += ts.tasks()[i].weight * ts.bestCosts()[i];
    QList<TaskRow> rows;
    rows.reserve(qsizetype(ts.tasks().size()));
    for (size_t i = 0; i < ts.tasks().size(); ++i) {
        const tuning::SchedulerTask& t = ts.tasks()[i];
        TaskRow r;
        r.id = int(i);
        r.workloadKey = qstr(t.workloadKey);
        r.description = qstr(t.desc);
        r.weight = t.weight;
        r.flop = t.flop;
        const double best = ts.bestCosts()[i];
        if (best < 1e9) {
            r.bestMs = best * 1e3;
            r.gflops = best > 0 ? t.flop / best / 1e9 : 0;
            r.share = total > 0 ? t.weight * best / total : 0;
        }
        // TVM's table counts rounds x per-round (PrintTableInfo), so do we.
        r.trials = ts.taskRounds()[i] * ts.numMeasuresPerRound();
        if (ts.isDead(int(i)))
            r.state = QStringLiteral("dead");
        else if (int(i) == tuningTask)
            r.state = QStringLiteral("tuning");
        else if (ts.taskRounds()[i] > 0)
            r.state = QStringLiteral("tuned");
        else
            r.state = QStringLiteral("pending");
        r.next = int(i) == next && !ts.finished();
        if (i < tuner.tasks().size()) {
            const search::SearchTask& st = tuner.tasks()[i].task;
            if (st.cacheFlush) r.cacheFlush = *st.cacheFlush ? QStringLiteral("flush") : QStringLiteral("warm");
            r.cacheFlushReason = qstr(st.cacheFlushReason);
            r.alternativeOf = tuner.tasks()[i].alternativeOf;
        }
        rows.append(r);
    }
    return rows;
}

RooflineSnapshot rooflineSnapshot(const std::vector<runtime::KernelRoofline>& rows, const measure::MachinePeak& peak) {
    RooflineSnapshot s;
    s.peakGflops = peak.flopsPerSecond / 1e9;
    s.bandwidthGBs = peak.bytesPerSecond / 1e9;
    s.threads = peak.threads;
    s.quiet = peak.quiet;
    for (const runtime::KernelRoofline& r : rows) {
        RooflineKernel k;
        k.name = qstr(r.name);
        k.shape = qstr(r.outputShape);
        k.calls = r.calls;
        k.ms = r.point.seconds * 1e3;
        k.flop = r.point.flop;
        k.bytes = r.point.bytes;
        k.gflops = r.point.flopsPerSecond() / 1e9;
        k.intensity = r.point.intensity();
        k.bound = QString::fromLatin1(measure::rooflineBoundName(r.verdict.bound));
        k.fraction = r.verdict.fraction;
        s.kernels.append(k);
    }
    return s;
}

MeasureRow measureRow(const tuning::MeasuredTrial& trial, double flop, double elapsedS) {
    MeasureRow r;
    r.taskId = trial.taskId;
    r.trial = trial.trial;
    r.errorNo = trial.outcome.errorNo;
    if (r.errorNo == 0) {
        const double c = trial.outcome.meanCost();
        r.costMs = c * 1e3;
        r.gflops = c > 0 ? flop / c / 1e9 : 0;
    } else {
        // Messages can be whole compiler logs: keep the table's tooltips readable.
        r.errorMessage = qstr(trial.outcome.errorMsg.substr(0, 2000));
    }
    r.elapsedS = elapsedS;
    r.predicted = trial.predicted;
    r.allCostS = trial.outcome.allCost;
    return r;
}

FleetEvent fleetEvent(const measure::MeasureEvent& e, const std::unordered_map<std::string, int>& taskOfKey,
                      double jobStartEpoch, quint64 jobId) {
    using K = measure::MeasureEvent::Kind;
    using P = measure::MeasureEvent::Phase;
    FleetEvent f;
    f.kind = e.kind == K::Started ? FleetEvent::Started : e.kind == K::Finished ? FleetEvent::Finished : FleetEvent::DeviceLost;
    f.phase = e.phase == P::Build ? FleetEvent::Build : e.phase == P::Upload ? FleetEvent::Upload : FleetEvent::Run;
    f.jobId = jobId;
    if (const auto it = taskOfKey.find(e.workloadKey); it != taskOfKey.end()) f.taskId = it->second;
    f.batch = e.batch;
    f.candidate = e.candidate;
    f.device = qstr(e.device);
    f.deviceKey = qstr(e.deviceKey);
    f.startS = e.startTime - jobStartEpoch;
    f.endS = e.kind == K::Started ? -1 : e.endTime - jobStartEpoch;
    f.errorNo = int(e.errorNo);
    f.message = qstr(e.message.substr(0, 500));
    return f;
}

LatencyPoint latencyPoint(const tuning::TaskScheduler& scheduler) {
    LatencyPoint p;
    p.trials = scheduler.totalTrials();
    p.elapsedS = scheduler.elapsedSeconds();
    p.estimatedMs = scheduler.allTasksHaveCost() ? scheduler.currentScore() * 1e3 : -1;
    // During the warm-up (one round per task) TVM's estimate is "-" for a long time; the partial
    // sum lets the chart show progress before every task has a cost.
    double partial = 0;
    p.tasks = int(scheduler.tasks().size());
    for (size_t i = 0; i < scheduler.tasks().size(); ++i) {
        const double best = scheduler.bestCosts()[i];
        if (best >= 1e9) continue;
        partial += scheduler.tasks()[i].weight * best;
        ++p.tasksWithCost;
    }
    p.partialMs = p.tasksWithCost > 0 ? partial * 1e3 : -1;
    return p;
}

GpuDeviceRow gpuDeviceRow(const std::string& key, const measure::RemoteGpuDevice& device) {
    const gpu::GpuDeviceAttributes& a = device.attributes;
    GpuDeviceRow r;
    r.key = qstr(key);
    r.deviceApi = qstr(device.deviceApi);
    auto add = [&r](const char* name, const QString& value) { r.attributes.append({QString::fromLatin1(name), value}); };
    auto num = [](int64_t v) { return QString::number(v); };
    add("device_api", r.deviceApi);
    add("device_name", qstr(a.deviceName));
    add("max_threads_per_block", num(a.maxThreadsPerBlock));
    add("warp_size", num(a.warpSize));
    add("max_shared_memory_per_block", num(a.maxSharedMemoryPerBlock));
    add("max_vthread_extent", num(measure::hardwareParamsFromGpu(a).maxVthreadExtent));
    add("max_thread_dimensions", QStringLiteral("[%1, %2, %3]")
                                     .arg(a.maxThreadDimensions[0])
                                     .arg(a.maxThreadDimensions[1])
                                     .arg(a.maxThreadDimensions[2]));
    add("multi_processor_count", num(a.multiProcessorCount));
    add("max_clock_rate", num(a.maxClockRate));
    add("compute_version", qstr(a.computeVersion));
    add("max_registers_per_block", num(a.maxRegistersPerBlock));
    add("l2_cache_size_bytes", num(a.l2CacheSizeBytes));
    add("total_global_memory", num(a.totalGlobalMemory));
    add("api_version", num(a.apiVersion));
    add("driver_version", qstr(a.driverVersion));
    add("platform_name", qstr(a.platformName));
    return r;
}

DagSnapshot dagSnapshot(const te::ComputeDAG& dag, const State& best, double bestCost, const codegen::Target& target) {
    DagSnapshot s;
    s.workloadKey = qstr(dag.workloadKey());
    s.dagText = qstr(dag.print(false));
    const QStringList lines = s.dagText.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    const auto& ops = dag.ops();
    for (size_t i = 0; i < ops.size(); ++i) {
        const QString name = qstr(ops[i]->name);
        s.stages.append(name);
        s.isPlaceholder.append(ops[i]->isPlaceholder());
        // One line per stage in stage order; look it up by name if a body ever spans lines.
        QString detail = lines.value(qsizetype(i));
        if (!detail.startsWith(name)) {
            detail.clear();
            for (const QString& l : lines)
                if (l.startsWith(name + QLatin1Char('(')) || l.startsWith(name + QLatin1String(" = "))) {
                    detail = l;
                    break;
                }
        }
        s.stageDetails.append(detail);
        for (const te::Tensor& in : ops[i]->inputTensors()) {
            const int src = dag.opIndex(in.op().get());
            if (src >= 0) s.edges.append({src, int(i)});
        }
    }
    if (target.isGpu()) {
        // GPU kernels come from the source emitter, not LLVM; an untuned task shows what it runs
        // on until a schedule is measured: the GPU default schedule.
        if (best.defined()) {
            s.bestMs = bestCost < 1e9 ? bestCost * 1e3 : -1;
            s.stateText = qstr(best.toStr());
        }
        try {
            fillGpuKernels(s, dag, best, target);
        } catch (const std::exception& e) {
            s.error = QString::fromUtf8(e.what());
        }
        return s;
    }
    if (!best.defined()) return s;
    s.bestMs = bestCost < 1e9 ? bestCost * 1e3 : -1;
    try {
        s.stateText = qstr(best.toStr());
        const lower::LoweredFunc f = lower::lowerState(dag, best);
        s.loopNest = qstr(f.print());
        const codegen::CompiledKernel k = codegen::compile(f, target, codegen::CompileOptions{true, true, {}});
        s.llvmIr = qstr(k.llvmIr);
        s.assembly = qstr(k.assembly);
    } catch (const std::exception& e) {
        s.error = QString::fromUtf8(e.what());
    }
    return s;
}

}  // namespace tb::session::adapter
