// SPDX-License-Identifier: Apache-2.0
// Relay AlterOpLayout for x86 (python/tvm/topi/x86/conv2d_alter_op.py `_alter_conv2d_layout`,
// src/relay/transforms/alter_op_layout.cc + transform_layout.h), REFERENCE-ZOO §2.2-7.
//
// One pass in topological order: every node gets a rewritten copy and the (possibly blocked)
// layout its value is in. Convolutions pick their x86 implementation (winograd / NCHWc / left
// alone), layout-agnostic ops follow their inputs' layout, and everything else receives its inputs
// transformed back to the original layout, as Relay's LayoutRewriter does.
#include <algorithm>
#include <map>
#include <tuple>

#include "engine/graph/op_registry.h"
#include "engine/graph/passes/layout.h"
#include "engine/graph/passes/pass_util.h"
#include "engine/graph/passes/passes.h"
#include "engine/support/error.h"

namespace tb::graph {

namespace {

using Shape = std::vector<int64_t>;

/// Ops whose output layout Relay's layout inference defines (FInferCorrectLayout).
bool definesLayout(const std::string& op) {
    return op.rfind("nn.conv", 0) == 0 || op.rfind("nn.contrib_", 0) == 0 || detail::isPool2dOp(op) || op == "nn.dense" ||
           op == "nn.batch_matmul" || op == "layout_transform" || op == "nn.softmax" || op == "concatenate" ||
           op == "transpose";
}

/// Largest divisor of n that is <= limit (topi/x86 `_fallback_schedule` channel blocking).
int64_t blockOf(int64_t n, int64_t limit) {
    for (int64_t bn = limit; bn > 1; --bn)
        if (n % bn == 0) return bn;
    return 1;
}

/// `layout` with the factor of every sub-axis whose primal extent in `primalShape` is 1 set to 1:
/// a [1, 1, H, W] operand broadcast against an NCHW8c tensor is read as NCHW1c (TVM
/// AdjustSubordinateFactors in BinaryBroadcastLayoutHelper, src/relay/transforms/infer_layout_utils.cc).
std::string adjustSubordinateFactors(const std::string& layout, const Shape& primalShape) {
    Layout l(layout);
    const std::string primal = l.primal();
    if (primalShape.size() != primal.size()) return layout;
    std::string out;
    for (const auto& ax : l.axes()) {
        if (ax.factor == 0) {
            out += ax.name;
            continue;
        }
        const size_t p = primal.find(char(ax.name - 'a' + 'A'));
        const int64_t f = p != std::string::npos && primalShape[p] == 1 ? 1 : ax.factor;
        out += std::to_string(f) + ax.name;
    }
    return out;
}

class AlterLayout {
public:
    AlterLayout(const Graph& src, const AlterLayoutOptions& opt)
        : m_src(src), m_opt(opt), m_cur(src.size(), -1), m_lay(src.size()), m_known(src.size(), 0) {}

    Graph run() {
        for (NodeId id = 0; id < NodeId(m_src.size()); ++id) visit(id);
        std::vector<NodeId> outs;
        for (NodeId o : m_src.outputs()) outs.push_back(toOriginal(o));
        m_out.setOutputs(outs);
        return m_out.pruned();
    }

private:
    Graph& g() { return m_out; }
    const Shape& srcShape(NodeId id) const { return m_src.node(id).type.shape; }

    NodeId layoutTransform(NodeId x, const std::string& from, const std::string& to) {
        auto key = std::make_tuple(x, from, to);
        if (auto it = m_memo.find(key); it != m_memo.end()) return it->second;
        Attrs a;
        a.set("src_layout", from);
        a.set("dst_layout", to);
        NodeId r = g().addOp("layout_transform", {x}, a);
        m_memo[key] = r;
        return r;
    }
    /// The value of src node `id` in its original layout.
    NodeId toOriginal(NodeId id) {
        const std::string& l = m_lay[size_t(id)];
        if (l.empty()) return m_cur[size_t(id)];
        return layoutTransform(m_cur[size_t(id)], l, Layout(l).primal());
    }
    /// The value of src node `id` (a 4-D NCHW tensor originally) in blocked layout `target`.
    NodeId toLayout(NodeId id, const std::string& target) {
        const std::string& l = m_lay[size_t(id)];
        if (l == target) return m_cur[size_t(id)];
        std::string from = l.empty() ? Layout(target).primal() : l;
        return layoutTransform(m_cur[size_t(id)], from, target);
    }

