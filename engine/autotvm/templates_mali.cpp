// SPDX-License-Identifier: Apache-2.0
// Mali GPU templates (TVM v0.14 python/tvm/topi/mali/): the knobs each one declares, in order, and
// the compute + schedule of one config, built as a State whose loops are bound to blockIdx /
// threadIdx z, y, x (lowered by lower/lower_gpu.h into OpenCL C kernels).
//
// Differences from TVM's te schedules, all of loop order only (the values, the tiles and the launch
// extents are TVM's): a te schedule may leave a serial loop between thread-bound loops (dense.mali
// binds by, ty, [yi], bx, tx; depthwise binds bz, tz, [ci], by, ty, [hi], bx, tx), which TVM's
// lowering runs inside each thread; here those serial loops are moved inside the bound ones, as
// lower_gpu.h requires bound loops outermost. The winograd output's `0 * M[...]` term (a TVM hack so
// that bound inference keeps M's padded tiles) is not needed: M is a root stage here, computed whole.
// Fallback configs (no record): conv2d_nchw_winograd.mali has TVM's explicit `cfg.is_fallback`
// defaults; spatial_pack, dense and depthwise take TVM's from `fallback_with_reference_log` on the
// tophub rk3399 log, which is not loaded here, so they get the space's first config (every knob at
// its first candidate: correct, one thread per work-group, slow).
#include <algorithm>

#include "engine/autotvm/state_builder.h"
#include "engine/autotvm/templates_common.h"
#include "engine/support/error.h"
#include "engine/topi/nn/dense.h"
#include "engine/topi/nn/winograd.h"

