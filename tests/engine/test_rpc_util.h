// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file test_rpc_util.h
/// \brief Helpers shared by the RPC tests (header only; links nothing beyond tb::rpc): the
/// options of an RpcServer that the tests start beside an in-process tracker on the loopback, and
/// waiting until a fleet has registered.

#include <chrono>
#include <string>
#include <thread>

#include "engine/rpc/rpc_server.h"
#include "engine/rpc/tracker_client.h"

namespace tb::test {

/// An RpcServer on 127.0.0.1 (any free port) that registers `key` with the tracker at
/// 127.0.0.1:trackerPort, with periods short enough for tests: ping 100 ms, unmatch timeout
/// 200 ms, tracker reconnection every 100 ms (TVM's defaults are 2 s, 4 s and 1 s).
inline rpc::RpcServerOptions serverOptions(int trackerPort, const std::string& key) {
    rpc::RpcServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.key = key;
    o.trackerHost = "127.0.0.1";
    o.trackerPort = trackerPort;
    o.pingPeriodMs = 100;
    o.unmatchTimeoutMs = 200;
    o.trackerRetryPeriodMs = 100;
    return o;
}

// Polls until `n` servers of `key` are listed and each has a free resource (bounded: 30 s).
inline bool waitForServers(int trackerPort, const std::string& key, int n) {
    for (int i = 0; i < 300; ++i) {
        try {
            rpc::ConnectOptions co;
            co.retryTimeoutMs = 0;
            auto t = rpc::TrackerSession::connect("127.0.0.1", trackerPort, co);
            const auto s = t.summary();
            int listed = 0;
            for (const auto& srv : s.servers) listed += srv.key == "server:" + key;
            const auto* q = s.queue(key);
            if (listed == n && q && q->free == n) return true;
        } catch (const rpc::RpcError&) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

}  // namespace tb::test
