// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file feature.h
/// \brief The features AutoTVM's XGBoost cost model learns from (TVM v0.14
/// python/tvm/autotvm/feature.py, src/autotvm/touch_extractor.cc, feature_visitor.cc, and the
/// `_extract_*_feature_index` functions of tuner/xgboost_cost_model.py).
///
/// Three feature types, as TVM's XGBTuner(feature_type=...):
///   - "knob": the config's knob values flattened (ConfigEntity.get_flatten_feature): split
///     factors, reorder permutations, annotation one-hots (11 kinds) and anchors, other-option
///     values. Fast, but says nothing about the program.
///   - "itervar" (TVM's default): one row per loop of the config's program, in program order
///     (TouchExtractor), flattened (GetItervarFeatureFlatten, take_log = true):
///       length, nest_level, topdown (product of the lengths from the root down to the loop),
///       bottomup (max over touched buffers of count x reuse), an 11-way annotation one-hot
///       (blockIdx.xyz, threadIdx.xyz, unrolled, vectorized, parallel, serial, vthread), float
///       add / mul / div counts of the statements whose innermost loop it is, then per buffer access
///       below the loop (named `<buffer>_<n>`, n counting the accesses of that buffer in program
///       order; sorted by name): stride (the constant multiplying the loop variable in the flat
///       index, 1 when it appears otherwise, 0 when it does not), mod (-1), count (product of the
///       lengths of the loops at or below this one that move the access), reuse (the same for the
///       loops that do not), thread_count and thread_reuse (count / reuse over those of the
///       outermost serial loop below a parallel one, on parallel loops). Numbers go through
///       log2(x + 1) (-log2(-x + 1) below 0), except nest_level.
///     Then the config's other-option values (`config.get_other_option().values()`).
///   - "curve": the sampled relation curves of GetCurveSampleFeatureFlatten(sample_n = 20): for each
///     buffer accessed at the deepest nest level (one per raw buffer name, scope suffix dropped),
///     the log2 count, reuse and topdown values of every loop touching it (plus a 0), each sorted,
///     and the step functions count->reuse, reuse->count, count->topdown, topdown->count sampled at
///     x = 0, 1, ..., sample_n - 1 as (y, x - x_j) pairs; then the other-option values.
///
/// What program: TVM computes itervar and curve features on `ana_lower`, a lowering that keeps
/// every loop, including loops of length 1 (tir.debug_keep_trivial_loop), whose variables the
/// simplifier then replaces by their only value. Our lowering (lower/lower_state.h) drops loops of
/// length 1, so a config's loop count would depend on its split factors. We therefore walk the
/// config's State (schedule/loop_state.h) for the loop tree TVM would see — every stage computed at
/// the root in stage order, its loops outermost first, the stages attached at a loop first inside
/// it, a reduction's init loops (the spatial loops below its first reduction loop) before that loop —
/// and take each loop's variable and each statement from the lowered IR, matching the tree's loops
/// of length > 1 and its stores one for one with the IR's loops and stores in program order. A loop
/// of length 1 gets its row with stride 0 for every access (its variable is 0 in every index), as
/// in TVM. So the feature length is fixed per template and shape. Indices are flattened with the
/// buffer strides (TVM's StorageFlatten) and simplified to `v1*c1 + v2*c2 + c0`, which is the
/// form TVM's index parser reads strides from.
///
/// Thread safety: pure functions; call them from any number of threads.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/autotvm/task.h"

namespace tb::autotvm {

/// TVM XGBoostCostModel's feature_type.
enum class FeatureType { Knob, Itervar, Curve };
/// "knob", "itervar" or "curve"; tb::UserError for another name.
FeatureType featureTypeFromName(const std::string& name);
const char* featureTypeName(FeatureType type);

/// TVM touch_extractor.h TouchPattern: the access `buf[stride * var + ...]` seen from one loop.
struct TouchPattern {
    std::int64_t stride = 0;
    std::int64_t mod = -1;  ///< -1 = +inf (TVM never sets it)
    std::int64_t count = 1;
    std::int64_t reuse = 1;
    std::int64_t threadCount = 0;
    std::int64_t threadReuse = 0;
};

/// TVM AnnotationType, in TVM's order (the one-hot positions).
enum class LoopAnnotation { BlockX, BlockY, BlockZ, ThreadX, ThreadY, ThreadZ, Unrolled, Vectorized, Parallel, Serial,
                            VirtualThread };
inline constexpr int kNumLoopAnnotations = 11;

/// TVM ItervarFeature: one loop of the program (one row of get_itervar_feature).
struct ItervarFeature {
    std::string var;  ///< the loop's name: the IR variable, or `<iterator>` for a loop of length 1
    std::int64_t length = 0;
    int nestLevel = 0;  ///< 1 for an outermost loop
    LoopAnnotation ann = LoopAnnotation::Serial;
    std::int64_t topdownProduct = 1;
    std::int64_t bottomupProduct = -1;
    int addCt = 0, mulCt = 0, divCt = 0;
    std::map<std::string, TouchPattern> touch;  ///< by access name `<buffer>_<n>`
};

/// TVM get_itervar_feature without take_log: the loops of `inst`'s program in program order.
/// Throws tb::UserError when the program cannot be lowered, tb::InternalError when the lowered IR
/// does not have the loops and stores the State says it has.
std::vector<ItervarFeature> itervarFeatures(const TemplateInstance& inst);

/// TVM get_itervar_feature_flatten(take_log): the rows of itervarFeatures flattened, each
/// 4 + 11 + 3 + 6 x (accesses below the loop) floats.
std::vector<float> itervarFeatureFlatten(const TemplateInstance& inst, bool takeLog = true);

/// TVM get_buffer_curve_sample_flatten(sample_n): 8 x sampleN floats per innermost buffer.
std::vector<float> curveSampleFeatureFlatten(const TemplateInstance& inst, int sampleN = 30);

/// TVM ConfigEntity.get_flatten_feature: the knob values of `config` (a point of `space`).
std::vector<float> knobFeatures(const ConfigSpace& space, const ConfigEntity& config);

/// TVM `_extract_{knob,itervar,curve}_feature_index`: the features XGBoostCostModel uses for
/// `config` of `task` (itervar: take_log; curve: sample_n = 20; both followed by the other-option
/// values). Throws what instantiation and itervarFeatures throw.
std::vector<float> configFeatures(const Task& task, const ConfigEntity& config, FeatureType type);

}  // namespace tb::autotvm
