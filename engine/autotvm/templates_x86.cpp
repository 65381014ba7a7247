// SPDX-License-Identifier: Apache-2.0
// x86 templates (TVM v0.14 python/tvm/topi/x86/): the knobs each one declares, in order.
#include "engine/autotvm/state_builder.h"
#include "engine/autotvm/templates_common.h"
#include "engine/support/error.h"
#include "engine/te/operation.h"
#include "engine/topi/nn/conv2d.h"

namespace tb::autotvm::detail {

namespace {

using ojson = nlohmann::ordered_json;

// conv2d_NCHWc (x86/conv2d.py). The output width ignores dilation, as TVM's does.
void conv2dNCHWc(const TaskArgs& args, ConfigSpace& cfg) {
    args.requireAtLeast(4);
    const TensorArg data = args.tensor(0), kernel = args.tensor(1);
    std::int64_t inChannel = 0, numFilter = 0, ih = 0, iw = 0;
    if (data.shape.size() == 5) {
        TB_USER_CHECK(kernel.shape.size() == 6) << args.taskName() << ": NCHWc data needs a 6-D kernel";
        inChannel = data.shape[1] * data.shape[4];
        numFilter = kernel.shape[0] * kernel.shape[5];
    } else {
        TB_USER_CHECK(data.shape.size() == 4 && kernel.shape.size() == 4)
            << args.taskName() << ": expects NCHW data with an OIHW kernel, or NCHWc data";
        inChannel = data.shape[1];
        numFilter = kernel.shape[0];
    }
    ih = data.shape[2];
    iw = data.shape[3];
    const std::int64_t kh = kernel.shape[2], kw = kernel.shape[3];
    const bool kernel1x1 = kh == 1 && kw == 1;
    const auto pad = args.padding(3, kh, kw);
    const auto [sh, sw] = args.intPair(2);
    const std::int64_t oh = floorDiv(ih - kh + pad.top + pad.bottom, sh) + 1;
    const std::int64_t ow = floorDiv(iw - kw + pad.left + pad.right, sw) + 1;

    cfg.defineSplit("tile_ic", inChannel, splitOpts(2));
    cfg.defineSplit("tile_oc", numFilter, splitOpts(2));
    cfg.defineSplit("tile_ow", ow, splitOpts(2, innermostAtMost(64), std::int64_t(1) << 31, "verbose"));
    if (kernel1x1) cfg.defineKnob("tile_oh", oh > 1 ? std::vector<ojson>{1, 2} : std::vector<ojson>{1});
    else cfg.defineKnob("unroll_kw", {true, false});
}

// depthwise_conv2d_NCHWc (x86/depthwise_conv2d.py).
void depthwiseConv2dNCHWc(const TaskArgs& args, ConfigSpace& cfg) {
    args.requireAtLeast(5);
    const TensorArg data = args.tensor(0), kernel = args.tensor(1);
    std::int64_t inChannel = 0, outChannel = 0, multiplier = 0;
    if (data.shape.size() == 5) {
        TB_USER_CHECK(kernel.shape.size() == 6) << args.taskName() << ": NCHWc data needs a 6-D kernel";
        inChannel = data.shape[1] * data.shape[4];
        outChannel = kernel.shape[0] * kernel.shape[5];
        multiplier = kernel.shape[1] * kernel.shape[4];
    } else {
        TB_USER_CHECK(data.shape.size() == 4 && kernel.shape.size() == 4)
            << args.taskName() << ": expects NCHW data with a 4-D kernel, or NCHWc data";
        inChannel = data.shape[1];
        outChannel = kernel.shape[0];
        multiplier = kernel.shape[1];
    }
    TB_USER_CHECK(multiplier == 1) << args.taskName() << ": channel multiplier " << multiplier << " (TVM asserts 1)";
    const std::int64_t sw = args.intPair(2).second;
    const auto [dh, dw] = args.intPair(4);
    const std::int64_t dkh = (kernel.shape[2] - 1) * dh + 1, dkw = (kernel.shape[3] - 1) * dw + 1;
    const auto pad = args.padding(3, dkh, dkw);
    const std::int64_t outWidth = floorDiv(data.shape[3] + pad.left + pad.right - dkw, sw) + 1;

    cfg.defineSplit("tile_ic", inChannel, splitOpts(2));
    cfg.defineSplit("tile_oc", outChannel, splitOpts(2));
    cfg.defineSplit("tile_ow", outWidth, splitOpts(2, innermostAtMost(64)));
    cfg.defineKnob("unroll_kw", {true, false});
}

// dense_nopack (x86/dense.py).
void denseNopack(const TaskArgs& args, ConfigSpace& cfg) {
    const DenseShape s = denseShape(args, false);
    cfg.defineSplit("tile_y", s.m, splitOpts(2));
    cfg.defineSplit("tile_x", s.n, splitOpts(2));
    cfg.defineSplit("tile_k", s.k, splitOpts(2));
}

// dense_pack (x86/dense.py); the weight may come pre-packed (N/bn, K, bn).
void densePack(const TaskArgs& args, ConfigSpace& cfg) {
    const DenseShape s = denseShape(args, true);
    cfg.defineSplit("tile_y", s.m, splitOpts(3));
    cfg.defineSplit("tile_x", s.n, splitOpts(3));
    cfg.defineSplit("tile_k", s.k, splitOpts(2));
    cfg.defineSplit("tile_inner", s.m, splitOpts(2, innermostAtMost(16)));
}

// ---- instantiation (compute + schedule of one config) ----------------------------------------

using te::Expr;
using te::Tensor;
using te::Var;

// Bias and out_dtype of the dense templates: bias must be null (see template.h), out_dtype null or
// float32 like the data.
void checkDenseArgs(const TaskArgs& args) {
    TB_USER_CHECK(args.size() < 3 || args.isNull(2))
        << args.taskName() << ": a dense task with a bias is not instantiable yet (bias must be null)";
    TB_USER_CHECK(args.tensor(0).dtype == "float32" && args.tensor(1).dtype == "float32")
        << args.taskName() << ": only float32 data and weight are supported";
    TB_USER_CHECK(args.size() < 4 || args.isNull(3) || args.str(3) == "float32")
        << args.taskName() << ": only out_dtype float32 is supported";
}

// dense_nopack: CC(z, y, x) = sum_k data[z, k*vec + x] * weight[y, k*vec + x] over k < K/vec,
// C(y, x) = sum_kk CC[y, x, kk] (tag dense_nopack), vec = tile_k's inner factor; both stages keep
// te.compute's default name "compute".
Tensor denseNopackCompute(const TaskArgs& args, const ConfigEntity& cfg, const std::vector<Tensor>& in) {
    checkDenseArgs(args);
    const DenseShape s = denseShape(args, false);
    const std::int64_t vec = cfg.split("tile_k").size.back();
    TB_USER_CHECK(vec >= 1 && s.k % vec == 0) << args.taskName() << ": tile_k inner factor " << vec
                                              << " does not divide K = " << s.k;
    const Tensor &data = in.at(0), &weight = in.at(1);
    te::IterVar k = te::reduceAxis(s.k / vec, "k");
    Tensor cc = te::compute({s.m, s.n, vec}, {"z", "y", "x"}, [&](const std::vector<Var>& v) {
        Expr idx = Expr(k.var) * Expr(int(vec)) + Expr(v[2]);
        return te::sum(data(Expr(v[0]), idx) * weight(Expr(v[1]), idx), {k});
    }, "compute");
    te::IterVar kk = te::reduceAxis(vec, "kk");
    te::ComputeOptions opts;
    opts.tag = "dense_nopack";
    return te::compute({s.m, s.n}, {"y", "x"}, [&](const std::vector<Var>& v) {
        return te::sum(cc(Expr(v[0]), Expr(v[1]), Expr(kk.var)), {kk});
    }, "compute", opts);
}

// _schedule_dense_nopack_template on C = the second "compute" stage: tile y and x, fuse the outer
// tiles into the parallel loop, unroll kk; CC: fuse (z, y), reduce loop outermost, unroll the
// fused loop, vectorize x, at C's tile. (A fused group's output stays a plain root stage: TVM's
// schedule_dense_nopack leaves it unscheduled.)
void scheduleDenseNopack(StateBuilder& b, const ConfigEntity& cfg) {
    const StageRefName C{"compute", 1}, CC{"compute", 0};
    const auto ys = b.applySplit(C, "y", cfg.split("tile_y"));
    const auto xs = b.applySplit(C, "x", cfg.split("tile_x"));
    b.reorder(C, {ys[0], xs[0], ys[1], xs[1]});
    const std::string xyo = b.fuse(C, {ys[0], xs[0]});
    b.annotate(C, xyo, IteratorAnnotation::Parallel);
    b.annotate(C, "kk", IteratorAnnotation::Unroll);
    const std::string yz = b.fuse(CC, {"z", "y"});
    b.reorder(CC, {"k", yz, "x"});
    b.annotate(CC, yz, IteratorAnnotation::Unroll);
    b.annotate(CC, "x", IteratorAnnotation::Vectorize);
    b.computeAt(CC, C, xyo);
}

TemplateInstance denseNopackInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    const DenseShape s = denseShape(args, false);
    Tensor data = te::placeholder({s.m, s.k}, "data"), weight = te::placeholder({s.n, s.k}, "weight");
    Tensor c = denseNopackCompute(args, cfg, {data, weight});
    StateBuilder b(std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, weight, c}));
    scheduleDenseNopack(b, cfg);
    return b.finish();
}

