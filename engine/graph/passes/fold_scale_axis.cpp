// SPDX-License-Identifier: Apache-2.0
// Relay FoldScaleAxis (src/relay/transforms/fold_scale_axis.cc), backward and forward, for the
// ops TVM registers: nn.relu, nn.leaky_relu, add, subtract, multiply, nn.conv2d, nn.dense.
// The structure (prep messages, memoized transform, ScaledExpr) follows the Relay source so that
// exactly the same multiplies fold.
#include <algorithm>
#include <functional>
#include <optional>

#include "engine/graph/passes/layout.h"
#include "engine/graph/passes/pass_util.h"
#include "engine/graph/passes/passes.h"
#include "engine/support/error.h"

namespace tb::graph {

namespace {

using detail::GraphRebuilder;
using detail::matchBroadcastToLeftAxes;

struct Message {
    std::vector<int> axes;  // sorted
    bool requirePositive = false;
};
using OptMessage = std::optional<Message>;

OptMessage intersect(const OptMessage& a, const OptMessage& b) {
    if (!a || !b) return std::nullopt;
    Message m;
    std::set_intersection(a->axes.begin(), a->axes.end(), b->axes.begin(), b->axes.end(), std::back_inserter(m.axes));
    m.requirePositive = a->requirePositive || b->requirePositive;
    return m;
}

const std::vector<int64_t>& shapeOf(const Graph& g, NodeId id) { return g.node(id).type.shape; }

bool isOpNode(const Node& n, const char* op) { return n.kind == NodeKind::Op && n.op == op; }
bool isReluLike(const Node& n) { return isOpNode(n, "nn.relu") || isOpNode(n, "nn.leaky_relu"); }
bool isAddSub(const Node& n) { return isOpNode(n, "add") || isOpNode(n, "subtract"); }

/// IsAllPositiveConstant: a constant (peeled through expand_dims/reshape/transpose/squeeze) whose
/// every value is >= 0.
bool isAllPositiveConstant(const Graph& g, NodeId id) {
    const Node& n = g.node(id);
    if (n.kind == NodeKind::Constant) {
        if (n.type.dtype != te::DType::Float32 || n.value->f.empty()) return false;
        return std::all_of(n.value->f.begin(), n.value->f.end(), [](float v) { return v >= 0.0f; });
    }
    if (n.kind == NodeKind::Op &&
        (n.op == "expand_dims" || n.op == "reshape" || n.op == "transpose" || n.op == "squeeze"))
        return isAllPositiveConstant(g, n.inputs[0]);
    return false;
}

/// Conv2d facts shared by the prep and transform functions.
struct ConvInfo {
    bool simple = false;    // no blocked axes anywhere
    bool foldable = false;  // simple and (groups == 1 or depthwise)
    bool depthwise = false;
    int dataC = -1, outC = -1, kernelO = -1, kernelI = -1;
    size_t kernelNdim = 0;
};

ConvInfo convInfo(const Graph& g, const Node& n) {
    ConvInfo ci;
    Layout dl(n.attrs.getString("data_layout", "NCHW"));
    Layout kl(n.attrs.getString("kernel_layout", "OIHW"));
    std::string on = n.attrs.getString("out_layout", "");
    Layout ol = on.empty() ? dl : Layout(on);
    int64_t groups = n.attrs.getInt("groups", 1);
    const auto& w = shapeOf(g, n.inputs[1]);
    auto oihw = kl.convertShape(w, Layout("OIHW"));
    ci.depthwise = oihw[0] == groups && oihw[1] == 1;
    ci.simple = !kl.contains('o') && !kl.contains('i') && !dl.contains('c') && !ol.contains('c');
    ci.foldable = ci.simple && (groups == 1 || ci.depthwise);
    ci.dataC = dl.indexOf('C');
    ci.outC = ol.indexOf('C');
    ci.kernelO = kl.indexOf('O');
    ci.kernelI = kl.indexOf('I');
    ci.kernelNdim = kl.ndim();
    return ci;
}

NodeId squeezeNode(Graph& g, NodeId x, const std::vector<int64_t>& axes) {
    if (axes.empty()) return x;
    Attrs a;
    a.set("axis", axes);
    return g.addOp("squeeze", {x}, a);
}

// ---- backward ------------------------------------------------------------------------------

class BackwardFolder {
public:
    explicit BackwardFolder(const Graph& src) : m_src(src), m_rb(src), m_msg(src.size()) {}

