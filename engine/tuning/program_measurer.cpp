// SPDX-License-Identifier: Apache-2.0
#include "engine/tuning/program_measurer.h"

#include <chrono>

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
    r.task.layoutRewriteOption = 0;
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
    auto t1 = clock::now();
    std::vector<measure::BuildResult> builds = m_builder.build(inputs);
    m_phases.buildSeconds = since(t1);
    auto t2 = clock::now();
    std::vector<measure::MeasureResult> results = m_runner.run(inputs, builds);
    m_phases.runSeconds = since(t2);
    TB_CHECK(results.size() == states.size()) << "runner returned " << results.size() << " results";
    std::vector<search::MeasureOutcome> out;
    for (size_t i = 0; i < states.size(); ++i) {
        search::MeasureOutcome o;
        o.costs = results[i].costs;
        o.errorNo = int(results[i].errorNo);
        o.errorMsg = lowerErrors[i].empty() ? results[i].errorMsg : lowerErrors[i];
        o.allCost = results[i].allCost;
        ++m_measured;
        if (o.errorNo != 0) ++m_failed;
        if (m_writer) m_writer->append(makeRecord(task, m_target, states[i], o));
        out.push_back(std::move(o));
    }
    return out;
}

}  // namespace tb::tuning