// dense_pack: C(y, x) = sum_k data[y, k] * packed_weight[x / bn, k, x % bn] (tag dense_pack, name
// "compute"), bn = tile_x's inner factor. A 3-D weight is the packed weight itself; a 2-D one is
// packed by the stage "packed_weight" (z, y, x) -> weight[z * bn + x, y] (TVM outside tuning mode;
// in tuning mode the packed weight is a placeholder, densePackInstance).
Tensor densePackCompute(const TaskArgs& args, const ConfigEntity& cfg, const std::vector<Tensor>& in) {
    checkDenseArgs(args);
    const DenseShape s = denseShape(args, true);
    const Tensor& data = in.at(0);
    Tensor packw = in.at(1);
    const std::int64_t bn = packw.shape().size() == 3 ? packw.shape()[2] : cfg.split("tile_x").size.back();
    TB_USER_CHECK(bn >= 1 && s.n % bn == 0) << args.taskName() << ": packing factor " << bn
                                            << " does not divide N = " << s.n;
    if (packw.shape().size() == 2) {
        const Tensor weight = packw;
        packw = te::compute({s.n / bn, s.k, bn}, {"z", "y", "x"}, [&](const std::vector<Var>& v) {
            return weight(Expr(v[0]) * Expr(int(bn)) + Expr(v[2]), Expr(v[1]));
        }, "packed_weight");
    }
    te::IterVar k = te::reduceAxis(s.k, "k");
    te::ComputeOptions opts;
    opts.tag = "dense_pack";
    return te::compute({s.m, s.n}, {"y", "x"}, [&](const std::vector<Var>& v) {
        return te::sum(data(Expr(v[0]), Expr(k.var)) *
                           packw(te::floordiv(v[1], Expr(int(bn))), Expr(k.var), te::floormod(v[1], Expr(int(bn)))),
                       {k});
    }, "compute", opts);
}