namespace tb::autotvm::detail {

namespace {

using ojson = nlohmann::ordered_json;
using te::Expr;
using te::Tensor;
using te::Var;

Expr ci(std::int64_t v) { return Expr(int(v)); }

// TVM Target("opencl -device=mali").max_num_threads (kernel_vec's thread split).
constexpr std::int64_t kMaliMaxThreads = 256;
// The vector widths TVM's Mali schedules accept (`vec_size = [1, 2, 4, 8, 16]`).
const std::vector<std::int64_t> kVecSizes{1, 2, 4, 8, 16};

bool sameStage(const StageRefName& a, const StageRefName& b) { return a.name == b.name && a.occurrence == b.occurrence; }

// mali/conv2d.py `_pick_tile_size`: 4 when the input height is a multiple of 4, else 2.
std::int64_t maliWinogradTileSize(const TaskArgs& args) {
    const TensorArg data = args.tensor(0);
    return data.shape.size() == 4 && data.shape[2] % 4 == 0 ? 4 : 2;
}

// conv2d_nchw_winograd (mali/conv2d.py `_decl_winograd`); the output tile size is 4 when the
// input height is a multiple of 4, else 2 (`_pick_tile_size`).
void conv2dNchwWinograd(const TaskArgs& args, ConfigSpace& cfg) {
    const WinogradNchwShape s = winogradNchwShape(args, maliWinogradTileSize(args));
    const auto coFactors = getFactors(s.co);
    std::vector<ojson> bna;
    for (std::int64_t c : {1, 2, 4, 8, 16})
        if (std::find(coFactors.begin(), coFactors.end(), c) != coFactors.end()) bna.emplace_back(c);
    cfg.defineKnob("tile_bna", bna);
    cfg.defineKnob("tile_bnb", {1, 2, 4, 8, 16});
    cfg.defineSplit("tile_t1", s.ci, splitOpts(2, {}, 128));
    cfg.defineSplit("tile_t2", s.co, splitOpts(2, {}, 128));
    cfg.defineSplit("c_unroll", s.ci, splitOpts(2, {}, 8));
    cfg.defineKnob("yt", {1, 2, 4, 8, 16, 32});
}

// depthwise_conv2d_nchw (mali/depthwise_conv2d.py `_schedule`, NCHW).
void depthwiseConv2dNchw(const TaskArgs& args, ConfigSpace& cfg) {
    const DepthwiseNchwOutput o = depthwiseNchwOutput(args);
    cfg.defineSplit("tile_c", o.channels, splitOpts(3));
    cfg.defineSplit("tile_y", o.height, splitOpts(3));
    cfg.defineSplit("tile_x", o.width, splitOpts(3));
    cfg.defineAnnotate("ann_spatial", 3, "try_unroll_vec");
}

// dense (mali/dense.py `schedule_dense`): the output (M, N) and the reduction K.
void dense(const TaskArgs& args, ConfigSpace& cfg) {
    const DenseShape s = denseShape(args, false);
    cfg.defineSplit("tile_y", s.m, splitOpts(3));
    cfg.defineSplit("tile_x", s.n, splitOpts(3));
    cfg.defineSplit("c_unroll", s.k, splitOpts(2, {}, 64));
}

// ---- shared schedule pieces (mali/conv2d.py) ---------------------------------------------------

// `tile_and_bind3d(s, tensor, z, y, x, z_factor, y_factor, x_factor)`: split each axis by its
// factor, bind (zo, yo, xo) to blockIdx.z/y/x and (zi, yi, xi) to threadIdx.z/y/x, reorder
// (zo, yo, xo, zi, yi, xi). Returns those six loops.
std::vector<std::string> tileAndBind3d(StateBuilder& b, const StageRefName& s, const std::string& z,
                                       const std::string& y, const std::string& x, std::int64_t zf, std::int64_t yf,
                                       std::int64_t xf) {
    const auto zs = b.split(s, z, zf);
    const auto ys = b.split(s, y, yf);
    const auto xs = b.split(s, x, xf);
    b.reorder(s, {zs[0], ys[0], xs[0], zs[1], ys[1], xs[1]});
    b.annotate(s, zs[0], IteratorAnnotation::BlockZ);
    b.annotate(s, zs[1], IteratorAnnotation::ThreadZ);
    b.annotate(s, ys[0], IteratorAnnotation::BlockY);
    b.annotate(s, ys[1], IteratorAnnotation::ThreadY);
    b.annotate(s, xs[0], IteratorAnnotation::BlockX);
    b.annotate(s, xs[1], IteratorAnnotation::ThreadX);
    return {zs[0], ys[0], xs[0], zs[1], ys[1], xs[1]};
}

// ---- conv2d_nchw_spatial_pack.mali -------------------------------------------------------------

// mali/conv2d.py `_schedule_spatial_pack` (layout NCHW) with the group's output `last`: data_vec
// bound 3-D (h, w, ci; factors 1) with its vh / vw unrolled when shorter than 16; kernel_vec (only
// when the kernel is 4-D, outside tuning) fused, split by VC (vectorized if VC is a vector width)
// and by 256 threads; conv: ann_reduce on (kh, kw), reorder_0, tile_and_bind3d(c, h, w, TC, TH,
// TW), ann_spatial on (vh, vw, vc) with max_unroll 16 and the vector widths; the output (the group's
// last op, output_unpack inlined when ops were fused after it) tile_and_bind3d(co, oh, ow, TC, TH,
// TW). Every stage is its own kernel.
void scheduleSpatialPackMali(StateBuilder& b, const ConfigEntity& cfg, const SpatialPackGeom& g,
                             const StageRefName& last) {
    const StageRefName DV{g.dilated ? "data_vec_undilated" : "data_vec", 0}, C{"conv", 0}, O{"output_unpack", 0};
    const std::int64_t maxUnroll = 16;
    const auto& tco = cfg.split("tile_co").size;
    const auto& toh = cfg.split("tile_oh").size;
    const auto& tow = cfg.split("tile_ow").size;
    TB_USER_CHECK(tco.size() == 3 && toh.size() == 3 && tow.size() == 3)
        << "conv2d_nchw_spatial_pack.mali: tile_co / tile_oh / tile_ow must split into 3 parts";
    const std::int64_t TC = tco[1], TH = toh[1], TW = tow[1];

    // data packing
    tileAndBind3d(b, DV, "h", "w", "ci", 1, 1, 1);
    const std::int64_t unroll1 = g.dilated ? g.vh : g.vh * g.hstr + g.kh - 1;
    const std::int64_t unroll2 = g.dilated ? g.vw : g.vw * g.wstr + g.kw - 1;
    if (unroll1 < maxUnroll) b.annotate(DV, "vh", IteratorAnnotation::Unroll);
    if (unroll2 < maxUnroll) b.annotate(DV, "vw", IteratorAnnotation::Unroll);

    const StageRefName KV{"kernel_vec", 0};
    if (b.hasStage(KV)) {
        const std::string fused = b.fuse(KV, b.iters(KV));
        const auto fv = b.split(KV, fused, g.vc);
        const auto bt = b.split(KV, fv[0], kMaliMaxThreads);
        b.annotate(KV, bt[0], IteratorAnnotation::BlockX);
        b.annotate(KV, bt[1], IteratorAnnotation::ThreadX);
        if (std::find(kVecSizes.begin(), kVecSizes.end(), g.vc) != kVecSizes.end())
            b.annotate(KV, fv[1], IteratorAnnotation::Vectorize);
    }

    // convolution
    b.applyAnnotate(C, {"kh", "kw"}, cfg.annotate("ann_reduce"), {g.kh, g.kw}, maxUnroll);
    b.applyReorder(C, {"n", "co", "h", "w", "ci", "kh", "kw", "vh", "vw", "vc"}, cfg.reorder("reorder_0"));
    tileAndBind3d(b, C, "co", "h", "w", TC, TH, TW);
    b.applyAnnotate(C, {"vh", "vw", "vc"}, cfg.annotate("ann_spatial"), {g.vh, g.vw, g.vc}, maxUnroll, kVecSizes);

    // output
    if (!sameStage(last, O)) b.computeInline(O);
    const auto l = b.iters(last);
    TB_USER_CHECK(l.size() == 4) << "conv2d_nchw_spatial_pack.mali: a fused output of rank " << l.size();
    tileAndBind3d(b, last, l[1], l[2], l[3], TC, TH, TW);
}

// conv2d_nchw_spatial_pack.mali in tuning mode (spatialPackInstance: the packed kernel a
// placeholder) and as a network kernel.
TemplateInstance conv2dNchwSpatialPackInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    return spatialPackInstance(args, cfg, scheduleSpatialPackMali);
}

State conv2dNchwSpatialPackFused(const TaskArgs& args, const ConfigEntity& cfg,
                                 const std::shared_ptr<const te::ComputeDAG>& dag) {
    const SpatialPackGeom g = spatialPackGeom(args, cfg);
    return scheduleFusedGroup(
        dag, {"output_unpack", 0}, [&](StateBuilder& b, const StageRefName& last) { scheduleSpatialPackMali(b, cfg, g, last); });
}

// ---- conv2d_nchw_winograd.mali -----------------------------------------------------------------

// The geometry of mali `_decl_winograd` for one config: tile size m (_pick_tile_size), alpha =
// m + 2, P tiles, rounded up to a multiple of bnb.
struct MaliWinogradGeom {
    std::int64_t n = 0, cin = 0, ih = 0, iw = 0, co = 0, h = 0, w = 0, nH = 0, nW = 0, p = 0, pRound = 0;
    std::int64_t m = 4, alpha = 6, bna = 1, bnb = 1;
    topi::nn::PadTuple pad;
};

MaliWinogradGeom maliWinogradGeom(const TaskArgs& args, const ConfigEntity& cfg) {
    checkFloat32(args, 5);
    MaliWinogradGeom g;
    g.m = maliWinogradTileSize(args);
    g.alpha = g.m + 2;
    const WinogradNchwShape s = winogradNchwShape(args, g.m);  // checks 3x3, stride 1
    const TensorArg dataArg = args.tensor(0);
    TB_USER_CHECK(dataArg.shape.size() == 4 && dataArg.shape[1] == s.ci)
        << args.taskName() << ": expects NCHW data with the kernel's input channels (no groups)";
    g.n = dataArg.shape[0], g.cin = s.ci, g.ih = dataArg.shape[2], g.iw = dataArg.shape[3], g.co = s.co;
    g.pad = args.padding(3, 3, 3);
    g.h = g.ih + g.pad.top + g.pad.bottom - 2;
    g.w = g.iw + g.pad.left + g.pad.right - 2;
    g.nH = (g.h + g.m - 1) / g.m, g.nW = (g.w + g.m - 1) / g.m;
    g.p = s.p;
    g.bna = cfg.knobValue("tile_bna").get<std::int64_t>();
    g.bnb = cfg.knobValue("tile_bnb").get<std::int64_t>();
    g.pRound = (g.p + g.bnb - 1) / g.bnb * g.bnb;
    TB_USER_CHECK(g.bna >= 1 && g.co % g.bna == 0)
        << args.taskName() << ": tile_bna " << g.bna << " does not divide CO = " << g.co;
    return g;
}

// mali `_decl_winograd` on inputs {data (N, CI, IH, IW), U (alpha, alpha, CO/bna, CI, bna)}: the
// kernel is the transformed U (the tuning placeholder, or alter_op_layout's pre-transformed
// constant in a network). Stages d (input tiles, nn.pad inlined, zero past P), B, V, M (batch gemm
// over P_round), A, Y, output (tag winograd_conv2d_output).
Tensor winogradMaliCompute(const TaskArgs& args, const ConfigEntity& cfg, const std::vector<Tensor>& in) {
    const MaliWinogradGeom g = maliWinogradGeom(args, cfg);
    const Tensor &data = in.at(0), &U = in.at(1);
    TB_USER_CHECK((data.shape() == std::vector<std::int64_t>{g.n, g.cin, g.ih, g.iw}))
        << args.taskName() << ": the data tensor does not have the args' shape";
    TB_USER_CHECK((U.shape() == std::vector<std::int64_t>{g.alpha, g.alpha, g.co / g.bna, g.cin, g.bna}))
        << args.taskName() << ": the kernel is not the transformed (" << g.alpha << ", " << g.alpha
        << ", CO/bna, CI, bna) for bna = " << g.bna;
    const std::int64_t m = g.m, alpha = g.alpha, bnb = g.bnb, bna = g.bna, nH = g.nH, nW = g.nW, P = g.p;
    const topi::nn::WinogradMatrices mats = topi::nn::winogradMatrices(m, 3);
    Tensor d = te::compute({g.cin, g.pRound / bnb, alpha, alpha, bnb}, {"ci", "b", "eps", "nu", "bb"},
                           [&](const std::vector<Var>& v) {
                               Expr t = Expr(v[1]) * ci(bnb) + Expr(v[4]);
                               Expr read = paddedRead(data, g.pad, te::floordiv(t, ci(nH * nW)), Expr(v[0]),
                                                      te::floormod(te::floordiv(t, ci(nW)), ci(nH)) * ci(m) + Expr(v[2]),
                                                      te::floormod(t, ci(nW)) * ci(m) + Expr(v[3]));
                               return te::ifThenElse(t < ci(P), read, te::makeConst(te::DType::Float32, 0.0));
                           }, "d");
    Tensor B = topi::nn::constMatrix(mats.B, alpha, alpha, "B");
    te::IterVar ra = te::reduceAxis(alpha, "r_a"), rb = te::reduceAxis(alpha, "r_b");
    Tensor V = te::compute({alpha, alpha, g.pRound / bnb, g.cin, bnb}, {"eps", "nu", "p", "ci", "vp"},
                           [&](const std::vector<Var>& v) {
                               return te::sum(d(Expr(v[3]), Expr(v[2]), Expr(ra.var), Expr(rb.var), Expr(v[4])) *
                                                  B(Expr(ra.var), Expr(v[0])) * B(Expr(rb.var), Expr(v[1])),
                                              {ra, rb});
                           }, "V");
    te::IterVar rc = te::reduceAxis(g.cin, "c");
    Tensor M = te::compute({alpha, alpha, g.co, g.pRound}, {"eps", "nu", "co", "p"}, [&](const std::vector<Var>& v) {
        return te::sum(U(Expr(v[0]), Expr(v[1]), te::floordiv(v[2], ci(bna)), Expr(rc.var), te::floormod(v[2], ci(bna))) *
                           V(Expr(v[0]), Expr(v[1]), te::floordiv(v[3], ci(bnb)), Expr(rc.var), te::floormod(v[3], ci(bnb))),
                       {rc});
    }, "M");
    Tensor A = topi::nn::constMatrix(mats.A, alpha, m, "A");
    te::IterVar ya = te::reduceAxis(alpha, "r_a"), yb = te::reduceAxis(alpha, "r_b");
    Tensor Y = te::compute({g.co, P, m, m}, {"co", "p", "vh", "vw"}, [&](const std::vector<Var>& v) {
        return te::sum(M(Expr(ya.var), Expr(yb.var), Expr(v[0]), Expr(v[1])) * A(Expr(ya.var), Expr(v[2])) *
                           A(Expr(yb.var), Expr(v[3])),
                       {ya, yb});
    }, "Y");
    te::ComputeOptions opts;
    opts.tag = "winograd_conv2d_output";
    return te::compute({g.n, g.co, g.h, g.w}, {"n", "co", "h", "w"}, [&](const std::vector<Var>& v) {
        return Y(Expr(v[1]), Expr(v[0]) * ci(nH * nW) + te::floordiv(v[2], ci(m)) * ci(nW) + te::floordiv(v[3], ci(m)),
                 te::floormod(v[2], ci(m)), te::floormod(v[3], ci(m)));
    }, "output", opts);
}

// mali/conv2d.py `_schedule_winograd` with the group's output `last`: B inlined; V cache_write'n
// (VL, local), V reordered (p, ci, eps, nu, vp), eps / nu unrolled, vp vectorized, (p, ci) fused
// and split by tile_t1 onto blockIdx.x / threadIdx.x, d and VL computed at its thread loop with
// VL's 4 small loops unrolled and vp vectorized; M tiled by (bna, bnb), its reduction split by
// c_unroll, reordered (yo, xo, c, c_unroll, yi, xi), c_unroll / yi unrolled, xi vectorized,
// (eps, nu) fused and tile_and_bind3d(z, yo, xo, 1, yt, 1); A inlined, Y's loops unrolled; the
// output (inlined when ops were fused after it; the last op instead) tiled by m x m (inner loops
// unrolled), (n, co, h, w) fused and split by tile_t2 onto blockIdx.x / threadIdx.x, Y computed
// at its thread loop.
void scheduleWinogradMali(StateBuilder& b, const ConfigEntity& cfg, const MaliWinogradGeom& g,
                          const StageRefName& last) {
    const StageRefName D{"d", 0}, V{"V", 0}, M{"M", 0}, Y{"Y", 0}, O{"output", 0};
    b.computeInline({"B", 0});
    b.cacheWrite(V, "local");
    const StageRefName VL{"V.local", 0};
    b.reorder(V, {"p", "ci", "eps", "nu", "vp"});
    for (const char* axis : {"eps", "nu"}) b.annotate(V, axis, IteratorAnnotation::Unroll);
    b.annotate(V, "vp", IteratorAnnotation::Vectorize);
    const std::string fused = b.fuse(V, {"p", "ci"});
    const auto t1 = b.applySplit(V, fused, cfg.split("tile_t1"));
    b.annotate(V, t1[0], IteratorAnnotation::BlockX);
    b.annotate(V, t1[1], IteratorAnnotation::ThreadX);
    const auto vl = b.iters(VL);  // eps, nu, p, ci, vp, r_a, r_b
    TB_CHECK(vl.size() == 7) << "winograd V.local has " << vl.size() << " loops";
    for (const std::string& axis : {vl[0], vl[1], vl[5], vl[6]}) b.annotate(VL, axis, IteratorAnnotation::Unroll);
    b.annotate(VL, vl[4], IteratorAnnotation::Vectorize);
    b.computeAt(D, V, t1[1]);
    b.computeAt(VL, V, t1[1]);

    // batch gemm
    const auto ks = b.split(M, "co", g.bna);
    const auto ps = b.split(M, "p", g.bnb);
    b.reorder(M, {ks[0], ps[0], ks[1], ps[1]});
    const auto cs = b.applySplit(M, "c", cfg.split("c_unroll"));
    b.reorder(M, {ks[0], ps[0], cs[0], cs[1], ks[1], ps[1]});
    b.annotate(M, cs[1], IteratorAnnotation::Unroll);
    b.annotate(M, ks[1], IteratorAnnotation::Unroll);
    b.annotate(M, ps[1], IteratorAnnotation::Vectorize);
    const std::string z = b.fuse(M, {"eps", "nu"});
    tileAndBind3d(b, M, z, ks[0], ps[0], 1, cfg.knobValue("yt").get<std::int64_t>(), 1);

    // inverse transform
    b.computeInline({"A", 0});
    for (const char* axis : {"vh", "vw", "r_a", "r_b"}) b.annotate(Y, axis, IteratorAnnotation::Unroll);

    // output and fusion
    if (!sameStage(last, O)) b.computeInline(O);
    const auto l = b.iters(last);
    TB_USER_CHECK(l.size() == 4) << "conv2d_nchw_winograd.mali: a fused output of rank " << l.size();
    const auto hs = b.split(last, l[2], g.m);
    const auto ws = b.split(last, l[3], g.m);
    b.reorder(last, {hs[0], ws[0], hs[1], ws[1]});
    b.annotate(last, hs[1], IteratorAnnotation::Unroll);
    b.annotate(last, ws[1], IteratorAnnotation::Unroll);
    const std::string of = b.fuse(last, {l[0], l[1], hs[0], ws[0]});
    const auto t2 = b.applySplit(last, of, cfg.split("tile_t2"));
    b.annotate(last, t2[0], IteratorAnnotation::BlockX);
    b.annotate(last, t2[1], IteratorAnnotation::ThreadX);
    b.computeAt(Y, last, t2[1]);
}

// The direct convolution's FLOPs (cfg.add_flop(2 * N * CO * H * W * KH * KW * CI)).
double winogradMaliFlop(const MaliWinogradGeom& g) { return 2.0 * double(g.n * g.co * g.h * g.w * 9 * g.cin); }

// conv2d_nchw_winograd.mali in tuning mode: U a placeholder (alpha, alpha, CO/bna, CI, bna).
TemplateInstance conv2dNchwWinogradInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    const MaliWinogradGeom g = maliWinogradGeom(args, cfg);
    Tensor data = te::placeholder({g.n, g.cin, g.ih, g.iw}, "data");
    Tensor U = te::placeholder({g.alpha, g.alpha, g.co / g.bna, g.cin, g.bna}, "U");
    Tensor output = winogradMaliCompute(args, cfg, {data, U});
    StateBuilder b(std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, U, output}));
    scheduleWinogradMali(b, cfg, g, {"output", 0});
    TemplateInstance inst = b.finish();
    inst.flop = winogradMaliFlop(g);
    return inst;
}

