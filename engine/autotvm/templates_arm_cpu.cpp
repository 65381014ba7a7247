// SPDX-License-Identifier: Apache-2.0
#include <tuple>

// ARM CPU templates (TVM v0.14 python/tvm/topi/arm_cpu/): the knobs each one declares, in order.
#include "engine/autotvm/state_builder.h"
#include "engine/autotvm/templates_common.h"
#include "engine/support/error.h"
#include "engine/topi/nn/winograd.h"
#include "engine/te/operation.h"
#include "engine/topi/nn/depthwise_conv2d.h"

namespace tb::autotvm::detail {

namespace {

// conv2d_nchw_winograd (arm_cpu/conv2d.py): tile_p, tile_k in the compute (`_decl_winograd`,
// tile size 4), then tile_c and the two annotations in the schedule (`_schedule_winograd`).
void conv2dNchwWinograd(const TaskArgs& args, ConfigSpace& cfg) {
    const WinogradNchwShape s = winogradNchwShape(args, 4);
    cfg.defineSplit("tile_p", s.p, splitOpts(2, innermostAtMost(16)));
    cfg.defineSplit("tile_k", s.co, splitOpts(2, innermostAtMost(16)));
    cfg.defineSplit("tile_c", s.ci, splitOpts(2, innermostAtMost(16)));
    cfg.defineAnnotate("ann_reduce", 1, "try_unroll");       // [ci]
    cfg.defineAnnotate("ann_spatial", 2, "try_unroll_vec");   // [k, xi]
}

// depthwise_conv2d_nchw (arm_cpu/depthwise_conv2d.py): splits of the output's c, h, w, then the
// annotation of their inner parts [vh, vw, vc].
void depthwiseConv2dNchw(const TaskArgs& args, ConfigSpace& cfg) {
    const DepthwiseNchwOutput o = depthwiseNchwOutput(args);
    cfg.defineSplit("tile_c", o.channels, splitOpts(2));
    cfg.defineSplit("tile_h", o.height, splitOpts(2));
    cfg.defineSplit("tile_w", o.width, splitOpts(2));
    cfg.defineAnnotate("ann", 3, "try_unroll_vec");
}

// ---- instantiation (compute + schedule of one config) ----------------------------------------

using te::Expr;
using te::Tensor;
using te::Var;

Expr ci(std::int64_t v) { return Expr(int(v)); }

}  // namespace

void checkFloat32(const TaskArgs& args, std::size_t outDtypeArg) {
    TB_USER_CHECK(args.tensor(0).dtype == "float32" && args.tensor(1).dtype == "float32")
        << args.taskName() << ": only float32 data and kernel are supported";
    TB_USER_CHECK(args.size() <= outDtypeArg || args.isNull(outDtypeArg) || args.str(outDtypeArg) == "float32")
        << args.taskName() << ": only out_dtype float32 is supported";
}

SpatialPackGeom spatialPackGeom(const TaskArgs& args, const ConfigEntity& cfg) {
    args.requireAtLeast(5);
    checkFloat32(args, 5);
    const TensorArg dataArg = args.tensor(0), kernelArg = args.tensor(1);
    TB_USER_CHECK(dataArg.shape.size() == 4) << args.taskName() << ": expects NCHW data";
    TB_USER_CHECK(kernelArg.shape.size() == 4 || kernelArg.shape.size() == 5)
        << args.taskName() << ": expects a 4-D or pre-packed 5-D kernel";
    SpatialPackGeom g;
    g.n = dataArg.shape[0], g.cin = dataArg.shape[1], g.ih = dataArg.shape[2], g.iw = dataArg.shape[3];
    g.co = kernelArg.shape.size() == 4 ? kernelArg.shape[0] : kernelArg.shape[0] * kernelArg.shape[4];
    g.kh = kernelArg.shape[2], g.kw = kernelArg.shape[3];
    TB_USER_CHECK(kernelArg.shape[1] == g.cin) << args.taskName() << ": grouped kernels are not supported";
    std::tie(g.dh, g.dw) = args.intPair(4);
    const std::int64_t dkh = (g.kh - 1) * g.dh + 1, dkw = (g.kw - 1) * g.dw + 1;
    g.pad = args.padding(3, dkh, dkw);
    std::tie(g.hstr, g.wstr) = args.intPair(2);
    g.oh = floorDiv(g.ih + g.pad.top + g.pad.bottom - dkh, g.hstr) + 1;
    g.ow = floorDiv(g.iw + g.pad.left + g.pad.right - dkw, g.wstr) + 1;
    g.vc = cfg.split("tile_co").size.back(), g.vh = cfg.split("tile_oh").size.back(),
    g.vw = cfg.split("tile_ow").size.back();
    TB_USER_CHECK(g.co % g.vc == 0 && g.oh % g.vh == 0 && g.ow % g.vw == 0)
        << args.taskName() << ": tiles " << g.vc << "/" << g.vh << "/" << g.vw << " do not divide " << g.co << "/"
        << g.oh << "/" << g.ow;
    g.dilated = g.dh != 1 || g.dw != 1;
    return g;
}

// nn.pad's PadInput as the arm_cpu schedules leave it: inlined into the stage that reads it (a
// strided data_vec or a winograd input tile reads past the padded input, which the inlined
// condition turns into zeros).
Expr paddedRead(const Tensor& data, const topi::nn::PadTuple& pad, Expr b, Expr c, Expr y, Expr x) {
    const std::int64_t ih = data.shape()[2], iw = data.shape()[3];
    Expr cond = logicalAnd(logicalAnd(y >= ci(pad.top), y < ci(ih + pad.top)),
                           logicalAnd(x >= ci(pad.left), x < ci(iw + pad.left)));
    return te::ifThenElse(cond, data(b, c, y - ci(pad.top), x - ci(pad.left)), te::makeConst(te::DType::Float32, 0.0));
}

// conv2d_spatial_pack_nchw (arm_cpu/conv2d_spatial_pack.py, num_tile = 2) on inputs {data (N, CI,
// IH, IW), kernel}: stages data_vec (or data_vec_undilated) with nn.pad's PadInput inlined,
// kernel_vec when the kernel is 4-D (TVM outside tuning mode without alter_op_layout; a 5-D kernel
// is the packed kernel_vec itself), conv (n, co, h, w, vh, vw, vc; reduce ci, kh, kw) and
// output_unpack (tag spatial_conv2d_output).
Tensor spatialPackCompute(const TaskArgs& args, const ConfigEntity& cfg, const std::vector<Tensor>& in) {
    const SpatialPackGeom g = spatialPackGeom(args, cfg);
    const Tensor& data = in.at(0);
    Tensor kernelVec = in.at(1);
    TB_USER_CHECK((data.shape() == std::vector<std::int64_t>{g.n, g.cin, g.ih, g.iw}))
        << args.taskName() << ": the data tensor does not have the args' shape";
    const std::int64_t vc = g.vc, vh = g.vh, vw = g.vw, hstr = g.hstr, wstr = g.wstr, dh = g.dh, dw = g.dw;
    if (kernelVec.shape().size() == 4) {
        const Tensor kernel = kernelVec;
        kernelVec = te::compute({g.co / vc, g.cin, g.kh, g.kw, vc}, {"co", "ci", "kh", "kw", "vc"},
                                [&](const std::vector<Var>& v) {
                                    return kernel(Expr(v[0]) * ci(vc) + Expr(v[4]), Expr(v[1]), Expr(v[2]), Expr(v[3]));
                                }, "kernel_vec");
    }
    TB_USER_CHECK((kernelVec.shape() == std::vector<std::int64_t>{g.co / vc, g.cin, g.kh, g.kw, vc}))
        << args.taskName() << ": the packed kernel is not (CO/VC, CI, KH, KW, VC) for VC = " << vc;
    Tensor dataVec;
    if (g.dilated) {
        dataVec = te::compute({g.n, g.oh / vh, g.ow / vw, g.cin, g.kh, g.kw, vh, vw},
                              {"n", "h", "w", "ci", "kh", "kw", "vh", "vw"}, [&](const std::vector<Var>& v) {
                                  return paddedRead(data, g.pad, Expr(v[0]), Expr(v[3]),
                                                    (Expr(v[1]) * ci(vh) + Expr(v[6])) * ci(hstr) + Expr(v[4]) * ci(dh),
                                                    (Expr(v[2]) * ci(vw) + Expr(v[7])) * ci(wstr) + Expr(v[5]) * ci(dw));
                              }, "data_vec_undilated");
    } else {
        dataVec = te::compute({g.n, g.oh / vh, g.ow / vw, g.cin, vh * hstr + g.kh - 1, vw * wstr + g.kw - 1},
                              {"n", "h", "w", "ci", "vh", "vw"}, [&](const std::vector<Var>& v) {
                                  return paddedRead(data, g.pad, Expr(v[0]), Expr(v[3]),
                                                    Expr(v[1]) * ci(vh * hstr) + Expr(v[4]),
                                                    Expr(v[2]) * ci(vw * wstr) + Expr(v[5]));
                              }, "data_vec");
    }
    te::IterVar rc = te::reduceAxis(g.cin, "ci"), rh = te::reduceAxis(g.kh, "kh"), rw = te::reduceAxis(g.kw, "kw");
    Tensor conv = te::compute({g.n, g.co / vc, g.oh / vh, g.ow / vw, vh, vw, vc}, {"n", "co", "h", "w", "vh", "vw", "vc"},
                              [&](const std::vector<Var>& v) {
                                  Expr d = g.dilated
                                               ? dataVec(Expr(v[0]), Expr(v[2]), Expr(v[3]), Expr(rc.var), Expr(rh.var),
                                                         Expr(rw.var), Expr(v[4]), Expr(v[5]))
                                               : dataVec(Expr(v[0]), Expr(v[2]), Expr(v[3]), Expr(rc.var),
                                                         Expr(v[4]) * ci(hstr) + Expr(rh.var),
                                                         Expr(v[5]) * ci(wstr) + Expr(rw.var));
                                  return te::sum(d * kernelVec(Expr(v[1]), Expr(rc.var), Expr(rh.var), Expr(rw.var),
                                                               Expr(v[6])),
                                                 {rc, rh, rw});
                              }, "conv");
    te::ComputeOptions opts;
    opts.tag = "spatial_conv2d_output";
    return te::compute({g.n, g.co, g.oh, g.ow}, {"n", "co", "h", "w"}, [&](const std::vector<Var>& v) {
        return conv(Expr(v[0]), te::floordiv(v[1], ci(vc)), te::floordiv(v[2], ci(vh)), te::floordiv(v[3], ci(vw)),
                    te::floormod(v[2], ci(vh)), te::floormod(v[3], ci(vw)), te::floormod(v[1], ci(vc)));
    }, "output_unpack", opts);
}

State scheduleFusedGroup(const std::shared_ptr<const te::ComputeDAG>& dag, const StageRefName& anchor,
                         const std::function<void(StateBuilder&, const StageRefName& last)>& schedule) {
    StateBuilder b(dag);
    b.ignoreConfigErrors();
    const auto after = b.inlineFusedAfter(anchor);
    schedule(b, after.empty() ? anchor : after.back());
    return b.finish().state;
}

TemplateInstance spatialPackInstance(const TaskArgs& args, const ConfigEntity& cfg, const SpatialPackSchedule& schedule) {
    const SpatialPackGeom g = spatialPackGeom(args, cfg);
    Tensor data = te::placeholder({g.n, g.cin, g.ih, g.iw}, "data");
    Tensor kernelVec = te::placeholder({g.co / g.vc, g.cin, g.kh, g.kw, g.vc}, "kernel_autotvm");
    Tensor output = spatialPackCompute(args, cfg, {data, kernelVec});
    StateBuilder b(std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, kernelVec, output}));
    schedule(b, cfg, g, {"output_unpack", 0});
    return b.finish();
}