// _schedule_dense_pack_template(cfg, s, C, O).
void scheduleDensePack(StateBuilder& b, const ConfigEntity& cfg, const StageRefName& O) {
    const StageRefName C{"compute", 0}, CC{"compute.global", 0};
    const bool fused = !(O.name == C.name && O.occurrence == C.occurrence);
    b.cacheWrite(C, "global");
    const auto ys = b.applySplit(C, "y", cfg.split("tile_y"));
    const auto xs = b.applySplit(C, "x", cfg.split("tile_x"));
    b.reorder(C, {xs[0], ys[0], ys[1], xs[1], ys[2], xs[2]});
    const std::string xyt = b.fuse(C, {xs[0], ys[0]});
    if (!fused) b.annotate(C, xyt, IteratorAnnotation::Parallel);
    const std::string xyo = b.fuse(C, {ys[1], xs[1]});
    b.annotate(C, ys[2], IteratorAnnotation::Unroll);
    b.annotate(C, xs[2], IteratorAnnotation::Vectorize);

    const auto ccIters = b.iters(CC);  // y_c, x_c, k
    TB_CHECK(ccIters.size() == 3) << "dense_pack cache stage has " << ccIters.size() << " loops";
    const std::string yc = ccIters[0], xc = ccIters[1];
    const auto ks = b.applySplit(CC, ccIters[2], cfg.split("tile_k"));
    b.reorder(CC, {ks[0], ks[1], yc, xc});
    b.annotate(CC, xc, IteratorAnnotation::Vectorize);
    const std::int64_t tileInner = cfg.split("tile_inner").size.back();
    if (tileInner > 1) {
        const auto yy = b.split(CC, yc, tileInner);
        b.reorder(CC, {ks[0], yy[0], ks[1], yy[1], xc});
        b.annotate(CC, yy[0], IteratorAnnotation::Unroll);
        b.annotate(CC, ks[1], IteratorAnnotation::Unroll);
        b.annotate(CC, yy[1], IteratorAnnotation::Unroll);
    } else {
        b.annotate(CC, ks[1], IteratorAnnotation::Unroll);
        b.annotate(CC, yc, IteratorAnnotation::Unroll);
    }
    if (fused) {
        const auto o = b.iters(O);
        TB_USER_CHECK(o.size() == 2) << "dense_pack.x86: a fused output of rank " << o.size();
        const auto oy = b.applySplit(O, o[0], cfg.split("tile_y"));
        const auto ox = b.applySplit(O, o[1], cfg.split("tile_x"));
        b.reorder(O, {ox[0], oy[0], oy[1], ox[1], oy[2], ox[2]});
        const std::string oxyt = b.fuse(O, {ox[0], oy[0]});
        b.computeAt(C, O, oxyt);
        b.annotate(O, ox[2], IteratorAnnotation::Vectorize);
        b.annotate(O, oxyt, IteratorAnnotation::Parallel);
    }
    b.computeAt(CC, C, xyo);
}