State conv2dNchwWinogradFused(const TaskArgs& args, const ConfigEntity& cfg,
                              const std::shared_ptr<const te::ComputeDAG>& dag) {
    const MaliWinogradGeom g = maliWinogradGeom(args, cfg);
    return scheduleFusedGroup(
        dag, {"output", 0}, [&](StateBuilder& b, const StageRefName& last) { scheduleWinogradMali(b, cfg, g, last); });
}

// `_decl_winograd`'s cfg.is_fallback: tile_bnb 4, tile_bna the largest of 4, 2, 1 dividing CO, yt
// 8, fallback_split(tile_t1 / tile_t2, [-1, 128]) and (c_unroll, [-1, 8]).
void conv2dNchwWinogradFallback(const TaskArgs& args, int, ConfigEntity& cfg) {
    const WinogradNchwShape s = winogradNchwShape(args, maliWinogradTileSize(args));
    std::int64_t bna = 4;
    while (s.co % bna != 0) bna /= 2;
    setKnob(cfg, "tile_bnb", OtherOptionEntity{ojson(4)});
    setKnob(cfg, "tile_bna", OtherOptionEntity{ojson(bna)});
    setKnob(cfg, "yt", OtherOptionEntity{ojson(8)});
    // fallback_split: the largest factor of the axis that is <= the constraint.
    auto largestFactor = [](std::int64_t n, std::int64_t limit) {
        std::int64_t best = 1;
        for (std::int64_t f : getFactors(n))
            if (f <= limit) best = std::max(best, f);
        return best;
    };
    const std::int64_t t1 = largestFactor(s.ci, 128), t2 = largestFactor(s.co, 128), cu = largestFactor(s.ci, 8);
    setKnob(cfg, "tile_t1", SplitEntity{{s.ci / t1, t1}});
    setKnob(cfg, "tile_t2", SplitEntity{{s.co / t2, t2}});
    setKnob(cfg, "c_unroll", SplitEntity{{s.ci / cu, cu}});
}

