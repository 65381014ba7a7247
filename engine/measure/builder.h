// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file builder.h
/// \brief LocalBuilder: compiles a batch of candidates in parallel, in process (TVM LocalBuilder,
/// REFERENCE-TVM §4.1: timeout 15 s, n_parallel = cpu count).
///
/// Each candidate's LoweredFunc goes through codegen::compileCached (so a program seen before is
/// not compiled again) on its own thread, at most `nParallel` at a time. A compile that exceeds the
/// timeout is reported as BUILD_TIMEOUT and abandoned (its thread finishes in the background and
/// its result is dropped); a codegen error becomes COMPILE_HOST with the message; a candidate with
/// neither a function nor a prebuilt kernel is INSTANTIATION_ERROR. With an event sink set, each
/// candidate built in time yields one Build/Finished MeasureEvent once its wave is done.

#include <memory>

#include "engine/measure/measure.h"

namespace tb::measure {

struct BuilderOptions {
    double timeoutS = 15;   ///< per-candidate compile limit (s)
    int nParallel = 0;      ///< concurrent compiles; 0 = hardware threads
    codegen::CompileOptions compile{false, false};  ///< IR / assembly text are not needed to measure
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
