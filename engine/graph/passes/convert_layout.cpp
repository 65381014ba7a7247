// SPDX-License-Identifier: Apache-2.0
// Relay ConvertLayout({"nn.conv2d": [desired, "default"]}) (src/relay/transforms/convert_layout.cc,
// python/tvm/relay/op/nn/_nn.py `convert_conv2d`) for NCHW <-> NHWC.
//
// Each value carries the layout it is in now ("" = as in the source graph). Convs switch to the
// desired layout (kernel HWIO, or HWOI for depthwise; OIHW for NCHW), layout-agnostic ops follow
// their input, broadcast operands and pools are adapted, and every other op receives its inputs
// transformed back, as Relay's layout rewriter does.
#include <map>

#include "engine/graph/passes/layout.h"
#include "engine/graph/passes/pass_util.h"
#include "engine/graph/passes/passes.h"
#include "engine/support/error.h"

namespace tb::graph {

namespace {

using Shape = std::vector<int64_t>;


class Converter {
public:
    Converter(const Graph& src, std::string desired)
        : m_src(src), m_desired(std::move(desired)), m_cur(src.size(), -1), m_lay(src.size()),
          m_orig(src.size()) {}

    Graph run() {
        for (NodeId id = 0; id < NodeId(m_src.size()); ++id) visit(id);
        std::vector<NodeId> outs;
        for (NodeId o : m_src.outputs()) outs.push_back(toOriginal(o));
        m_out.setOutputs(outs);
        return m_out.pruned();
    }

private:
    NodeId transform(NodeId x, const std::string& from, const std::string& to) {
        if (from == to) return x;
        auto key = std::make_tuple(x, from, to);
        if (auto it = m_memo.find(key); it != m_memo.end()) return it->second;
        Attrs a;
        a.set("src_layout", from);
        a.set("dst_layout", to);
        return m_memo[key] = m_out.addOp("layout_transform", {x}, a);
    }
    NodeId toOriginal(NodeId id) {
        if (m_lay[size_t(id)].empty()) return m_cur[size_t(id)];
        return transform(m_cur[size_t(id)], m_lay[size_t(id)], m_orig[size_t(id)]);
    }
    /// Src node `id` (4-D, original layout `orig`) in layout `target`.
    NodeId toLayout(NodeId id, const std::string& orig, const std::string& target) {
        const std::string& l = m_lay[size_t(id)];
        if (l == target) return m_cur[size_t(id)];
        return transform(m_cur[size_t(id)], l.empty() ? orig : l, target);
    }
    /// Index of the original layout's axis `axis` in the current layout.
    static int64_t mapAxis(int64_t axis, const std::string& orig, const std::string& now) {
        if (now.empty()) return axis;
        return Layout(now).indexOf(orig[size_t(axis)]);
    }

    void setConverted(NodeId id, NodeId v, const std::string& lay, const std::string& orig) {
        m_cur[size_t(id)] = v;
        m_lay[size_t(id)] = lay == orig ? "" : lay;
        m_orig[size_t(id)] = orig;
    }