    Graph run() {
        prepare();
        bool any = std::any_of(m_msg.begin(), m_msg.end(), [](const OptMessage& m) { return bool(m); });
        if (!any) return m_src.pruned();
        for (NodeId in : m_src.inputs()) m_rb.copy(in, {});  // keep the input order
        for (NodeId o : m_src.outputs()) transform(o, std::nullopt, -1);
        return m_rb.finish();
    }

private:
    void prepare() {
        auto ref = detail::refCounts(m_src);
        for (NodeId id = 0; id < NodeId(m_src.size()); ++id) {
            const Node& n = m_src.node(id);
            if (n.kind != NodeKind::Op || ref[size_t(id)] != 1) continue;
            auto in = [&](size_t i) { return m_msg[size_t(n.inputs[i])]; };
            OptMessage out;
            if (n.op == "nn.conv2d") {
                ConvInfo ci = convInfo(m_src, n);
                if (ci.foldable) out = Message{{ci.outC}, false};
            } else if (n.op == "nn.dense") {
                if (n.type.shape.size() == 2) out = Message{{1}, false};
            } else if (isReluLike(n)) {
                if (in(0)) out = Message{in(0)->axes, true};
            } else if (isAddSub(n)) {
                const auto& l = shapeOf(m_src, n.inputs[0]);
                const auto& r = shapeOf(m_src, n.inputs[1]);
                if (in(0) && matchBroadcastToLeftAxes(l, r, in(0)->axes)) out = in(0);
                else if (in(1) && matchBroadcastToLeftAxes(r, l, in(1)->axes)) out = in(1);
                else if (in(0) && in(1) && in(0)->axes == in(1)->axes && l == r) out = in(0);
            }
            if (out) m_msg[size_t(id)] = out;
        }
    }

    NodeId normal(NodeId id) {
        if (m_rb.map[size_t(id)] >= 0) return m_rb.map[size_t(id)];
        const Node& n = m_src.node(id);
        std::vector<NodeId> in;
        for (NodeId p : n.inputs) in.push_back(transform(p, std::nullopt, -1));
        return m_rb.copy(id, std::move(in));
    }

    NodeId transform(NodeId id, const OptMessage& msg, NodeId scale) {
        const Node& n = m_src.node(id);
        bool hasTransform = n.kind == NodeKind::Op && (isOpNode(n, "multiply") || isReluLike(n) || isAddSub(n) ||
                                                       isOpNode(n, "nn.conv2d") || isOpNode(n, "nn.dense"));
        if (!hasTransform) {
            TB_CHECK(!msg) << "outstanding scale at %" << id;
            return normal(id);
        }
        if (!msg && m_rb.map[size_t(id)] >= 0) return m_rb.map[size_t(id)];
        NodeId r = dispatch(id, n, msg, scale);
        if (!msg) m_rb.map[size_t(id)] = r;
        return r;
    }

    NodeId dispatch(NodeId id, const Node& n, const OptMessage& msg, NodeId scale) {
        Graph& g = m_rb.out;
        if (isOpNode(n, "multiply")) {
            TB_CHECK(!msg) << "outstanding scale";
            const auto& l = shapeOf(m_src, n.inputs[0]);
            const auto& r = shapeOf(m_src, n.inputs[1]);
            const OptMessage& lm = m_msg[size_t(n.inputs[0])];
            const OptMessage& rm = m_msg[size_t(n.inputs[1])];
            std::vector<int64_t> sq;
            if (lm) {
                if (matchBroadcastToLeftAxes(l, r, lm->axes, &sq) &&
                    (!lm->requirePositive || isAllPositiveConstant(m_src, n.inputs[1]))) {
                    NodeId s = squeezeNode(g, normal(n.inputs[1]), sq);
                    return transform(n.inputs[0], lm, s);
                }
            } else if (rm) {
                if (matchBroadcastToLeftAxes(r, l, rm->axes, &sq) &&
                    (!rm->requirePositive || isAllPositiveConstant(m_src, n.inputs[0]))) {
                    NodeId s = squeezeNode(g, normal(n.inputs[0]), sq);
                    return transform(n.inputs[1], rm, s);
                }
            }
            return normalCall(id);
        }
        if (!msg) return normalCall(id);
        if (isReluLike(n)) {
            NodeId x = transform(n.inputs[0], msg, scale);
            return g.addOp(n.op, {x}, n.attrs, n.name);
        }
        if (isAddSub(n)) {
            const OptMessage& lm = m_msg[size_t(n.inputs[0])];
            const OptMessage& rm = m_msg[size_t(n.inputs[1])];
            size_t lrank = shapeOf(m_src, n.inputs[0]).size(), rrank = shapeOf(m_src, n.inputs[1]).size();
            NodeId lhs, rhs;
            if (lm && rm) {
                lhs = transform(n.inputs[0], msg, scale);
                rhs = transform(n.inputs[1], msg, scale);
            } else if (lm) {
                lhs = transform(n.inputs[0], msg, scale);
                rhs = transform(n.inputs[1], std::nullopt, -1);
                rhs = g.addOp("multiply", {rhs, detail::expandBiasToMatchAxis(g, scale, lrank, msg->axes[0])});
            } else if (rm) {
                lhs = transform(n.inputs[0], std::nullopt, -1);
                rhs = transform(n.inputs[1], msg, scale);
                lhs = g.addOp("multiply", {lhs, detail::expandBiasToMatchAxis(g, scale, rrank, msg->axes[0])});
            } else {
                TB_CHECK(false) << "outstanding scale";
            }
            return g.addOp(n.op, {lhs, rhs}, n.attrs, n.name);
        }
        if (isOpNode(n, "nn.conv2d")) {
            ConvInfo ci = convInfo(m_src, n);
            NodeId data = transform(n.inputs[0], std::nullopt, -1);
            NodeId w = transform(n.inputs[1], std::nullopt, -1);
            w = g.addOp("multiply", {w, detail::expandBiasToMatchAxis(g, scale, ci.kernelNdim, ci.kernelO)});
            return g.addOp(n.op, {data, w}, n.attrs, n.name);
        }
        // nn.dense
        NodeId data = transform(n.inputs[0], std::nullopt, -1);
        NodeId w = transform(n.inputs[1], std::nullopt, -1);
        w = g.addOp("multiply", {w, detail::expandBiasToMatchAxis(g, scale, 2, 0)});
        return g.addOp(n.op, {data, w}, n.attrs, n.name);
    }

