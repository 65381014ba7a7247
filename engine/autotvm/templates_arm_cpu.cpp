// SPDX-License-Identifier: Apache-2.0
// ARM CPU templates (TVM v0.14 python/tvm/topi/arm_cpu/): the knobs each one declares, in order.
#include "engine/autotvm/state_builder.h"
#include "engine/autotvm/templates_common.h"
#include "engine/support/error.h"
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

void checkFloat32(const TaskArgs& args, std::size_t outDtypeArg) {
    TB_USER_CHECK(args.tensor(0).dtype == "float32" && args.tensor(1).dtype == "float32")
        << args.taskName() << ": only float32 data and kernel are supported";
    TB_USER_CHECK(args.size() <= outDtypeArg || args.isNull(outDtypeArg) || args.str(outDtypeArg) == "float32")
        << args.taskName() << ": only out_dtype float32 is supported";
}

// conv2d_nchw_spatial_pack.arm_cpu in tuning mode (arm_cpu/conv2d_spatial_pack.py
// conv2d_spatial_pack_nchw, num_tile = 2, GLOBAL_SCOPE.in_tuning): data (N, CI, IH, IW), the packed
// kernel a placeholder "kernel_autotvm" (CO/VC, CI, KH, KW, VC); stages data_vec (or
// data_vec_undilated) with nn.pad's PadInput already inlined (as the schedule inlines it), conv
// (n, co, h, w, vh, vw, vc; reduce ci, kh, kw) and output_unpack (tag spatial_conv2d_output).
// Schedule: arm_cpu/conv2d.py schedule_conv2d_nchw_spatial_pack + schedule_conv2d_spatial_pack_nchw
// with last == output.
TemplateInstance conv2dNchwSpatialPackInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    args.requireAtLeast(5);
    checkFloat32(args, 5);
    const TensorArg dataArg = args.tensor(0), kernelArg = args.tensor(1);
    TB_USER_CHECK(dataArg.shape.size() == 4) << args.taskName() << ": expects NCHW data";
    TB_USER_CHECK(kernelArg.shape.size() == 4 || kernelArg.shape.size() == 5)
        << args.taskName() << ": expects a 4-D or pre-packed 5-D kernel";
    const std::int64_t n = dataArg.shape[0], cin = dataArg.shape[1], ih = dataArg.shape[2], iw = dataArg.shape[3];
    const std::int64_t co = kernelArg.shape.size() == 4 ? kernelArg.shape[0] : kernelArg.shape[0] * kernelArg.shape[4];
    const std::int64_t kh = kernelArg.shape[2], kw = kernelArg.shape[3];
    TB_USER_CHECK(kernelArg.shape[1] == cin) << args.taskName() << ": grouped kernels are not supported";
    const auto [dh, dw] = args.intPair(4);
    const std::int64_t dkh = (kh - 1) * dh + 1, dkw = (kw - 1) * dw + 1;
    const auto pad = args.padding(3, dkh, dkw);
    const auto [hstr, wstr] = args.intPair(2);
    const std::int64_t oh = floorDiv(ih + pad.top + pad.bottom - dkh, hstr) + 1;
    const std::int64_t ow = floorDiv(iw + pad.left + pad.right - dkw, wstr) + 1;
    const std::int64_t vc = cfg.split("tile_co").size.back(), vh = cfg.split("tile_oh").size.back(),
                       vw = cfg.split("tile_ow").size.back();
    TB_USER_CHECK(co % vc == 0 && oh % vh == 0 && ow % vw == 0)
        << args.taskName() << ": tiles " << vc << "/" << vh << "/" << vw << " do not divide " << co << "/" << oh << "/"
        << ow;
    const bool dilated = dh != 1 || dw != 1;

    Tensor data = te::placeholder({n, cin, ih, iw}, "data");
    // nn.pad's PadInput as schedule_conv2d_nchw_spatial_pack leaves it: inlined into data_vec
    // (the data_vec of a strided tile reads past the padded input, which the inlined condition
    // turns into zeros).
    auto dataPad = [&](Expr b, Expr c, Expr y, Expr x) {
        Expr cond = logicalAnd(logicalAnd(y >= ci(pad.top), y < ci(ih + pad.top)),
                               logicalAnd(x >= ci(pad.left), x < ci(iw + pad.left)));
        return te::ifThenElse(cond, data(b, c, y - ci(pad.top), x - ci(pad.left)), te::makeConst(te::DType::Float32, 0.0));
    };
    Tensor dataVec;
    if (dilated) {
        dataVec = te::compute({n, oh / vh, ow / vw, cin, kh, kw, vh, vw}, {"n", "h", "w", "ci", "kh", "kw", "vh", "vw"},
                              [&](const std::vector<Var>& v) {
                                  return dataPad(Expr(v[0]), Expr(v[3]),
                                                 (Expr(v[1]) * ci(vh) + Expr(v[6])) * ci(hstr) + Expr(v[4]) * ci(dh),
                                                 (Expr(v[2]) * ci(vw) + Expr(v[7])) * ci(wstr) + Expr(v[5]) * ci(dw));
                              }, "data_vec_undilated");
    } else {
        dataVec = te::compute({n, oh / vh, ow / vw, cin, vh * hstr + kh - 1, vw * wstr + kw - 1},
                              {"n", "h", "w", "ci", "vh", "vw"}, [&](const std::vector<Var>& v) {
                                  return dataPad(Expr(v[0]), Expr(v[3]), Expr(v[1]) * ci(vh * hstr) + Expr(v[4]),
                                                 Expr(v[2]) * ci(vw * wstr) + Expr(v[5]));
                              }, "data_vec");
    }
    Tensor kernelVec = te::placeholder({co / vc, cin, kh, kw, vc}, "kernel_autotvm");
    te::IterVar rc = te::reduceAxis(cin, "ci"), rh = te::reduceAxis(kh, "kh"), rw = te::reduceAxis(kw, "kw");
    Tensor conv = te::compute({n, co / vc, oh / vh, ow / vw, vh, vw, vc}, {"n", "co", "h", "w", "vh", "vw", "vc"},
                              [&](const std::vector<Var>& v) {
                                  Expr d = dilated ? dataVec(Expr(v[0]), Expr(v[2]), Expr(v[3]), Expr(rc.var), Expr(rh.var),
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
    Tensor output = te::compute({n, co, oh, ow}, {"n", "co", "h", "w"}, [&](const std::vector<Var>& v) {
        return conv(Expr(v[0]), te::floordiv(v[1], ci(vc)), te::floordiv(v[2], ci(vh)), te::floordiv(v[3], ci(vw)),
                    te::floormod(v[2], ci(vh)), te::floormod(v[3], ci(vw)), te::floormod(v[1], ci(vc)));
    }, "output_unpack", opts);

    StateBuilder b(std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, kernelVec, output}));
    const StageRefName DV{dilated ? "data_vec_undilated" : "data_vec", 0}, C{"conv", 0}, last{"output_unpack", 0};
    // schedule_conv2d_spatial_pack_nchw
    b.applyReorder(C, {"n", "co", "h", "w", "ci", "kh", "kw", "vh", "vw", "vc"}, cfg.reorder("reorder_0"));
    b.applyAnnotate(C, {"kh", "kw"}, cfg.annotate("ann_reduce"), {kh, kw});
    b.applyAnnotate(C, {"vh", "vw", "vc"}, cfg.annotate("ann_spatial"), {vh, vw, vc});
    const auto cos = b.applySplit(last, "co", cfg.split("tile_co"));
    const auto ohs = b.applySplit(last, "h", cfg.split("tile_oh"));
    const auto ows = b.applySplit(last, "w", cfg.split("tile_ow"));
    b.reorder(last, {"n", cos[0], ohs[0], ows[0], ohs[1], ows[1], cos[1]});
    b.computeAt(C, last, ows[0]);
    b.annotate(last, cos[0], IteratorAnnotation::Parallel);
    b.annotate(DV, "h", IteratorAnnotation::Parallel);
    return b.finish();
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
    const DepthwiseNchwOutput o = depthwiseNchwOutput(args);
    const SplitEntity &tc = cfg.split("tile_c"), &th = cfg.split("tile_h"), &tw = cfg.split("tile_w");
    TB_USER_CHECK(o.channels % tc.size.back() == 0) << args.taskName() << ": tile_c does not divide the channels";

    StateBuilder b(std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, kernel, out}));
    const StageRefName P{"PaddedInput", 0}, C{out.name(), 0}, K{"kernel", 0};
    const StageRefName A1 = b.cacheRead(P, "global", {C});
    b.computeInline(P);
    const StageRefName B1 = b.cacheRead(K, "global", {C});
    b.cacheWrite(C, "global");
    const StageRefName C0{out.name() + ".global", 0};
    const auto c0 = b.iters(C0);  // b, c, i, j, di, dj
    TB_CHECK(c0.size() == 6) << "depthwise cache stage has " << c0.size() << " loops";
    const auto cs = b.applySplit(C0, c0[1], tc);
    const auto hs = b.applySplit(C0, c0[2], th);
    const auto ws = b.applySplit(C0, c0[3], tw);
    b.reorder(C0, {cs[0], hs[0], ws[0], c0[4], c0[5], hs[1], ws[1], cs[1]});
    b.computeAt(A1, C0, hs[0]);
    b.applyAnnotate(C0, {hs[1], ws[1], cs[1]}, cfg.annotate("ann"), {th.size.back(), tw.size.back(), tc.size.back()},
                    16);
    b.annotate(C, b.iters(C)[1], IteratorAnnotation::Parallel);
    b.annotate(C0, cs[0], IteratorAnnotation::Parallel);
    b.annotate(B1, b.iters(B1)[0], IteratorAnnotation::Parallel);
    return b.finish();
}

}  // namespace

void addArmCpuTemplates(TemplateList& out) {
    addTemplate(out, "conv2d_nchw_spatial_pack.arm_cpu",
                "python/tvm/topi/arm_cpu/conv2d_spatial_pack.py: conv2d_spatial_pack_nchw (num_tile=2)",
                [](const TaskArgs& args, ConfigSpace& cfg) { defineSpatialPackNchw(args, cfg, 2); },
                conv2dNchwSpatialPackInstance);
    addTemplate(out, "conv2d_nchw_winograd.arm_cpu",
                "python/tvm/topi/arm_cpu/conv2d.py: _decl_winograd, _schedule_winograd", conv2dNchwWinograd);
    addTemplate(out, "depthwise_conv2d_nchw.arm_cpu",
                "python/tvm/topi/arm_cpu/depthwise_conv2d.py: schedule_depthwise_conv2d_nchw", depthwiseConv2dNchw,
                depthwiseConv2dNchwInstance);
}

}  // namespace tb::autotvm::detail
