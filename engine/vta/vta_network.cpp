// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/vta_network.h"

#include <chrono>
#include <map>
#include <memory>

#include "engine/support/error.h"
#include "engine/vta/graph_pack.h"
#include "engine/vta/packed_ops.h"

namespace tb::vta {

using graph::Graph;
using graph::HostTensor;
using graph::Node;
using graph::NodeId;
using graph::NodeKind;

namespace {

TensorArg tensorArg(const Node& n) { return {n.type.shape, graph::qdtypeName(graph::nodeDType(n))}; }

Conv2dWorkload convWorkload(const Graph& g, const Node& conv) {
    const auto& d = g.node(conv.inputs[0]).type.shape;
    const auto& k = g.node(conv.inputs[1]).type.shape;
    TB_USER_CHECK(d.size() == 6 && k.size() == 6) << "conv2d '" << conv.name << "' is not packed";
    auto pad = conv.attrs.getInts("padding", {0, 0});
    auto st = conv.attrs.getInts("strides", {1, 1});
    const int64_t pt = pad[0], pl = pad.size() > 1 ? pad[1] : pad[0];
    TB_USER_CHECK(pad.size() < 4 || (pad[2] == pt && pad[3] == pl)) << "conv2d '" << conv.name
                                                                    << "' has asymmetric padding";
    Conv2dWorkload wl;
    wl.batch = int(d[0] * d[4]), wl.inFilter = int(d[1] * d[5]), wl.height = int(d[2]), wl.width = int(d[3]);
    wl.outFilter = int(k[0] * k[4]), wl.hkernel = int(k[2]), wl.wkernel = int(k[3]);
    wl.hpad = int(pt), wl.wpad = int(pl), wl.hstride = int(st[0]), wl.wstride = int(st.size() > 1 ? st[1] : st[0]);
    return wl;
}

bool isScalarConst(const Graph& g, NodeId id) {
    const Node& n = g.node(id);
    return n.kind == NodeKind::Constant && n.type.shape.empty();
}

// The conv's requantize chain as epilogue ops; returns the tail node (cast to int8) or -1 with a reason.
NodeId epilogueChain(const Graph& g, const std::vector<std::vector<NodeId>>& cons, const std::vector<char>& isOut,
                     NodeId conv, std::vector<EpilogueOp>& ops, NodeId& bias, std::vector<NodeId>& chain,
                     std::string& why) {
    NodeId cur = conv;
    bias = -1;
    auto imm16 = [](int64_t v) { return v >= -32768 && v <= 32767; };
    for (;;) {
        if (cons[size_t(cur)].size() != 1 || isOut[size_t(cur)]) {
            why = "the int32 value of node '" + g.node(cur).name + "' (" + g.node(cur).op + ") has " +
                  std::to_string(cons[size_t(cur)].size()) + " consumers before a cast to int8";
            return -1;
        }
        const NodeId nx = cons[size_t(cur)][0];
        const Node& n = g.node(nx);
        if (n.inputs.empty() || n.inputs[0] != cur) { why = n.op + " reads the conv value as its second operand"; return -1; }
        if (n.op == "cast" && n.attrs.getString("dtype") == "int8") return nx;
        chain.push_back(nx);
        const Node* rhs = n.inputs.size() > 1 ? &g.node(n.inputs[1]) : nullptr;
        int64_t imm = 0;
        if (rhs && isScalarConst(g, n.inputs[1])) imm = graph::constantTensor(*rhs).i.at(0);
        if (n.op == "add" && rhs && rhs->kind == NodeKind::Constant && rhs->type.shape.size() == 5 && bias < 0) {
            bias = n.inputs[1];
            ops.push_back({EpilogueKind::AddBias, 0});
        } else if (n.op == "add" && rhs && isScalarConst(g, n.inputs[1]) && imm16(imm)) {
            ops.push_back({EpilogueKind::AddImm, int32_t(imm)});
        } else if (n.op == "right_shift" && rhs && isScalarConst(g, n.inputs[1]) && imm >= 0 && imm < 32) {
            ops.push_back({EpilogueKind::ShrImm, int32_t(imm)});
        } else if (n.op == "nn.relu") {
            ops.push_back({EpilogueKind::MaxImm, 0});
        } else if (n.op == "clip") {
            const int64_t lo = int64_t(n.attrs.getFloat("a_min")), hi = int64_t(n.attrs.getFloat("a_max"));
            if (!imm16(lo) || !imm16(hi)) { why = "clip bounds do not fit the ALU immediate"; return -1; }
            ops.push_back({EpilogueKind::MinImm, int32_t(hi)});
            ops.push_back({EpilogueKind::MaxImm, int32_t(lo)});
        } else {
            why = "'" + n.op + "' after the conv is not an ALU epilogue op";
            return -1;
        }
        cur = nx;
    }
}

std::string shapeTuple(const std::vector<int64_t>& s) {
    std::string r = "(";
    for (size_t k = 0; k < s.size(); ++k) r += (k ? ", " : "") + std::to_string(s[k]);
    return r + (s.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string VtaNetTask::argsString() const {
    std::string r = "(";
    for (size_t k = 0; k < tensors.size(); ++k)
        r += (k ? ", " : "") + std::string("('TENSOR', ") + shapeTuple(tensors[k].shape) + ", '" + tensors[k].dtype + "')";
    return r + ")";
}

TaskExtraction extractVtaTasks(const Graph& g, const VtaConfig& cfg, const std::set<std::string>& ops) {
    for (const auto& o : ops)
        TB_USER_CHECK(o == "add" || o == "multiply" || o == "conv2d")
            << "unknown op '" << o << "' for VTA task extraction (add, multiply, conv2d)";
    TaskExtraction r;
    std::map<std::pair<std::string, std::vector<TensorArg>>, size_t> index;
    for (NodeId id = 0; id < NodeId(g.size()); ++id) {
        const Node& n = g.node(id);
        if (n.kind != NodeKind::Op) continue;
        VtaNetTask t;
        if ((n.op == "add" || n.op == "multiply") && ops.count(n.op)) {
            t.name = n.op + ".vta";
            t.tensors = {tensorArg(g.node(n.inputs[0])), tensorArg(g.node(n.inputs[1]))};
        } else if (n.op == "nn.conv2d" && ops.count("conv2d") && isPackedConv2d(n)) {
            t.name = "conv2d_packed.vta";
            t.tensors = {tensorArg(g.node(n.inputs[0])), tensorArg(g.node(n.inputs[1]))};
        } else {
            continue;
        }
        ++r.extracted;
        if (t.tensors[0].shape.size() <= 4 || t.tensors[0].dtype == "float32") continue;  // the seed's filters
        ++r.filtered;
        if (t.tensors[1].shape.empty()) {
            t.tensors[1] = t.tensors[0];
            t.rhsScalar = true;
        }
        if (t.name == "conv2d_packed.vta") {
            t.conv = convWorkload(g, n);
            t.conv->validate(cfg);
        } else {
            const auto& s = t.tensors[0].shape;
            AluWorkload wl;
            wl.op = n.op == "add" ? AluOpKind::Add : AluOpKind::Multiply;
            wl.batch = int(s[0] * s[4]), wl.channels = int(s[1] * s[5]), wl.height = int(s[2]), wl.width = int(s[3]);
            wl.lhsInt8 = t.tensors[0].dtype == "int8";
            wl.rhsInt8 = t.tensors[1].dtype == "int8";
            t.alu = wl;
            t.rhsBroadcast = t.tensors[1].shape != t.tensors[0].shape;
        }
        auto key = std::make_pair(t.name, t.tensors);
        auto it = index.find(key);
        if (it == index.end()) {
            index[key] = r.tasks.size();
            t.count = 1;
            t.nodes = {id};
            r.tasks.push_back(std::move(t));
        } else {
            ++r.tasks[it->second].count;
            r.tasks[it->second].nodes.push_back(id);
        }
    }
    return r;
}

VtaNetworkRun runNetworkOnVta(const Graph& g, const VtaConfig& cfg, const std::vector<HostTensor>& inputs,
                              const VtaConfigLookup& lookup) {
    VtaNetworkRun run;
    const auto cons = g.consumers();
    std::vector<char> isOut(g.size(), 0);
    for (NodeId o : g.outputs()) isOut[size_t(o)] = 1;
    struct Group {
        NodeId conv = -1, bias = -1;
        std::vector<EpilogueOp> epilogue;
        Conv2dWorkload wl;
    };
    std::map<NodeId, Group> groups;  // by tail
    graph::IntRunOptions opt;
    opt.skip.assign(g.size(), 0);
    for (NodeId id = 0; id < NodeId(g.size()); ++id) {
        const Node& n = g.node(id);
        if (!isPackedConv2d(n)) continue;
        Group grp;
        grp.conv = id;
        grp.wl = convWorkload(g, n);
        std::vector<NodeId> chain;
        std::string why;
        const NodeId tail = epilogueChain(g, cons, isOut, id, grp.epilogue, grp.bias, chain, why);
        if (tail < 0) {
            ++run.hostConvs;
            run.hostReasons.push_back("conv2d '" + n.name + "': " + why);
            continue;
        }
        ++run.vtaConvs;
        opt.skip[size_t(id)] = 1;
        for (NodeId c : chain) opt.skip[size_t(c)] = 1;
        groups[tail] = grp;
    }
    std::map<std::string, size_t> taskIndex;
    double vtaWall = 0;
    opt.external = [&](NodeId id) { return groups.count(id) != 0; };
    opt.take = [&](NodeId id, const std::function<const HostTensor&(NodeId)>& value) {
        const auto t0 = std::chrono::steady_clock::now();
        const Group& grp = groups.at(id);
        const Node& conv = g.node(grp.conv);
        Conv2dOperands operands;
        const HostTensor& data = value(conv.inputs[0]);
        const HostTensor& kernel = value(conv.inputs[1]);
        operands.data.assign(data.i.begin(), data.i.end());
        operands.kernel.assign(kernel.i.begin(), kernel.i.end());
        if (grp.bias >= 0) {
            // (O/c, 1, 1, b, c) -> (N/b, O/c, 1, 1, b, c)
            const HostTensor& b = value(grp.bias);
            const int64_t per = b.numElements();
            for (int n0 = 0; n0 < grp.wl.batch / cfg.batch(); ++n0)
                for (int64_t k = 0; k < per; ++k) operands.bias.push_back(int32_t(b.i[size_t(k)]));
        }
        std::optional<autotvm::ConfigEntity> entity;
        if (lookup) entity = lookup("conv2d_packed.vta", grp.wl);
        const autotvm::ConfigSpace space = conv2dConfigSpace(grp.wl, cfg);
        Conv2dSchedule sched = Conv2dSchedule::fromConfig(space.get(0));
        bool tuned = false;
        if (entity) {
            Conv2dSchedule s = Conv2dSchedule::fromConfig(*entity);
            try {
                checkConv2dSchedule(cfg, grp.wl, s, grp.epilogue);
                sched = s;
                tuned = true;
            } catch (const UserError&) {
                // an invalid record config: TVM's fallback, as ApplyHistoryBest with no valid entry
            }
        }
        auto sim = std::make_unique<Simulator>(cfg);  // large; and fresh per run (packed_ops.h)
        PackedOpResult res = runConv2dPacked(*sim, grp.wl, sched, grp.epilogue, operands);
        const std::string key = grp.wl.str();
        auto it = taskIndex.find(key);
        if (it == taskIndex.end()) {
            taskIndex[key] = run.tasks.size();
            run.tasks.push_back({"conv2d_packed.vta", grp.wl, 0, 0, 0, tuned, sched.str()});
            it = taskIndex.find(key);
        }
        VtaTaskTime& tt = run.tasks[it->second];
        ++tt.occurrences;
        tt.seconds += res.report.timeSeconds();
        tt.cycles += res.report.cycles;
        run.vtaSeconds += res.report.timeSeconds();
        run.stats += res.report.stats;
        HostTensor out;
        out.shape = g.node(id).type.shape;
        out.dtype = graph::QDType::Int8;
        out.i.assign(res.output.begin(), res.output.end());
        vtaWall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return out;
    };
    const auto t0 = std::chrono::steady_clock::now();
    run.outputs = graph::runIntGraph(g, inputs, opt);
    run.hostSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - vtaWall;
    return run;
}

}  // namespace tb::vta
