// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file templates_common.h
/// \brief Private to engine/autotvm: the template class used by the per-family files and the
/// operator geometry that several TVM templates compute the same way.
///
/// TVM's templates derive their knob lengths from the operator's output shape, each with the
/// formula of its own compute (the x86 NCHWc conv ignores dilation, the spatial-pack conv does
/// not, the winograd ones count tiles). The helpers here reproduce each shared formula once,
/// naming the TVM function it follows.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/autotvm/state_builder.h"
#include "engine/autotvm/template.h"
#include "engine/te/operation.h"
#include "engine/topi/nn/utils.h"

namespace tb::autotvm::detail {

/// A template given by its name, TVM source, space function and (optionally) instantiation,
/// fused-kernel schedule and fallback-config defaults.
class FunctionTemplate final : public Template {
public:
    using SpaceFn = std::function<void(const TaskArgs&, ConfigSpace&)>;
    using InstantiateFn = std::function<TemplateInstance(const TaskArgs&, const ConfigEntity&)>;
    using FusedFn = std::function<State(const TaskArgs&, const ConfigEntity&,
                                        const std::shared_ptr<const te::ComputeDAG>&)>;
    /// Sets the knobs TVM's `cfg.is_fallback` branch sets (the entity starts at the space's first).
    using FallbackFn = std::function<void(const TaskArgs&, int simdLanes, ConfigEntity&)>;
    using ComputeFn = std::function<te::Tensor(const TaskArgs&, const ConfigEntity&, const std::vector<te::Tensor>&)>;
    FunctionTemplate(std::string name, std::string source, SpaceFn fn, InstantiateFn inst = {}, FusedFn fused = {},
                     FallbackFn fallback = {}, ComputeFn compute = {})
        : m_name(std::move(name)), m_source(std::move(source)), m_fn(std::move(fn)), m_inst(std::move(inst)),
          m_fused(std::move(fused)), m_fallback(std::move(fallback)), m_compute(std::move(compute)) {}
    const std::string& name() const override { return m_name; }
    const std::string& tvmSource() const override { return m_source; }
    void defineSpace(const TaskArgs& args, ConfigSpace& cfg) const override { m_fn(args, cfg); }
    bool canInstantiate() const override { return bool(m_inst); }
    TemplateInstance instantiate(const TaskArgs& args, const ConfigEntity& entity) const override {
        return m_inst ? m_inst(args, entity) : Template::instantiate(args, entity);
    }
    bool hasNetworkCompute() const override { return bool(m_compute); }
    te::Tensor networkCompute(const TaskArgs& args, const ConfigEntity& entity,
                              const std::vector<te::Tensor>& inputs) const override {
        return m_compute ? m_compute(args, entity, inputs) : Template::networkCompute(args, entity, inputs);
    }
    bool canScheduleFused() const override { return bool(m_fused); }
    State scheduleFused(const TaskArgs& args, const ConfigEntity& entity,
                        const std::shared_ptr<const te::ComputeDAG>& dag) const override {
        return m_fused ? m_fused(args, entity, dag) : Template::scheduleFused(args, entity, dag);
    }
    ConfigEntity fallbackConfig(const TaskArgs& args, int simdLanes) const override {
        ConfigEntity e = Template::fallbackConfig(args, simdLanes);
        if (m_fallback) m_fallback(args, simdLanes, e);
        return e;
    }

private:
    std::string m_name, m_source;
    SpaceFn m_fn;
    InstantiateFn m_inst;
    FusedFn m_fused;
    FallbackFn m_fallback;
    ComputeFn m_compute;
};

using TemplateList = std::vector<std::unique_ptr<Template>>;

/// Appends a FunctionTemplate.
inline void addTemplate(TemplateList& out, std::string name, std::string source, FunctionTemplate::SpaceFn fn,
                        FunctionTemplate::InstantiateFn inst = {}, FunctionTemplate::FusedFn fused = {},
                        FunctionTemplate::FallbackFn fallback = {}, FunctionTemplate::ComputeFn compute = {}) {
    out.push_back(std::make_unique<FunctionTemplate>(std::move(name), std::move(source), std::move(fn),
                                                     std::move(inst), std::move(fused), std::move(fallback),
                                                     std::move(compute)));
}
/// Sets knob `name` of `e` (TVM `cfg[name] = entity`); throws tb::UserError if `e` has no such knob.
void setKnob(ConfigEntity& e, const std::string& name, Entity value);

/// Registration of each family (templates_x86.cpp, templates_arm_cpu.cpp, templates_mali.cpp).
void addX86Templates(TemplateList& out);
void addArmCpuTemplates(TemplateList& out);
void addMaliTemplates(TemplateList& out);

/// Shorthand for SplitOptions{policy, numOutputs, maxFactor, ..., filter}.
SplitOptions splitOpts(int numOutputs, std::function<bool(const SplitEntity&)> filter = {},
                       std::int64_t maxFactor = std::int64_t(1) << 31, std::string policy = "factors");
/// A split filter keeping entities whose innermost factor is <= `limit` (`lambda y: y.size[-1] <= limit`).
std::function<bool(const SplitEntity&)> innermostAtMost(std::int64_t limit);

/// A depthwise conv2d in NCHW as topi.nn.depthwise_conv2d_nchw computes its output
/// (python/tvm/topi/nn/depthwise_conv2d.py): args [data, kernel, strides, padding, dilation, ...],
/// kernel (C, multiplier, KH, KW), padding around the dilated kernel.
struct DepthwiseNchwOutput {
    std::int64_t channels = 0, height = 0, width = 0;
};
DepthwiseNchwOutput depthwiseNchwOutput(const TaskArgs& args);

/// The axis lengths of the NCHW winograd templates (`_decl_winograd` of topi/arm_cpu/conv2d.py and
/// topi/mali/conv2d.py): CI, CO and the tile count P = N * ceil(H/m) * ceil(W/m) for output tile
/// size m. Takes a 4-D kernel (dilated as TVM does) or a pre-transformed 5-D one
/// (H_CAT, W_CAT, CO/VC, CI, VC). Throws tb::UserError where TVM asserts (kernel not 3x3 after
/// dilation, stride not 1).
struct WinogradNchwShape {
    std::int64_t ci = 0, co = 0, p = 0;
};
WinogradNchwShape winogradNchwShape(const TaskArgs& args, std::int64_t tileSize);

/// `conv2d_spatial_pack_nchw` (topi/arm_cpu/conv2d_spatial_pack.py): tile_co, tile_oh, tile_ow
/// split into `numTile` parts (2 on arm_cpu, 3 on Mali), reorder_0 over the 10 loop axes with
/// TVM's two candidate orders, ann_reduce (kh, kw: try_unroll) and ann_spatial (vh, vw, vc:
/// try_unroll_vec).
void defineSpatialPackNchw(const TaskArgs& args, ConfigSpace& cfg, int numTile);

/// M, N, K of a dense task (args [data (M, K), weight (N, K) or packed (N/bn, K, bn), ...]).
struct DenseShape {
    std::int64_t m = 0, n = 0, k = 0;
};
DenseShape denseShape(const TaskArgs& args, bool allowPackedWeight);

/// Throws tb::UserError unless the task's data and kernel (args 0, 1) are float32 and its
/// out_dtype (arg `outDtypeArg`, if present and not null) is "float32".
void checkFloat32(const TaskArgs& args, std::size_t outDtypeArg);

/// The geometry of `conv2d_spatial_pack_nchw` (topi/arm_cpu/conv2d_spatial_pack.py; the Mali
/// template reuses it with num_tile = 3) for one config: args [data (N, CI, IH, IW), kernel
/// (CO, CI, KH, KW) or pre-packed (CO/VC, CI, KH, KW, VC), strides, padding, dilation, out_dtype];
/// VC, VH, VW are the innermost factors of tile_co, tile_oh, tile_ow. Throws tb::UserError for
/// args the template refuses or tiles that do not divide the output (CO, OH, OW).
struct SpatialPackGeom {
    std::int64_t n = 0, cin = 0, ih = 0, iw = 0, co = 0, kh = 0, kw = 0, dh = 1, dw = 1, hstr = 1, wstr = 1;
    std::int64_t oh = 0, ow = 0, vc = 0, vh = 0, vw = 0;
    topi::nn::PadTuple pad;
    bool dilated = false;
};
SpatialPackGeom spatialPackGeom(const TaskArgs& args, const ConfigEntity& cfg);

/// nn.pad's PadInput of NCHW `data` read at (b, c, y, x) of the padded tensor, inlined: zero outside
/// the data (the schedules of both families inline the padding stage).
te::Expr paddedRead(const te::Tensor& data, const topi::nn::PadTuple& pad, te::Expr b, te::Expr c, te::Expr y,
                    te::Expr x);

/// The compute of `conv2d_spatial_pack_nchw` on inputs {data (N, CI, IH, IW), kernel 4-D or packed
/// 5-D}: stages data_vec (or data_vec_undilated), kernel_vec (only for a 4-D kernel), conv (n, co,
/// h, w, vh, vw, vc; reduce ci, kh, kw) and output_unpack (tag spatial_conv2d_output). Throws
/// tb::UserError when the inputs do not have the args' shapes.
te::Tensor spatialPackCompute(const TaskArgs& args, const ConfigEntity& cfg, const std::vector<te::Tensor>& in);

/// The network-kernel side every conv template shares (TVM relay.build's traverse_inline + the
/// template's schedule): a StateBuilder on `dag` that ignores config errors (ignoreConfigErrors),
/// the compute stages after `anchor` inlined except the last, then `schedule(b, last)` with `last`
/// the group's output (`anchor` itself when nothing was fused after it). Returns the bound-inferred
/// State. Throws what `schedule` throws.
State scheduleFusedGroup(const std::shared_ptr<const te::ComputeDAG>& dag, const StageRefName& anchor,
                         const std::function<void(StateBuilder&, const StageRefName& last)>& schedule);

/// A spatial-pack schedule (arm_cpu or mali `_schedule_spatial_pack`) on a DAG of
/// spatialPackCompute with the group's output `last`.
using SpatialPackSchedule =
    std::function<void(StateBuilder&, const ConfigEntity&, const SpatialPackGeom&, const StageRefName& last)>;
/// conv2d_nchw_spatial_pack.* in tuning mode (GLOBAL_SCOPE.in_tuning): data (N, CI, IH, IW) and the
/// packed kernel as a placeholder "kernel_autotvm" (CO/VC, CI, KH, KW, VC), as the tuned task
/// measures it, scheduled by `schedule` on output_unpack.
TemplateInstance spatialPackInstance(const TaskArgs& args, const ConfigEntity& cfg, const SpatialPackSchedule& schedule);

/// topi.nn.depthwise_conv2d_nchw (PaddedInput, DepthwiseConv2d: b, c, i, j; reduce di, dj) on
/// placeholders "data" and "kernel" of the args' shapes (args [data NCHW, kernel (C, M, KH, KW),
/// strides, padding, dilation, out_dtype]), as the DAG {data, kernel, output}. Throws tb::UserError
/// for args the depthwise templates refuse.
std::shared_ptr<const te::ComputeDAG> depthwiseNchwDag(const TaskArgs& args);

}  // namespace tb::autotvm::detail