std::shared_ptr<const te::ComputeDAG> depthwiseNchwDag(const TaskArgs& args) {
    args.requireAtLeast(5);
    checkFloat32(args, 5);
    const TensorArg dataArg = args.tensor(0), kernelArg = args.tensor(1);
    TB_USER_CHECK(dataArg.shape.size() == 4 && kernelArg.shape.size() == 4)
        << args.taskName() << ": expects NCHW data with a (C, M, KH, KW) kernel";
    const auto [sh, sw] = args.intPair(2);
    const auto [dh, dw] = args.intPair(4);
    const std::int64_t kh = kernelArg.shape[2], kw = kernelArg.shape[3];
    const auto pad = args.padding(3, (kh - 1) * dh + 1, (kw - 1) * dw + 1);
    Tensor data = te::placeholder(dataArg.shape, "data"), kernel = te::placeholder(kernelArg.shape, "kernel");
    Tensor out = topi::nn::depthwiseConv2dNchw(data, kernel, {sh, sw}, {pad.top, pad.left, pad.bottom, pad.right},
                                               {dh, dw});
    return std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, kernel, out});
}

namespace {

// arm_cpu/conv2d.py schedule_conv2d_nchw_spatial_pack + schedule_conv2d_spatial_pack_nchw on the
// group's output `last` (output_unpack itself, or the last op fused after it, the ops between
// already inlined by traverse_inline).
void scheduleSpatialPack(StateBuilder& b, const ConfigEntity& cfg, const SpatialPackGeom& g, const StageRefName& last) {
    const StageRefName DV{g.dilated ? "data_vec_undilated" : "data_vec", 0}, C{"conv", 0}, O{"output_unpack", 0};
    const bool fused = !(last.name == O.name && last.occurrence == O.occurrence);
    b.applyReorder(C, {"n", "co", "h", "w", "ci", "kh", "kw", "vh", "vw", "vc"}, cfg.reorder("reorder_0"));
    b.applyAnnotate(C, {"kh", "kw"}, cfg.annotate("ann_reduce"), {g.kh, g.kw});
    b.applyAnnotate(C, {"vh", "vw", "vc"}, cfg.annotate("ann_spatial"), {g.vh, g.vw, g.vc});
    const auto l = b.iters(last);
    TB_USER_CHECK(l.size() == 4) << "conv2d_nchw_spatial_pack.arm_cpu: a fused output of rank " << l.size();
    const auto cos = b.applySplit(last, l[1], cfg.split("tile_co"));
    const auto ohs = b.applySplit(last, l[2], cfg.split("tile_oh"));
    const auto ows = b.applySplit(last, l[3], cfg.split("tile_ow"));
    b.reorder(last, {l[0], cos[0], ohs[0], ows[0], ohs[1], ows[1], cos[1]});
    if (fused) {
        b.computeInline(O);
        b.applyAnnotate(last, {ohs[1], ows[1], cos[1]}, cfg.annotate("ann_spatial"), {g.vh, g.vw, g.vc}, 16);
    }
    b.computeAt(C, last, ows[0]);
    b.annotate(last, cos[0], IteratorAnnotation::Parallel);
    b.annotate(DV, "h", IteratorAnnotation::Parallel);
    if (b.hasStage({"kernel_vec", 0})) b.annotate({"kernel_vec", 0}, "co", IteratorAnnotation::Parallel);
}

// conv2d_nchw_spatial_pack.arm_cpu in tuning mode (spatialPackInstance) and as a network kernel:
// the group's output `last` scheduled as the template's output (the ops between inlined by
// traverse_inline).
TemplateInstance conv2dNchwSpatialPackInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    return spatialPackInstance(args, cfg, scheduleSpatialPack);
}

