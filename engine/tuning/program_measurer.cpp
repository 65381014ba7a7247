// SPDX-License-Identifier: Apache-2.0
#include "engine/tuning/program_measurer.h"

#include <chrono>
#include <future>

#include "engine/schedule/transform_step.h"
#include "engine/support/error.h"
#include "engine/support/thread_pool.h"

namespace tb::tuning {

ProgramMeasurer::ProgramMeasurer(lower::StateLowerer lowerer, measure::ProgramBuilder& builder,
                                 measure::ProgramRunner& runner, record::RecordWriter* writer, std::string targetString)
    : m_lowerer(std::move(lowerer)), m_builder(builder), m_runner(runner), m_writer(writer),
      m_target(std::move(targetString)) {}

record::MeasureRecord makeRecord(const search::SearchTask& task, const std::string& targetString, const State& state,
                                 const search::MeasureOutcome& outcome) {
    record::MeasureRecord r;
    r.task.workloadKey = task.workloadKey;
    r.task.target = targetString;
    r.task.hardwareParams = task.hardware;
    r.task.targetHost = "";
    r.task.layoutRewriteOption = int(task.layoutRewrite);
    r.task.arity = 6;
    r.steps = stepsToJson(state.transformSteps());
    r.costs = outcome.errorNo == 0 ? outcome.costs : std::vector<double>{1e10};
    r.errorNo = outcome.errorNo;
    r.allCost = outcome.allCost;
    r.timestamp = double(std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count());
    return r;
}

void ProgramMeasurer::setPipelineSlice(int candidates) {
    TB_USER_CHECK(candidates >= 0) << "the pipeline slice must be >= 0 candidates (0 = no pipeline), got " << candidates;
    m_pipelineSlice = candidates;
}

std::vector<measure::MeasureResult> ProgramMeasurer::measurePipelined(const std::vector<measure::MeasureInput>& inputs) {
    using clock = std::chrono::steady_clock;
    const size_t n = inputs.size(), slice = size_t(m_pipelineSlice);
    std::vector<measure::MeasureResult> results;
    results.reserve(n);
    double buildSeconds = 0, runSeconds = 0;
    // Builds [begin, min(begin + slice, n)); returns its results and adds its wall time.
    auto buildSlice = [&](size_t begin) {
        const auto t = clock::now();
        const size_t end = std::min(n, begin + slice);
        std::vector<measure::MeasureInput> part(inputs.begin() + ptrdiff_t(begin), inputs.begin() + ptrdiff_t(end));
        m_builder.beginSlice(int(begin));
        std::vector<measure::BuildResult> built = m_builder.build(part);
        TB_CHECK(built.size() == part.size()) << "builder returned " << built.size() << " results for " << part.size();
        buildSeconds += std::chrono::duration<double>(clock::now() - t).count();
        return built;
    };
    struct EndSlices {  // observers see unsliced batches again, whatever happens
        ProgramMeasurer& m;
        ~EndSlices() {
            m.m_builder.endSlices();
            m.m_runner.endSlices();
        }
    } endSlices{*this};
    std::vector<measure::BuildResult> current = buildSlice(0);
    for (size_t begin = 0; begin < n; begin += slice) {
        const size_t next = begin + slice;
        // The next slice compiles while this one is timed. std::async's future joins in its
        // destructor, so an exception from the runner still waits for the build.
        std::future<std::vector<measure::BuildResult>> nextBuild;
        if (next < n) nextBuild = std::async(std::launch::async, buildSlice, next);
        const auto t = clock::now();
        std::vector<measure::MeasureInput> part(inputs.begin() + ptrdiff_t(begin),
                                                inputs.begin() + ptrdiff_t(begin + current.size()));
        m_runner.beginSlice(int(begin));
        std::vector<measure::MeasureResult> ran = m_runner.run(part, current);
        runSeconds += std::chrono::duration<double>(clock::now() - t).count();
        TB_CHECK(ran.size() == part.size()) << "runner returned " << ran.size() << " results for " << part.size();
        for (auto& r : ran) results.push_back(std::move(r));
        if (next < n) current = nextBuild.get();
    }
    // Overlapping wall times: build + run exceed the measure time by the overlap.
    m_phases.buildSeconds = buildSeconds;
    m_phases.runSeconds = runSeconds;
    return results;
}

void ProgramMeasurer::setAbandonFactor(double factor) {
    TB_USER_CHECK(factor == 0 || factor > 1) << "the early-abandon factor must be 0 (off) or > 1, got " << factor;
    m_abandonFactor = factor;
}

void ProgramMeasurer::setScreen(double factor) {
    TB_USER_CHECK(factor == 0 || factor > 1) << "the screening factor must be 0 (off) or > 1, got " << factor;
    m_screenFactor = factor;
}

std::vector<search::MeasureOutcome> ProgramMeasurer::measure(const search::SearchTask& task, const std::vector<State>& states) {
    using clock = std::chrono::steady_clock;
    auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
    auto t0 = clock::now();
    std::vector<measure::MeasureInput> inputs(states.size());
    std::vector<std::string> lowerErrors(states.size());
    // Lowering is pure per state: on the engine's thread pool (a GPU round's 32-64 states).
    parallelFor(int64_t(states.size()), [&](int64_t k) {
        const size_t i = size_t(k);
        inputs[i].workloadKey = task.workloadKey;
        inputs[i].cacheFlush = task.cacheFlush;
        inputs[i].flushArgs = task.flushArgs;
        try {
            if (m_gpuLowerer)
                inputs[i].gpuModule = std::make_shared<codegen::GpuModule>(m_gpuLowerer(task, states[i]));
            else
                inputs[i].func = std::make_shared<lower::LoweredFunc>(m_lowerer(task, states[i]));
            inputs[i].stateText = states[i].toStr();
        } catch (const std::exception& e) {
            lowerErrors[i] = e.what();  // the builder reports a null function as INSTANTIATION_ERROR
        }
    });
    m_phases.lowerSeconds = since(t0);
    const auto best = m_bestCost.find(task.workloadKey);
    for (auto& in : inputs) {
        in.bestCostS = best != m_bestCost.end() ? best->second : 0;
        in.abandonFactor = m_abandonFactor;
        in.screenFactor = m_screenFactor;
    }
    std::vector<measure::MeasureResult> results;
    const size_t n = inputs.size(), slice = size_t(m_pipelineSlice);
    if (slice == 0 || n <= slice) {
        auto t1 = clock::now();
        std::vector<measure::BuildResult> builds = m_builder.build(inputs);
        m_phases.buildSeconds = since(t1);
        auto t2 = clock::now();
        results = m_runner.run(inputs, builds);
        m_phases.runSeconds = since(t2);
    } else {
        results = measurePipelined(inputs);
    }
    TB_CHECK(results.size() == states.size()) << "runner returned " << results.size() << " results";
    std::vector<search::MeasureOutcome> out;
    for (size_t i = 0; i < states.size(); ++i) {
        search::MeasureOutcome o;
        o.costs = results[i].costs;
        o.errorNo = int(results[i].errorNo);
        o.errorMsg = lowerErrors[i].empty() ? results[i].errorMsg : lowerErrors[i];
        o.allCost = results[i].allCost;
        if (results[i].ok()) {
            auto [it, fresh] = m_bestCost.try_emplace(task.workloadKey, results[i].meanCost());
            if (!fresh) it->second = std::min(it->second, results[i].meanCost());
        }
        ++m_measured;
        if (o.errorNo != 0) ++m_failed;
        if (m_writer) m_writer->append(makeRecord(task, m_target, states[i], o));
        out.push_back(std::move(o));
    }
    return out;
}

}  // namespace tb::tuning