// dense_pack in tuning mode (GLOBAL_SCOPE.in_tuning): the packed weight is a placeholder
// "packed_weight" (N/bn, K, bn); a 3-D weight arg is the packed weight itself. Schedule with C == O.
TemplateInstance densePackInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    checkDenseArgs(args);
    const DenseShape s = denseShape(args, true);
    const TensorArg w = args.tensor(1);
    const std::int64_t bn = w.shape.size() == 3 ? w.shape[2] : cfg.split("tile_x").size.back();
    TB_USER_CHECK(bn >= 1 && s.n % bn == 0) << args.taskName() << ": packing factor " << bn
                                            << " does not divide N = " << s.n;
    Tensor data = te::placeholder({s.m, s.k}, "data");
    Tensor packw = te::placeholder({s.n / bn, s.k, bn}, "packed_weight");
    Tensor c = densePackCompute(args, cfg, {data, packw});
    StateBuilder b(std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, packw, c}));
    scheduleDensePack(b, cfg, {"compute", 0});
    return b.finish();
}

// Network kernels (schedule_dense_nopack / schedule_dense_pack): traverse_inline inlines the ops
// between the template's output and the group's output, then the template's schedule.

State denseNopackFused(const TaskArgs&, const ConfigEntity& cfg, const std::shared_ptr<const te::ComputeDAG>& dag) {
    StateBuilder b(dag);
    b.inlineFusedAfter({"compute", 1});
    scheduleDenseNopack(b, cfg);
    return b.finish().state;
}