State conv2dNchwSpatialPackFused(const TaskArgs& args, const ConfigEntity& cfg,
                                 const std::shared_ptr<const te::ComputeDAG>& dag) {
    const SpatialPackGeom g = spatialPackGeom(args, cfg);
    return scheduleFusedGroup(dag, {"output_unpack", 0},
                              [&](StateBuilder& b, const StageRefName& last) { scheduleSpatialPack(b, cfg, g, last); });
}

// ---- conv2d_nchw_winograd.arm_cpu ----------------------------------------------------------

// The geometry of `_decl_winograd` (tile size m = 4, alpha = 6) for one config.
struct WinogradGeom {
    std::int64_t n = 0, cin = 0, ih = 0, iw = 0, co = 0, h = 0, w = 0, nH = 0, nW = 0, p = 0, vp = 0, vk = 0;
    topi::nn::PadTuple pad;
    static constexpr std::int64_t m = 4, alpha = 6;
};

WinogradGeom winogradGeom(const TaskArgs& args, const ConfigEntity& cfg) {
    checkFloat32(args, 5);
    const WinogradNchwShape s = winogradNchwShape(args, WinogradGeom::m);  // checks 3x3, stride 1
    const TensorArg dataArg = args.tensor(0);
    WinogradGeom g;
    g.n = dataArg.shape[0], g.cin = s.ci, g.ih = dataArg.shape[2], g.iw = dataArg.shape[3], g.co = s.co;
    TB_USER_CHECK(dataArg.shape[1] == s.ci) << args.taskName() << ": grouped kernels are not supported";
    g.pad = args.padding(3, 3, 3);
    g.h = g.ih + g.pad.top + g.pad.bottom - 2;
    g.w = g.iw + g.pad.left + g.pad.right - 2;
    g.nH = (g.h + g.m - 1) / g.m, g.nW = (g.w + g.m - 1) / g.m;
    g.p = s.p;
    g.vp = cfg.split("tile_p").size.back(), g.vk = cfg.split("tile_k").size.back();
    TB_USER_CHECK(g.p % g.vp == 0 && g.co % g.vk == 0)
        << args.taskName() << ": tiles " << g.vp << "/" << g.vk << " do not divide P = " << g.p << " / CO = " << g.co;
    return g;
}

