// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file program_measurer.h
/// \brief The measurer of the search (TVM `ProgramMeasurer`, auto_scheduler/measure.h: builder +
/// runner + callbacks): lowers candidate states, builds them with a ProgramBuilder, times them with
/// a ProgramRunner (local sandbox or RPC), and appends one TVM v0.6 record per candidate to the log
/// (TVM's RecordToFile callback), flushed before the next one. It implements search::Measurer, the
/// interface the sketch policy calls.
///
/// Pipelining (setPipelineSlice): TVM builds a whole batch, then runs it. With a slice of n, the
/// batch is built and run n candidates at a time, and the builder compiles slice k+1 on a thread of
/// its own while the runner times slice k. Each candidate still gets exactly one result, in batch
/// order, the runner still times one candidate at a time, and observers still see one batch
/// (MeasureEventSource::beginSlice). Both sides share the machine's cores, so whether it pays (and
/// whether the timings stay as quiet) depends on the machine: bench/search/throughput.sh measures it.
/// On the 2-core machine of issue 20 it did not pay: resnet-18's conv ran 3.0-3.8 trials/s with or
/// without it, and the states both runs measured were timed 1.9x slower (median) beside the
/// compiles (1.2x with the compile threads at nice 19, which tune --pipeline uses).
///
/// Failures are data: a state that cannot be lowered is INSTANTIATION_ERROR, a compile error
/// COMPILE_HOST, a crash RUNTIME_DEVICE (the sandbox survives), a timeout RUN_TIMEOUT (REFERENCE-TVM
/// §4.3). Every candidate yields exactly one outcome and one record.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "engine/lower/state_lowerer.h"
#include "engine/measure/measure.h"
#include "engine/record/record_io.h"
#include "engine/search/sketch_policy.h"

namespace tb::tuning {

class ProgramMeasurer : public search::Measurer {
public:
    /// `builder`, `runner` and (optional) `writer` must outlive the measurer. `targetString` is
    /// written into records (TVM's canonical target string, e.g. "llvm -keys=cpu -mcpu=znver4").
    ProgramMeasurer(lower::StateLowerer lowerer, measure::ProgramBuilder& builder, measure::ProgramRunner& runner,
                     record::RecordWriter* writer, std::string targetString);

    std::vector<search::MeasureOutcome> measure(const search::SearchTask& task, const std::vector<State>& states) override;
    search::MeasurePhases lastPhases() const override { return m_phases; }

    /// GPU tasks: how a state becomes the candidate the runner times (codegen::buildGpuModule:
    /// OpenCL C or CUDA C plus launches), instead of `lowerer`'s loop IR. Set it when the target
    /// is a GPU; a state it cannot turn into a module is INSTANTIATION_ERROR.
    using GpuLowerer = std::function<codegen::GpuModule(const search::SearchTask& task, const State& state)>;
    void setGpuLowerer(GpuLowerer gpuLowerer) { m_gpuLowerer = std::move(gpuLowerer); }

    /// Candidates per pipeline slice (see the file comment); 0 (the default) builds the whole batch
    /// before running it, as TVM does. Throws tb::UserError for a negative value.
    void setPipelineSlice(int candidates);
    int pipelineSlice() const { return m_pipelineSlice; }

    /// Early abandon (CPU local runner; 0 = off, TVM's behaviour): a candidate whose first timed call
    /// is slower than `factor` x the best cost seen for its task (this measurer's earlier batches, or
    /// earlier in the same batch) is not measured further; its record holds that one call's time
    /// (MeasureInput::abandonFactor, timer.h). A candidate that slow has a cost-model target
    /// (best / cost) under 1 / factor either way, so the search loses nothing it uses, and the
    /// round saves the longest measurements it had. Throws tb::UserError for a factor in (0, 1].
    void setAbandonFactor(double factor);
    double abandonFactor() const { return m_abandonFactor; }

    /// Screening (CPU local runner; 0 = off, TVM's behaviour): every candidate is first timed for
    /// the runner's screenMs (10 ms by default, RunnerOptions::screenMs); one whose time per call
    /// then exceeds `factor` x the best cost seen for its task (as for early abandon) stops there, and
    /// its record holds that time. Only candidates within `factor` of the best get the whole
    /// min_repeat_ms measurement, which continues the screening calls (timer.h screenAboveS).
    /// Why: most of a round's run time goes to timing candidates the search will never keep to
    /// min_repeat_ms precision (a 1 ms kernel: 100 calls), while the cost model's target for them
    /// (best / cost < 1 / factor) hardly changes with a 10-call measurement; the full measurement
    /// is kept where precision matters, near the best. Issue 20. Throws tb::UserError for a factor
    /// in (0, 1].
    void setScreen(double factor);
    double screenFactor() const { return m_screenFactor; }

    /// Total candidates measured, and how many failed.
    int measured() const { return m_measured; }
    int failed() const { return m_failed; }

private:
    std::vector<measure::MeasureResult> measurePipelined(const std::vector<measure::MeasureInput>& inputs);

    lower::StateLowerer m_lowerer;
    GpuLowerer m_gpuLowerer;
    measure::ProgramBuilder& m_builder;
    measure::ProgramRunner& m_runner;
    record::RecordWriter* m_writer;
    std::string m_target;
    int m_measured = 0, m_failed = 0;
    int m_pipelineSlice = 0;
    double m_abandonFactor = 0;
    double m_screenFactor = 0;
    std::map<std::string, double> m_bestCost;  // per workload key: best mean cost measured (s)
    search::MeasurePhases m_phases;
};

/// The record of one measured state (TVM auto_scheduler v0.6 line; layout_rewrite_option is the
/// task's, search_task.h).
record::MeasureRecord makeRecord(const search::SearchTask& task, const std::string& targetString, const State& state,
                                 const search::MeasureOutcome& outcome);

}  // namespace tb::tuning
