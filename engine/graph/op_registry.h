// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file op_registry.h
/// \brief What the engine knows about each graph operator: how to infer its output type, how to
/// express it in te (through topi, with TVM's exact stage names), and how fusion sees it.
///
/// One registry serves type inference (Graph::addOp), the graph reference interpreter, task
/// extraction (a fused group is lowered op by op into one te DAG) and the whole-network compiler.
/// The fusion pattern follows Relay's TOpPattern: kElemWise < kBroadcast < kInjective <
/// kCommReduce < kOutEWiseFusable < kTuple < kOpaque (REFERENCE-ZOO §2.3).

#include <functional>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/te/operation.h"

namespace tb::graph {

enum class OpPattern : int {
    ElemWise = 0, Broadcast = 1, Injective = 2, CommReduce = 3, OutEWiseFusable = 4, Tuple = 7, Opaque = 8
};

struct OpDef {
    std::string name;
    OpPattern pattern = OpPattern::Opaque;
    /// Output type from the input types and attrs; throws UserError naming the problem.
    std::function<TensorType(const std::vector<TensorType>& inputs, const Attrs& attrs)> inferType;
    /// The te compute of the op over te tensors for its inputs (topi call with TVM's names).
    std::function<te::Tensor(const std::vector<te::Tensor>& inputs, const Attrs& attrs)> lower;
};

/// The definition of `op`, or nullptr when the engine does not know it.
const OpDef* findOp(const std::string& op);
/// Every registered op name (sorted), e.g. for error messages and docs.
std::vector<std::string> registeredOps();

}  // namespace tb::graph