// _decl_winograd (arm_cpu/conv2d.py, tile size 4) on inputs {data (N, CI, IH, IW), U (6, 6, CO/VK,
// CI, VK)}: the kernel is always the transformed U (a placeholder in tuning mode, the
// pre-transformed constant of alter_op_layout in a network; TVM's in-kernel transform of a 4-D
// kernel is not built). Stages d (input tiles, nn.pad inlined), B, V, M (batch gemm), A, Y, output
// (tag winograd_conv2d_output).
Tensor winogradCompute(const TaskArgs& args, const ConfigEntity& cfg, const std::vector<Tensor>& in) {
    const WinogradGeom g = winogradGeom(args, cfg);
    const Tensor &data = in.at(0), &U = in.at(1);
    TB_USER_CHECK((data.shape() == std::vector<std::int64_t>{g.n, g.cin, g.ih, g.iw}))
        << args.taskName() << ": the data tensor does not have the args' shape";
    TB_USER_CHECK((U.shape() == std::vector<std::int64_t>{g.alpha, g.alpha, g.co / g.vk, g.cin, g.vk}))
        << args.taskName() << ": the kernel is not the transformed (6, 6, CO/VK, CI, VK) for VK = " << g.vk;
    const std::int64_t m = g.m, alpha = g.alpha, vp = g.vp, vk = g.vk, nH = g.nH, nW = g.nW;
    const topi::nn::WinogradMatrices mats = topi::nn::winogradMatrices(m, 3);
    Tensor d = te::compute({g.cin, g.p / vp, alpha, alpha, vp}, {"c", "b", "eps", "nu", "bb"},
                           [&](const std::vector<Var>& v) {
                               Expr t = Expr(v[1]) * ci(vp) + Expr(v[4]);
                               return paddedRead(data, g.pad, te::floordiv(t, ci(nH * nW)), Expr(v[0]),
                                                 te::floormod(te::floordiv(t, ci(nW)), ci(nH)) * ci(m) + Expr(v[2]),
                                                 te::floormod(t, ci(nW)) * ci(m) + Expr(v[3]));
                           }, "d");
    Tensor B = topi::nn::constMatrix(mats.B, alpha, alpha, "B");
    te::IterVar re = te::reduceAxis(alpha, "r_eps"), rn = te::reduceAxis(alpha, "r_nu");
    Tensor V = te::compute({alpha, alpha, g.p / vp, g.cin, vp}, {"eps", "nu", "b", "c", "bb"},
                           [&](const std::vector<Var>& v) {
                               return te::sum(d(Expr(v[3]), Expr(v[2]), Expr(re.var), Expr(rn.var), Expr(v[4])) *
                                                  B(Expr(re.var), Expr(v[0])) * B(Expr(rn.var), Expr(v[1])),
                                              {re, rn});
                           }, "V");
    te::IterVar rc = te::reduceAxis(g.cin, "c");
    Tensor M = te::compute({alpha, alpha, g.co, g.p}, {"eps", "nu", "k", "b"}, [&](const std::vector<Var>& v) {
        return te::sum(U(Expr(v[0]), Expr(v[1]), te::floordiv(v[2], ci(vk)), Expr(rc.var), te::floormod(v[2], ci(vk))) *
                           V(Expr(v[0]), Expr(v[1]), te::floordiv(v[3], ci(vp)), Expr(rc.var), te::floormod(v[3], ci(vp))),
                       {rc});
    }, "M");
    Tensor A = topi::nn::constMatrix(mats.A, alpha, m, "A");
    te::IterVar ye = te::reduceAxis(alpha, "r_eps"), yn = te::reduceAxis(alpha, "r_nu");
    Tensor Y = te::compute({g.co, g.p, m, m}, {"k", "b", "vh", "vw"}, [&](const std::vector<Var>& v) {
        return te::sum(M(Expr(ye.var), Expr(yn.var), Expr(v[0]), Expr(v[1])) * A(Expr(ye.var), Expr(v[2])) *
                           A(Expr(yn.var), Expr(v[3])),
                       {ye, yn});
    }, "Y");
    te::ComputeOptions opts;
    opts.tag = "winograd_conv2d_output";
    return te::compute({g.n, g.co, g.h, g.w}, {"n", "k", "h", "w"}, [&](const std::vector<Var>& v) {
        return Y(Expr(v[1]),
                 Expr(v[0]) * ci(nH * nW) + te::floordiv(v[2], ci(m)) * ci(nW) + te::floordiv(v[3], ci(m)),
                 te::floormod(v[2], ci(m)), te::floormod(v[3], ci(m)));
    }, "output", opts);
}

