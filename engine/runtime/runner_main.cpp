// SPDX-License-Identifier: Apache-2.0
// tunebench-runner: runs a network exported by `tunebench-cli compile --export DIR` in a process
// that has no compiler: dlopen(DIR/deploy_lib.so), the graph from DIR/deploy_graph.json, the
// constants from DIR/deploy_param.params, inputs and outputs as ONNX TensorProto (.pb) files.
//
//   tunebench-runner DIR --input X.pb [--input Y.pb ...] [--output OUT.pb ...] [--repeat N --number M]
//
// Inputs are matched to the graph inputs by tensor name when the names match, else by position.
// The kernel ABI the library's kernels import (engine/codegen/kernel_abi.h: tb_rt_parallel_for,
// tb_rt_alloc, tb_rt_free) is linked in from tb::kernel_runtime and exported from this executable,
// as libtvm_runtime provides TVMBackendParallelLaunch to TVM's exported libraries.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/graph/tensor_io.h"
#include "engine/runtime/benchmark.h"
#include "engine/runtime/deployed_network.h"
#include "engine/support/error.h"
#include "engine/support/process.h"

namespace {

int usage() {
    std::fprintf(stderr,
                 "Usage: tunebench-runner DIR --input X.pb [--input ...] [--output OUT.pb ...] [--repeat N] "
                 "[--number M]\n");
    return 2;
}

int run(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string dir = argv[1];
    std::vector<std::string> inputs, outputs;
    int repeat = 0, number = 1;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            TB_USER_CHECK(i + 1 < argc) << a << " needs a value";
            return argv[++i];
        };
        if (a == "--input") inputs.push_back(value());
        else if (a == "--output") outputs.push_back(value());
        else if (a == "--repeat") repeat = std::atoi(value().c_str());
        else if (a == "--number") number = std::max(1, std::atoi(value().c_str()));
        else return usage();
    }
    const auto net = tb::runtime::DeployedNetwork::loadDirectory(dir);
    tb::runtime::GraphRuntime& rt = net->runtime();
    TB_USER_CHECK(inputs.size() == rt.numInputs())
        << "the network has " << rt.numInputs() << " inputs, " << inputs.size() << " given";
    for (size_t i = 0; i < inputs.size(); ++i) {
        tb::graph::NamedTensor t = tb::graph::readTensorFile(inputs[i]);
        const int byName = rt.inputIndex(t.name);
        const size_t index = byName >= 0 ? size_t(byName) : i;
        TB_USER_CHECK(t.data.type.shape == rt.inputShape(index))
            << inputs[i] << ": shape does not match input '" << rt.graph().nodes[size_t(rt.graph().inputs[index])].name
            << "'";
        rt.setInput(index, t.data.f.data(), t.data.f.size());
    }
    rt.run();
    for (size_t i = 0; i < rt.numOutputs(); ++i) {
        const auto& shape = rt.outputShape(i);
        std::string s;
        for (size_t d = 0; d < shape.size(); ++d) s += (d ? "x" : "") + std::to_string(shape[d]);
        std::printf("output %zu: %s\n", i, s.c_str());
        if (i < outputs.size()) tb::graph::writeTensorFile(outputs[i], "output_" + std::to_string(i), shape, rt.output(i));
    }
    if (repeat > 0) {
        std::vector<double> results;
        for (int r = 0; r < repeat; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int k = 0; k < number; ++k) rt.run();
            results.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / number);
        }
        std::printf("%s\n", tb::runtime::BenchmarkResult::fromResults(results).summary().c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return tb::runMain([&] { return run(argc, argv); }); }