    NodeId normalCall(NodeId id) {
        const Node& n = m_src.node(id);
        std::vector<NodeId> in;
        for (NodeId p : n.inputs) in.push_back(transform(p, std::nullopt, -1));
        return m_rb.addOp(n.op, std::move(in), n.attrs, n.name);
    }

    const Graph& m_src;
    GraphRebuilder m_rb;
    std::vector<OptMessage> m_msg;
};

// ---- forward -------------------------------------------------------------------------------

class ForwardFolder {
public:
    explicit ForwardFolder(const Graph& src) : m_src(src), m_rb(src), m_msg(src.size()), m_has(src.size(), 0) {}

    Graph run() {
        prepare();
        bool any = false;
        for (size_t i = 0; i < m_msg.size(); ++i) any |= m_has[i] && m_msg[i];
        if (!any) return m_src.pruned();
        rewrite();
        return m_rb.finish();
    }

private:
    void update(NodeId id, const OptMessage& m) {
        if (m_has[size_t(id)]) {
            m_msg[size_t(id)] = intersect(m_msg[size_t(id)], m);
        } else {
            m_msg[size_t(id)] = m;
            m_has[size_t(id)] = 1;
        }
    }

    void prepare() {
        for (NodeId o : m_src.outputs()) update(o, std::nullopt);
        for (NodeId id = NodeId(m_src.size()); id-- > 0;) {
            const Node& n = m_src.node(id);
            if (n.kind != NodeKind::Op) continue;
            OptMessage out = m_has[size_t(id)] ? m_msg[size_t(id)] : std::nullopt;
            std::vector<OptMessage> in(n.inputs.size());
            if (isReluLike(n)) {
                if (out) in[0] = Message{out->axes, true};
            } else if (isAddSub(n)) {
                const auto& l = shapeOf(m_src, n.inputs[0]);
                const auto& r = shapeOf(m_src, n.inputs[1]);
                if (out) {
                    if (matchBroadcastToLeftAxes(l, r, out->axes)) in[0] = out;
                    else if (matchBroadcastToLeftAxes(r, l, out->axes)) in[1] = out;
                }
            } else if (isOpNode(n, "nn.conv2d")) {
                ConvInfo ci = convInfo(m_src, n);
                if (ci.foldable) in[0] = Message{{ci.dataC}, false};
            } else if (isOpNode(n, "nn.dense")) {
                if (shapeOf(m_src, n.inputs[0]).size() == 2) in[0] = Message{{1}, false};
            }
            for (size_t i = 0; i < n.inputs.size(); ++i) update(n.inputs[i], in[i]);
        }
    }

    struct Value {
        NodeId value = -1;
        NodeId scale = -1;  // -1: not scaled
        std::vector<int> axes;
    };

    NodeId realize(const Value& v, size_t ndim) {
        if (v.scale < 0) return v.value;
        // TVM checks that no scale is left outstanding; multiplying it back keeps the numerics.
        return m_rb.out.addOp("multiply",
                              {v.value, detail::expandBiasToMatchAxis(m_rb.out, v.scale, ndim, v.axes[0])});
    }