    void copyAsIs(NodeId id, const std::vector<NodeId>& inputs) {
        const Node& n = m_src.node(id);
        switch (n.kind) {
            case NodeKind::Input: m_cur[size_t(id)] = g().addInput(n.name, n.type); break;
            case NodeKind::Constant: m_cur[size_t(id)] = g().addConstant(n.name, n.value); break;
            default: m_cur[size_t(id)] = g().addOp(n.op, inputs, n.attrs, n.name); break;
        }
    }

    void visit(NodeId id) {
        const Node& n = m_src.node(id);
        if (n.kind != NodeKind::Op) {
            copyAsIs(id, {});
            return;
        }
        const std::string& op = n.op;
        bool anyKnown = false;
        for (NodeId p : n.inputs) anyKnown |= m_known[size_t(p)] != 0;
        if (op == "nn.conv2d") {
            rewriteConv2d(id, n);
            m_known[size_t(id)] = 1;
            return;
        }
        if (detail::isUnaryElemwiseOp(op)) {
            NodeId x = m_cur[size_t(n.inputs[0])];
            m_cur[size_t(id)] = g().addOp(op, {x}, n.attrs, n.name);
            m_lay[size_t(id)] = m_lay[size_t(n.inputs[0])];
            m_known[size_t(id)] = anyKnown;
            return;
        }
        if (detail::isBroadcastBinaryOp(op)) {
            rewriteBroadcast(id, n);
            return;
        }
        if (detail::isPool2dOp(op)) {
            const std::string& l = m_lay[size_t(n.inputs[0])];
            Attrs a = n.attrs;
            if (!l.empty()) a.set("layout", l);
            m_cur[size_t(id)] = g().addOp(op, {m_cur[size_t(n.inputs[0])]}, a, n.name);
            m_lay[size_t(id)] = l;
            m_known[size_t(id)] = 1;
            return;
        }
        if (op == "concatenate") {
            const std::string& l0 = m_lay[size_t(n.inputs[0])];
            bool same = true;
            for (NodeId p : n.inputs) same &= m_lay[size_t(p)] == l0;
            int64_t axis = n.attrs.getInt("axis", 0);
            if (axis < 0) axis += int64_t(srcShape(n.inputs[0]).size());
            std::vector<NodeId> in;
            Attrs a = n.attrs;
            if (same && !l0.empty()) {
                Layout L(l0);
                char c = Layout(L.primal()).axes()[size_t(axis)].name;
                // Every input's extent along a split axis must be a whole number of blocks.
                for (NodeId p : n.inputs) in.push_back(m_cur[size_t(p)]);
                a.set("axis", int64_t(L.indexOf(c)));
                m_lay[size_t(id)] = l0;
            } else {
                for (NodeId p : n.inputs) in.push_back(toOriginal(p));
            }
            m_cur[size_t(id)] = g().addOp(op, in, a, n.name);
            m_known[size_t(id)] = 1;
            return;
        }
        // Anything else reads its inputs in their original layout.
        std::vector<NodeId> in;
        for (NodeId p : n.inputs) in.push_back(toOriginal(p));
        copyAsIs(id, in);
        m_known[size_t(id)] = definesLayout(op) || (anyKnown && (op == "expand_dims" || op == "squeeze" || op == "nn.pad"));
    }

    void rewriteBroadcast(NodeId id, const Node& n) {
        NodeId a = n.inputs[0], b = n.inputs[1];
        size_t ra = srcShape(a).size(), rb = srcShape(b).size();
        bool ka = m_known[size_t(a)] != 0, kb = m_known[size_t(b)] != 0;
        const std::string& la = m_lay[size_t(a)];
        const std::string& lb = m_lay[size_t(b)];
        // The layout of the result: the blocked layout of the larger operand, if any.
        std::string L = ra >= rb ? (!la.empty() ? la : lb) : (!lb.empty() ? lb : la);
        auto operand = [&](NodeId x, size_t rx, size_t rOther, bool otherKnown) {
            NodeId v = m_cur[size_t(x)];
            const std::string& lx = m_lay[size_t(x)];
            if (rx > 0 && rx < rOther && otherKnown) {
                Attrs e;
                e.set("axis", int64_t(0));
                e.set("num_newaxis", int64_t(rOther - rx));
                v = g().addOp("expand_dims", {v}, e);
                rx = rOther;
            }
            if (!L.empty() && lx != L) {
                if (rx == Layout(L).primal().size()) {
                    Shape xs = srcShape(x);  // left-padded with 1s when expanded above
                    xs.insert(xs.begin(), rx - std::min(rx, xs.size()), int64_t(1));
                    const std::string Lx = adjustSubordinateFactors(L, xs);
                    if (lx != Lx) v = layoutTransform(v, lx.empty() ? Layout(L).primal() : lx, Lx);
                } else if (rx > 0) {
                    // A lower-rank operand that could not be expanded: read it in the original layout.
                    v = lx.empty() ? v : layoutTransform(v, lx, Layout(lx).primal());
                }
            }
            return v;
        };
        if (!L.empty() && ((ra < rb && ra > 0 && !kb) || (rb < ra && rb > 0 && !ka))) {
            // A blocked tensor next to a low-rank operand we may not expand: go back to the original layout.
            L.clear();
        }
        NodeId va, vb;
        if (L.empty()) {
            va = toOriginal(a);
            vb = toOriginal(b);
            if (ra > 0 && ra < rb && kb) va = expand(va, rb - ra);
            if (rb > 0 && rb < ra && ka) vb = expand(vb, ra - rb);
        } else {
            va = operand(a, ra, rb, kb);
            vb = operand(b, rb, ra, ka);
        }
        m_cur[size_t(id)] = g().addOp(n.op, {va, vb}, n.attrs, n.name);
        m_lay[size_t(id)] = L;
        m_known[size_t(id)] = (ka && ra >= rb) || (kb && rb >= ra);
    }

