// SPDX-License-Identifier: Apache-2.0
#include "engine/vta/vta_task.h"

#include <bit>
#include <vector>

#include "engine/support/error.h"

namespace tb::vta {
namespace {

using ojson = nlohmann::ordered_json;

ojson tensorArg(std::vector<int> shape, const char* dtype = "int8") { return ojson::array({"TENSOR", shape, dtype}); }

std::string packedLayout(const VtaConfig& cfg) {
    return "NCHW" + std::to_string(cfg.batch()) + "n" + std::to_string(cfg.blockIn()) + "c";
}

// The shape of a ["TENSOR", shape, dtype] arg of the given rank; int8 only unless `int32Too`.
std::vector<int> tensorShape(const std::string& task, const ojson& arg, size_t rank, const char* what,
                             bool int32Too = false) {
    TB_USER_CHECK(arg.is_array() && arg.size() == 3 && arg[0] == "TENSOR" && arg[1].is_array())
        << task << ": the " << what << " arg is not [\"TENSOR\", shape, dtype]: " << arg.dump();
    TB_USER_CHECK(arg[2] == "int8" || (int32Too && arg[2] == "int32"))
        << task << ": the " << what << " must be " << (int32Too ? "int8 or int32" : "int8") << ", got "
        << arg[2].dump();
    TB_USER_CHECK(arg[1].size() == rank)
        << task << ": the " << what << " must be a packed tensor of rank " << rank << ", got " << arg[1].dump();
    std::vector<int> shape;
    for (const ojson& d : arg[1]) {
        TB_USER_CHECK(d.is_number_integer() && d.get<int>() > 0)
            << task << ": the " << what << " shape " << arg[1].dump() << " has a non-positive or non-integer size";
        shape.push_back(d.get<int>());
    }
    return shape;
}

int log2Exact(const std::string& task, const char* what, int v) {
    TB_USER_CHECK(std::has_single_bit(unsigned(v))) << task << ": " << what << " " << v << " is not a power of two";
    return std::countr_zero(unsigned(v));
}

// BATCH and BLOCK from the packed shapes (BLOCK_IN == BLOCK_OUT in VTA's configs).
VtaConfig shapeConfig(const std::string& task, int b, int bi, int bo) {
    TB_USER_CHECK(bi == bo) << task << ": BLOCK_IN " << bi << " and BLOCK_OUT " << bo << " differ";
    VtaConfig cfg;
    cfg.logBatch = log2Exact(task, "BATCH", b);
    cfg.logBlock = log2Exact(task, "BLOCK", bi);
    return cfg;
}

std::pair<int, int> intPair(const std::string& task, const ojson& v, const char* what) {
    TB_USER_CHECK(v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer())
        << task << ": " << what << " must be [h, w], got " << v.dump();
    return {v[0].get<int>(), v[1].get<int>()};
}

}  // namespace

std::string vtaTargetString(const VtaConfig& cfg) {
    return "ext_dev -keys=vta,cpu -device=vta -model=" + cfg.model();
}

bool isVtaTargetString(const std::string& target) {
    return target.rfind("ext_dev", 0) == 0 && target.find("-device=vta") != std::string::npos;
}

std::optional<std::string> vtaModelOfTarget(const std::string& target) {
    const auto at = target.find("-model=");
    if (at == std::string::npos) return std::nullopt;
    const auto begin = at + 7;
    return target.substr(begin, target.find(' ', begin) - begin);
}

VtaConfig vtaConfigFromTargetString(const std::string& target) {
    TB_USER_CHECK(isVtaTargetString(target))
        << "'" << target << "' is not a VTA target (TVM's form: \"ext_dev -keys=vta,cpu -device=vta -model=<TARGET>_<BITSTREAM>\")";
    const std::optional<std::string> named = vtaModelOfTarget(target);
    TB_USER_CHECK(named.has_value()) << "VTA target '" << target << "' has no -model=<TARGET>_<BITSTREAM>";
    const std::string& model = *named;
    const auto underscore = model.find('_');
    TB_USER_CHECK(underscore != std::string::npos && underscore > 0)
        << "VTA target '" << target << "': -model=" << model << " is not <TARGET>_<BITSTREAM>";
    VtaConfig cfg = VtaConfig::forTarget(model.substr(0, underscore));
    TB_USER_CHECK(cfg.model() == model) << "VTA target '" << target << "': -model=" << model
                                        << " is not the default config of " << cfg.target << " (" << cfg.model()
                                        << "); give its vta_config.json instead";
    return cfg;
}

ojson conv2dTaskArgs(const VtaConfig& cfg, const Conv2dWorkload& wl) {
    wl.validate(cfg);
    const int B = cfg.batch(), BI = cfg.blockIn(), BO = cfg.blockOut();
    return ojson::array({tensorArg({wl.batch / B, wl.inFilter / BI, wl.height, wl.width, B, BI}),
                         tensorArg({wl.outFilter / BO, wl.inFilter / BI, wl.hkernel, wl.wkernel, BO, BI}),
                         ojson::array({wl.hstride, wl.wstride}), ojson::array({wl.hpad, wl.wpad, wl.hpad, wl.wpad}),
                         ojson::array({1, 1}), packedLayout(cfg), "int32"});
}

ojson denseTaskArgs(const VtaConfig& cfg, const DenseWorkload& wl) {
    wl.validate(cfg);
    const int B = cfg.batch(), BI = cfg.blockIn(), BO = cfg.blockOut();
    return ojson::array({tensorArg({wl.batch / B, wl.inFeat / BI, B, BI}),
                         tensorArg({wl.outFeat / BO, wl.inFeat / BI, BO, BI}), nullptr, "int32"});
}

namespace {

// The shape of conv2d_packed / group_conv2d_packed args (data, kernel, strides, padding,
// dilation), the kernel reducing over d[1] / groups channel blocks; the workload is not validated.
Conv2dWorkload convFromArgs(const std::string& task, const ojson& args, int groups, VtaConfig& cfg) {
    const std::vector<int> d = tensorShape(task, args[0], 6, "data");
    const std::vector<int> k = tensorShape(task, args[1], 6, "kernel");
    cfg = shapeConfig(task, d[4], d[5], k[4]);
    TB_USER_CHECK(k[5] == d[5] && int64_t(k[1]) * groups == d[1])
        << task << ": the kernel " << args[1][1].dump() << " does not reduce over the data's channels "
        << args[0][1].dump() << (groups == 1 ? "" : " divided into " + std::to_string(groups) + " groups");
    const auto [sh, sw] = intPair(task, args[2], "strides");
    TB_USER_CHECK(args[4] == ojson::array({1, 1})) << task << ": VTA supports dilation [1, 1] only, got "
                                                   << args[4].dump();
    const ojson& pad = args[3];
    TB_USER_CHECK(pad.is_array() && (pad.size() == 2 || pad.size() == 4))
        << task << ": padding must be [h, w] or [top, left, bottom, right], got " << pad.dump();
    const auto [hp, wp] = intPair(task, ojson::array({pad[0], pad[1]}), "padding");
    if (pad.size() == 4) {
        TB_USER_CHECK(pad[2] == pad[0] && pad[3] == pad[1])
            << task << ": asymmetric padding " << pad.dump() << " is not supported";
    }
    Conv2dWorkload wl;
    wl.batch = d[0] * d[4], wl.inFilter = d[1] * d[5], wl.height = d[2], wl.width = d[3];
    wl.outFilter = k[0] * k[4], wl.hkernel = k[2], wl.wkernel = k[3];
    wl.hstride = sh, wl.wstride = sw, wl.hpad = hp, wl.wpad = wp;
    return wl;
}

}  // namespace

Conv2dWorkload conv2dWorkloadFromArgs(const ojson& args, VtaConfig* shapeCfg) {
    const std::string task = kConv2dPackedTask;
    TB_USER_CHECK(args.is_array() && args.size() == 7)
        << task << ": args must be [data, kernel, strides, padding, dilation, layout, out_dtype], got " << args.dump();
    VtaConfig cfg;
    const Conv2dWorkload wl = convFromArgs(task, args, 1, cfg);
    TB_USER_CHECK(args[5] == packedLayout(cfg))
        << task << ": layout " << args[5].dump() << " does not match the packed shapes (" << packedLayout(cfg) << ")";
    wl.validate(cfg);
    if (shapeCfg) *shapeCfg = cfg;
    return wl;
}

ojson groupConv2dTaskArgs(const VtaConfig& cfg, const GroupConv2dWorkload& wl) {
    wl.validate(cfg);
    const int B = cfg.batch(), BI = cfg.blockIn(), BO = cfg.blockOut();
    return ojson::array({tensorArg({wl.batch / B, wl.inFilter / BI, wl.height, wl.width, B, BI}),
                         tensorArg({wl.outFilter / BO, wl.inFilter / wl.groups / BI, wl.hkernel, wl.wkernel, BO, BI}),
                         ojson::array({wl.hstride, wl.wstride}), ojson::array({wl.hpad, wl.wpad, wl.hpad, wl.wpad}),
                         ojson::array({1, 1}), wl.groups, "int32"});
}

GroupConv2dWorkload groupConv2dWorkloadFromArgs(const ojson& args, VtaConfig* shapeCfg) {
    const std::string task = kGroupConv2dPackedTask;
    TB_USER_CHECK(args.is_array() && args.size() == 7)
        << task << ": args must be [data, kernel, strides, padding, dilation, groups, out_dtype], got " << args.dump();
    TB_USER_CHECK(args[5].is_number_integer() && args[5].get<int64_t>() > 0 && args[5].get<int64_t>() <= (1 << 20))
        << task << ": groups must be a positive integer, got " << args[5].dump();
    TB_USER_CHECK(args[6] == "int32") << task << ": out_dtype must be \"int32\" (TVM asserts it), got " << args[6].dump();
    VtaConfig cfg;
    GroupConv2dWorkload wl;
    wl.groups = args[5].get<int>();
    static_cast<Conv2dWorkload&>(wl) = convFromArgs(task, args, wl.groups, cfg);
    wl.validate(cfg);
    if (shapeCfg) *shapeCfg = cfg;
    return wl;
}

DenseWorkload denseWorkloadFromArgs(const ojson& args, VtaConfig* shapeCfg) {
    const std::string task = kDensePackedTask;
    TB_USER_CHECK(args.is_array() && args.size() == 4)
        << task << ": args must be [data, weight, bias, out_dtype], got " << args.dump();
    const std::vector<int> d = tensorShape(task, args[0], 4, "data");
    const std::vector<int> w = tensorShape(task, args[1], 4, "weight");
    const VtaConfig cfg = shapeConfig(task, d[2], d[3], w[2]);
    TB_USER_CHECK(w[3] == d[3] && w[1] == d[1])
        << task << ": the weight " << args[1][1].dump() << " does not reduce over the data's features "
        << args[0][1].dump();
    DenseWorkload wl{d[0] * d[2], d[1] * d[3], w[0] * w[2]};
    wl.validate(cfg);
    if (shapeCfg) *shapeCfg = cfg;
    return wl;
}

ojson aluTaskArgs(const VtaConfig& cfg, const AluWorkload& wl, bool scalarRhs) {
    wl.validate(cfg);
    TB_USER_CHECK(vtaTargetHasAluOps(cfg))
        << aluTemplateName(wl.op) << ": VTA target '" << cfg.target
        << "' has no ALU-only operators (TVM offloads add/multiply for sim and intelfocl only)";
    const int B = cfg.batch(), BO = cfg.blockOut();
    const std::vector<int> shape = {wl.batch / B, wl.channels / BO, wl.height, wl.width, B, BO};
    TB_USER_CHECK(!(scalarRhs && wl.rhsBroadcast))
        << aluTemplateName(wl.op) << ": a rhs is either a scalar or a per-channel constant, not both";
    // graph_pack's per-channel constant: (C/BO, 1, 1, B, BO), broadcast over batch blocks, rows, columns.
    const std::vector<int> rhs = scalarRhs ? std::vector<int>{}
                                 : wl.rhsBroadcast ? std::vector<int>{wl.channels / BO, 1, 1, B, BO}
                                                   : shape;
    return ojson::array({tensorArg(shape, wl.lhsInt8 ? "int8" : "int32"), tensorArg(rhs, wl.rhsInt8 ? "int8" : "int32")});
}

AluWorkload aluWorkloadFromArgs(const std::string& taskName, const ojson& args, VtaConfig* shapeCfg, bool* scalarRhs) {
    TB_USER_CHECK(taskName == kAddTask || taskName == kMultiplyTask)
        << "'" << taskName << "' is not an ALU task (add.vta, multiply.vta)";
    const std::string& task = taskName;
    TB_USER_CHECK(args.is_array() && args.size() == 2) << task << ": args must be [lhs, rhs], got " << args.dump();
    const std::vector<int> l = tensorShape(task, args[0], 6, "lhs", true);
    const bool scalar = args[1].is_array() && args[1].size() == 3 && args[1][1] == ojson::array();
    if (scalar) {
        TB_USER_CHECK(args[1][0] == "TENSOR" && (args[1][2] == "int8" || args[1][2] == "int32"))
            << task << ": the scalar rhs must be [\"TENSOR\", [], \"int8\"|\"int32\"], got " << args[1].dump();
    }
    const bool perChannel = !scalar && args[1].is_array() && args[1].size() == 3 && args[1][1].is_array() &&
                            args[1][1].size() == 5;
    if (perChannel) {
        const std::vector<int> r = tensorShape(task, args[1], 5, "rhs", true);
        TB_USER_CHECK(r == std::vector<int>({l[1], 1, 1, l[4], l[5]}))
            << task << ": the per-channel rhs shape " << args[1][1].dump() << " is not (C/BLOCK, 1, 1, BATCH, BLOCK) of "
            << "the lhs " << args[0][1].dump();
    } else if (!scalar) {
        const std::vector<int> r = tensorShape(task, args[1], 6, "rhs", true);
        TB_USER_CHECK(r == l) << task << ": the rhs shape " << args[1][1].dump() << " is neither the lhs's "
                              << args[0][1].dump() << ", a per-channel (C/BLOCK, 1, 1, BATCH, BLOCK) nor [] (a scalar)";
    }
    const VtaConfig cfg = shapeConfig(task, l[4], l[5], l[5]);
    AluWorkload wl;
    wl.op = taskName == kAddTask ? AluOpKind::Add : AluOpKind::Multiply;
    wl.batch = l[0] * l[4], wl.channels = l[1] * l[5], wl.height = l[2], wl.width = l[3];
    wl.lhsInt8 = args[0][2] == "int8";
    wl.rhsInt8 = args[1][2] == "int8";
    wl.rhsBroadcast = perChannel;
    wl.validate(cfg);
    if (shapeCfg) *shapeCfg = cfg;
    if (scalarRhs) *scalarRhs = scalar;
    return wl;
}

std::optional<ojson> scalarRhsArgs(const ojson& args) {
    if (!args.is_array() || args.size() != 2 || args[0] != args[1]) return std::nullopt;
    const ojson& lhs = args[0];
    if (!lhs.is_array() || lhs.size() != 3) return std::nullopt;
    ojson out = args;
    out[1] = ojson::array({lhs[0], ojson::array(), lhs[2]});
    return out;
}

bool vtaTargetHasAluOps(const VtaConfig& cfg) { return cfg.target == "sim" || cfg.target == "intelfocl"; }

std::vector<NamedAluWorkload> resnet18AluWorkloads(const VtaConfig& cfg) {
    std::vector<NamedAluWorkload> out;
    for (auto [c, hw] : {std::pair{64, 56}, {128, 28}, {256, 14}, {512, 7}}) {
        for (AluOpKind op : {AluOpKind::Add, AluOpKind::Multiply}) {
            AluWorkload wl;
            wl.op = op;
            wl.batch = cfg.batch(), wl.channels = c, wl.height = wl.width = hw;
            const std::string base = op == AluOpKind::Add ? "add_" : "multiply_";
            out.push_back({base + std::to_string(c) + "x" + std::to_string(hw) + "x" + std::to_string(hw), wl});
        }
    }
    return out;
}

std::vector<NamedGroupConv2dWorkload> mobilenetGroupConv2dWorkloads(const VtaConfig& cfg) {
    auto conv = [&](const char* name, int hw, int c, int groups, int stride) {
        GroupConv2dWorkload wl;
        wl.batch = cfg.batch(), wl.height = wl.width = hw, wl.inFilter = wl.outFilter = c, wl.groups = groups;
        wl.hkernel = wl.wkernel = 3, wl.hpad = wl.wpad = 1, wl.hstride = wl.wstride = stride;
        return NamedGroupConv2dWorkload{name, wl};
    };
    const int BO = cfg.blockOut();
    return {conv("G1", 56, 128, 128 / BO, 1), conv("G2", 56, 128, 128 / BO, 2), conv("G3", 28, 256, 256 / BO, 1),
            conv("G4", 14, 512, 512 / BO, 1), conv("G5", 14, 256, 256 / (2 * BO), 1), conv("G6", 7, 1024, 1024 / BO, 1)};
}

std::vector<NamedConv2dWorkload> resnet18Conv2dWorkloads(const VtaConfig& cfg) {
    auto conv = [&](const char* name, int hw, int ci, int co, int k, int pad, int stride) {
        Conv2dWorkload wl;
        wl.batch = cfg.batch(), wl.height = wl.width = hw, wl.inFilter = ci, wl.outFilter = co;
        wl.hkernel = wl.wkernel = k, wl.hpad = wl.wpad = pad, wl.hstride = wl.wstride = stride;
        return NamedConv2dWorkload{name, wl};
    };
    return {conv("C2", 56, 64, 64, 3, 1, 1),    conv("C3", 56, 64, 128, 3, 1, 2),   conv("C4", 56, 64, 128, 1, 0, 2),
            conv("C5", 28, 128, 128, 3, 1, 1),  conv("C6", 28, 128, 256, 3, 1, 2),  conv("C7", 28, 128, 256, 1, 0, 2),
            conv("C8", 14, 256, 256, 3, 1, 1),  conv("C9", 14, 256, 512, 3, 1, 2),  conv("C10", 14, 256, 512, 1, 0, 2),
            conv("C11", 7, 512, 512, 3, 1, 1)};
}

bool isVtaTaskName(const std::string& taskName) {
    return taskName == kConv2dPackedTask || taskName == kGroupConv2dPackedTask || taskName == kDensePackedTask || taskName == kAddTask ||
           taskName == kMultiplyTask;
}

autotvm::ConfigSpace vtaTaskSpace(const std::string& taskName, const ojson& args) {
    VtaConfig cfg;
    if (taskName == kConv2dPackedTask) {
        const Conv2dWorkload wl = conv2dWorkloadFromArgs(args, &cfg);
        return conv2dConfigSpace(wl, cfg);
    }
    if (taskName == kGroupConv2dPackedTask) {
        const GroupConv2dWorkload wl = groupConv2dWorkloadFromArgs(args, &cfg);
        return groupConv2dConfigSpace(wl, cfg);
    }
    if (taskName == kDensePackedTask) {
        const DenseWorkload wl = denseWorkloadFromArgs(args, &cfg);
        return denseConfigSpace(wl, cfg);
    }
    if (taskName == kAddTask || taskName == kMultiplyTask) {
        const AluWorkload wl = aluWorkloadFromArgs(taskName, args, &cfg);
        return aluConfigSpace(wl, cfg);
    }
    TB_USER_ERROR() << "'" << taskName
                    << "' is not a VTA task (conv2d_packed.vta, group_conv2d_packed.vta, dense_packed.vta, add.vta, multiply.vta)";
}

}  // namespace tb::vta