// ---- dense.mali --------------------------------------------------------------------------------

// mali/dense.py `schedule_dense` on the dense stage D (T_matmul_NT) with the group's output
// `last`: when D is the output it is cache_write'n (local); the output's (y, x) split by tile_y /
// tile_x onto (blockIdx.y, threadIdx.y, yi) and (blockIdx.x, threadIdx.x, xi), yi unrolled when
// shorter than 32, xi vectorized when a vector width; the dense stage computed at threadIdx.x,
// its reduction split by c_unroll and reordered (k, k_unroll, y, x), k_unroll unrolled, y / x
// annotated as the output's.
void scheduleDenseMali(StateBuilder& b, const ConfigEntity& cfg, const StageRefName& D, const StageRefName& last) {
    const std::int64_t maxUnroll = 32;
    StageRefName local = D;
    if (sameStage(D, last)) {
        b.cacheWrite(D, "local");
        local = {D.name + ".local", 0};
    }
    const SplitEntity &ty = cfg.split("tile_y"), &tx = cfg.split("tile_x");
    const auto l = b.iters(last);
    TB_USER_CHECK(l.size() == 2) << "dense.mali: an output of rank " << l.size();
    const auto ys = b.applySplit(last, l[0], ty);
    const auto xs = b.applySplit(last, l[1], tx);
    b.reorder(last, {ys[0], xs[0], ys[1], xs[1], ys[2], xs[2]});
    b.annotate(last, ys[0], IteratorAnnotation::BlockY);
    b.annotate(last, xs[0], IteratorAnnotation::BlockX);
    b.annotate(last, ys[1], IteratorAnnotation::ThreadY);
    b.annotate(last, xs[1], IteratorAnnotation::ThreadX);
    const bool unrollY = ty.size.back() < maxUnroll;
    const bool vecX = std::find(kVecSizes.begin(), kVecSizes.end(), tx.size.back()) != kVecSizes.end();
    if (unrollY) b.annotate(last, ys[2], IteratorAnnotation::Unroll);
    if (vecX) b.annotate(last, xs[2], IteratorAnnotation::Vectorize);

    const auto dl = b.iters(local);  // y, x, k
    TB_CHECK(dl.size() == 3) << "dense stage has " << dl.size() << " loops";
    const auto ks = b.applySplit(local, dl[2], cfg.split("c_unroll"));
    b.reorder(local, {ks[0], ks[1], dl[0], dl[1]});
    b.annotate(local, ks[1], IteratorAnnotation::Unroll);
    if (unrollY) b.annotate(local, dl[0], IteratorAnnotation::Unroll);
    if (vecX) b.annotate(local, dl[1], IteratorAnnotation::Vectorize);
    b.computeAt(local, last, xs[1]);
}