    void rewrite() {
        Graph& g = m_rb.out;
        std::vector<Value> val(m_src.size());
        for (NodeId id = 0; id < NodeId(m_src.size()); ++id) {
            const Node& n = m_src.node(id);
            if (n.kind != NodeKind::Op) {
                val[size_t(id)].value = m_rb.copy(id, {});
                continue;
            }
            OptMessage msg = m_has[size_t(id)] ? m_msg[size_t(id)] : std::nullopt;
            std::vector<Value> args;
            for (NodeId p : n.inputs) args.push_back(val[size_t(p)]);
            std::optional<Value> r = rewriteCall(n, args, msg);
            if (!r) {
                std::vector<NodeId> in;
                for (size_t i = 0; i < args.size(); ++i)
                    in.push_back(realize(args[i], shapeOf(m_src, n.inputs[i]).size()));
                r = Value{g.addOp(n.op, std::move(in), n.attrs, n.name), -1, {}};
            }
            val[size_t(id)] = *r;
            m_rb.map[size_t(id)] = r->scale < 0 ? r->value : -1;
        }
        for (NodeId o : m_src.outputs())
            if (m_rb.map[size_t(o)] < 0) m_rb.map[size_t(o)] = realize(val[size_t(o)], shapeOf(m_src, o).size());
    }

    std::optional<Value> rewriteCall(const Node& n, const std::vector<Value>& args, const OptMessage& msg) {
        Graph& g = m_rb.out;
        if (isOpNode(n, "multiply")) {
            if (!msg || msg->axes.empty() || args[0].scale >= 0 || args[1].scale >= 0) return std::nullopt;
            const auto& l = shapeOf(m_src, n.inputs[0]);
            const auto& r = shapeOf(m_src, n.inputs[1]);
            std::vector<int64_t> sq;
            if (matchBroadcastToLeftAxes(l, r, msg->axes, &sq) &&
                (!msg->requirePositive || isAllPositiveConstant(m_src, n.inputs[1])))
                return Value{args[0].value, squeezeNode(g, args[1].value, sq), msg->axes};
            sq.clear();
            if (matchBroadcastToLeftAxes(r, l, msg->axes, &sq) &&
                (!msg->requirePositive || isAllPositiveConstant(m_src, n.inputs[0])))
                return Value{args[1].value, squeezeNode(g, args[0].value, sq), msg->axes};
            return std::nullopt;
        }
        if (isReluLike(n)) {
            if (args[0].scale < 0) return std::nullopt;
            return Value{g.addOp(n.op, {args[0].value}, n.attrs, n.name), args[0].scale, args[0].axes};
        }
        if (isAddSub(n)) {
            const Value& a = args[0];
            const Value& b = args[1];
            if (a.scale < 0 && b.scale < 0) return std::nullopt;
            if (a.scale >= 0 && b.scale >= 0) return std::nullopt;
            bool left = a.scale >= 0;
            const Value& s = left ? a : b;
            if (s.axes.size() != 1) return std::nullopt;
            size_t rank = shapeOf(m_src, n.inputs[left ? 0 : 1]).size();
            NodeId sc = detail::expandBiasToMatchAxis(g, s.scale, rank, s.axes[0]);
            NodeId other = g.addOp("divide", {(left ? b : a).value, sc});
            NodeId v = left ? g.addOp(n.op, {s.value, other}, n.attrs, n.name)
                            : g.addOp(n.op, {other, s.value}, n.attrs, n.name);
            return Value{v, s.scale, s.axes};
        }
        if (isOpNode(n, "nn.conv2d")) {
            if (args[0].scale < 0 || args[1].scale >= 0) return std::nullopt;
            ConvInfo ci = convInfo(m_src, n);
            TB_CHECK(ci.foldable) << "forward fold into a conv that did not ask for it";
            int axis = ci.depthwise ? ci.kernelO : ci.kernelI;
            NodeId w = g.addOp("multiply",
                               {args[1].value, detail::expandBiasToMatchAxis(g, args[0].scale, ci.kernelNdim, axis)});
            return Value{g.addOp(n.op, {args[0].value, w}, n.attrs, n.name), -1, {}};
        }
        if (isOpNode(n, "nn.dense")) {
            if (args[0].scale < 0 || args[1].scale >= 0) return std::nullopt;
            NodeId w = g.addOp("multiply", {args[1].value, args[0].scale});
            return Value{g.addOp(n.op, {args[0].value, w}, n.attrs, n.name), -1, {}};
        }
        return std::nullopt;
    }

    const Graph& m_src;
    GraphRebuilder m_rb;
    std::vector<OptMessage> m_msg;
    std::vector<char> m_has;
};

}  // namespace

Graph backwardFoldScaleAxis(const Graph& g) { return BackwardFolder(g).run(); }
Graph forwardFoldScaleAxis(const Graph& g) { return ForwardFolder(g).run(); }

Graph foldScaleAxis(const Graph& g) { return foldConstant(forwardFoldScaleAxis(backwardFoldScaleAxis(g))); }

}  // namespace tb::graph