// _schedule_winograd(cfg, s, output, last) (arm_cpu/conv2d.py): d inlined and re-read through its
// cache_read DD at V's c; V reordered (b, c, eps, nu, r_eps, r_nu, bb), the 6x6 loops unrolled, bb
// vectorized, b parallel; M tiled by tile_c / tile_p, reordered (eps, nu, xo, co, k, ci, xi),
// ann_reduce on [ci] (max unroll 16) and ann_spatial on [k, xi]; Y's 4x4 and 6x6 loops unrolled;
// the output split by tile_k, (n, co) fused and parallel, M computed there, h/w tiled by 4 with Y
// and M's cache_read MM at the w tile. The output is inlined when ops were fused after it.
void scheduleWinograd(StateBuilder& b, const ConfigEntity& cfg, const StageRefName& last) {
    const StageRefName D{"d", 0}, V{"V", 0}, M{"M", 0}, Y{"Y", 0}, O{"output", 0};
    const StageRefName DD = b.cacheRead(D, "global", {V});
    b.computeInline(D);
    b.computeInline({"B", 0});
    b.reorder(V, {"b", "c", "eps", "nu", "r_eps", "r_nu", "bb"});
    for (const char* axis : {"eps", "nu", "r_eps", "r_nu"}) b.annotate(V, axis, IteratorAnnotation::Unroll);
    b.annotate(V, "bb", IteratorAnnotation::Vectorize);
    b.annotate(V, "b", IteratorAnnotation::Parallel);
    b.computeAt(DD, V, "c");

    const auto cs = b.applySplit(M, "c", cfg.split("tile_c"));
    const auto xs = b.applySplit(M, "b", cfg.split("tile_p"));
    b.reorder(M, {"eps", "nu", xs[0], cs[0], "k", cs[1], xs[1]});
    b.applyAnnotate(M, {cs[1]}, cfg.annotate("ann_reduce"), {cfg.split("tile_c").size.back()}, 16);
    b.applyAnnotate(M, {"k", xs[1]}, cfg.annotate("ann_spatial"), {});

    b.computeInline({"A", 0});
    for (const char* axis : {"vh", "vw", "r_eps", "r_nu"}) b.annotate(Y, axis, IteratorAnnotation::Unroll);

    if (!(last.name == O.name && last.occurrence == O.occurrence)) b.computeInline(O);
    const auto l = b.iters(last);
    TB_USER_CHECK(l.size() == 4) << "conv2d_nchw_winograd.arm_cpu: a fused output of rank " << l.size();
    const auto cos = b.applySplit(last, l[1], cfg.split("tile_k"));
    const std::string p = b.fuse(last, {l[0], cos[0]});
    b.annotate(last, p, IteratorAnnotation::Parallel);
    const auto hs = b.split(last, l[2], WinogradGeom::m);
    const auto ws = b.split(last, l[3], WinogradGeom::m);
    b.reorder(last, {hs[0], ws[0], hs[1], ws[1]});
    const StageRefName MM = b.cacheRead(M, "global", {Y});
    b.computeAt(M, last, p);
    b.computeAt(Y, last, ws[0]);
    b.computeAt(MM, last, ws[0]);
}