// dense.mali: topi.nn.dense (T_matmul_NT, tag dense) on data (M, K) and weight (N, K); no bias
// (relay's nn.dense has none; bias_add is a separate op fused after it).
TemplateInstance denseInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    checkFloat32(args, 3);
    TB_USER_CHECK(args.size() < 3 || args.isNull(2)) << args.taskName() << ": a bias argument is not supported";
    const DenseShape s = denseShape(args, false);
    Tensor data = te::placeholder({s.m, s.k}, "data"), weight = te::placeholder({s.n, s.k}, "weight");
    Tensor out = topi::nn::dense(data, weight);
    StateBuilder b(std::make_shared<const te::ComputeDAG>(std::vector<Tensor>{data, weight, out}));
    scheduleDenseMali(b, cfg, {out.name(), 0}, {out.name(), 0});
    return b.finish();
}

State denseFused(const TaskArgs&, const ConfigEntity& cfg, const std::shared_ptr<const te::ComputeDAG>& dag) {
    const StageRefName D{"T_matmul_NT", 0};
    return scheduleFusedGroup(dag, D, [&](StateBuilder& b, const StageRefName& last) { scheduleDenseMali(b, cfg, D, last); });
}

// ---- depthwise_conv2d_nchw.mali ----------------------------------------------------------------

