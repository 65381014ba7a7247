// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to engine/graph: the op definition tables, split by file so that the Relay ops of the
// zoo (nn.cpp) and the further ops ONNX models need (extra.cpp) are maintained separately.

#include <vector>

#include "engine/graph/op_registry.h"

namespace tb::graph {

struct OpTable {
    std::vector<OpDef> defs;
    void add(OpDef d) { defs.push_back(std::move(d)); }
};

void registerNnOps(OpTable& t);
void registerExtraOps(OpTable& t);

}  // namespace tb::graph
