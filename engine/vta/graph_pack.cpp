// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/graph_pack.h"

#include "engine/graph/int_interpreter.h"
#include "engine/support/error.h"

namespace tb::vta {

using graph::Attrs;
using graph::Graph;
using graph::HostTensor;
using graph::Node;
using graph::NodeId;
using graph::NodeKind;

namespace {

NodeId addConst(Graph& g, const HostTensor& t, const std::string& name) {
    NodeId id = g.addConstant(name, graph::constantData(t));
    g.mutableNode(id).attrs.set("dtype", std::string(graph::qdtypeName(t.dtype)));
    return id;
}

NodeId addOp(Graph& g, const std::string& op, std::vector<NodeId> in, Attrs a, const std::string& dtype) {
    a.set("dtype", dtype);
    return g.addOp(op, std::move(in), std::move(a));
}

// OIHW weight -> (O/c, I/c, KH, KW, c, c), O zero-padded to a multiple of c.
HostTensor packWeight(const HostTensor& w, int64_t c) {
    const int64_t O = w.shape[0], I = w.shape[1], KH = w.shape[2], KW = w.shape[3];
    TB_USER_CHECK(I % c == 0) << "graph_pack: conv input channels " << I << " are not a multiple of " << c;
    const int64_t Op = (O + c - 1) / c * c;
    HostTensor r;
    r.dtype = w.dtype;
    r.shape = {Op / c, I / c, KH, KW, c, c};
    r.i.assign(size_t(Op * I * KH * KW), 0);
    size_t k = 0;
    for (int64_t o0 = 0; o0 < Op / c; ++o0)
        for (int64_t i0 = 0; i0 < I / c; ++i0)
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw)
                    for (int64_t o1 = 0; o1 < c; ++o1)
                        for (int64_t i1 = 0; i1 < c; ++i1, ++k) {
                            const int64_t o = o0 * c + o1, i = i0 * c + i1;
                            if (o < O) r.i[k] = w.i[size_t(((o * I + i) * KH + kh) * KW + kw)];
                        }
    return r;
}

// (C, H, W) constant -> (C/c, H, W, b, c) (pad C when `pad`).
HostTensor packConst(const HostTensor& x, int64_t b, int64_t c, bool pad) {
    const int64_t C = x.shape[0], H = x.shape[1], W = x.shape[2];
    TB_USER_CHECK(pad || C % c == 0) << "graph_pack: constant channels " << C << " are not a multiple of " << c;
    const int64_t Cp = (C + c - 1) / c * c;
    HostTensor r;
    r.dtype = x.dtype;
    r.shape = {Cp / c, H, W, b, c};
    const int64_t n = Cp * H * W * b;
    if (r.isFloat()) r.f.assign(size_t(n), 0.f);
    else r.i.assign(size_t(n), 0);
    size_t k = 0;
    for (int64_t c0 = 0; c0 < Cp / c; ++c0)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t w = 0; w < W; ++w)
                for (int64_t bb = 0; bb < b; ++bb)
                    for (int64_t c1 = 0; c1 < c; ++c1, ++k) {
                        const int64_t ch = c0 * c + c1;
                        if (ch >= C) continue;
                        const size_t src = size_t((ch * H + h) * W + w);
                        if (r.isFloat()) r.f[k] = x.f[src];
                        else r.i[k] = x.i[src];
                    }
    return r;
}

}  // namespace

bool isPackedConv2d(const Node& node) {
    return node.kind == NodeKind::Op && node.op == "nn.conv2d" &&
           node.attrs.getString("data_layout", "NCHW").rfind("NCHW", 0) == 0 &&
           node.attrs.getString("data_layout", "NCHW").size() > 4;
}