// mali/depthwise_conv2d.py `_schedule` (NCHW) on C (DepthwiseConv2d) with the group's output
// `last`: PaddedInput tile_and_bind3d(c, h, w, tile_c[1], 1, 1); C cache_write'n (local) when it
// is the output, else computed locally at the output's thread loop; the output's c, h, w split by
// tile_c / tile_y / tile_x, (n, bc) fused onto blockIdx.z, tc / bh / th / bw / tw onto threadIdx.z
// / blockIdx.y / threadIdx.y / blockIdx.x / threadIdx.x; the local stage's di, dj unrolled and
// ann_spatial on its (c, h, w) with max_unroll 16 and the vector widths.
void scheduleDepthwiseMali(StateBuilder& b, const ConfigEntity& cfg, const StageRefName& C, const StageRefName& last) {
    const SplitEntity &tc = cfg.split("tile_c"), &ty = cfg.split("tile_y"), &tx = cfg.split("tile_x");
    TB_USER_CHECK(tc.size.size() == 3 && ty.size.size() == 3 && tx.size.size() == 3)
        << "depthwise_conv2d_nchw.mali: tile_c / tile_y / tile_x must split into 3 parts";
    const StageRefName P{"PaddedInput", 0};
    if (b.hasStage(P)) {
        const auto p = b.iters(P);  // n, c, h, w
        tileAndBind3d(b, P, p[1], p[2], p[3], tc.size[1], 1, 1);
    }
    StageRefName local = C;
    if (sameStage(C, last)) {
        b.cacheWrite(C, "local");
        local = {C.name + ".local", 0};
    }
    const auto l = b.iters(last);
    TB_USER_CHECK(l.size() == 4) << "depthwise_conv2d_nchw.mali: an output of rank " << l.size();
    const auto cs = b.applySplit(last, l[1], tc);
    const auto hs = b.applySplit(last, l[2], ty);
    const auto ws = b.applySplit(last, l[3], tx);
    const std::string bz = b.fuse(last, {l[0], cs[0]});
    b.reorder(last, {bz, hs[0], ws[0], cs[1], hs[1], ws[1], cs[2], hs[2], ws[2]});
    b.annotate(last, bz, IteratorAnnotation::BlockZ);
    b.annotate(last, cs[1], IteratorAnnotation::ThreadZ);
    b.annotate(last, hs[0], IteratorAnnotation::BlockY);
    b.annotate(last, hs[1], IteratorAnnotation::ThreadY);
    b.annotate(last, ws[0], IteratorAnnotation::BlockX);
    b.annotate(last, ws[1], IteratorAnnotation::ThreadX);

    const auto ol = b.iters(local);  // b, c, i, j, di, dj
    TB_CHECK(ol.size() == 6) << "depthwise local stage has " << ol.size() << " loops";
    b.annotate(local, ol[4], IteratorAnnotation::Unroll);
    b.annotate(local, ol[5], IteratorAnnotation::Unroll);
    b.applyAnnotate(local, {ol[1], ol[2], ol[3]}, cfg.annotate("ann_spatial"),
                    {tc.size.back(), ty.size.back(), tx.size.back()}, 16, kVecSizes);
    b.computeAt(local, last, ws[1]);
}

