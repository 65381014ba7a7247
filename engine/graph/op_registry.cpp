// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/op_registry.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "engine/graph/ops/register.h"
#include "engine/support/error.h"

namespace tb::graph {

namespace {
const std::map<std::string, OpDef>& registry() {
    static const std::map<std::string, OpDef> reg = [] {
        OpTable t;
        registerNnOps(t);      // ops/nn.cpp: the Relay ops of the zoo networks and TVM's passes
        registerExtraOps(t);   // ops/extra.cpp: further ops that ONNX models need
        std::map<std::string, OpDef> m;
        for (auto& d : t.defs) {
            TB_CHECK(!m.count(d.name)) << "operator " << d.name << " registered twice";
            m.emplace(d.name, d);
        }
        return m;
    }();
    return reg;
}
}  // namespace

const OpDef* findOp(const std::string& op) {
    const auto& r = registry();
    auto it = r.find(op);
    return it == r.end() ? nullptr : &it->second;
}

std::vector<std::string> registeredOps() {
    std::vector<std::string> out;
    for (const auto& [k, _] : registry()) out.push_back(k);
    return out;
}

}  // namespace tb::graph
