// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file test_util.h
/// \brief Helpers shared by the engine tests (library tb_test_util, links tb::te and Qt Core):
/// the small DAGs several tests tune, lower or search, seeded random data, the float comparison
/// the lowering tests use against the reference interpreter, and the UserError catcher.
///
/// They live here instead of as copies in each tst_*.cpp so that a DAG or a tolerance means the same
/// thing in every test. Helpers that need codegen or measure are in test_measure_util.h.

#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/search/search_task.h"
#include "engine/support/error.h"
#include "engine/te/compute_dag.h"
#include "engine/te/interpreter.h"

namespace tb::test {

/// TVM's tutorial workload `matmul_add` (gallery/how_to/tune_with_autoscheduler/tune_matmul_x86.py):
/// out[n, m] = sum_k A[n, k] * B[k, m] + C[n, m], B layout-free. Tensors: A, B, C, out.
std::shared_ptr<const te::ComputeDAG> matmulAdd(int64_t n, int64_t l, int64_t m);

/// conv2d_nhwc 3x3, stride 1, pad 1 on a 1 x h x h x ci input with a 3 x 3 x ci x co kernel (p0, p1;
/// the kernel layout-free), [+ bias p2 (1 x 1 x 1 x co) as T_add] + relu (T_relu), as topi builds
/// it and Relay fuses resnet's layers. Stages: p0 pad_temp p1 conv2d_nhwc [p2 T_add] T_relu.
std::shared_ptr<const te::ComputeDAG> conv2dNhwcRelu(int64_t h, int64_t ci, int64_t co, bool bias);

/// TVM's tutorial workload `conv2d_layer` (tune_conv2d_layer_cuda.py, the DAG of TVM's CUDA record
/// ../shared/data/logs/ansor/tvm_ci_conv2d.json): topi conv2d_nchw (stride, padding on both sides)
/// + bias [1, co, 1, 1] (T_add) + relu (T_relu), io tensors [data, kernel, bias, out]. Stages:
/// data pad_temp kernel conv2d_nchw bias T_add T_relu.
std::shared_ptr<const te::ComputeDAG> conv2dLayer(int64_t n, int64_t h, int64_t w, int64_t co, int64_t ci, int64_t kh,
                                                  int64_t kw, int64_t stride, int64_t pad);

/// TVM's CUDA target string of the conv2d_layer record.
inline constexpr const char* kCudaTarget = "cuda -keys=cuda,gpu -max_num_threads=1024 -thread_warp_size=32";

/// A search task of `dag` for a GPU target: workload key from the DAG, `target`, `hw` (default: an
/// NVIDIA GPU's limits, HardwareParams::gpu(49152, 1024, 32)).
search::SearchTask gpuSearchTask(std::shared_ptr<const te::ComputeDAG> dag, const std::string& target = kCudaTarget,
                                 HardwareParams hw = HardwareParams::gpu(49152, 1024, 32));

/// n floats drawn uniformly from [lo, hi) by std::mt19937(seed) (deterministic per seed).
std::vector<float> randomData(size_t n, unsigned seed, float lo = -1.f, float hi = 1.f);

/// A buffer of `shape` filled as randomData(numElements, seed, lo, hi).
te::Buffer randomBuffer(std::vector<int64_t> shape, unsigned seed, float lo = -1.f, float hi = 1.f);

/// One random buffer per dag.inputs() (in that order), uniform in [-1, 1), all drawn from one
/// std::mt19937(seed) stream.
std::vector<te::Buffer> randomInputs(const te::ComputeDAG& dag, unsigned seed);

/// Empty when there are outputs and every element of `got` is within 2e-3 * max(1, |want|) of
/// `want` (float32 accumulation in another order than the interpreter's double sums stays far below
/// this for the tests' sizes; NaN never passes); else a description of the first mismatch.
QString compareOutputs(const std::vector<std::vector<float>>& got, const std::vector<te::Buffer>& want);

/// The UserError message of f(), or a marker when f() throws something else or nothing.
template <class F>
QString userError(F&& f) {
    try {
        f();
    } catch (const UserError& e) {
        return QString::fromStdString(e.what());
    } catch (const std::exception& e) {
        return QStringLiteral("<not a UserError: %1>").arg(QString::fromStdString(e.what()));
    }
    return QStringLiteral("<no error>");
}

}  // namespace tb::test