State densePackFused(const TaskArgs&, const ConfigEntity& cfg, const std::shared_ptr<const te::ComputeDAG>& dag) {
    StateBuilder b(dag);
    const StageRefName C{"compute", 0};
    const auto after = b.inlineFusedAfter(C);
    scheduleDensePack(b, cfg, after.empty() ? C : after.back());
    return b.finish().state;
}

// The largest divisor of n that is <= from (TVM's `for bn in range(from, 0, -1): if n % bn == 0`).
std::int64_t largestDivisorAtMost(std::int64_t n, std::int64_t from) {
    for (std::int64_t bn = from; bn > 0; --bn)
        if (n % bn == 0) return bn;
    return 1;
}

// _default_dense_pack_config(cfg, M, N, K) (float32, static shapes).
void densePackFallback(const TaskArgs& args, int simdLanes, ConfigEntity& cfg) {
    const DenseShape s = denseShape(args, true);
    const std::int64_t tilexIi = largestDivisorAtMost(s.n, 2 * simdLanes);
    const std::int64_t nn = s.n / tilexIi;
    std::int64_t tilexOi = 1;
    while (nn / tilexOi > 4 && (nn / tilexOi) % 2 == 0) tilexOi *= 2;
    std::int64_t tileyIi = 8;
    while (s.m % tileyIi != 0) tileyIi /= 2;
    const std::int64_t mm = s.m / tileyIi;
    std::int64_t tileyOi = 1;
    while (mm / tileyOi > 4 && (mm / tileyOi) % 2 == 0) tileyOi *= 2;
    setKnob(cfg, "tile_y", SplitEntity{{mm / tileyOi, tileyOi, tileyIi}});
    setKnob(cfg, "tile_x", SplitEntity{{nn / tilexOi, tilexOi, tilexIi}});
    setKnob(cfg, "tile_k", SplitEntity{{s.k, 1}});
    setKnob(cfg, "tile_inner", SplitEntity{{s.m / tileyIi, tileyIi}});
}

// _default_dense_nopack_config(cfg, M, N, K).
void denseNopackFallback(const TaskArgs& args, int simdLanes, ConfigEntity& cfg) {
    const DenseShape s = denseShape(args, false);
    const std::int64_t tilekBn = largestDivisorAtMost(s.k, 2 * simdLanes);
    setKnob(cfg, "tile_k", SplitEntity{{s.k / tilekBn, tilekBn}});
    setKnob(cfg, "tile_x", SplitEntity{{s.n, 1}});
    setKnob(cfg, "tile_y", SplitEntity{{1, s.m}});
}

// The blocked shapes of a conv2d_NCHWc task: 5-D data / 6-D kernel args are taken as they are;
// NCHW / OIHW args are blocked by tile_ic / tile_oc's inner factors (ic_bn, oc_bn).
struct NCHWcShapes {
    std::vector<std::int64_t> data, kernel;
};

NCHWcShapes conv2dNCHWcShapes(const TaskArgs& args, const ConfigEntity& cfg) {
    args.requireAtLeast(5);
    const TensorArg dataArg = args.tensor(0), kernelArg = args.tensor(1);
    TB_USER_CHECK(dataArg.dtype == "float32" && kernelArg.dtype == "float32")
        << args.taskName() << ": only float32 data and kernel are supported";
    TB_USER_CHECK(args.size() < 8 || args.isNull(7) || args.str(7) == "float32")
        << args.taskName() << ": only out_dtype float32 is supported";
    if (dataArg.shape.size() == 5) {
        TB_USER_CHECK(kernelArg.shape.size() == 6) << args.taskName() << ": NCHWc data needs a 6-D kernel";
        return {dataArg.shape, kernelArg.shape};
    }
    TB_USER_CHECK(dataArg.shape.size() == 4 && kernelArg.shape.size() == 4)
        << args.taskName() << ": expects NCHW data with an OIHW kernel, or NCHWc data";
    const std::int64_t icBn = cfg.split("tile_ic").size.back(), ocBn = cfg.split("tile_oc").size.back();
    const std::int64_t inChannel = dataArg.shape[1], numFilter = kernelArg.shape[0];
    TB_USER_CHECK(kernelArg.shape[1] == inChannel) << args.taskName() << ": grouped kernels are not supported";
    TB_USER_CHECK(inChannel % icBn == 0 && numFilter % ocBn == 0)
        << args.taskName() << ": channel blocks " << icBn << "/" << ocBn << " do not divide " << inChannel << "/"
        << numFilter;
    return {{dataArg.shape[0], inChannel / icBn, dataArg.shape[2], dataArg.shape[3], icBn},
            {numFilter / ocBn, inChannel / icBn, kernelArg.shape[2], kernelArg.shape[3], icBn, ocBn}};
}