TemplateInstance depthwiseConv2dNchwInstance(const TaskArgs& args, const ConfigEntity& cfg) {
    const auto dag = depthwiseNchwDag(args);
    const std::string out = dag->outputs().at(0).name();
    StateBuilder b(dag);
    scheduleDepthwiseMali(b, cfg, {out, 0}, {out, 0});
    return b.finish();
}

State depthwiseConv2dNchwFused(const TaskArgs&, const ConfigEntity& cfg,
                               const std::shared_ptr<const te::ComputeDAG>& dag) {
    const StageRefName C{"DepthwiseConv2d", 0};
    return scheduleFusedGroup(dag, C, [&](StateBuilder& b, const StageRefName& last) { scheduleDepthwiseMali(b, cfg, C, last); });
}

}  // namespace

void addMaliTemplates(TemplateList& out) {
    addTemplate(out, "conv2d_nchw_spatial_pack.mali",
                "python/tvm/topi/arm_cpu/conv2d_spatial_pack.py: conv2d_spatial_pack_nchw (num_tile=3, via "
                "mali/conv2d.py); schedule mali/conv2d.py: _schedule_spatial_pack",
                [](const TaskArgs& args, ConfigSpace& cfg) { defineSpatialPackNchw(args, cfg, 3); },
                conv2dNchwSpatialPackInstance, conv2dNchwSpatialPackFused, {}, spatialPackCompute);
    addTemplate(out, "conv2d_nchw_winograd.mali", "python/tvm/topi/mali/conv2d.py: _decl_winograd, _schedule_winograd",
                conv2dNchwWinograd, conv2dNchwWinogradInstance, conv2dNchwWinogradFused, conv2dNchwWinogradFallback,
                winogradMaliCompute);
    addTemplate(out, "depthwise_conv2d_nchw.mali", "python/tvm/topi/mali/depthwise_conv2d.py: _schedule",
                depthwiseConv2dNchw, depthwiseConv2dNchwInstance, depthwiseConv2dNchwFused);
    addTemplate(out, "dense.mali", "python/tvm/topi/mali/dense.py: schedule_dense", dense, denseInstance, denseFused);
}

}  // namespace tb::autotvm::detail