// The direct convolution's FLOPs (cfg.add_flop(2 * N * K * H * W * KH * KW * C)).
double winogradFlop(const WinogradGeom& g) { return 2.0 * double(g.n * g.co * g.h * g.w * 9 * g.cin); }

// conv2d_nchw_winograd.arm_cpu in tuning mode: U a placeholder "U" (6, 6, CO/VK, CI, VK).
TemplateInstance conv2dNchwWinogradInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    const WinogradGeom g = winogradGeom(args, cfg);
    Tensor data = te::placeholder({g.n, g.cin, g.ih, g.iw}, "data");
    Tensor U = te::placeholder({g.alpha, g.alpha, g.co / g.vk, g.cin, g.vk}, "U");
    Tensor output = winogradCompute(args, cfg, {data, U});
    StateBuilder b(std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, U, output}));
    scheduleWinograd(b, cfg, {"output", 0});
    TemplateInstance inst = b.finish();
    inst.flop = winogradFlop(g);
    return inst;
}

State conv2dNchwWinogradFused(const TaskArgs& args, const ConfigEntity& cfg,
                              const std::shared_ptr<const te::ComputeDAG>& dag) {
    winogradGeom(args, cfg);
    return scheduleFusedGroup(dag, {"output", 0},
                              [&](StateBuilder& b, const StageRefName& last) { scheduleWinograd(b, cfg, last); });
}