// conv2d_avx_common._schedule_conv_NCHWc / conv2d_avx_1x1._schedule_conv_NCHWc on the stages
// data_pad (if present), C = conv2d_NCHWc and O = `last` (== C for the template alone). Ops
// between C and O were inlined by the caller (traverse_inline).
void scheduleConv2dNCHWc(StateBuilder& b, const ConfigEntity& cfg, const NCHWcShapes& shapes, const StageRefName& O) {
    const std::int64_t kh = shapes.kernel[2], kw = shapes.kernel[3], icBn = shapes.data[4], ocBn = shapes.kernel[5];
    const StageRefName C{"conv2d_NCHWc", 0}, CC{"conv2d_NCHWc.global", 0}, P{"data_pad", 0};
    const bool fused = !(O.name == C.name && O.occurrence == 0);
    if (b.hasStage(P)) {
        b.annotate(P, "i4", IteratorAnnotation::Vectorize);
        const std::string pp = b.fuse(P, {"i0", "i1", "i2"});
        b.annotate(P, pp, IteratorAnnotation::Parallel);
    }
    b.cacheWrite(C, "global");
    const std::int64_t regN = cfg.split("tile_ow").size.back();
    const auto cc = b.iters(CC);  // n_c, oc_chunk_c, oh_c, ow_c, oc_block_c, ic, kh, kw
    TB_CHECK(cc.size() == 8) << "conv2d_NCHWc cache stage has " << cc.size() << " loops";
    const bool is1x1 = kh == 1 && kw == 1;
    const std::int64_t ohFactor = is1x1 ? cfg.knobValue("tile_oh").get<std::int64_t>() : 1;
    std::string cAnchor;  // the loop of C that CC is computed at
    if (is1x1) {
        const auto ohs = b.split(C, "oh", ohFactor);
        const auto ows = b.split(C, "ow", regN);
        b.reorder(C, {"oc_chunk", ohs[0], ows[0], ohs[1], ows[1], "oc_block"});
        b.annotate(C, "oc_block", IteratorAnnotation::Vectorize);
        cAnchor = b.fuse(C, {"n", "oc_chunk", ohs[0]});
        if (!fused) b.annotate(C, cAnchor, IteratorAnnotation::Parallel);

        const auto ics = b.split(CC, cc[5], icBn);
        const auto ohc = b.split(CC, cc[2], ohFactor);
        const auto owc = b.split(CC, cc[3], regN);
        b.reorder(CC, {cc[1], ohc[0], owc[0], ics[0], ics[1], ohc[1], owc[1], cc[4]});
        b.fuse(CC, {cc[1], ohc[0]});
        b.annotate(CC, cc[4], IteratorAnnotation::Vectorize);
        b.annotate(CC, owc[1], IteratorAnnotation::Unroll);
        b.annotate(CC, ohc[1], IteratorAnnotation::Unroll);
    } else {
        const bool unrollKw = cfg.knobValue("unroll_kw").get<bool>();
        const auto ows = b.split(C, "ow", regN);
        b.reorder(C, {"oc_chunk", "oh", ows[0], ows[1], "oc_block"});
        const std::string par = b.fuse(C, {"n", "oc_chunk", "oh"});
        b.annotate(C, "oc_block", IteratorAnnotation::Vectorize);
        if (!fused) b.annotate(C, par, IteratorAnnotation::Parallel);
        cAnchor = ows[0];

        const auto owc = b.split(CC, cc[3], regN);
        const auto ics = b.split(CC, cc[5], icBn);
        if (unrollKw) {
            b.reorder(CC, {cc[1], cc[2], owc[0], ics[0], cc[6], ics[1], cc[7], owc[1], cc[4]});
            b.annotate(CC, cc[7], IteratorAnnotation::Unroll);
        } else {
            b.reorder(CC, {cc[1], cc[2], owc[0], ics[0], cc[6], cc[7], ics[1], owc[1], cc[4]});
        }
        b.annotate(CC, cc[4], IteratorAnnotation::Vectorize);
        b.annotate(CC, owc[1], IteratorAnnotation::Unroll);
    }
    if (fused) {
        // C != O: O tiled like C (5-D) or split back into channel blocks (4-D), C at O's
        // parallel loop. The 1x1 schedule tiles oh by tile_oh too; the common one does not.
        const auto o = b.iters(O);
        std::vector<std::string> split;  // {oc_chunk, oh outer, ow outer, oh inner, ow inner, oc_block}
        std::string batch;
        if (o.size() == 5 || o.size() == 4) {
            batch = o[0];
            std::vector<std::string> oc;
            if (o.size() == 5) oc = {o[1], o[4]};
            else oc = b.split(O, o[1], ocBn);
            const auto ohs = is1x1 ? b.split(O, o[2], ohFactor) : std::vector<std::string>{o[2]};
            const auto ows = b.split(O, o[3], regN);
            if (is1x1) b.reorder(O, {oc[0], ohs[0], ows[0], ohs[1], ows[1], oc[1]});
            else b.reorder(O, {oc[0], ohs[0], ows[0], ows[1], oc[1]});
            const std::string par = b.fuse(O, {batch, oc[0], ohs[0]});
            b.computeAt(C, O, par);
            b.annotate(O, oc[1], IteratorAnnotation::Vectorize);
            b.annotate(O, par, IteratorAnnotation::Parallel);
        } else {
            throw UserError("conv2d_NCHWc.x86: unsupported output ndim " + std::to_string(o.size()));
        }
    }
    b.computeAt(CC, C, cAnchor);
}

