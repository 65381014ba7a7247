// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/vta_network.h"

#include <chrono>
#include <map>
#include <memory>

#include "engine/support/error.h"
#include "engine/vta/graph_pack.h"
#include "engine/vta/packed_ops.h"

namespace tb::vta {

namespace g = graph;

namespace {

TensorArg tensorArg(const g::Node& n) { return {n.type.shape, g::qdtypeName(g::nodeDType(n))}; }

std::string nodeLabel(const g::Node& n, g::NodeId id) { return n.name.empty() ? "%" + std::to_string(id) : n.name; }

Conv2dWorkload convWorkload(const g::Graph& gr, const g::Node& conv) {
    const auto& d = gr.node(conv.inputs[0]).type.shape;
    const auto& k = gr.node(conv.inputs[1]).type.shape;
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

bool isScalarConst(const g::Graph& gr, g::NodeId id) {
    const g::Node& n = gr.node(id);
    return n.kind == g::NodeKind::Constant && n.type.shape.empty();
}

// graph_pack's per-channel constant (C/BLOCK, 1, 1, B, BLOCK).
bool isChannelConst(const g::Graph& gr, g::NodeId id) {
    const g::Node& n = gr.node(id);
    const auto& s = n.type.shape;
    return n.kind == g::NodeKind::Constant && s.size() == 5 && s[1] == 1 && s[2] == 1;
}

std::string shapeTuple(const std::vector<int64_t>& s) {
    std::string r = "(";
    for (size_t k = 0; k < s.size(); ++k) r += (k ? ", " : "") + std::to_string(s[k]);
    return r + (s.size() == 1 ? ",)" : ")");
}

// The task of one conv2d / add / multiply node before the seed's filter (nullopt for other ops).
// `packed`: the seed's filter (lhs rank > 4, not float32) keeps it; the scalar rhs is merged.
std::optional<VtaNetTask> nodeTask(const g::Graph& gr, const g::Node& n, const VtaConfig& cfg, bool* packed) {
    VtaNetTask t;
    if (n.kind != g::NodeKind::Op) return std::nullopt;
    if (n.op == "add" || n.op == "multiply")
        t.name = n.op + ".vta";
    else if (n.op == "nn.conv2d" && isPackedConv2d(n))
        t.name = "conv2d_packed.vta";
    else
        return std::nullopt;
    t.tensors = {tensorArg(gr.node(n.inputs[0])), tensorArg(gr.node(n.inputs[1]))};
    *packed = t.tensors[0].shape.size() > 4 && t.tensors[0].dtype != "float32";
    if (!*packed) return t;
    if (t.tensors[1].shape.empty()) {
        t.tensors[1] = t.tensors[0];
        t.rhsScalar = true;
    }
    if (t.name == "conv2d_packed.vta") {
        t.conv = convWorkload(gr, n);
        t.conv->validate(cfg);
        return t;
    }
    const auto& s = t.tensors[0].shape;
    TB_USER_CHECK(s.size() == 6) << n.op << " '" << n.name << "': a packed operand must have rank 6, got "
                                 << shapeTuple(s);
    AluWorkload wl;
    wl.op = n.op == "add" ? AluOpKind::Add : AluOpKind::Multiply;
    wl.batch = int(s[0] * s[4]), wl.channels = int(s[1] * s[5]), wl.height = int(s[2]), wl.width = int(s[3]);
    wl.lhsInt8 = t.tensors[0].dtype == "int8";
    wl.rhsInt8 = t.tensors[1].dtype == "int8";
    t.rhsBroadcast = t.tensors[1].shape != t.tensors[0].shape;
    wl.rhsBroadcast = t.rhsBroadcast;
    t.alu = wl;
    return t;
}

// The elementwise chain after `head` as epilogue ops (add/multiply/shifts by a scalar, per-channel
// add/multiply, nn.relu, clip), up to the cast to int8 that ends it.
struct Chain {
    std::vector<EpilogueOp> ops;
    std::vector<g::NodeId> nodes;     // after the head, the tail (cast int8) included
    g::NodeId tail = -1;              // -1: no chain, `why` says why
    g::NodeId bias = -1;              // conv: the per-channel constant of AddBias
    std::vector<g::NodeId> channel;   // ALU: the per-channel constants of AddChannel/MulChannel
    std::string why;
};

// `conv`: conv2d_packed's epilogue (one per-channel add, as AddBias); otherwise add/multiply's
// (per-channel add/multiply as AddChannel/MulChannel, scalar multiply).
Chain followChain(const g::Graph& gr, const std::vector<std::vector<g::NodeId>>& cons, const std::vector<char>& isOut,
                  g::NodeId head, bool conv) {
    Chain c;
    g::NodeId cur = head;
    auto imm16 = [](int64_t v) { return v >= -32768 && v <= 32767; };
    for (;;) {
        if (cons[size_t(cur)].size() != 1 || isOut[size_t(cur)]) {
            c.why = "the int32 value of " + gr.node(cur).op + " has " + std::to_string(cons[size_t(cur)].size()) +
                    " consumers before a cast to int8 (an int32 result stays on the CPU)";
            return c;
        }
        const g::NodeId nx = cons[size_t(cur)][0];
        const g::Node& n = gr.node(nx);
        if (n.inputs.empty() || n.inputs[0] != cur) {
            c.why = n.op + " reads the chain's value as its second operand";
            return c;
        }
        c.nodes.push_back(nx);
        if (n.op == "cast" && n.attrs.getString("dtype") == "int8") {
            c.tail = nx;
            return c;
        }
        const bool scalar = n.inputs.size() > 1 && isScalarConst(gr, n.inputs[1]);
        const bool channel = n.inputs.size() > 1 && isChannelConst(gr, n.inputs[1]);
        const int64_t imm = scalar ? g::constantTensor(gr.node(n.inputs[1])).i.at(0) : 0;
        if (n.op == "add" && channel && conv && c.bias < 0) {
            c.bias = n.inputs[1];
            c.ops.push_back({EpilogueKind::AddBias, 0});
        } else if ((n.op == "add" || n.op == "multiply") && channel && !conv && c.channel.size() < 8) {
            c.ops.push_back({n.op == "add" ? EpilogueKind::AddChannel : EpilogueKind::MulChannel, int32_t(c.channel.size())});
            c.channel.push_back(n.inputs[1]);
        } else if (n.op == "add" && scalar && imm16(imm)) {
            c.ops.push_back({EpilogueKind::AddImm, int32_t(imm)});
        } else if (n.op == "multiply" && scalar && imm16(imm) && !conv) {
            c.ops.push_back({EpilogueKind::MulImm, int32_t(imm)});
        } else if (n.op == "right_shift" && scalar && imm >= 0 && imm < 32) {
            c.ops.push_back({EpilogueKind::ShrImm, int32_t(imm)});
        } else if (n.op == "left_shift" && scalar && imm >= 0 && imm < 32) {
            c.ops.push_back({EpilogueKind::ShlImm, int32_t(imm)});
        } else if (n.op == "nn.relu") {
            c.ops.push_back({EpilogueKind::MaxImm, 0});
        } else if (n.op == "clip") {
            const int64_t lo = int64_t(n.attrs.getFloat("a_min")), hi = int64_t(n.attrs.getFloat("a_max"));
            if (!imm16(lo) || !imm16(hi)) {
                c.why = "clip bounds do not fit the ALU immediate";
                return c;
            }
            c.ops.push_back({EpilogueKind::MinImm, int32_t(hi)});
            c.ops.push_back({EpilogueKind::MaxImm, int32_t(lo)});
        } else {
            c.why = "'" + n.op + "' in the chain is not an ALU epilogue op";
            return c;
        }
        cur = nx;
    }
}

}  // namespace

std::string VtaNetTask::argsString() const {
    std::string r = "(";
    for (size_t k = 0; k < tensors.size(); ++k)
        r += (k ? ", " : "") + std::string("('TENSOR', ") + shapeTuple(tensors[k].shape) + ", '" + tensors[k].dtype + "')";
    return r + ")";
}

std::string workloadStr(const VtaWorkload& wl) {
    return std::visit([](const auto& w) { return w.str(); }, wl);
}

TaskExtraction extractVtaTasks(const g::Graph& gr, const VtaConfig& cfg, const std::set<std::string>& ops) {
    for (const auto& o : ops)
        TB_USER_CHECK(o == "add" || o == "multiply" || o == "conv2d")
            << "unknown op '" << o << "' for VTA task extraction (add, multiply, conv2d)";
    TaskExtraction r;
    std::map<std::pair<std::string, std::vector<TensorArg>>, size_t> index, rawIndex;
    for (g::NodeId id = 0; id < g::NodeId(gr.size()); ++id) {
        const g::Node& n = gr.node(id);
        const std::string op = n.op == "nn.conv2d" ? "conv2d" : n.op;
        if (n.kind != g::NodeKind::Op || !ops.count(op)) continue;
        bool packed = false;
        std::optional<VtaNetTask> t = nodeTask(gr, n, cfg, &packed);
        if (!t) continue;
        ++r.extracted;
        if (!packed) continue;  // the seed's filters
        ++r.filtered;
        const std::vector<TensorArg> raw{tensorArg(gr.node(n.inputs[0])), tensorArg(gr.node(n.inputs[1]))};
        if (rawIndex.emplace(std::make_pair(t->name, raw), r.unmerged.size()).second) {
            VtaNetTask u = *t;
            u.tensors = raw;
            u.rhsScalar = false;
            u.count = 0;
            r.unmerged.push_back(std::move(u));
        }
        ++r.unmerged[rawIndex.at(std::make_pair(t->name, raw))].count;
        auto key = std::make_pair(t->name, t->tensors);
        auto it = index.find(key);
        if (it == index.end()) {
            index[key] = r.tasks.size();
            t->count = 1;
            t->nodes = {id};
            r.tasks.push_back(std::move(*t));
        } else {
            ++r.tasks[it->second].count;
            r.tasks[it->second].nodes.push_back(id);
        }
    }
    return r;
}

namespace {

// A kernel of the run: a packed conv2d or add/multiply (`head`) with its chain, computed on VTA
// when runIntGraph reaches the chain's tail.
struct Group {
    g::NodeId head = -1;
    Chain chain;
    VtaNetTask task;
};

// The schedule for a kernel: the lookup's config when it instantiates with this epilogue, else
// index 0 of the space (TVM's fallback). `check` throws tb::UserError for a config that does not.
template <class Sched, class Check>
Sched pickSchedule(const autotvm::ConfigSpace& space, const std::optional<autotvm::ConfigEntity>& entity, Check check,
                   bool& tuned, std::string& note) {
    tuned = false;
    if (entity) {
        try {
            Sched s = Sched::fromConfig(*entity);
            check(s);
            tuned = true;
            return s;
        } catch (const UserError& e) {
            note = std::string("the looked-up config does not instantiate here, fallback used: ") + e.what();
        }
    }
    return Sched::fromConfig(space.get(0));
}

std::vector<int32_t> int32Values(const g::HostTensor& t) { return {t.i.begin(), t.i.end()}; }

}  // namespace

VtaNetworkRun runNetworkOnVta(const g::Graph& gr, const VtaConfig& cfg, const std::vector<g::HostTensor>& inputs,
                              const VtaRunOptions& options) {
    const VtaConfigLookup& lookup = options.lookup;
    VtaNetworkRun run;
    const auto cons = gr.consumers();
    std::vector<char> isOut(gr.size(), 0);
    for (g::NodeId o : gr.outputs()) isOut[size_t(o)] = 1;
    std::map<g::NodeId, Group> groups;  // by tail
    g::IntRunOptions opt;
    opt.skip.assign(gr.size(), 0);
    auto hostOp = [&](const g::Node& n, g::NodeId id, std::string why) {
        run.hostReasons.push_back({n.op, nodeLabel(n, id), std::move(why)});
    };
    // Packed convs first (their epilogue adds belong to them), then add/multiply heads in node order
    // (an add inside an earlier head's chain is taken by it).
    for (int pass = 0; pass < 2; ++pass)
        for (g::NodeId id = 0; id < g::NodeId(gr.size()); ++id) {
            const g::Node& n = gr.node(id);
            const bool isConv = n.kind == g::NodeKind::Op && n.op == "nn.conv2d";
            if ((pass == 0) != isConv || opt.skip[size_t(id)]) continue;
            bool packed = false;
            std::optional<VtaNetTask> task = nodeTask(gr, n, cfg, &packed);
            if (!task) {
                if (isConv) hostOp(n, id, "not packed (outside graph_pack's region)");
                continue;
            }
            if (packed && !isConv && !options.aluOps) {
                hostOp(n, id, "the target has no ALU-only ops (TVM registers add.vta/multiply.vta for sim and intelfocl)");
                continue;
            }
            if (!packed) {
                hostOp(n, id, task->tensors[0].dtype == "float32" ? "float32 (the seed's filter; a CPU op in TVM)"
                                                                  : "not packed (rank <= 4; a CPU op in TVM)");
                continue;
            }
            Group grp;
            grp.head = id;
            grp.chain = followChain(gr, cons, isOut, id, isConv);
            grp.task = std::move(*task);
            if (!isConv && !grp.task.rhsBroadcast && !grp.task.rhsScalar &&
                gr.node(n.inputs[1]).type.shape != gr.node(n.inputs[0]).type.shape)
                grp.chain.tail = -1, grp.chain.why = "the rhs is neither the lhs's shape, a scalar nor per-channel";
            if (grp.chain.tail < 0) {
                if (isConv) ++run.hostConvs;
                hostOp(n, id, grp.chain.why);
                continue;
            }
            if (isConv) ++run.vtaConvs;
            else ++run.aluKernels;
            opt.skip[size_t(id)] = 1;
            ++run.vtaOps[n.op];
            for (g::NodeId c : grp.chain.nodes) {
                if (c != grp.chain.tail) opt.skip[size_t(c)] = 1;  // the tail is the group's value
                ++run.vtaOps[gr.node(c).op];
            }
            groups[grp.chain.tail] = std::move(grp);
        }
    for (g::NodeId id = 0; id < g::NodeId(gr.size()); ++id)
        if (gr.node(id).kind == g::NodeKind::Op && !opt.skip[size_t(id)] && !groups.count(id)) ++run.hostOps[gr.node(id).op];

    std::map<std::pair<std::string, std::string>, size_t> taskIndex;
    double vtaWall = 0;
    opt.external = [&](g::NodeId id) { return groups.count(id) != 0; };
    opt.take = [&](g::NodeId id, const std::function<const g::HostTensor&(g::NodeId)>& value) {
        const auto t0 = std::chrono::steady_clock::now();
        const Group& grp = groups.at(id);
        const g::Node& head = gr.node(grp.head);
        const std::string& name = grp.task.name;
        bool tuned = false;
        std::string note, sched;
        PackedOpResult res;
        std::optional<PackedOpResult> fallback;  // tuned kernels: the fallback config on the same operands
        auto freshSim = [&] { return std::make_unique<Simulator>(cfg); };  // large; fresh per kernel (packed_ops.h)
        VtaWorkload wl;
        if (grp.task.conv) {
            const Conv2dWorkload& cw = *grp.task.conv;
            wl = cw;
            Conv2dOperands operands;
            const g::HostTensor& data = value(head.inputs[0]);
            const g::HostTensor& kernel = value(head.inputs[1]);
            operands.data.assign(data.i.begin(), data.i.end());
            operands.kernel.assign(kernel.i.begin(), kernel.i.end());
            if (grp.chain.bias >= 0) {
                // (O/c, 1, 1, b, c) -> (N/b, O/c, 1, 1, b, c)
                const std::vector<int32_t> b = int32Values(value(grp.chain.bias));
                for (int n0 = 0; n0 < cw.batch / cfg.batch(); ++n0) operands.bias.insert(operands.bias.end(), b.begin(), b.end());
            }
            const Conv2dSchedule s = pickSchedule<Conv2dSchedule>(
                conv2dConfigSpace(cw, cfg), lookup ? lookup(name, wl) : std::nullopt,
                [&](const Conv2dSchedule& c) { checkConv2dSchedule(cfg, cw, c, grp.chain.ops); }, tuned, note);
            sched = s.str();
            res = runConv2dPacked(*freshSim(), cw, s, grp.chain.ops, operands);
            if (tuned)
                fallback = runConv2dPacked(*freshSim(), cw, Conv2dSchedule::fromConfig(conv2dConfigSpace(cw, cfg).get(0)),
                                           grp.chain.ops, operands);
        } else {
            const AluWorkload& aw = *grp.task.alu;
            wl = aw;
            AluOperands operands;
            operands.lhs = int32Values(value(head.inputs[0]));
            operands.rhs = int32Values(value(head.inputs[1]));
            if (grp.task.rhsScalar) operands.rhs.assign(operands.lhs.size(), operands.rhs.at(0));
            for (g::NodeId c : grp.chain.channel) operands.channel.push_back(int32Values(value(c)));
            const AluSchedule s = pickSchedule<AluSchedule>(
                aluConfigSpace(aw, cfg), lookup ? lookup(name, wl) : std::nullopt,
                [&](const AluSchedule& c) { checkAluSchedule(cfg, aw, c, grp.chain.ops); }, tuned, note);
            sched = s.str();
            res = runAluPacked(*freshSim(), aw, s, grp.chain.ops, operands);
            if (tuned)
                fallback = runAluPacked(*freshSim(), aw, AluSchedule::fromConfig(aluConfigSpace(aw, cfg).get(0)),
                                        grp.chain.ops, operands);
        }
        const auto key = std::make_pair(name, grp.task.argsString());
        auto it = taskIndex.find(key);
        if (it == taskIndex.end()) {
            it = taskIndex.emplace(key, run.tasks.size()).first;
            run.tasks.push_back({name, wl, key.second, 0, 0, 0, tuned, sched, note});
        }
        VtaTaskTime& tt = run.tasks[it->second];
        if (fallback) {
            tt.fallbackSeconds += fallback->report.timeSeconds();
            tt.fallbackOutputEqual = tt.fallbackOutputEqual && fallback->output == res.output;
        }
        ++tt.occurrences;
        tt.seconds += res.report.timeSeconds();
        tt.cycles += res.report.cycles;
        run.vtaSeconds += res.report.timeSeconds();
        run.stats += res.report.stats;
        g::HostTensor out;
        out.shape = gr.node(id).type.shape;
        out.dtype = g::QDType::Int8;
        out.i.assign(res.output.begin(), res.output.end());
        vtaWall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return out;
    };
    const auto t0 = std::chrono::steady_clock::now();
    run.outputs = g::runIntGraph(gr, inputs, opt);
    run.hostSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - vtaWall;
    return run;
}

}  // namespace tb::vta
