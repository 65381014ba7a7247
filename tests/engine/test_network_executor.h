// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file test_network_executor.h
/// \brief A MeasureExecutor for RpcServers that tests start in process: it serves the whole-network
/// call (`tunebench.graph_executor.benchmark`) on this machine with the device server's own function
/// (runtime::runNetworkRequest) and times no kernels. Header only; the test links tb::runtime and
/// tb::kernel_runtime and sets ENABLE_EXPORTS (the exported library needs the kernel ABI symbols).

#include "engine/rpc/measure_executor.h"
#include "engine/rpc/network_call.h"
#include "engine/runtime/network_executor.h"

namespace tb::test {

class HostNetworkExecutor final : public rpc::MeasureExecutor {
public:
    rpc::RunReply run(const rpc::RunRequest&) override {
        rpc::RunReply r;
        r.errorNo = rpc::kErrorNoUnknown;
        r.errorMsg = "this test server times no kernels";
        return r;
    }
    rpc::CallReply call(const rpc::CallRequest& c) override {
        if (c.function != rpc::kGraphBenchmarkFunction) return MeasureExecutor::call(c);
        const rpc::NetworkRunRequest req = rpc::networkRunRequestFromCall(c);
        return rpc::toCallReply(
            runtime::runNetworkRequest(req, c.uploads.at(req.lib), c.uploads.at(req.graph), c.uploads.at(req.params), 1));
    }
};

}  // namespace tb::test