// schedule_depthwise_conv2d_nchw's _schedule (arm_cpu/depthwise_conv2d.py) on C (the
// DepthwiseConv2d stage) with the group's output `last` (see depthwiseConv2dNchwInstance).
void scheduleDepthwise(StateBuilder& b, const TaskArgs& args, const ConfigEntity& cfg, const StageRefName& C,
                       const StageRefName& last) {
    const DepthwiseNchwOutput o = depthwiseNchwOutput(args);
    const SplitEntity &tc = cfg.split("tile_c"), &th = cfg.split("tile_h"), &tw = cfg.split("tile_w");
    TB_USER_CHECK(o.channels % tc.size.back() == 0) << args.taskName() << ": tile_c does not divide the channels";
    const StageRefName P{"PaddedInput", 0}, K{b.inputName(C, 1), 0};
    const bool padded = b.hasStage(P);
    const StageRefName A1 = b.cacheRead(padded ? P : StageRefName{b.inputName(C, 0), 0}, "global", {C});
    if (padded) b.computeInline(P);
    const StageRefName B1 = b.cacheRead(K, "global", {C});
    b.cacheWrite(C, "global");
    const StageRefName C0{C.name + ".global", 0};
    const auto c0 = b.iters(C0);  // b, c, i, j, di, dj
    TB_CHECK(c0.size() == 6) << "depthwise cache stage has " << c0.size() << " loops";
    const auto cs = b.applySplit(C0, c0[1], tc);
    const auto hs = b.applySplit(C0, c0[2], th);
    const auto ws = b.applySplit(C0, c0[3], tw);
    b.reorder(C0, {cs[0], hs[0], ws[0], c0[4], c0[5], hs[1], ws[1], cs[1]});
    b.computeAt(A1, C0, hs[0]);
    b.applyAnnotate(C0, {hs[1], ws[1], cs[1]}, cfg.annotate("ann"), {th.size.back(), tw.size.back(), tc.size.back()},
                    16);
    if (!(last.name == C.name && last.occurrence == C.occurrence)) b.computeInline(C);
    b.annotate(last, b.iters(last)[1], IteratorAnnotation::Parallel);
    b.annotate(C0, cs[0], IteratorAnnotation::Parallel);
    b.annotate(B1, b.iters(B1)[0], IteratorAnnotation::Parallel);
}

