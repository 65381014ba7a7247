// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file state_lowerer.h
/// \brief The "state -> lowered loop IR" function of a search task, as one injectable type.
///
/// Two consumers lower the candidate states of a search task: the learned cost model
/// (cost_model/xgb_model.h featurizes the loop IR) and the measurer (tuning/program_measurer.h
/// compiles it). Both take the lowering as a function value rather than calling lowerState
/// (lower_state.h) themselves, so a frontend decides how states of its targets are lowered and
/// tests can count or fake the calls. TVM has no such type: its cost model and builder both call
/// `ComputeDAG::ApplySteps` + `tvm.lower` directly.
///
/// Where it sits: lower/ builds on schedule/ (State) and search/ (SearchTask); the layers above
/// (cost_model/, tuning/, the apps) hold StateLowerer values. The usual value is
/// `[](const search::SearchTask& t, const State& s) { return lower::lowerState(*t.dag, s); }`.

#include <functional>

#include "engine/lower/loop_ir.h"
#include "engine/schedule/loop_state.h"
#include "engine/search/search_task.h"

namespace tb::lower {

/// Lowers a bound-inferred, concrete `state` of `task` to loop IR. Throws (UserError or
/// InternalError) when the state cannot be lowered; callers treat that as a failed candidate.
using StateLowerer = std::function<LoweredFunc(const search::SearchTask& task, const State& state)>;

}  // namespace tb::lower
