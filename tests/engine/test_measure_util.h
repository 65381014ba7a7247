// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file test_measure_util.h
/// \brief Helpers shared by the tests that compile or measure programs (library
/// tb_test_measure_util, links tb::measure): hand-written candidates whose misbehaviour is known
/// (a correct vector add, one writing out of bounds or far away, one that never ends), their check
/// spec, and running a lowered function in process to compare it with the reference interpreter.

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/lower/loop_ir.h"
#include "engine/measure/measure.h"
#include "engine/te/compute_dag.h"
#include "engine/te/interpreter.h"

namespace tb::test {

/// The length of vectorAdd's buffers A, B, C.
inline constexpr int64_t kN = 1024;

/// C[i + offset] = A[i] + B[i] (A[i] - B[i] with `subtract`) for i in [0, n), over kN-element
/// buffers. n = kN is correct; n > kN stores one past the end (and stores the constant 1 so that it
/// reads nothing out of bounds); offset = -2^40 stores 4 TiB below C (SIGSEGV).
std::shared_ptr<lower::LoweredFunc> vectorAdd(int64_t n = kN, bool subtract = false, int64_t offset = 0);

/// 2^62 dependent float additions into C[0] over kN-element A, B, C: never finishes.
std::shared_ptr<lower::LoweredFunc> endlessLoop();
/// `n` dependent float multiply-adds into C[0] over kN-element A, B, C (about n x 4 cycles).
std::shared_ptr<lower::LoweredFunc> dependentAdds(int64_t n);

/// vectorAdd's check: A = 0..kN-1, B = 1, expected C = A + B.
std::shared_ptr<measure::CheckSpec> addCheck();

/// A measure input for `f` with an optional check.
measure::MeasureInput input(std::shared_ptr<lower::LoweredFunc> f, std::shared_ptr<measure::CheckSpec> check = nullptr);

/// Compiles `f` (lowered from `dag`, arguments in dag.tensors() order) for the host, runs it in this
/// process on `inputs` (dag.inputs() order) and returns its outputs (the non-input tensors, in
/// dag.tensors() order). Outputs start as NaN so that an unwritten element cannot pass.
/// Throws std::runtime_error when the kernel returns non-zero; codegen errors propagate.
std::vector<std::vector<float>> runCompiled(const lower::LoweredFunc& f, const te::ComputeDAG& dag,
                                            const std::vector<te::Buffer>& inputs);

}  // namespace tb::test
