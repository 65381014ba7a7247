// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file template.h
/// \brief AutoTVM schedule templates, TVM-named, and the registry that finds them by task name.
///
/// In TVM a template is a pair of Python functions registered under one task name
/// (`@autotvm.register_topi_compute("conv2d_NCHWc.x86")` and `register_topi_schedule`). Run with a
/// ConfigSpace they declare the knobs; run with a ConfigEntity they build the compute and the
/// schedule that config describes. A record names the template and the task args, so a template
/// here must declare exactly TVM's knobs, in TVM's order, with TVM's arguments, for the args as
/// serialized in records (task_args.h) — otherwise a TVM log's index means another config.
///
/// A template has two sides: the space (`defineSpace`) and, for the templates that can run here,
/// the program of one config (`instantiate(args, entity)`): the task's compute DAG (TVM's compute,
/// stage and axis names as TVM's, which may depend on the config, e.g. dense_nopack's `vec`) plus
/// the template's schedule for that config.
///
/// Design: the schedule is expressed as an auto-scheduler `State` (schedule/loop_state.h) built with
/// transform steps (split, reorder, fuse, annotate, compute_at, cache_write) that follow the TVM te
/// schedule calls one for one, instead of a second, te-style schedule representation. So lowering
/// (lower/lower_state.h), codegen, the builder/runner and the sandbox are reused unchanged, and a
/// config's program can be printed as a State like any auto-scheduler candidate. The te calls map
/// exactly: `SplitEntity.apply` (successive factor splits) = one SP step with the entity's inner
/// lengths; a te reorder of a subset of loops = an RE step permuting only those positions;
/// `compute_at` = CA after the attached stage's own steps (te orders them freely; a State needs the
/// ranges for its splits), then bound inference. Differences: a split whose factors do not divide
/// the axis is guarded as auto-scheduler splits are (TVM's te split likewise guards); te's
/// `tvm.tir.likely` hints are not emitted.
///
/// Instantiable (TVM v0.14 python/tvm/topi/x86/): `dense_nopack.x86`, `dense_pack.x86` (dense.py;
/// bias = null only, float32) and `conv2d_NCHWc.x86` (conv2d.py with conv2d_avx_common.py /
/// conv2d_avx_1x1.py; float32, groups 1); (python/tvm/topi/arm_cpu/, float32)
/// `conv2d_nchw_spatial_pack.arm_cpu` (conv2d_spatial_pack.py), `conv2d_nchw_winograd.arm_cpu`
/// (conv2d.py, tile size 4) and `depthwise_conv2d_nchw.arm_cpu` (depthwise_conv2d.py); (python/tvm/
/// topi/mali/, float32, GPU: the State binds loops to blockIdx / threadIdx z, y, x and is lowered by
/// lower/lower_gpu.h to OpenCL C) `conv2d_nchw_spatial_pack.mali`, `conv2d_nchw_winograd.mali`
/// (tile size 4 or 2), `dense.mali` and `depthwise_conv2d_nchw.mali`. Compute in TVM's tuning mode
/// (GLOBAL_SCOPE.in_tuning): packed weights/data (and winograd's transformed kernel U) are
/// placeholders, as the tuned task measures them.
///
/// Implemented (TVM v0.14, python/tvm/topi/): x86 `conv2d_NCHWc.x86`,
/// `depthwise_conv2d_NCHWc.x86`, `dense_nopack.x86`, `dense_pack.x86`; ARM
/// `conv2d_nchw_spatial_pack.arm_cpu`, `conv2d_nchw_winograd.arm_cpu`,
/// `depthwise_conv2d_nchw.arm_cpu`; Mali `conv2d_nchw_spatial_pack.mali`,
/// `conv2d_nchw_winograd.mali`, `depthwise_conv2d_nchw.mali`, `dense.mali`.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/autotvm/space.h"
#include "engine/autotvm/task_args.h"
#include "engine/schedule/loop_state.h"
#include "engine/te/compute_dag.h"