Graph graphPack(const Graph& g, int bfactor, int cfactor, int weightBits, const std::string& startName,
                const std::string& stopName) {
    TB_USER_CHECK(bfactor > 0 && cfactor > 0) << "graph_pack: BATCH and BLOCK must be positive";
    TB_USER_CHECK(weightBits == 8) << "graph_pack: WGT_WIDTH " << weightBits
                                   << " needs bitpack, which is not supported (8 only)";
    NodeId start = -1, stop = -1, end = -1, lastOp = -1;
    for (NodeId id = 0; id < NodeId(g.size()); ++id) {
        const Node& n = g.node(id);
        if (n.kind != NodeKind::Op) continue;
        if (start < 0 && n.op == startName) start = id;
        else if (start >= 0 && n.op == stopName) {
            stop = id;
            end = lastOp;
            break;
        }
        lastOp = id;
    }
    TB_USER_CHECK(start >= 0) << "graph_pack: no '" << startName << "' op in the graph";
    TB_USER_CHECK(stop >= 0 && end > start) << "graph_pack: no '" << stopName << "' op after '" << startName << "'";
    const std::string dl = "NCHW" + std::to_string(bfactor) + "n" + std::to_string(cfactor) + "c";
    const std::string kl = "OIHW" + std::to_string(cfactor) + "o" + std::to_string(cfactor) + "i";
    Graph out;
    std::vector<NodeId> map(g.size(), -1);
    for (NodeId id = 0; id < NodeId(g.size()); ++id) {
        const Node& n = g.node(id);
        if (n.kind == NodeKind::Input) {
            map[size_t(id)] = out.addInput(n.name, n.type);
            out.mutableNode(map[size_t(id)]).attrs = n.attrs;
            continue;
        }
        if (n.kind == NodeKind::Constant) {
            map[size_t(id)] = out.addConstant(n.name, n.value);
            out.mutableNode(map[size_t(id)]).attrs = n.attrs;
            continue;
        }
        std::vector<NodeId> in;
        for (NodeId p : n.inputs) in.push_back(map[size_t(p)]);
        const std::string dtype = n.attrs.getString("dtype", "float32");
        const bool inside = id > start && id <= end;
        NodeId r = -1;
        auto rank3Const = [&](size_t k) {
            const Node& c = g.node(n.inputs[k]);
            return c.kind == NodeKind::Constant && c.type.shape.size() == 3;
        };
        if (inside && n.op == "nn.conv2d" && dtype == "int32") {
            const Node& w = g.node(n.inputs[1]);
            TB_USER_CHECK(w.kind == NodeKind::Constant) << "graph_pack: conv2d '" << n.name << "' weight is not a constant";
            HostTensor pw = packWeight(graph::constantTensor(w), cfactor);
            Attrs a = n.attrs;
            a.set("data_layout", dl);
            a.set("kernel_layout", kl);
            a.set("channels", pw.shape[0] * cfactor);
            NodeId wid = addConst(out, pw, w.name);
            r = out.addOp("nn.conv2d", {in[0], wid}, a, n.name);
        } else if (inside && (n.op == "add" || n.op == "multiply") && n.inputs.size() == 2 &&
                   g.node(n.inputs[0]).type.shape != g.node(n.inputs[1]).type.shape && rank3Const(1)) {
            HostTensor pc = packConst(graph::constantTensor(g.node(n.inputs[1])), bfactor, cfactor, n.op == "add");
            NodeId cid = addConst(out, pc, g.node(n.inputs[1]).name);
            r = out.addOp(n.op, {in[0], cid}, n.attrs, n.name);
        } else {
            r = out.addOp(n.op, in, n.attrs, n.name);
        }
        if (id == start) {
            const auto& s = n.type.shape;
            TB_USER_CHECK(s.size() == 4 && s[0] % bfactor == 0 && s[1] % cfactor == 0)
                << "graph_pack: '" << startName << "' output must be NCHW with N a multiple of " << bfactor
                << " and C a multiple of " << cfactor;
            Attrs rs;
            rs.set("newshape", std::vector<int64_t>{s[0] / bfactor, bfactor, s[1] / cfactor, cfactor, s[2], s[3]});
            Attrs tr;
            tr.set("axes", std::vector<int64_t>{0, 2, 4, 5, 1, 3});
            r = addOp(out, "transpose", {addOp(out, "reshape", {r}, rs, dtype)}, tr, dtype);
        }
        if (id == end) {
            Attrs tr;
            tr.set("axes", std::vector<int64_t>{0, 4, 1, 5, 2, 3});
            Attrs rs;
            rs.set("newshape", g.node(id).type.shape);
            r = addOp(out, "reshape", {addOp(out, "transpose", {r}, tr, dtype)}, rs, dtype);
        }
        map[size_t(id)] = r;
    }
    std::vector<NodeId> outs;
    for (NodeId o : g.outputs()) outs.push_back(map[size_t(o)]);
    out.setOutputs(outs);
    return out.pruned();
}

}  // namespace tb::vta