    void visit(NodeId id) {
        const Node& n = m_src.node(id);
        if (n.kind == NodeKind::Input) {
            m_cur[size_t(id)] = m_out.addInput(n.name, n.type);
            return;
        }
        if (n.kind == NodeKind::Constant) {
            m_cur[size_t(id)] = m_out.addConstant(n.name, n.value);
            return;
        }
        const std::string& op = n.op;
        if (op == "nn.conv2d") {
            std::string dl = n.attrs.getString("data_layout", "NCHW");
            std::string kl = n.attrs.getString("kernel_layout", "OIHW");
            if ((dl == "NCHW" || dl == "NHWC") && dl != m_desired && n.attrs.getString("out_layout", "").empty()) {
                int64_t groups = n.attrs.getInt("groups", 1);
                auto oihw = Layout(kl).convertShape(m_src.node(n.inputs[1]).type.shape, Layout("OIHW"));
                bool depthwise = groups > 1 && oihw[1] == 1 && oihw[0] == groups;
                std::string nkl = m_desired == "NHWC" ? (depthwise ? "HWOI" : "HWIO") : "OIHW";
                NodeId data = toLayout(n.inputs[0], dl, m_desired);
                NodeId w = transform(toOriginal(n.inputs[1]), kl, nkl);
                Attrs a = n.attrs;
                a.set("data_layout", m_desired);
                a.set("kernel_layout", nkl);
                setConverted(id, m_out.addOp(op, {data, w}, a, n.name), m_desired, dl);
                return;
            }
        } else if (detail::isUnaryElemwiseOp(op)) {
            setConverted(id, m_out.addOp(op, {m_cur[size_t(n.inputs[0])]}, n.attrs, n.name),
                         m_lay[size_t(n.inputs[0])], m_orig[size_t(n.inputs[0])]);
            if (m_lay[size_t(id)].empty()) m_orig[size_t(id)].clear();
            return;
        } else if (detail::isBroadcastBinaryOp(op)) {
            if (convertBinary(id, n)) return;
        } else if (detail::isPool2dOp(op)) {
            NodeId in = n.inputs[0];
            if (!m_lay[size_t(in)].empty()) {
                Attrs a = n.attrs;
                a.set("layout", m_lay[size_t(in)]);
                setConverted(id, m_out.addOp(op, {m_cur[size_t(in)]}, a, n.name), m_lay[size_t(in)],
                             m_orig[size_t(in)]);
                return;
            }
        } else if (op == "nn.batch_norm" || op == "nn.bias_add") {
            NodeId in = n.inputs[0];
            if (!m_lay[size_t(in)].empty()) {
                Attrs a = n.attrs;
                int64_t axis = a.getInt("axis", 1);
                if (axis < 0) axis += int64_t(m_orig[size_t(in)].size());
                a.set("axis", mapAxis(axis, m_orig[size_t(in)], m_lay[size_t(in)]));
                std::vector<NodeId> ins{m_cur[size_t(in)]};
                for (size_t i = 1; i < n.inputs.size(); ++i) ins.push_back(toOriginal(n.inputs[i]));
                setConverted(id, m_out.addOp(op, ins, a, n.name), m_lay[size_t(in)], m_orig[size_t(in)]);
                return;
            }
        } else if (op == "concatenate") {
            const std::string& l0 = m_lay[size_t(n.inputs[0])];
            bool same = !l0.empty();
            for (NodeId p : n.inputs) same &= m_lay[size_t(p)] == l0 && m_orig[size_t(p)] == m_orig[size_t(n.inputs[0])];
            if (same) {
                Attrs a = n.attrs;
                std::string orig = m_orig[size_t(n.inputs[0])];
                int64_t axis = a.getInt("axis", 0);
                if (axis < 0) axis += int64_t(orig.size());
                a.set("axis", mapAxis(axis, orig, l0));
                std::vector<NodeId> ins;
                for (NodeId p : n.inputs) ins.push_back(m_cur[size_t(p)]);
                setConverted(id, m_out.addOp(op, ins, a, n.name), l0, orig);
                return;
            }
        }
        std::vector<NodeId> ins;
        for (NodeId p : n.inputs) ins.push_back(toOriginal(p));
        m_cur[size_t(id)] = m_out.addOp(op, ins, n.attrs, n.name);
    }

    bool convertBinary(NodeId id, const Node& n) {
        NodeId a = n.inputs[0], b = n.inputs[1];
        const Shape& sa = m_src.node(a).type.shape;
        const Shape& sb = m_src.node(b).type.shape;
        NodeId big = sa.size() >= sb.size() ? a : b;
        if (m_lay[size_t(big)].empty()) {
            NodeId other = big == a ? b : a;
            if (m_lay[size_t(other)].empty()) return false;
        }
        std::string lay = m_lay[size_t(big)].empty() ? m_lay[size_t(big == a ? b : a)] : m_lay[size_t(big)];
        std::string orig = m_lay[size_t(big)].empty() ? m_orig[size_t(big == a ? b : a)] : m_orig[size_t(big)];
        if (m_src.node(big).type.shape.size() != orig.size()) return false;
        auto operand = [&](NodeId x) -> NodeId {
            const Shape& s = m_src.node(x).type.shape;
            if (s.empty()) return m_cur[size_t(x)];
            if (s.size() == orig.size()) return toLayout(x, orig, lay);
            // A lower-rank operand aligned to the trailing axes of `orig`: expand, then transform.
            Attrs e;
            e.set("axis", int64_t(0));
            e.set("num_newaxis", int64_t(orig.size() - s.size()));
            NodeId v = m_out.addOp("expand_dims", {toOriginal(x)}, e);
            return transform(v, orig, lay);
        };
        NodeId va = operand(a), vb = operand(b);
        setConverted(id, m_out.addOp(n.op, {va, vb}, n.attrs, n.name), lay, orig);
        return true;
    }

    const Graph& m_src;
    std::string m_desired;
    Graph m_out;
    std::vector<NodeId> m_cur;
    std::vector<std::string> m_lay;   // current layout when converted ("" = original)
    std::vector<std::string> m_orig;  // original layout of converted values
    std::map<std::tuple<NodeId, std::string, std::string>, NodeId> m_memo;
};

}  // namespace

Graph convertLayout(const Graph& g, const std::string& desiredLayout) {
    TB_USER_CHECK(desiredLayout == "NHWC" || desiredLayout == "NCHW")
        << "ConvertLayout: desired layout must be NHWC or NCHW, got '" << desiredLayout << "'";
    return Converter(g, desiredLayout).run();
}

}  // namespace tb::graph
