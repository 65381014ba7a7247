// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/interpreter.h"

#include <chrono>
#include <optional>

#include "engine/graph/op_registry.h"
#include "engine/support/error.h"

namespace tb::graph {

namespace {
std::string shapeStr(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}
}  // namespace

te::Buffer constantBuffer(const ConstantData& c) {
    te::Buffer b;
    b.shape = c.type.shape;
    if (te::isFloat(c.type.dtype)) {
        b.data = c.f;
    } else {
        b.data.reserve(c.i.size());
        for (int64_t v : c.i) b.data.push_back(float(v));
    }
    TB_CHECK(int64_t(b.data.size()) == b.numElements())
        << "constant of shape " << shapeStr(b.shape) << " holds " << b.data.size() << " values";
    return b;
}

std::vector<te::Buffer> runGraph(const Graph& g, const std::vector<te::Buffer>& inputs, const GraphRunOptions& options) {
    TB_USER_CHECK(inputs.size() == g.inputs().size())
        << "the graph has " << g.inputs().size() << " inputs, " << inputs.size() << " were given";
    const size_t n = g.size();

    // Remaining reads of every node's buffer; graph outputs are never released.
    std::vector<int> uses(n, 0);
    std::vector<char> isOutput(n, 0);
    for (const Node& node : g.nodes())
        for (NodeId p : node.inputs) ++uses[size_t(p)];
    for (NodeId o : g.outputs()) isOutput[size_t(o)] = 1;

    std::vector<std::optional<te::Buffer>> buf(n);
    for (size_t k = 0; k < inputs.size(); ++k) {
        const Node& in = g.node(g.inputs()[k]);
        TB_USER_CHECK(inputs[k].shape == in.type.shape)
            << "input '" << in.name << "' must have shape " << shapeStr(in.type.shape) << ", got "
            << shapeStr(inputs[k].shape);
        TB_USER_CHECK(int64_t(inputs[k].data.size()) == inputs[k].numElements())
            << "input '" << in.name << "' holds " << inputs[k].data.size() << " values for shape "
            << shapeStr(inputs[k].shape);
        buf[size_t(g.inputs()[k])] = inputs[k];
    }

    for (size_t id = 0; id < n; ++id) {
        const Node& node = g.nodes()[id];
        if (node.kind == NodeKind::Input) {
            TB_CHECK(buf[id]) << "graph input %" << id << " is not in Graph::inputs()";
            continue;
        }
        if (node.kind == NodeKind::Constant) {
            // Materialized on first use (below), so unused constants cost nothing.
            if (isOutput[id]) buf[id] = constantBuffer(*node.value);
            continue;
        }
        const auto t0 = std::chrono::steady_clock::now();
        const OpDef* def = findOp(node.op);
        TB_USER_CHECK(def) << "node %" << id << " '" << node.name << "': unknown operator '" << node.op << "'";

        std::vector<te::Tensor> ph;
        te::BufferMap given;
        for (size_t k = 0; k < node.inputs.size(); ++k) {
            const size_t p = size_t(node.inputs[k]);
            const Node& prod = g.nodes()[p];
            if (!buf[p]) {
                TB_CHECK(prod.kind == NodeKind::Constant) << "node %" << p << " used before it was computed";
                buf[p] = constantBuffer(*prod.value);
            }
            ph.push_back(te::placeholder(prod.type.shape, "p" + std::to_string(k), DType::Float32));
            // The last read of a buffer moves it into the evaluation instead of copying it.
            if (--uses[p] == 0 && !isOutput[p]) {
                given.emplace(ph.back().op(), std::move(*buf[p]));
                buf[p].reset();
            } else {
                given.emplace(ph.back().op(), *buf[p]);
            }
        }

        te::Buffer out;
        try {
            te::Tensor result = def->lower(ph, node.attrs);
            TB_CHECK(bool(result)) << node.op << " lowered to nothing";
            if (result.op()->isPlaceholder()) {
                auto it = given.find(result.op());
                TB_CHECK(it != given.end()) << node.op << " lowered to a foreign placeholder";
                out = it->second;
            } else {
                te::BufferMap res = te::evaluateTensors({result}, given, options.eval);
                auto it = res.find(result.op());
                TB_CHECK(it != res.end()) << "the te interpreter returned no buffer for " << result.name();
                out = std::move(it->second);
            }
        } catch (const UserError& e) {
            TB_USER_ERROR() << "node %" << id << " '" << node.name << "' (" << node.op << "): " << e.what();
        }
        TB_CHECK(out.shape == node.type.shape)
            << "node %" << id << " '" << node.name << "' (" << node.op << ") computed shape " << shapeStr(out.shape)
            << " but its inferred type is " << shapeStr(node.type.shape);
        given.clear();
        if (options.onNode) options.onNode(NodeId(id), out);
        if (options.profile) {
            const double ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            options.profile->push_back({NodeId(id), node.op, node.name, ms});
        }
        if (uses[id] > 0 || isOutput[id]) buf[id] = std::move(out);
    }

    std::vector<te::Buffer> results;
    for (NodeId o : g.outputs()) {
        TB_CHECK(buf[size_t(o)]) << "output %" << o << " was not computed";
        results.push_back(*buf[size_t(o)]);
    }
    return results;
}

std::vector<te::Buffer> runGraph(const Graph& g, const std::map<std::string, te::Buffer>& inputs,
                                 const GraphRunOptions& options) {
    std::vector<te::Buffer> ordered;
    size_t used = 0;
    for (NodeId id : g.inputs()) {
        const std::string& name = g.node(id).name;
        auto it = inputs.find(name);
        TB_USER_CHECK(it != inputs.end()) << "no value given for graph input '" << name << "'";
        ordered.push_back(it->second);
        ++used;
    }
    if (used != inputs.size()) {
        for (const auto& [name, _] : inputs) {
            bool known = false;
            for (NodeId id : g.inputs()) known = known || g.node(id).name == name;
            TB_USER_CHECK(known) << "'" << name << "' is not an input of the graph";
        }
    }
    return runGraph(g, ordered, options);
}

}  // namespace tb::graph
