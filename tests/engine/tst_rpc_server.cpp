// SPDX-License-Identifier: Apache-2.0
// RpcServer end to end on 127.0.0.1: registration with the tracker as TVM's rpc_server does,
// REQUEST + data-plane handshake (token ok / wrong token / wrong match key, exact bytes), a
// measurement session through a fake executor, session protocol errors, the stale-key re-PUT,
// stalled half-handshakes not delaying other clients, and surviving a tracker restart.
#include <QtTest>

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>

#include "engine/rpc/rpc_server.h"
#include "engine/rpc/rpc_session.h"
#include "engine/rpc/socket.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"
#include "engine/support/error.h"
#include "tests/engine/test_rpc_util.h"

using namespace tb::rpc;
using tb::test::serverOptions;

namespace {

// Stands in for engine/measure's sandbox runner: reads the uploaded file and answers with costs
// derived from the request, so the test sees that every field made the trip.
class FakeExecutor : public MeasureExecutor {
public:
    RunReply run(const RunRequest& r) override {
        std::lock_guard<std::mutex> lock(mu);
        last = r;
        std::ifstream f(r.modulePath, std::ios::binary);
        lastBlob.assign(std::istreambuf_iterator<char>(f), {});
        ++runs;
        if (r.function == "throw") throw std::runtime_error("executor exploded");
        RunReply rep;
        if (r.function == "fail") {
            rep.errorNo = kErrorNoRuntimeDevice;
            rep.errorMsg = "segfault in candidate";
            return rep;
        }
        for (int i = 0; i < r.repeat; ++i) rep.costs.push_back(1e-3 * (i + 1) / r.number);
        return rep;
    }
    std::mutex mu;
    RunRequest last;
    std::string lastBlob;
    int runs = 0;
};

std::unique_ptr<Tracker> startTracker(int port = 0) {
    TrackerOptions o;
    o.host = "127.0.0.1";
    o.port = port;
    auto t = std::make_unique<Tracker>(o);
    t->start();
    return t;
}

// The free count of `key` and whether "server:<key>" is listed, from a fresh connection.
std::pair<long long, int> status(int trackerPort, const std::string& key) {
    try {
        TrackerSession q = TrackerSession::connect("127.0.0.1", trackerPort);
        const TrackerSummary s = q.summary();
        int listed = 0;
        for (const auto& srv : s.servers) listed += srv.key == "server:" + key;
        return {s.queue(key) ? s.queue(key)->free : -1, listed};
    } catch (const RpcError&) {
        return {-2, -2};
    }
}

std::string rawHello(const std::string& text) {
    std::string out;
    appendLe32(out, kRpcMagic);
    appendLe32(out, int(text.size()));
    return out + text;
}

std::string readAllUntilClose(int fd, int timeoutMs) {
    std::string out;
    const Deadline d = deadlineAfterMs(timeoutMs);
    for (;;) {
        char c;
        try {
            recvAll(fd, &c, 1, d);
        } catch (const RpcError& e) {
            if (e.kind() == RpcError::Kind::kClosed) return out;
            throw;
        }
        out.push_back(c);
    }
}

// A server without a tracker on a free loopback port: its match key is the device key "solo".
RpcServerOptions soloOptions() {
    RpcServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.key = "solo";
    return o;
}

// True while the peer has neither closed `fd` nor sent anything on it.
bool quietAndOpen(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
}

}  // namespace

