// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/network_executor.h"

#include <chrono>
#include <memory>
#include <vector>

#include "engine/measure/timer.h"
#include "engine/runtime/deployed_network.h"
#include "engine/support/error.h"

namespace tb::runtime {

rpc::NetworkRunReply runNetworkRequest(const rpc::NetworkRunRequest& req, const std::string& libPath,
                                       const std::string& graphPath, const std::string& paramsPath, int threads) {
    using Clock = std::chrono::steady_clock;
    rpc::NetworkRunReply r;
    r.threads = threads;
    std::unique_ptr<DeployedNetwork> net;
    auto t0 = Clock::now();
    try {
        net = DeployedNetwork::load(libPath, readFileBytes(graphPath), readFileBytes(paramsPath), req.graph, req.params);
    } catch (const std::exception& e) {
        r.errorNo = rpc::kErrorNoCompileDevice;
        r.errorMsg = e.what();
        return r;
    }
    r.loadSec = std::chrono::duration<double>(Clock::now() - t0).count();
    GraphRuntime& rt = net->runtime();
    try {
        std::vector<bool> given(rt.numInputs(), false);
        for (const auto& in : req.inputs) {
            const int index = rt.inputIndex(in.name);
            TB_USER_CHECK(index >= 0) << "the network has no input '" << in.name << "'";
            TB_USER_CHECK(in.shape == rt.inputShape(size_t(index))) << "input '" << in.name << "' has the wrong shape";
            rt.setInput(size_t(index), in.data.data(), in.data.size());
            given[size_t(index)] = true;
        }
        for (size_t i = 0; i < given.size(); ++i)
            TB_USER_CHECK(given[i]) << "input '" << rt.graph().nodes[size_t(rt.graph().inputs[i])].name
                                    << "' was not given";
    } catch (const std::exception& e) {
        r.errorNo = rpc::kErrorNoUnknown;
        r.errorMsg = e.what();
        return r;
    }
    try {
        t0 = Clock::now();
        rt.run();
        r.firstRunSec = std::chrono::duration<double>(Clock::now() - t0).count();
        for (size_t i = 0; i < rt.numOutputs(); ++i)
            r.outputs.push_back({"output_" + std::to_string(i), rt.outputShape(i), rt.output(i)});
        for (int node : req.debugNodes) {
            TB_USER_CHECK(node < int(rt.graph().nodes.size())) << "debug node " << node << " out of range";
            const ExecNode& n = rt.graph().nodes[size_t(node)];
            r.debugOutputs.push_back({n.name, n.shape, rt.nodeValue(node)});
        }
        measure::TimerOptions t;
        t.number = req.number;
        t.repeat = req.repeat;
        t.minRepeatMs = req.minRepeatMs;
        t.skipWarmup = true;
        r.costs = measure::timeEvaluate([&rt] { rt.run(); }, t);
    } catch (const std::exception& e) {
        r.errorNo = rpc::kErrorNoRuntimeDevice;
        r.errorMsg = e.what();
        r.outputs.clear();
        r.debugOutputs.clear();
    }
    return r;
}

}  // namespace tb::runtime