namespace tb::autotvm {

/// The program of one config: the compute DAG (io tensors = the template's inputs in args order,
/// then the output) and the scheduled, bound-inferred State on it, ready for lower::lowerState.
struct TemplateInstance {
    std::shared_ptr<const te::ComputeDAG> dag;
    State state;
    /// TVM `cfg.add_flop`: the FLOPs the template declares (winograd counts the direct
    /// convolution's), or 0 to count them on the DAG.
    double flop = 0;
};

/// One AutoTVM template (stateless; shared by all tasks that use it).
class Template {
public:
    virtual ~Template() = default;
    /// TVM's task name, e.g. "conv2d_NCHWc.x86" (the second element of a record's "input").
    virtual const std::string& name() const = 0;
    /// Where TVM defines the knobs, e.g. "python/tvm/topi/x86/conv2d.py: conv2d_NCHWc".
    virtual const std::string& tvmSource() const = 0;
    /// Declares the knobs of the task with these args into `cfg`, as TVM's template does when it
    /// runs with a ConfigSpace (compute first, then schedule). Throws tb::UserError if the args do
    /// not fit the template (wrong count or form, or a case TVM's template asserts against).
    virtual void defineSpace(const TaskArgs& args, ConfigSpace& cfg) const = 0;

    /// True if instantiate() is implemented for this template.
    virtual bool canInstantiate() const { return false; }
    /// The compute and the schedule of config `entity` (a point of defineSpace's space for these
    /// args), as TVM's compute + schedule functions build them under that config. Throws
    /// tb::UserError when the template cannot be instantiated here (not implemented, args it does
    /// not support, an entity that does not fit the args); measuring reports that as
    /// INSTANTIATION_ERROR.
    virtual TemplateInstance instantiate(const TaskArgs& args, const ConfigEntity& entity) const;

    /// True if networkCompute() is implemented (otherwise the op registry's lowering of the op is
    /// already the template's compute, as topi conv2d_NCHWc is conv2d_NCHWc.x86's).
    virtual bool hasNetworkCompute() const { return false; }
    /// The template's compute outside tuning mode (GLOBAL_SCOPE.in_tuning false: packing stages
    /// are computed, not placeholders) on the op's input tensors, for config `entity` (e.g.
    /// dense_nopack's two "compute" stages, whose shape depends on tile_k). Throws tb::UserError
    /// when the inputs do not fit the args.
    virtual te::Tensor networkCompute(const TaskArgs& args, const ConfigEntity& entity,
                                      const std::vector<te::Tensor>& inputs) const;

    /// True if scheduleFused() is implemented for this template.
    virtual bool canScheduleFused() const { return false; }
    /// The schedule of config `entity` on a network kernel (TVM relay.build under
    /// apply_history_best): `dag` holds this template's compute for these args as the network
    /// lowers it (stage names as instantiate()'s, the packed inputs real tensors) followed by the
    /// injective ops fused after it. As TVM's schedule function does, those ops are inlined except
    /// the last, the group's output (`last` / `O` in TVM, scheduled as the template says for
    /// `C != O`). Returns the bound-inferred State. Throws tb::UserError when the DAG is not this
    /// template's compute or the template cannot do it.
    virtual State scheduleFused(const TaskArgs& args, const ConfigEntity& entity,
                                const std::shared_ptr<const te::ComputeDAG>& dag) const;
    /// TVM's FallbackConfigEntity as the template completes it when no record exists: every knob
    /// at its first candidate (ConfigSpace.get(0)), then the template's `cfg.is_fallback` defaults
    /// (x86 conv2d_NCHWc: _get_default_config, i.e. conv2d_avx_common / conv2d_avx_1x1
    /// `_fallback_schedule`; dense: _default_dense_pack_config / _default_dense_nopack_config).
    /// `simdLanes` is TVM's get_simd_32bit_lanes() for the target (8 AVX2, 16 AVX-512, 4 NEON).
    /// The index is -1, as TVM's fallback entity has no index.
    virtual ConfigEntity fallbackConfig(const TaskArgs& args, int simdLanes) const;

    /// The whole space for serialized args (`["TENSOR", ...], ...`).
    ConfigSpace space(const nlohmann::ordered_json& args) const;
};

/// The template registered under `taskName`, or nullptr if we do not implement it.
const Template* findTemplate(std::string_view taskName);
/// Every implemented template, sorted by name.
std::vector<const Template*> allTemplates();

}  // namespace tb::autotvm
