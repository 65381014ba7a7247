// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file apply_history_best.h
/// \brief Compiling a network with AutoTVM records: TVM `autotvm.apply_history_best(log)` (python/
/// tvm/autotvm/task/dispatcher.py ApplyHistoryBest, with FallbackContext behind it) as relay.build
/// uses it on x86 (v0.14).
///
/// A tuning log says which config of which template was fastest for each workload; compiling the
/// network must use exactly those configs. TVM does it in two places, and so does this class:
///   1. AlterOpLayout (`_alter_conv2d_layout`, python/tvm/topi/x86/conv2d_alter_op.py) asks the
///      dispatch context for the conv2d_NCHWc.x86 config of every NCHW conv and blocks data and
///      kernel by its tile_ic / tile_oc inner factors (nchwcBlocks(), plugged into
///      graph::AlterLayoutOptions::nchwcBlocks);
///   2. lowering each fused group asks again for the group's anchor op (implementationOf(): the
///      nn.contrib_conv2d_NCHWc of the altered graph is still the NCHW workload TVM's records name,
///      since alter_op_layout copies the config to the new workload) and schedules the group with
///      the template's schedule for that config (Template::scheduleFused).
/// query() is DispatchContext.query: the best record (lowest mean cost among error_no 0 records
/// whose target shares a key or the model with the build's target, record::AutoTvmHistoryBest),
/// else the template's fallback config (Template::fallbackConfig: TVM's FallbackConfigEntity with
/// the template's `cfg.is_fallback` defaults).
///
/// On an arm_cpu target (isArmCpuTarget) the conv side follows TVM's arm_cpu strategy and
/// python/tvm/topi/arm_cpu/conv2d_alter_op.py instead: armCpuConv() (plugged into
/// graph::AlterLayoutOptions::armCpuConv) picks, per NCHW groups-1 conv, the faster of the
/// conv2d_nchw_spatial_pack.arm_cpu and conv2d_nchw_winograd.arm_cpu records (winograd only for
/// 3x3 stride-1 undilated convs; with no record, spatial_pack, the higher plevel 10 > 5), and
/// AlterOpLayout pre-packs the kernel (OIHW{VC}o) or pre-transforms it for winograd; FoldConstant
/// folds either. Depthwise convs keep nn.conv2d and use depthwise_conv2d_nchw.arm_cpu.
///
/// On a Mali target (isMaliTarget) the same happens with the Mali templates (strategy/mali.py,
/// topi/mali/conv2d.py `_alter_conv2d_layout`): spatial_pack pre-packs by tile_co's inner factor,
/// winograd pre-transforms with tile_bna and the tile size 4 if H % 4 == 0 else 2; depthwise convs
/// use depthwise_conv2d_nchw.mali and dense dense.mali; build_module.h lowers the groups for the GPU.
/// Difference: without a record TVM's Mali spatial_pack / dense / depthwise templates copy the tiling
/// of the most similar workload of the tophub rk3399 log (`fallback_with_reference_log`); here they
/// get the space's first config (templates_mali.cpp), so an untuned Mali network is slower than TVM's.
///
/// Covered: conv2d_NCHWc.x86 (NCHW, groups 1, float32), dense_pack.x86 / dense_nopack.x86
/// (implementationOf, also on arm_cpu, as task extraction offers them), and the three arm_cpu
/// templates. Depthwise convs are not AutoTVM workloads here (no instantiation of
/// depthwise_conv2d_NCHWc.x86): they keep the fallback blocking and the build's default schedule.
/// Difference: TVM's _alter_dense_layout makes dense_pack's packed weight a constant; here the
/// group packs it (the template's packed_weight stage), so the weight is repacked on every run.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/autotvm/template.h"
#include "engine/autotvm/task_extraction.h"
#include "engine/graph/fuse_ops.h"
#include "engine/graph/graph.h"
#include "engine/graph/task_extraction.h"
#include "engine/record/history_best.h"

namespace tb::autotvm {

/// The config a workload gets.
struct DispatchedConfig {
    const Template* tmpl = nullptr;
    nlohmann::ordered_json args;
    ConfigEntity config;
    /// The record it came from, or nullptr for the fallback config.
    const record::AutoTvmRecord* record = nullptr;
    bool isFallback() const { return record == nullptr; }
};

class ApplyHistoryBest {
public:
    /// `records`: an AutoTVM log (v0.1 lines and failed records are never chosen); `target`: the
    /// build's target string; `simdLanes`: TVM get_simd_32bit_lanes() for it (fallback configs).
    ApplyHistoryBest(const std::vector<record::AutoTvmRecord>& records, std::string target, int simdLanes);