// conv2d_NCHWc in tuning mode (GLOBAL_SCOPE.in_tuning): data and kernel are the blocked
// placeholders "data" (N, C/ic_bn, H, W, ic_bn) and "kernel" (K/oc_bn, C/ic_bn, KH, KW, ic_bn,
// oc_bn) (conv2dNCHWcShapes), then topi.nn.conv2d_NCHWc (stages data_pad when padded,
// conv2d_NCHWc). Schedule: scheduleConv2dNCHWc with C == O.
TemplateInstance conv2dNCHWcInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    const NCHWcShapes shapes = conv2dNCHWcShapes(args, cfg);
    const auto pad = args.padding(3, shapes.kernel[2], shapes.kernel[3]);
    const auto [sh, sw] = args.intPair(2);
    const auto [dh, dw] = args.intPair(4);
    Tensor data = te::placeholder(shapes.data, "data"), kernel = te::placeholder(shapes.kernel, "kernel");
    Tensor conv = topi::nn::conv2dNCHWc(data, kernel, {sh, sw}, {pad.top, pad.left, pad.bottom, pad.right}, {dh, dw});
    StateBuilder b(std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, kernel, conv}));
    scheduleConv2dNCHWc(b, cfg, shapes, {"conv2d_NCHWc", 0});
    return b.finish();
}

