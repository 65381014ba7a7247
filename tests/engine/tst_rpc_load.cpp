// SPDX-License-Identifier: Apache-2.0
// A bounded load test on 127.0.0.1: 32 RPC servers register with one tracker; 8 client threads
// make 500 requests in all, each a REQUEST + handshake + upload + run + close. Every request must
// succeed, every server must end up offered again, and the rate is reported with qInfo.
#include <QtTest>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "engine/rpc/rpc_server.h"
#include "engine/rpc/rpc_session.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"

using namespace tb::rpc;

namespace {

class InstantExecutor : public MeasureExecutor {
public:
    RunReply run(const RunRequest& r) override {
        RunReply rep;
        rep.costs.assign(size_t(r.repeat), 1e-6);
        return rep;
    }
};

}  // namespace

class TestRpcLoad : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testManyServersManyRequests() {
        constexpr int kServers = 32, kClients = 8, kRequests = 500;
        TrackerOptions to;
        to.host = "127.0.0.1";
        to.port = 0;
        Tracker tracker(to);
        tracker.start();
        auto exec = std::make_shared<InstantExecutor>();
        std::vector<std::unique_ptr<RpcServer>> servers;
        for (int i = 0; i < kServers; ++i) {
            RpcServerOptions o;
            o.host = "127.0.0.1";
            o.port = 0;
            o.key = "load";
            o.trackerHost = "127.0.0.1";
            o.trackerPort = tracker.port();
            o.trackerRetryPeriodMs = 100;
            servers.push_back(std::make_unique<RpcServer>(o, exec));
            servers.back()->start();
        }
        TrackerSession q = TrackerSession::connect("127.0.0.1", tracker.port());
        QTRY_VERIFY_WITH_TIMEOUT(q.summary().queue("load") && q.summary().queue("load")->free == kServers, 10000);

        std::atomic<int> next{0}, ok{0}, failed{0};
        QElapsedTimer timer;
        timer.start();
        std::vector<std::thread> clients;
        for (int c = 0; c < kClients; ++c) {
            clients.emplace_back([&] {
                try {
                    TrackerSession t = TrackerSession::connect("127.0.0.1", tracker.port());
                    while (next.fetch_add(1) < kRequests) {
                        try {
                            RpcSession s = requestSession(t, "load", 1, {}, 5, 10000);
                            s.upload("k.so", "blob");
                            RunRequest r;
                            r.module = "k.so";
                            r.repeat = 2;
                            const RunReply rep = s.run(r);
                            s.close();
                            (rep.errorNo == 0 && rep.costs.size() == 2 ? ok : failed)++;
                        } catch (const RpcError& e) {
                            qWarning("request failed: %s", e.what());
                            ++failed;
                        }
                    }
                } catch (const RpcError& e) {
                    qWarning("client failed: %s", e.what());
                    ++failed;
                }
            });
        }
        for (auto& th : clients) th.join();
        const double secs = double(timer.nsecsElapsed()) / 1e9;
        qInfo("%d requests (%d servers, %d clients) in %.3f s: %.0f requests/s", kRequests, kServers, kClients, secs,
              kRequests / secs);
        QCOMPARE(failed.load(), 0);
        QCOMPARE(ok.load(), kRequests);
        long long served = 0;
        for (const auto& s : servers) served += s->sessionsServed();
        QCOMPARE(served, (long long)kRequests);
        // Nothing lost or stuck: every server offers itself again and nobody waits.
        QTRY_VERIFY_WITH_TIMEOUT(q.summary().queue("load")->free == kServers, 10000);
        QCOMPARE(q.summary().queue("load")->pending, 0ll);
        QCOMPARE(int(q.summary().servers.size()), kServers);
    }
};

QTEST_APPLESS_MAIN(TestRpcLoad)
#include "tst_rpc_load.moc"