    /// DispatchContext.current.query(target, (taskName, *args)). Throws tb::UserError for a
    /// template we do not know or args that do not fit it.
    DispatchedConfig query(const std::string& taskName, const nlohmann::ordered_json& args) const;

    /// For graph::AlterLayoutOptions::nchwcBlocks: (ic_bn, oc_bn) of the conv2d_NCHWc.x86 config
    /// of an NCHW conv (data NCHW, kernel OIHW shapes; strides/padding/dilation from its attrs).
    std::optional<std::pair<std::int64_t, std::int64_t>> nchwcBlocks(const graph::Node& conv,
                                                                     const std::vector<std::int64_t>& data,
                                                                     const std::vector<std::int64_t>& kernel) const;

    /// For graph::AlterLayoutOptions::armCpuConv on an arm_cpu target: the arm_cpu template TVM's
    /// select_implementation picks for an NCHW, OIHW, groups-1 conv2d (data NCHW and kernel OIHW
    /// shapes) and its packing factor; nullopt on a non-arm_cpu target or for a conv whose args
    /// the templates refuse (it keeps nn.conv2d and the build's default schedule).
    std::optional<graph::AlterLayoutOptions::ArmCpuConv> armCpuConv(const graph::Node& conv,
                                                                    const std::vector<std::int64_t>& data,
                                                                    const std::vector<std::int64_t>& kernel) const;
    /// True when the target is arm_cpu (`-device=arm_cpu` or the arm_cpu key).
    bool armCpu() const { return m_armCpu; }
    /// True when the target is a Mali GPU (`opencl -device=mali`, isMaliTarget): armCpuConv() and
    /// implementationOf() then follow TVM's mali strategy and mali/conv2d.py _alter_conv2d_layout
    /// (the same rewrites with conv2d_nchw_spatial_pack.mali's tile_co and
    /// conv2d_nchw_winograd.mali's tile_bna and _pick_tile_size), dense uses dense.mali.
    bool mali() const { return m_mali; }

    /// TVM select_implementation for the anchor op of a fused group of the altered graph, as the
    /// AutoTVM task whose template computes and schedules it, or nullopt when the group has none:
    ///   - nn.contrib_conv2d_NCHWc (groups 1, float32): conv2d_NCHWc.x86 with the NCHW args of the
    ///     conv it came from (data (N, C/c, H, W, c) -> (N, C, H, W), kernel (O/o, I/i, KH, KW, i,
    ///     o) -> (O, I, KH, KW)), the workload TVM's records name;
    ///   - nn.dense (2-D, float32): of dense_nopack.x86 and dense_pack.x86, the one whose best
    ///     record is fastest, or, with no record for either, dense_pack.x86 (the higher plevel);
    ///   - arm_cpu: nn.conv2d with an OIHW{VC}o kernel: conv2d_nchw_spatial_pack.arm_cpu;
    ///     NCHW nn.contrib_conv2d_winograd_without_weight_transform: conv2d_nchw_winograd.arm_cpu;
    ///     a depthwise NCHW nn.conv2d: depthwise_conv2d_nchw.arm_cpu; each with the args of the
    ///     OIHW conv it came from (armCpuConvTaskArgs), the workload TVM's records name.
    std::optional<ExtractedTask> implementationOf(const graph::Graph& g, const graph::FusedGroup& group) const;
    /// The lowering hook that gives a group's anchor op the compute of `task`'s template under its
    /// config (Template::networkCompute: dense_nopack/dense_pack on nn.dense, the arm_cpu
    /// spatial_pack on nn.conv2d, winograd on its op), for graph::lowerGroup; empty when the
    /// template's compute is the op registry's (conv2d_NCHWc, depthwise_conv2d_nchw).
    graph::OpImplementation opImplementation(const ExtractedTask& task) const;

    const std::string& target() const { return m_target; }
    /// Records read (valid or not).
    std::size_t numRecords() const { return m_best.records().size(); }

private:
    record::AutoTvmHistoryBest m_best;
    std::string m_target;
    int m_simdLanes;
    bool m_armCpu = false;
    bool m_mali = false;
};

}  // namespace tb::autotvm
