// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file target_info.h
/// \brief The two facts of a TVM target string that record lookup needs: its keys and its model.
///
/// ApplyHistoryBest (auto_scheduler/dispatcher.py, autotvm/task/dispatcher.py) files every valid
/// record under each of its target's *keys* (`cpu`, `arm_cpu`, `gpu`, ...) and under its `-model=`
/// (unless "unknown"), so a log tuned for `llvm -keys=cpu -mcpu=skylake` serves any `llvm` query.
/// This is a deliberately small parser of TVM's target string syntax (`kind -attr=value -flag`),
/// independent of the codegen target layer, computing keys as TVM's
/// TargetInternal::FromConfig does: the user's `-keys=a,b`, then `-device=`, then (only if no
/// `-keys` was given) the kind's default keys, de-duplicated in order.

#include <string>
#include <string_view>
#include <vector>

namespace tb::record {

struct TargetInfo {
    std::string kind;                ///< "llvm", "cuda", "opencl", ...
    std::vector<std::string> keys;   ///< as TVM's Target.keys, in order
    std::string model = "unknown";   ///< `-model=` or TVM's default "unknown"
    std::string device;              ///< `-device=` or empty
};

/// Parses a TVM target string (e.g. "opencl -model=rk3399 -device=mali" gives keys
/// mali, opencl, gpu and model rk3399). Unknown attributes are ignored; never throws (an empty
/// string gives an empty kind and no keys).
TargetInfo parseTargetInfo(std::string_view target);

}  // namespace tb::record