    NodeId expand(NodeId v, size_t num) {
        Attrs e;
        e.set("axis", int64_t(0));
        e.set("num_newaxis", int64_t(num));
        return g().addOp("expand_dims", {v}, e);
    }

    void rewriteConv2d(NodeId id, const Node& n) {
        Layout dl(n.attrs.getString("data_layout", "NCHW"));
        Layout kl(n.attrs.getString("kernel_layout", "OIHW"));
        int64_t groups = n.attrs.getInt("groups", 1);
        const Shape& ws = srcShape(n.inputs[1]);
        const Shape& ds = srcShape(n.inputs[0]);
        auto oihw = kl.convertShape(ws, Layout("OIHW"));
        int64_t CO = oihw[0], KH = oihw[2], KW = oihw[3];
        bool depthwise = groups > 1 && oihw[0] == groups && oihw[1] == 1 && dl.convertShape(ds, Layout("NCHW"))[1] == groups;
        auto strides = n.attrs.getInts("strides", {1, 1});
        auto dil = n.attrs.getInts("dilation", {1, 1});
        if (strides.size() == 1) strides.push_back(strides[0]);
        if (dil.size() == 1) dil.push_back(dil[0]);
        bool fp32 = n.type.dtype == te::DType::Float32;

        // NHWC: conv2d_nhwc.winograd (plevel 15) beats the direct conv2d under the auto-scheduler.
        const OpStrategy st = m_opt.strategy;
        const bool winogradShape = dl.name() == "NHWC" && kl.name() == "HWIO" && groups == 1 && fp32 && KH == 3 &&
                                   KW == 3 && strides[0] == 1 && strides[1] == 1 && dil[0] == 1 && dil[1] == 1;
        const bool picksWinograd = st == OpStrategy::X86 ? 64 < CO && CO < 512 : st != OpStrategy::GpuGeneric;
        bool useWinograd = winogradShape && picksWinograd && m_opt.autoScheduler && m_opt.winograd;
        if (useWinograd && m_opt.winogradAt) useWinograd = m_opt.winogradAt(m_winogradIndex++);
        if (useWinograd) {
            const int64_t H = ds[1];
            const int64_t tile = st == OpStrategy::Cuda ? (H % 8 == 0 ? 4 : 2) : st == OpStrategy::Mali ? (H % 4 == 0 ? 4 : 2) : 4;
            NodeId data = toOriginal(n.inputs[0]);
            NodeId w = toOriginal(n.inputs[1]);
            Attrs t;
            t.set("axes", Shape{3, 2, 0, 1});
            NodeId wt = g().addOp("transpose", {w}, t);
            Attrs wa;
            wa.set("tile_size", tile);
            NodeId wtr = g().addOp("nn.contrib_conv2d_winograd_weight_transform", {wt}, wa);
            Attrs a = n.attrs;
            a.set("tile_size", tile);
            a.set("channels", CO);
            a.set("kernel_size", Shape{KH, KW});
            m_cur[size_t(id)] = g().addOp("nn.contrib_conv2d_winograd_without_weight_transform", {data, wtr}, a, n.name);
            return;
        }
        // arm_cpu with AutoTVM: spatial_pack's packed kernel or winograd's transformed one.
        if (m_opt.armCpuConv) {
            const auto choice = dl.name() == "NCHW" && kl.name() == "OIHW" && fp32 && groups == 1 &&
                                        n.attrs.getString("out_layout", "").empty()
                                    ? m_opt.armCpuConv(n, ds, ws)
                                    : std::nullopt;
            NodeId data = toOriginal(n.inputs[0]);
            NodeId w = toOriginal(n.inputs[1]);
            if (choice && !choice->winograd) {
                const std::string packed = "OIHW" + std::to_string(choice->block) + "o";
                Attrs a = n.attrs;
                a.set("kernel_layout", packed);
                m_cur[size_t(id)] = g().addOp("nn.conv2d", {data, layoutTransform(w, "OIHW", packed)}, a, n.name);
                return;
            }
            if (choice) {
                const int64_t tile = choice->tileSize, vc = choice->block, CI = ws[1];
                Attrs wa;
                wa.set("tile_size", tile);
                NodeId u = g().addOp("nn.contrib_conv2d_winograd_weight_transform", {w}, wa);
                Attrs ra;
                ra.set("newshape", Shape{KH + tile - 1, KW + tile - 1, CO / vc, vc, CI});
                u = g().addOp("reshape", {u}, ra);
                Attrs ta;
                ta.set("axes", Shape{0, 1, 2, 4, 3});
                u = g().addOp("transpose", {u}, ta);
                Attrs a = n.attrs;
                a.set("tile_size", tile);
                a.set("channels", CO);
                a.set("kernel_size", Shape{KH, KW});
                m_cur[size_t(id)] = g().addOp("nn.contrib_conv2d_winograd_without_weight_transform", {data, u}, a, n.name);
                return;
            }
            copyAsIs(id, {data, w});
            return;
        }
        // NCHW: conv2d_NCHWc.x86 / depthwise_conv2d_NCHWc.x86 AutoTVM templates with the fallback config.
        if (st == OpStrategy::X86 && dl.name() == "NCHW" && kl.name() == "OIHW" && fp32 && (groups == 1 || depthwise) &&
            n.attrs.getString("out_layout", "").empty()) {
            int64_t CI = ds[1];
            int64_t ocBn = blockOf(CO, m_opt.simdLanes);
            int64_t icBn = blockOf(CI, ocBn);
            if (groups == 1 && m_opt.nchwcBlocks) {
                if (auto b = m_opt.nchwcBlocks(n, ds, ws)) std::tie(icBn, ocBn) = *b;
            }
            std::string dataLayout = "NCHW" + std::to_string(icBn) + "c";
            std::string outLayout = "NCHW" + std::to_string(ocBn) + "c";
            std::string kernelLayout = depthwise ? "OIHW1i" + std::to_string(ocBn) + "o"
                                                 : "OIHW" + std::to_string(icBn) + "i" + std::to_string(ocBn) + "o";
            if (depthwise && icBn != ocBn) {
                // depthwise NCHWc needs one block for data and output.
                icBn = ocBn;
                dataLayout = outLayout;
            }
            NodeId data = toLayout(n.inputs[0], dataLayout);
            NodeId w = layoutTransform(toOriginal(n.inputs[1]), "OIHW", kernelLayout);
            Attrs a = n.attrs;
            a.set("channels", CO);
            a.set("data_layout", dataLayout);
            a.set("kernel_layout", kernelLayout);
            a.set("out_layout", outLayout);
            const char* opName = depthwise ? "nn.contrib_depthwise_conv2d_NCHWc" : "nn.contrib_conv2d_NCHWc";
            m_cur[size_t(id)] = g().addOp(opName, {data, w}, a, n.name);
            m_lay[size_t(id)] = outLayout;
            return;
        }
        copyAsIs(id, {toOriginal(n.inputs[0]), toOriginal(n.inputs[1])});
    }

    const Graph& m_src;
    AlterLayoutOptions m_opt;
    Graph m_out;
    std::vector<NodeId> m_cur;
    std::vector<std::string> m_lay;  // blocked layout of the rewritten value ("" = original)
    std::vector<char> m_known;       // Relay layout inference knows this value's layout
    int m_winogradIndex = 0;         // convolutions met so far that the rule rewrites to winograd (winogradAt)
    std::map<std::tuple<NodeId, std::string, std::string>, NodeId> m_memo;
};

}  // namespace

Graph alterOpLayout(const Graph& g, const AlterLayoutOptions& options) { return AlterLayout(g, options).run(); }

Graph optimizeForTasks(const Graph& g, const AlterLayoutOptions& options) {
    Graph x = simplifyInference(g);
    x = foldConstant(x);
    x = foldScaleAxis(x);
    x = canonicalizeOps(x);
    x = alterOpLayout(x, options);
    return foldConstant(x);
}

}  // namespace tb::graph
