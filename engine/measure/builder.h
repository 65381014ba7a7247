// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file builder.h
/// \brief LocalBuilder: compiles a batch of candidates in parallel, in process (TVM LocalBuilder,
/// REFERENCE-TVM §4.1: timeout 15 s, n_parallel = cpu count).
///
/// Each candidate's LoweredFunc goes through codegen::compileCached (so a program seen before is
/// not compiled again) on its own thread, at most `nParallel` at a time, in batch order: as soon as
/// one compile ends the next candidate starts (a queue, not waves that wait for their slowest
/// member). A compile that exceeds the timeout (counted from its own start) is reported as
/// BUILD_TIMEOUT and abandoned (its thread finishes in the background, its result is dropped and
/// its slot goes to the next candidate); a codegen error becomes COMPILE_HOST with the message; a
/// candidate with neither a function nor a prebuilt kernel is INSTANTIATION_ERROR. With an event
/// sink set, each candidate built in time yields one Build/Finished MeasureEvent, from the calling
/// thread, before build() returns.

#include <memory>

#include "engine/measure/measure.h"

namespace tb::measure {

struct BuilderOptions {
    double timeoutS = 15;   ///< per-candidate compile limit (s)
    int nParallel = 0;      ///< concurrent compiles; 0 = hardware threads
    codegen::CompileOptions compile{false, false, {}};  ///< IR / assembly text are not needed to measure
    /// Nice value of the compile threads (Linux setpriority per thread; 0 = the caller's). A builder
    /// that compiles while a runner times candidates on the same cores (a pipelined measurer) runs
    /// its threads at a higher nice value, so that the scheduler gives the timed kernel the cores
    /// and the compiles take what is left. Values the process may not set are ignored.
    int niceness = 0;
};

class LocalBuilder : public ProgramBuilder {
public:
    explicit LocalBuilder(codegen::Target target, BuilderOptions options = {});
    /// Waits for abandoned (timed-out) compiles to finish, so none outlives the builder.
    ~LocalBuilder() override;
    std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override;

    const codegen::Target& target() const { return m_target; }

private:
    codegen::Target m_target;
    BuilderOptions m_options;
    struct Pending;
    std::shared_ptr<Pending> m_pending;  // compile threads still running
    long long m_batches = 0;             // batches built (MeasureEvent::batch)
};

}  // namespace tb::measure
