// SPDX-License-Identifier: Apache-2.0
#include "tests/engine/test_measure_util.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "engine/codegen/codegen_llvm.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/target.h"

namespace tb::test {

using te::Expr;
using te::Var;

std::shared_ptr<lower::LoweredFunc> vectorAdd(int64_t n, bool subtract, int64_t offset) {
    using namespace lower;
    auto A = makeBuffer("A", {kN}), B = makeBuffer("B", {kN}), C = makeBuffer("C", {kN});
    Var i("i");
    Expr rhs = subtract ? bufferLoad(A, {i}) - bufferLoad(B, {i}) : bufferLoad(A, {i}) + bufferLoad(B, {i});
    if (n > kN) rhs = te::floatImm(1.0);  // the out-of-bounds candidate must not read past A/B either
    auto f = std::make_shared<LoweredFunc>();
    f->name = "vadd";
    f->args = {A, B, C};
    f->body = makeFor(i, n, ForKind::Serial, makeStore(C, {i + te::intImm(offset)}, rhs));
    return f;
}

std::shared_ptr<lower::LoweredFunc> endlessLoop() { return dependentAdds(int64_t(1) << 62); }

std::shared_ptr<lower::LoweredFunc> dependentAdds(int64_t n) {
    using namespace lower;
    auto A = makeBuffer("A", {kN}), B = makeBuffer("B", {kN}), C = makeBuffer("C", {kN});
    Var i("i");
    auto f = std::make_shared<LoweredFunc>();
    f->name = "spin";
    f->args = {A, B, C};
    f->body = makeFor(i, te::intImm(0), te::intImm(n), ForKind::Serial,
                      makeStore(C, {Expr(0)}, bufferLoad(C, {Expr(0)}) * bufferLoad(A, {Expr(1)}) + te::floatImm(1.0)));
    return f;
}

std::shared_ptr<measure::CheckSpec> addCheck() {
    auto c = std::make_shared<measure::CheckSpec>();
    std::vector<float> a(kN), b(kN, 1.f), sum(kN);
    for (int64_t i = 0; i < kN; ++i) {
        a[size_t(i)] = float(i);
        sum[size_t(i)] = float(i) + 1.f;
    }
    c->inputs = {a, b, {}};
    c->expected = {{}, {}, sum};
    return c;
}

measure::MeasureInput input(std::shared_ptr<lower::LoweredFunc> f, std::shared_ptr<measure::CheckSpec> check) {
    measure::MeasureInput in;
    in.func = std::move(f);
    in.check = std::move(check);
    return in;
}

std::vector<std::vector<float>> runCompiled(const lower::LoweredFunc& f, const te::ComputeDAG& dag,
                                            const std::vector<te::Buffer>& inputs) {
    codegen::CompileOptions fast;
    fast.emitLlvmIr = false;
    fast.emitAssembly = false;
    const auto k = codegen::compile(f, codegen::Target::host(), fast);
    const auto loaded = codegen::LoadedKernel::load(k.object, k.name);
    std::vector<std::vector<float>> bufs;
    size_t in = 0;
    const auto ins = dag.inputs();
    auto isInput = [&](const te::Tensor& t) { return std::find(ins.begin(), ins.end(), t) != ins.end(); };
    for (const auto& t : dag.tensors()) {
        if (isInput(t)) bufs.push_back(inputs.at(in++).data);
        else bufs.emplace_back(size_t(std::max<int64_t>(t.numElements(), 1)), std::numeric_limits<float>::quiet_NaN());
    }
    std::vector<float*> ptrs;
    for (auto& b : bufs) ptrs.push_back(b.data());
    if (loaded->run(ptrs) != 0) throw std::runtime_error("kernel returned non-zero");
    std::vector<std::vector<float>> outs;
    for (size_t i = 0; i < dag.tensors().size(); ++i)
        if (!isInput(dag.tensors()[i])) outs.push_back(std::move(bufs[i]));
    return outs;
}

}  // namespace tb::test