// The network kernel: relay's nn.contrib_conv2d_NCHWc group (topi conv2d_NCHWc, then the fused
// element-wise ops), scheduled by schedule_conv2d_NCHWc: traverse_inline inlines the ops between
// C and the output, then _schedule_conv_NCHWc(C, last).
State conv2dNCHWcFused(const TaskArgs& args, const ConfigEntity& cfg, const std::shared_ptr<const te::ComputeDAG>& dag) {
    const NCHWcShapes shapes = conv2dNCHWcShapes(args, cfg);
    StateBuilder b(dag);
    const StageRefName C{"conv2d_NCHWc", 0};
    const auto after = b.inlineFusedAfter(C);
    scheduleConv2dNCHWc(b, cfg, shapes, after.empty() ? C : after.back());
    return b.finish().state;
}

// x86/conv2d.py _get_default_config: conv2d_avx_1x1._fallback_schedule for a 1x1 kernel,
// conv2d_avx_common._fallback_schedule otherwise (float32).
void conv2dNCHWcFallback(const TaskArgs& args, int simdLanes, ConfigEntity& cfg) {
    const TensorArg data = args.tensor(0), kernel = args.tensor(1);
    TB_USER_CHECK(data.shape.size() == 4 && kernel.shape.size() == 4)
        << args.taskName() << ": the fallback config needs NCHW data and an OIHW kernel";
    const std::int64_t inFilter = data.shape[1], outFilter = kernel.shape[0];
    const std::int64_t kh = kernel.shape[2], kw = kernel.shape[3];
    const auto pad = args.padding(3, kh, kw);
    const auto [sh, sw] = args.intPair(2);
    const auto [dh, dw] = args.intPair(4);
    const std::int64_t outHeight = floorDiv(data.shape[2] + pad.top + pad.bottom - ((kh - 1) * dh + 1), sh) + 1;
    const std::int64_t outWidth = floorDiv(data.shape[3] + pad.left + pad.right - ((kw - 1) * dw + 1), sw) + 1;
    const std::int64_t ocBn = largestDivisorAtMost(outFilter, simdLanes);
    const std::int64_t icBn = largestDivisorAtMost(inFilter, ocBn);
    setKnob(cfg, "tile_ic", SplitEntity{{inFilter / icBn, icBn}});
    setKnob(cfg, "tile_oc", SplitEntity{{outFilter / ocBn, ocBn}});
    if (kh == 1 && kw == 1) {
        for (std::int64_t owFactor = outWidth; owFactor > 0; --owFactor) {
            if (outWidth % owFactor) continue;
            for (std::int64_t ohFactor = outHeight; ohFactor > 0; --ohFactor) {
                if (outHeight % ohFactor == 0 && owFactor * ohFactor < 32) {
                    setKnob(cfg, "tile_oh", OtherOptionEntity{ohFactor});
                    setKnob(cfg, "tile_ow", SplitEntity{{outWidth / owFactor, owFactor}});
                    return;
                }
            }
        }
        throw UserError(args.taskName() + ": cannot decide default schedule for workload");
    }
    const std::int64_t regN = largestDivisorAtMost(outWidth, 31);
    setKnob(cfg, "tile_ow", SplitEntity{{outWidth / regN, regN}});
    setKnob(cfg, "unroll_kw", OtherOptionEntity{false});
}

}  // namespace

void addX86Templates(TemplateList& out) {
    addTemplate(out, "conv2d_NCHWc.x86", "python/tvm/topi/x86/conv2d.py: conv2d_NCHWc", conv2dNCHWc,
                conv2dNCHWcInstance, conv2dNCHWcFused, conv2dNCHWcFallback);
    addTemplate(out, "depthwise_conv2d_NCHWc.x86",
                "python/tvm/topi/x86/depthwise_conv2d.py: depthwise_conv2d_NCHWc", depthwiseConv2dNCHWc);
    addTemplate(out, "dense_nopack.x86", "python/tvm/topi/x86/dense.py: dense_nopack", denseNopack,
                denseNopackInstance, denseNopackFused, denseNopackFallback, denseNopackCompute);
    addTemplate(out, "dense_pack.x86", "python/tvm/topi/x86/dense.py: dense_pack", densePack,
                densePackInstance, densePackFused, densePackFallback, densePackCompute);
}

}  // namespace tb::autotvm::detail