// depthwise_conv2d_nchw.arm_cpu (arm_cpu/depthwise_conv2d.py): topi.nn.depthwise_conv2d_nchw
// (PaddedInput, DepthwiseConv2d: b, c, i, j; reduce di, dj), scheduled by
// schedule_depthwise_conv2d_nchw's _schedule with C == last: PaddedInput inlined; its cache_read
// A1 (TVM: A0 tiled by tile_c, cache_write'n and inlined, so A1 holds the data in a c-blocked
// layout) computed at C0's oh; the kernel's cache_read B1 parallel over c; C0 = cache_write(C)
// tiled by tile_c/h/w, reordered (c, oh, ow, dh, dw, ih, iw, vc), `ann` on (ih, iw, vc) with
// max_unroll 16, parallel over its outer c; C parallel over c. Difference: TVM's cache_write
// after a split re-lays the cache out (A1, B1 and C0 blocked by tile_c with vc innermost); a
// State's cache stages keep the tensor's layout, so the blocks are loops here, not layouts. The
// values are the same.
TemplateInstance depthwiseConv2dNchwInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    const auto dag = depthwiseNchwDag(args);
    const std::string out = dag->outputs().at(0).name();
    StateBuilder b(dag);
    scheduleDepthwise(b, args, cfg, {out, 0}, {out, 0});
    return b.finish();
}

// The network kernel: relay's depthwise nn.conv2d group (topi depthwise_conv2d_nchw, the op
// registry's lowering) with the element-wise ops fused after it, which traverse_inline inlines up
// to the group's output.
State depthwiseConv2dNchwFused(const TaskArgs& args, const ConfigEntity& cfg,
                               const std::shared_ptr<const te::ComputeDAG>& dag) {
    const StageRefName C{"DepthwiseConv2d", 0};
    return scheduleFusedGroup(
        dag, C, [&](StateBuilder& b, const StageRefName& last) { scheduleDepthwise(b, args, cfg, C, last); });
}

}  // namespace

void addArmCpuTemplates(TemplateList& out) {
    addTemplate(out, "conv2d_nchw_spatial_pack.arm_cpu",
                "python/tvm/topi/arm_cpu/conv2d_spatial_pack.py: conv2d_spatial_pack_nchw (num_tile=2)",
                [](const TaskArgs& args, ConfigSpace& cfg) { defineSpatialPackNchw(args, cfg, 2); },
                conv2dNchwSpatialPackInstance, conv2dNchwSpatialPackFused, {}, spatialPackCompute);
    addTemplate(out, "conv2d_nchw_winograd.arm_cpu",
                "python/tvm/topi/arm_cpu/conv2d.py: _decl_winograd, _schedule_winograd", conv2dNchwWinograd,
                conv2dNchwWinogradInstance, conv2dNchwWinogradFused, {}, winogradCompute);
    addTemplate(out, "depthwise_conv2d_nchw.arm_cpu",
                "python/tvm/topi/arm_cpu/depthwise_conv2d.py: schedule_depthwise_conv2d_nchw", depthwiseConv2dNchw,
                depthwiseConv2dNchwInstance, depthwiseConv2dNchwFused);
}

}  // namespace tb::autotvm::detail
