// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file tags.h
/// \brief Operation tags of TVM's topi (include/tvm/topi/tags.h, python/tvm/topi/tag.py).
///
/// A tag is a free-form string on a compute op that schedules (and our sketch rules) use to
/// recognise an operator family: "elemwise", "broadcast", "injective", "comm_reduce", "conv2d_nhwc",
/// "dense", ... Tags are not part of the printed DAG, so they never change a workload key; they are
/// kept identical to TVM's so that tag-driven logic ported from TVM reads the same.

namespace tb::topi::tag {

inline constexpr const char* kElementWise = "elemwise";
inline constexpr const char* kInjective = "injective";
inline constexpr const char* kCommReduce = "comm_reduce";
inline constexpr const char* kCommReduceIdx = "comm_reduce_idx";
inline constexpr const char* kBroadcast = "broadcast";
/// python topi.nn.pad: `tag.INJECTIVE + ",pad"`.
inline constexpr const char* kPad = "injective,pad";
/// python topi.nn.dilate: `tag.INJECTIVE + ",dilate"`.
inline constexpr const char* kDilate = "injective,dilate";

}  // namespace tb::topi::tag
