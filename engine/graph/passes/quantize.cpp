// SPDX-License-Identifier: Apache-2.0
#include "engine/graph/passes/quantize.h"

#include <cmath>
#include <map>
#include <optional>

#include "engine/graph/int_interpreter.h"
#include "engine/graph/passes/passes.h"
#include "engine/support/error.h"

namespace tb::graph {

namespace {

constexpr const char* kSQ = "relay.op.annotation.simulated_quantize";
enum Kind { None = -1, KInput = 1, KWeight = 2, KActivation = 3 };

// Builds a graph whose nodes all carry "dtype"; ops with constant inputs are folded at once
// (Relay's FoldConstant after realize), unreachable nodes are pruned at the end.
struct Builder {
    Graph g;
    bool fold = false;
    NodeId input(const Node& src) {
        NodeId id = g.addInput(src.name, src.type);
        g.mutableNode(id).attrs.set("dtype", std::string("float32"));
        return id;
    }
    NodeId constant(const HostTensor& t, const std::string& name) {
        NodeId id = g.addConstant(name, constantData(t));
        g.mutableNode(id).attrs.set("dtype", std::string(qdtypeName(t.dtype)));
        return id;
    }
    NodeId copyConstant(const Node& src) {
        NodeId id = g.addConstant(src.name, src.value);
        g.mutableNode(id).attrs.set("dtype", std::string(qdtypeName(nodeDType(src))));
        return id;
    }
    QDType dtype(NodeId id) const { return nodeDType(g.node(id)); }
    NodeId op(const std::string& op, std::vector<NodeId> inputs, Attrs attrs, QDType out,
              const std::string& name = {}) {
        attrs.set("dtype", std::string(qdtypeName(out)));
        NodeId id = g.addOp(op, inputs, std::move(attrs), name);
        bool allConst = fold && !inputs.empty();
        for (NodeId p : inputs) allConst = allConst && g.node(p).kind == NodeKind::Constant;
        if (!allConst) return id;
        std::vector<HostTensor> vals;
        for (NodeId p : inputs) vals.push_back(constantTensor(g.node(p)));
        std::vector<const HostTensor*> ptrs;
        for (auto& v : vals) ptrs.push_back(&v);
        return constant(evalQuantNode(g.node(id), ptrs), g.node(inputs[0]).name);
    }
    NodeId scalar(QDType t, double v) {
        HostTensor s;
        s.dtype = t;
        if (t == QDType::Float32) s.f = {float(v)};
        else s.i = {int64_t(v)};
        return constant(s, "const");
    }
    NodeId cast(NodeId x, QDType t) {
        Attrs a;
        a.set("dtype", std::string(qdtypeName(t)));
        return op("cast", {x}, a, t);
    }
    NodeId unary(const std::string& o, NodeId x) { return op(o, {x}, {}, dtype(x)); }
    NodeId binary(const std::string& o, NodeId x, NodeId y) { return op(o, {x, y}, {}, dtype(x)); }
    NodeId clip(NodeId x, double lo, double hi) {
        Attrs a;
        a.set("a_min", lo);
        a.set("a_max", hi);
        return op("clip", {x}, a, dtype(x));
    }
    NodeId forward(const Node& src, std::vector<NodeId> inputs) {
        QDType out = inputs.empty() ? QDType::Float32 : dtype(inputs[0]);
        if (src.attrs.has("out_dtype") && !src.attrs.getString("out_dtype").empty())
            out = parseQDType(src.attrs.getString("out_dtype"));
        if (src.op == "cast" || src.op == "annotation.cast_hint") out = parseQDType(src.attrs.getString("dtype"));
        Attrs a = src.attrs;
        return op(src.op, std::move(inputs), a, out, src.name);
    }
};

std::vector<int> refCounts(const Graph& g) {
    std::vector<int> c(g.size(), 0);
    for (const Node& n : g.nodes())
        for (NodeId p : n.inputs) ++c[size_t(p)];
    return c;
}

void checkConfig(const QConfig& cfg) {
    TB_USER_CHECK(cfg.calibrateMode == "global_scale")
        << "quantize: calibrate_mode '" << cfg.calibrateMode << "' is not supported (global_scale)";
    TB_USER_CHECK(cfg.weightScale == "power2") << "quantize: weight_scale '" << cfg.weightScale
                                               << "' is not supported (power2)";
    TB_USER_CHECK(cfg.rounding == "UPWARD") << "quantize: rounding '" << cfg.rounding << "' is not supported (UPWARD)";
    TB_USER_CHECK(!cfg.doSimulation) << "quantize: do_simulation is not supported";
    TB_USER_CHECK(cfg.dtypeInput == "int8" && cfg.dtypeWeight == "int8" && cfg.dtypeActivation == "int32")
        << "quantize: only dtypes int8/int8/int32 are supported";
}

// ---- partition (partition.cc / _partition.py) ------------------------------------------------

Graph partition(const Graph& src, const QConfig& cfg) {
    Builder b;
    struct PV {
        NodeId id = -1;
        bool part = false;
    };
    std::vector<PV> v(src.size());
    auto realize = [&](const PV& x) {
        if (!x.part) return x.id;
        Attrs a;
        a.set("dtype", cfg.dtypeInput);
        NodeId c = b.op("annotation.cast_hint", {x.id}, a, parseQDType(cfg.dtypeInput));
        return b.op("annotation.stop_fusion", {c}, {}, QDType::Float32);
    };
    for (NodeId id = 0; id < NodeId(src.size()); ++id) {
        const Node& n = src.node(id);
        if (n.kind == NodeKind::Input) { v[size_t(id)] = {b.input(n), false}; continue; }
        if (n.kind == NodeKind::Constant) { v[size_t(id)] = {b.copyConstant(n), false}; continue; }
        std::vector<PV> a;
        for (NodeId p : n.inputs) a.push_back(v[size_t(p)]);
        auto isConst = [&](NodeId p) { return src.node(p).kind == NodeKind::Constant; };
        PV out;
        if (n.op == "nn.conv2d") {
            out = {b.forward(n, {realize(a[0]), a[1].id}), true};
        } else if ((n.op == "clip" || n.op == "nn.relu" || n.op == "nn.max_pool2d") && a[0].part) {
            out = {b.forward(n, {a[0].id}), true};
        } else if (n.op == "add") {
            if (a[0].part && a[1].part) out = {b.forward(n, {realize(a[0]), realize(a[1])}), true};
            else if (!a[0].part && a[1].part) out = {b.forward(n, {a[0].id, realize(a[1])}), false};
            else if (a[0].part && isConst(n.inputs[1])) out = {b.forward(n, {a[0].id, a[1].id}), true};
            else out = {b.forward(n, {realize(a[0]), realize(a[1])}), false};
        } else if (n.op == "multiply" && (a[0].part || a[1].part)) {
            if (a[0].part) out = {b.forward(n, {realize(a[0]), a[1].id}), true};
            else out = {b.forward(n, {a[0].id, realize(a[1])}), true};
        } else if (n.op == "nn.global_avg_pool2d") {
            PV x = a[0];
            x.part = true;  // QPartitionExpr(arg).realize() either way
            out = {b.forward(n, {realize(x)}), false};
        } else {
            std::vector<NodeId> ins;
            for (const PV& x : a) ins.push_back(realize(x));
            out = {b.forward(n, ins), false};
        }
        v[size_t(id)] = out;
    }
    std::vector<NodeId> outs;
    for (NodeId o : src.outputs()) outs.push_back(realize(v[size_t(o)]));
    b.g.setOutputs(outs);
    return b.g.pruned();
}

// ---- annotate (annotate.cc / _annotate.py) ---------------------------------------------------

Graph annotate(const Graph& src, const QConfig& cfg) {
    Builder b;
    struct AV {
        NodeId id = -1;
        int kind = None;
    };
    std::vector<AV> v(src.size());
    const std::vector<int> refs = refCounts(src);
    std::map<std::pair<NodeId, int>, NodeId> qnodes;
    int convCounter = 0;
    bool stop = false;
    auto attach = [&](NodeId data, int kind) {
        const Node& d = b.g.node(data);
        if (d.kind == NodeKind::Op && d.op == kSQ && d.attrs.getInt("kind") == kind) return data;
        auto it = qnodes.find({data, kind});
        if (it != qnodes.end()) return it->second;
        Attrs a;
        a.set("kind", int64_t(kind));
        a.set("sign", int64_t(1));
        a.set("rounding", std::string("round"));
        NodeId q = b.op(kSQ, {data}, a, QDType::Float32);
        qnodes[{data, kind}] = q;
        return q;
    };
    auto checkToSkip = [&](const Node& n) {
        if (stop) return true;
        if (n.op == "nn.conv2d") {
            const bool skip = std::find(cfg.skipConvLayers.begin(), cfg.skipConvLayers.end(), convCounter) !=
                              cfg.skipConvLayers.end();
            ++convCounter;
            return skip;
        }
        return false;
    };
    auto isConstNew = [&](NodeId id) { return b.g.node(id).kind == NodeKind::Constant; };
    for (NodeId id = 0; id < NodeId(src.size()); ++id) {
        const Node& n = src.node(id);
        if (n.kind == NodeKind::Input) { v[size_t(id)] = {b.input(n), None}; continue; }
        if (n.kind == NodeKind::Constant) { v[size_t(id)] = {b.copyConstant(n), None}; continue; }
        std::vector<AV> a;
        for (NodeId p : n.inputs) {
            AV x = v[size_t(p)];
            if (refs[size_t(p)] > 1 && x.kind != None) x = {attach(x.id, KInput), KInput};  // fmulti_ref
            a.push_back(x);
        }
        auto fwd = [&](std::vector<NodeId> ins) { return b.forward(n, std::move(ins)); };
        auto plain = [&] {
            std::vector<NodeId> ins;
            for (const AV& x : a) ins.push_back(x.id);
            return AV{fwd(ins), None};
        };
        std::optional<AV> out;
        const std::string& op = n.op;
        if (op == "nn.conv2d" || (op == "nn.dense" && !cfg.skipDenseLayer)) {
            if (!checkToSkip(n)) {
                NodeId l = a[0].id, r = a[1].id;
                if (a[0].kind == None || a[0].kind == KActivation) l = attach(l, KInput);
                TB_USER_CHECK(a[1].kind == None) << "quantize: " << op << " weight is already annotated";
                r = attach(r, KWeight);
                out = AV{fwd({l, r}), KActivation};
            }
        } else if (op == "multiply") {
            if (!checkToSkip(n) && !(a[0].kind == None && a[1].kind == None)) {
                NodeId l = a[0].id, r = a[1].id;
                if ((a[0].kind == KActivation || a[0].kind == KInput) && a[1].kind == None) {
                    if (a[0].kind == KActivation) l = attach(l, KInput);
                    r = attach(r, isConstNew(r) ? KWeight : KInput);
                } else if ((a[1].kind == KActivation || a[1].kind == KInput) && a[0].kind == None) {
                    if (a[1].kind == KActivation) r = attach(r, KInput);
                    l = attach(l, isConstNew(l) ? KWeight : KInput);
                } else {
                    TB_USER_ERROR() << "quantize: multiply '" << n.name << "' of two annotated operands";
                }
                out = AV{fwd({l, r}), KActivation};
            }
        } else if (op == "add") {
            if (!checkToSkip(n) && !(a[0].kind == None && a[1].kind == None)) {
                NodeId l = a[0].id, r = a[1].id;
                const int lk = a[0].kind, rk = a[1].kind;
                if (lk == None) {
                    l = attach(l, KInput);
                } else if (rk == None) {
                    r = attach(r, isConstNew(r) ? KWeight : KInput);
                } else if (lk == KActivation && rk == KActivation) {
                    r = attach(r, KInput);
                } else if (!((lk == KInput && rk == KInput) || (lk == KActivation && rk == KInput) ||
                             (lk == KInput && rk == KActivation))) {
                    TB_USER_ERROR() << "quantize: add '" << n.name << "' of operands the rules do not cover";
                }
                out = AV{fwd({l, r}), KActivation};
            }
        } else if (op == "reshape" || op == "clip" || op == "nn.relu" || op == "strided_slice" ||
                   op == "nn.avg_pool2d" || op == "nn.batch_flatten" || op == "transpose" ||
                   op == "annotation.stop_fusion") {
            if (!checkToSkip(n) && a[0].kind != None) out = AV{fwd({a[0].id}), a[0].kind};
        } else if (op == "nn.max_pool2d") {
            if (!checkToSkip(n) && a[0].kind != None) {
                NodeId x = a[0].kind == KActivation ? attach(a[0].id, KInput) : a[0].id;
                out = AV{fwd({x}), KInput};
            }
        } else if (op == "annotation.cast_hint") {
            if (checkToSkip(n) || a[0].kind == None) {
                out = AV{a[0].id, a[0].kind};  // the hint is dropped
            } else {
                NodeId x = a[0].kind == KActivation ? attach(a[0].id, KInput) : a[0].id;
                out = AV{fwd({x}), KInput};
            }
        } else if (op == "nn.global_avg_pool2d") {
            if (!checkToSkip(n) && a[0].kind != None) {
                out = AV{fwd({a[0].id}), None};
                stop = true;
            }
        } else if (op == "concatenate") {
            TB_USER_ERROR() << "quantize: concatenate is not supported";
        }
        v[size_t(id)] = out ? *out : plain();
    }
    std::vector<NodeId> outs;
    for (NodeId o : src.outputs()) outs.push_back(v[size_t(o)].id);
    b.g.setOutputs(outs);
    return b.g.pruned();
}

// ---- calibrate (_calibrate.py, global_scale + power2) --------------------------------------

void calibrate(Graph& g, const QConfig& cfg) {
    for (NodeId id = 0; id < NodeId(g.size()); ++id) {
        Node& n = g.mutableNode(id);
        if (n.kind != NodeKind::Op || n.op != kSQ) continue;
        const int kind = int(n.attrs.getInt("kind"));
        const int nbit = kind == KInput ? cfg.nbitInput : kind == KWeight ? cfg.nbitWeight : cfg.nbitActivation;
        const int validBit = nbit - int(n.attrs.getInt("sign"));
        double scale = cfg.globalScale;
        if (kind == KWeight) {
            const Node& w = g.node(n.inputs[0]);
            TB_USER_CHECK(w.kind == NodeKind::Constant) << "quantize: a weight operand is not a constant";
            double m = 0;
            for (float x : w.value->f) m = std::max(m, double(std::fabs(x)));
            scale = m > 0 ? std::pow(2.0, std::ceil(std::log2(m))) : 1.0;
        }
        const double range = std::pow(2.0, validBit);
        // Relay constants are float32.
        n.attrs.set("dom_scale", double(float(scale / range)));
        n.attrs.set("clip_min", double(float(-(range - 1))));
        n.attrs.set("clip_max", double(float(range - 1)));
    }
}

// ---- realize (realize.cc) ---------------------------------------------------------------------

Graph realize(const Graph& src, const QConfig& cfg) {
    Builder b;
    b.fold = true;
    const QDType dIn = parseQDType(cfg.dtypeInput), dW = parseQDType(cfg.dtypeWeight),
                 dAct = parseQDType(cfg.dtypeActivation);
    struct RV {
        NodeId id = -1;
        bool q = false;  // a QRealizeIntExpr
        float scale = 0;
        QDType dtype = QDType::Float32;
    };
    std::vector<RV> v(src.size());
    auto plainOf = [&](const RV& x) {  // QRealizeIntExpr::Realize: dequantize
        if (!x.q) return x.id;
        NodeId c = b.cast(x.id, QDType::Float32);
        return b.binary("multiply", c, b.scalar(QDType::Float32, x.scale));
    };
    auto isSQInput = [&](NodeId srcId) {
        const Node& n = src.node(srcId);
        return n.kind == NodeKind::Op && n.op == kSQ && n.attrs.getInt("kind") == KInput;
    };
    // MulAndDiv: data * s1 / s2 (s1 > s2 here).
    auto mulAndDiv = [&](NodeId data, float s1, float s2, QDType dt) {
        if (s1 == s2) return data;
        const float factor = s1 / s2;
        const float shift = std::log2(factor);
        TB_USER_CHECK(shift > 0) << "quantize: MulAndDiv with factor <= 1";
        if (float(int(shift)) == shift) return b.binary("left_shift", data, b.scalar(dt, int(shift)));
        TB_USER_CHECK(float(int(factor)) == factor) << "quantize: non-integer rescale factor " << factor
                                                    << " (fixed_point_multiply) is not supported";
        return b.binary("multiply", data, b.scalar(dt, factor));
    };
    for (NodeId id = 0; id < NodeId(src.size()); ++id) {
        const Node& n = src.node(id);
        if (n.kind == NodeKind::Input) { v[size_t(id)] = {b.input(n)}; continue; }
        if (n.kind == NodeKind::Constant) { v[size_t(id)] = {b.copyConstant(n)}; continue; }
        std::vector<RV> a;
        for (NodeId p : n.inputs) a.push_back(v[size_t(p)]);
        const std::string& op = n.op;
        std::optional<RV> out;
        if (op == kSQ) {
            const float dom = float(n.attrs.getFloat("dom_scale"));
            const double lo = n.attrs.getFloat("clip_min"), hi = n.attrs.getFloat("clip_max");
            if (a[0].q) {
                NodeId data = a[0].id;
                if (a[0].scale == dom) {
                    out = RV{b.clip(data, lo, hi), true, dom, a[0].dtype};
                } else {
                    const float shiftNbit = std::log2(dom / a[0].scale);
                    if (float(int(shiftNbit)) == shiftNbit) {
                        if (shiftNbit > 0) {
                            if (cfg.roundForShift)
                                data = b.binary("add", data, b.scalar(dAct, int(std::pow(2.0, shiftNbit - 1))));
                            data = b.binary("right_shift", data, b.scalar(dAct, int(shiftNbit)));
                        } else {
                            data = b.binary("left_shift", data, b.scalar(dAct, int(-shiftNbit)));
                        }
                        out = RV{b.clip(data, lo, hi), true, dom, a[0].dtype};
                    } else {
                        TB_USER_ERROR() << "quantize: a non-power-of-two rescale (fixed_point_multiply) is not "
                                           "supported";
                    }
                }
            } else {
                NodeId s = b.binary("multiply", a[0].id, b.scalar(QDType::Float32, double(1.0f / dom)));
                NodeId r = b.clip(b.unary("round", s), lo, hi);
                out = RV{r, true, dom, QDType::Float32};
            }
        } else if ((op == "nn.conv2d" || op == "nn.dense") && a[0].q && a[1].q) {
            NodeId l = a[0].dtype != dIn ? b.cast(a[0].id, dIn) : a[0].id;
            NodeId r = b.cast(a[1].id, dW);
            Attrs at = n.attrs;
            at.set("out_dtype", std::string(qdtypeName(dAct)));
            out = RV{b.op(op, {l, r}, at, dAct, n.name), true, a[0].scale * a[1].scale, dAct};
        } else if (op == "multiply" && a[0].q && a[1].q) {
            NodeId l = a[0].dtype != dAct ? b.cast(a[0].id, dAct) : a[0].id;
            NodeId r = a[1].dtype != dAct ? b.cast(a[1].id, dAct) : a[1].id;
            out = RV{b.op(op, {l, r}, n.attrs, dAct, n.name), true, a[0].scale * a[1].scale, dAct};
        } else if (op == "add" && a[0].q && a[1].q) {
            // UnifyDTypeScale with dtype = dtype_activation.
            std::vector<NodeId> ret;
            for (size_t i = 0; i < 2; ++i) {
                NodeId x = a[i].id;
                if (a[i].dtype != dAct) x = b.cast(x, dAct);
                else if (isSQInput(n.inputs[i])) x = b.cast(b.unary("annotation.stop_fusion", b.cast(x, dIn)), dAct);
                ret.push_back(x);
            }
            const float s = std::min(a[0].scale, a[1].scale);
            for (size_t i = 0; i < 2; ++i) {
                ret[i] = mulAndDiv(ret[i], a[i].scale, s, dAct);
                if (a[i].dtype == QDType::Float32) ret[i] = b.unary("annotation.stop_fusion", ret[i]);
            }
            out = RV{b.op(op, ret, n.attrs, dAct, n.name), true, s, dAct};
        } else if (op == "clip" && a[0].q) {
            Attrs at = n.attrs;
            at.set("a_min", n.attrs.getFloat("a_min") / double(a[0].scale));
            at.set("a_max", n.attrs.getFloat("a_max") / double(a[0].scale));
            out = RV{b.op(op, {a[0].id}, at, a[0].dtype, n.name), true, a[0].scale, a[0].dtype};
        } else if ((op == "nn.relu" || op == "reshape" || op == "strided_slice" || op == "nn.batch_flatten" ||
                    op == "transpose" || op == "annotation.stop_fusion") && a[0].q) {
            out = RV{b.op(op, {a[0].id}, n.attrs, a[0].dtype, n.name), true, a[0].scale, a[0].dtype};
        } else if ((op == "nn.max_pool2d") && a[0].q) {
            out = RV{b.op(op, {b.cast(a[0].id, dIn)}, n.attrs, dIn, n.name), true, a[0].scale, dIn};
        } else if ((op == "nn.avg_pool2d" || op == "nn.global_avg_pool2d") && a[0].q) {
            NodeId x = a[0].dtype != dAct ? b.cast(a[0].id, dAct) : a[0].id;
            out = RV{b.op(op, {x}, n.attrs, dAct, n.name), true, a[0].scale, dAct};
        } else if (op == "annotation.cast_hint" && a[0].q) {
            const QDType t = parseQDType(n.attrs.getString("dtype"));
            out = RV{b.cast(a[0].id, t), true, a[0].scale, t};
        }
        if (!out) {
            std::vector<NodeId> ins;
            for (const RV& x : a) ins.push_back(plainOf(x));
            if (op == "annotation.cast_hint") {
                out = RV{ins[0]};  // a hint on a float value (cannot happen after annotate)
            } else {
                out = RV{b.forward(n, ins)};
            }
        }
        v[size_t(id)] = *out;
    }
    std::vector<NodeId> outs;
    for (NodeId o : src.outputs()) outs.push_back(plainOf(v[size_t(o)]));
    b.g.setOutputs(outs);
    return b.g.pruned();
}

}  // namespace

Graph quantizePrerequisite(const Graph& g) {
    return foldConstant(canonicalizeOps(foldScaleAxis(foldConstant(simplifyInference(g)))));
}

Graph quantizeAnnotated(const Graph& optimized, const QConfig& cfg) {
    checkConfig(cfg);
    Graph a = annotate(partition(optimized, cfg), cfg);
    calibrate(a, cfg);
    return a;
}

Graph quantize(const Graph& g, const QConfig& cfg) {
    return realize(quantizeAnnotated(quantizePrerequisite(g), cfg), cfg);
}

std::map<std::string, int> opHistogram(const Graph& g, bool byDType) {
    std::map<std::string, int> h;
    for (const Node& n : g.nodes())
        if (n.kind == NodeKind::Op) ++h[byDType ? n.op + ":" + qdtypeName(nodeDType(n)) : n.op];
    return h;
}

}  // namespace tb::graph