class TestRpcServer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void testRegistersLikeTvm() {
        auto t = startTracker();
        auto exec = std::make_shared<FakeExecutor>();
        RpcServer server(serverOptions(t->port(), "fake"), exec);
        server.start();
        QTRY_VERIFY_WITH_TIMEOUT(server.registered(), 3000);
        QTRY_COMPARE_WITH_TIMEOUT(status(t->port(), "fake"), (std::pair<long long, int>{1, 1}), 3000);
        TrackerSession q = TrackerSession::connect("127.0.0.1", t->port());
        const TrackerSummary s = q.summary();
        QCOMPARE(s.servers[0].addr, (std::vector<std::string>{"127.0.0.1", std::to_string(server.port())}));
        QVERIFY(server.currentMatchKey().rfind("fake:0.", 0) == 0);
        // The text summary a user sees through query-tracker.
        const std::string text = textSummary(s);
        QVERIFY(text.find("127.0.0.1:" + std::to_string(server.port())) != std::string::npos);
        QVERIFY(text.find("fake   1      1     0      \n") != std::string::npos);
    }

    void testSessionThroughTracker() {
        auto t = startTracker();
        auto exec = std::make_shared<FakeExecutor>();
        RpcServerOptions o = serverOptions(t->port(), "fake");
        o.token = "s3cret";
        RpcServer server(o, exec);
        server.start();
        QTRY_COMPARE_WITH_TIMEOUT(status(t->port(), "fake").first, 1ll, 3000);

        TrackerSession tracker = TrackerSession::connect("127.0.0.1", t->port());
        SessionOptions so;
        so.token = "s3cret";
        RpcSession sess = requestSession(tracker, "fake", 1, so);
        QCOMPARE(sess.serverKey(), std::string("server:fake"));
        const std::string blob("\x7f" "ELF\0\1binary", 11);
        sess.upload("kernel.so", blob);
        RunRequest req;
        req.module = "kernel.so";
        req.function = "default_function";
        req.number = 4;
        req.repeat = 3;
        req.minRepeatMs = 0;
        req.enableCpuCacheFlush = true;
        req.args = {{{1, 56, 56, 64}, "float32"}, {{3, 3, 64, 64}, "float32"}};
        req.timeoutSec = 5;
        const RunReply rep = sess.run(req);
        QCOMPARE(rep.errorNo, 0);
        QCOMPARE(rep.costs, (std::vector<double>{0.25e-3, 0.5e-3, 0.75e-3}));
        QVERIFY(rep.elapsedSec >= 0);
        {
            std::lock_guard<std::mutex> lock(exec->mu);
            QCOMPARE(exec->lastBlob, blob);
            QCOMPARE(exec->last.number, 4);
            QCOMPARE(exec->last.enableCpuCacheFlush, true);
            QCOMPARE(exec->last.args[0].shape, (std::vector<std::int64_t>{1, 56, 56, 64}));
            QCOMPARE(exec->last.function, std::string("default_function"));
        }
        // Failures are data; an executor exception becomes UNKNOWN_ERROR; a missing module, error 3.
        req.function = "fail";
        QCOMPARE(sess.run(req).errorNo, kErrorNoRuntimeDevice);
        req.function = "throw";
        const RunReply thrown = sess.run(req);
        QCOMPARE(thrown.errorNo, kErrorNoUnknown);
        QCOMPARE(thrown.errorMsg, std::string("executor exploded"));
        req.module = "missing.so";
        QCOMPARE(sess.run(req).errorNo, kErrorNoCompileDevice);
        sess.close();
        QCOMPARE(server.sessionsServed(), 1ll);
        // After the session the server offers itself again with a fresh key.
        QTRY_COMPARE_WITH_TIMEOUT(status(t->port(), "fake").first, 1ll, 3000);
    }

    void testHandshakeBytesAndRejections() {
        auto t = startTracker();
        auto exec = std::make_shared<FakeExecutor>();
        RpcServerOptions o = serverOptions(t->port(), "fake");
        o.token = "tok";
        o.pingPeriodMs = 2000;  // keep the match key stable during this test
        RpcServer server(o, exec);
        server.start();
        QTRY_COMPARE_WITH_TIMEOUT(status(t->port(), "fake").first, 1ll, 3000);
        TrackerSession tracker = TrackerSession::connect("127.0.0.1", t->port());
        const DeviceAssignment a = tracker.request("fake", 1, 2000);
        QCOMPARE(a.port, server.port());

        // Wrong match key: MISMATCH (73 f2 0f 00) and close.
        {
            Socket s = connectTcp("127.0.0.1", a.port, 2000);
            const std::string hello = rawHello("client:fake:0.123 -token=tok");
            sendAll(s.fd(), hello.data(), hello.size(), deadlineAfterMs(2000));
            QCOMPARE(readAllUntilClose(s.fd(), 2000), std::string("\x73\xf2\x0f\x00", 4));
        }
        // Right key, wrong or missing token: MISMATCH too.
        for (const std::string suffix : {" -token=bad", "", " -timeout=5"}) {
            Socket s = connectTcp("127.0.0.1", a.port, 2000);
            const std::string hello = rawHello("client:" + a.matchKey + suffix);
            sendAll(s.fd(), hello.data(), hello.size(), deadlineAfterMs(2000));
            QCOMPARE(readAllUntilClose(s.fd(), 2000), std::string("\x73\xf2\x0f\x00", 4));
        }
        SessionOptions wrong;
        wrong.token = "bad";
        try {
            RpcSession::connect(a.host, a.port, a.matchKey, wrong);
            QFAIL("a wrong token must be rejected");
        } catch (const RpcError& e) {
            QCOMPARE(int(e.kind()), int(RpcError::Kind::kRejected));
        }
        QCOMPARE(server.sessionsServed(), 0ll);
        // Rejections do not consume the key: the right greeting is still accepted, byte-exact.
        {
            Socket s = connectTcp("127.0.0.1", a.port, 2000);
            const std::string hello = rawHello("client:" + a.matchKey + " -timeout=60 -token=tok");
            sendAll(s.fd(), hello.data(), hello.size(), deadlineAfterMs(2000));
            std::string reply(4 + 4 + 11, '\0');
            recvAll(s.fd(), reply.data(), reply.size(), deadlineAfterMs(2000));
            QCOMPARE(reply, std::string("\x71\xf2\x0f\x00\x0b\x00\x00\x00server:fake", 19));
            // Garbage instead of a session message: kError, then close; the server lives on.
            const std::string junk(16, '\xff');
            sendAll(s.fd(), junk.data(), junk.size(), deadlineAfterMs(2000));
            const std::string rest = readAllUntilClose(s.fd(), 2000);
            QVERIFY(rest.size() > 16);
            QCOMPARE(readLe32(rest.data() + 8), int(SessionOp::kError));
            QVERIFY(rest.find("session message of") != std::string::npos);
        }
        QCOMPARE(server.sessionsServed(), 1ll);
        QTRY_COMPARE_WITH_TIMEOUT(status(t->port(), "fake").first, 1ll, 3000);
    }

    void testSessionProtocolErrors() {
        auto exec = std::make_shared<FakeExecutor>();
        RpcServerOptions o = soloOptions();
        o.maxMessageBytes = 4096;
        RpcServer server(o, exec);
        server.start();
        {
            RpcSession s = RpcSession::connect("127.0.0.1", server.port(), "solo");
            try {
                s.upload("../evil.so", "x");
                QFAIL("a path must be refused");
            } catch (const RpcError& e) {
                QCOMPARE(int(e.kind()), int(RpcError::Kind::kRemote));
                QVERIFY(std::string(e.what()).find("plain file name") != std::string::npos);
            }
            QVERIFY(!s.connected());
        }
        {
            RpcSession s = RpcSession::connect("127.0.0.1", server.port(), "solo");
            try {
                s.upload("big.so", std::string(5000, 'x'));
                QFAIL("an oversized upload must be refused");
            } catch (const RpcError& e) {
                QVERIFY(e.kind() == RpcError::Kind::kRemote || e.kind() == RpcError::Kind::kClosed);
            }
        }
        {
            RpcSession s = RpcSession::connect("127.0.0.1", server.port(), "solo");
            RunRequest bad;
            bad.module = "m";
            bad.repeat = 0;
            QVERIFY_THROWS_EXCEPTION(RpcError, s.run(bad));
        }
        {  // -timeout=1 ends the session server-side
            SessionOptions so;
            so.sessionTimeoutSec = 1;
            RpcSession s = RpcSession::connect("127.0.0.1", server.port(), "solo", so);
            s.upload("ok.so", "data");
            QTest::qWait(1300);
            QVERIFY_THROWS_EXCEPTION(RpcError, s.upload("late.so", "data"));
        }
        RpcSession ok = RpcSession::connect("127.0.0.1", server.port(), "solo");
        ok.upload("k.so", "abc");
        RunRequest r;
        r.module = "k.so";
        QCOMPARE(ok.run(r).costs.size(), size_t(1));
        ok.close();
        QCOMPARE(server.sessionsServed(), 5ll);
    }

    void testStaleKeyIsReoffered() {
        auto t = startTracker();
        auto exec = std::make_shared<FakeExecutor>();
        RpcServer server(serverOptions(t->port(), "fake"), exec);  // ping 100 ms, unmatch 200 ms
        server.start();
        QTRY_COMPARE_WITH_TIMEOUT(status(t->port(), "fake").first, 1ll, 3000);
        TrackerSession c = TrackerSession::connect("127.0.0.1", t->port());
        const DeviceAssignment a = c.request("fake", 1, 2000);  // taken, but nobody connects
        QCOMPARE(status(t->port(), "fake").first, 0ll);
        // misses * 100 > 200 + 100 on the 4th miss: a fresh key is PUT within about 0.4 s.
        QTRY_COMPARE_WITH_TIMEOUT(status(t->port(), "fake").first, 1ll, 3000);
        QVERIFY(server.currentMatchKey() != a.matchKey);
        const DeviceAssignment b = c.request("fake", 1, 2000);
        QCOMPARE(b.matchKey, server.currentMatchKey());
        QVERIFY_THROWS_EXCEPTION(RpcError, RpcSession::connect(a.host, a.port, a.matchKey));  // stale key refused
        RpcSession s = RpcSession::connect(b.host, b.port, b.matchKey);
        QCOMPARE(s.serverKey(), std::string("server:fake"));
    }

    // Peers that send half a greeting and stall hold only their own connections: a client that
    // connects after them completes a whole session while both are still connected. (A server that
    // handshakes one accepted connection at a time serves the client only after closing each
    // staller at its handshake deadline.) A staller may still finish its greeting later and get a
    // session; one that never finishes is closed at its deadline.
    void testStalledHandshakeDoesNotBlockOthers() {
        auto exec = std::make_shared<FakeExecutor>();
        RpcServerOptions o = soloOptions();
        o.handshakeTimeoutMs = 10000;  // generous: the order of events is what is checked
        RpcServer server(o, exec);
        server.start();
        const std::string hello = rawHello("client:solo -timeout=30");
        // Both are in the accept queue before the client connects, so they are accepted first.
        Socket half = connectTcp("127.0.0.1", server.port(), 2000);
        sendAll(half.fd(), hello.data(), 8 + 6, deadlineAfterMs(2000));  // magic, length, "client"
        Socket magicOnly = connectTcp("127.0.0.1", server.port(), 2000);
        sendAll(magicOnly.fd(), hello.data(), 4, deadlineAfterMs(2000));
        QElapsedTimer timer;
        timer.start();
        {
            RpcSession c = RpcSession::connect("127.0.0.1", server.port(), "solo");
            QCOMPARE(c.serverKey(), std::string("server:solo"));
            c.upload("k.so", "abc");
            RunRequest r;
            r.module = "k.so";
            QCOMPARE(c.run(r).errorNo, 0);
            c.close();
        }
        const qint64 sessionMs = timer.elapsed();
        QVERIFY2(quietAndOpen(half.fd()) && quietAndOpen(magicOnly.fd()),
                 qPrintable(QStringLiteral("a staller was closed before the client's session ended (%1 ms)").arg(sessionMs)));
        QCOMPARE(server.sessionsServed(), 1ll);
        // The first staller completes its greeting: answered byte-exact, a session of its own.
        sendAll(half.fd(), hello.data() + 14, hello.size() - 14, deadlineAfterMs(2000));
        std::string reply(4 + 4 + 11, '\0');
        recvAll(half.fd(), reply.data(), reply.size(), deadlineAfterMs(5000));
        QCOMPARE(reply, std::string("\x71\xf2\x0f\x00\x0b\x00\x00\x00server:solo", 19));
        half.close();
        QTRY_COMPARE_WITH_TIMEOUT(server.sessionsServed(), 2ll, 3000);
        QVERIFY(quietAndOpen(magicOnly.fd()));

        // A staller that never finishes is closed at its deadline, without a reply.
        RpcServerOptions quick = o;
        quick.handshakeTimeoutMs = 300;
        RpcServer server2(quick, exec);
        server2.start();
        Socket stall = connectTcp("127.0.0.1", server2.port(), 2000);
        sendAll(stall.fd(), hello.data(), 4, deadlineAfterMs(2000));
        QCOMPARE(readAllUntilClose(stall.fd(), 10000), std::string());
        RpcSession after = RpcSession::connect("127.0.0.1", server2.port(), "solo");
        QCOMPARE(after.serverKey(), std::string("server:solo"));
    }

    void testSurvivesTrackerRestart() {
        auto t = startTracker();
        const int port = t->port();
        auto exec = std::make_shared<FakeExecutor>();
        RpcServer server(serverOptions(port, "fake"), exec);
        server.start();
        QTRY_COMPARE_WITH_TIMEOUT(status(port, "fake"), (std::pair<long long, int>{1, 1}), 3000);
        // The tracker lists the server as soon as it has the PUT; the server counts the registration
        // when the tracker's reply arrives, a moment later.
        QTRY_COMPARE_WITH_TIMEOUT(server.registrations(), 1ll, 3000);
        t->stop();
        t.reset();
        QTRY_VERIFY_WITH_TIMEOUT(!server.registered(), 3000);
        t = startTracker(port);  // same port, empty state
        QTRY_COMPARE_WITH_TIMEOUT(status(port, "fake"), (std::pair<long long, int>{1, 1}), 5000);
        QTRY_COMPARE_WITH_TIMEOUT(server.registrations(), 2ll, 3000);
        TrackerSession tracker = TrackerSession::connect("127.0.0.1", port);
        RpcSession s = requestSession(tracker, "fake");
        s.upload("a.so", "x");
        RunRequest r;
        r.module = "a.so";
        QCOMPARE(s.run(r).errorNo, 0);
    }

    void testStopInterruptsSession() {
        auto exec = std::make_shared<FakeExecutor>();
        RpcServerOptions o = soloOptions();
        auto server = std::make_unique<RpcServer>(o, exec);
        server->start();
        RpcSession s = RpcSession::connect("127.0.0.1", server->port(), "solo");
        QElapsedTimer timer;
        timer.start();
        server->stop();  // a session is open and idle
        QVERIFY(timer.elapsed() < 2000);
        QVERIFY_THROWS_EXCEPTION(RpcError, s.upload("x.so", "y"));
    }

    void testConfigurationErrors() {
        auto exec = std::make_shared<FakeExecutor>();
        RpcServerOptions o;
        o.host = "127.0.0.1";
        o.port = 0;
        o.trackerHost = "127.0.0.1";
        RpcServer noKey(o, exec);
        QVERIFY_THROWS_EXCEPTION(tb::UserError, noKey.start());
    }
};

QTEST_APPLESS_MAIN(TestRpcServer)
#include "tst_rpc_server.moc"
