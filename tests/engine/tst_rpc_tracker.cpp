// SPDX-License-Identifier: Apache-2.0
// The tracker against raw sockets: every byte example of /work/shared/TRACKER-PROTOCOL.md and
// REFERENCE-TVM.md §7 is replayed and the exact reply bytes are compared; then scheduling order,
// pending counts, withdrawal, malformed input, STOP, and the JSON/summary encoders.
#include <QtTest>

#include <poll.h>
#include <sys/socket.h>

#include <memory>
#include <string>

#include "engine/rpc/protocol.h"
#include "engine/rpc/session_protocol.h"
#include "engine/rpc/socket.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"

using namespace tb::rpc;

namespace {

std::string hex(const std::string& hexText) {
    QByteArray b = QByteArray::fromHex(QByteArray::fromStdString(hexText));
    return b.toStdString();
}

std::string frame(const std::string& json) { return trackerFrame(json); }

// A byte-level peer on 127.0.0.1 with bounded waits.
class RawClient {
public:
    explicit RawClient(int port, bool handshake = true) {
        m_sock = connectTcp("127.0.0.1", port, 2000);
        if (handshake) {
            send(hex("71f20200"));
            QCOMPARE_EQ_HELPER(recv(4), hex("71f20200"));
        }
    }
    void send(const std::string& bytes) { sendAll(m_sock.fd(), bytes.data(), bytes.size(), deadlineAfterMs(2000)); }
    std::string recv(size_t n, int timeoutMs = 2000) {
        std::string out(n, '\0');
        recvAll(m_sock.fd(), out.data(), n, deadlineAfterMs(timeoutMs));
        return out;
    }
    // One reply frame: header + body.
    std::string recvFrame(int timeoutMs = 2000) {
        std::string h = recv(4, timeoutMs);
        return h + recv(size_t(readLe32(h.data())), timeoutMs);
    }
    std::string call(const std::string& json) {
        send(frame(json));
        return recvFrame();
    }
    // True if nothing arrives within ms (the connection stays open and silent).
    bool silentFor(int ms) {
        pollfd p{m_sock.fd(), POLLIN, 0};
        return ::poll(&p, 1, ms) == 0;
    }
    // True if the peer closes within ms without sending anything.
    bool closedWithoutReply(int ms = 2000) {
        pollfd p{m_sock.fd(), POLLIN, 0};
        if (::poll(&p, 1, ms) != 1) return false;
        char c;
        return ::recv(m_sock.fd(), &c, 1, 0) == 0;
    }
    void close() { m_sock.close(); }

private:
    static void QCOMPARE_EQ_HELPER(const std::string& a, const std::string& b) {
        if (a != b) throw std::runtime_error("handshake echo differs");
    }
    Socket m_sock;
};

std::unique_ptr<Tracker> startTracker(TrackerOptions o = {}) {
    o.host = "127.0.0.1";
    o.port = 0;
    auto t = std::make_unique<Tracker>(o);
    t->start();
    return t;
}

const std::string kOk = hex("0100000030");

}  // namespace

class TestRpcTracker : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // ---- byte examples of TRACKER-PROTOCOL.md ----
    void testHandshakeAndPing() {
        auto t = startTracker();
        RawClient c(t->port(), false);
        c.send(hex("71f20200"));
        QCOMPARE(c.recv(4), hex("71f20200"));
        c.send(hex("030000005b315d"));
        QCOMPARE(c.recv(5), kOk);
    }

    void testDocumentedExchange() {
        auto t = startTracker();
        RawClient server(t->port());
        // UPDATE_INFO, exact bytes from the document.
        server.send(hex("33 00 00 00 5b 35 2c 20 7b 22 6b 65 79 22 3a 20 22 73 65 72 76 65 72 3a 72 61 73 70 33 62 22 2c "
                        "20 22 61 64 64 72 22 3a 20 5b 6e 75 6c 6c 2c 20 39 30 39 30 5d 7d 5d"));
        QCOMPARE(server.recv(5), hex("01 00 00 00 30"));
        // PUT [3, "rasp3b", [9090, "rasp3b:0.5"], null]
        const std::string put = hex("29 00 00 00 5b 33 2c 20 22 72 61 73 70 33 62 22 2c 20 5b 39 30 39 30 2c 20 22 72 61 73 70 "
                                    "33 62 3a 30 2e 35 22 5d 2c 20 6e 75 6c 6c 5d");
        QCOMPARE(put.substr(4), std::string(R"([3, "rasp3b", [9090, "rasp3b:0.5"], null])"));
        server.send(put);
        QCOMPARE(server.recv(5), hex("01 00 00 00 30"));
        // GET_PENDING_MATCHKEYS -> ["rasp3b:0.5"]
        server.send(hex("03 00 00 00 5b 37 5d"));
        QCOMPARE(server.recv(18), hex("0e 00 00 00 5b 22 72 61 73 70 33 62 3a 30 2e 35 22 5d"));

        RawClient client(t->port());
        // REQUEST [4, "rasp3b", "", 1] -> [0, ["127.0.0.1", 9090, "rasp3b:0.5"]]
        client.send(hex("14 00 00 00 5b 34 2c 20 22 72 61 73 70 33 62 22 2c 20 22 22 2c 20 31 5d"));
        QCOMPARE(client.recv(42), hex("26 00 00 00 5b 30 2c 20 5b 22 31 32 37 2e 30 2e 30 2e 31 22 2c 20 39 30 39 30 2c 20 22 "
                                      "72 61 73 70 33 62 3a 30 2e 35 22 5d 5d"));
        // The key left the server's pending set.
        server.send(hex("03 00 00 00 5b 37 5d"));
        QCOMPARE(server.recv(6), hex("02 00 00 00 5b 5d"));
    }

    void testDocumentedSummary() {
        auto t = startTracker();
        // server_info follows connection order (arbitrary in TVM); queue_info follows first PUT.
        RawClient android(t->port());
        RawClient rasp(t->port());
        QCOMPARE(android.call(R"([5, {"key": "server:android", "addr": ["10.0.0.7", "9091"]}])"), kOk);
        QCOMPARE(rasp.call(R"([5, {"key": "server:rasp3b", "addr": [null, 9090]}])"), kOk);
        QCOMPARE(rasp.call(R"([3, "rasp3b", [9090, "rasp3b:0.5"], null])"), kOk);
        QCOMPARE(android.call(R"([3, "android", ["9091", "android:0.250000"], "10.0.0.7"])"), kOk);
        RawClient q(t->port());
        q.send(hex("030000005b365d"));
        const std::string expected =
            R"([0, {"queue_info": {"rasp3b": {"free": 1, "pending": 0}, "android": {"free": 1, "pending": 0}}, )"
            R"("server_info": [{"key": "server:android", "addr": ["10.0.0.7", "9091"]}, )"
            R"({"key": "server:rasp3b", "addr": ["127.0.0.1", 9090]}]}])";
        QCOMPARE(expected.size(), size_t(225));
        QCOMPARE(q.recvFrame(), hex("e1000000") + expected);
    }

    void testStopBytes() {
        auto t = startTracker();
        RawClient c(t->port());
        const std::string wrong = frame(R"([2, "wrong"])");
        QCOMPARE(wrong.substr(0, 4), hex("0c000000"));
        c.send(wrong);
        QCOMPARE(c.recv(6), hex("020000002d31"));
        QVERIFY(t->running());
        QVERIFY(t->stopKey().rfind("tracker:0.", 0) == 0);
        c.send(frame(R"([2, ")" + t->stopKey() + R"("])"));
        QCOMPARE(c.recv(5), kOk);
        QVERIFY(c.closedWithoutReply());
        QVERIFY(t->waitStopped(2000));
        QVERIFY(!t->running());
    }

    void testLongerTrace() {
        auto t = startTracker();
        RawClient server(t->port());
        QCOMPARE(server.call(R"([5, {"key": "server:rasp3b", "addr": [null, 9090]}])"), kOk);
        QCOMPARE(server.call(R"([3, "rasp3b", [9090, "rasp3b:0.5"], null])"), kOk);
        RawClient q(t->port());
        auto summary = [&] { return q.call("[6]"); };
        QVERIFY(summary().find(R"("rasp3b": {"free": 1, "pending": 0})") != std::string::npos);
        RawClient c1(t->port());
        QCOMPARE(c1.call(R"([4, "rasp3b", "", 1])"), frame(R"([0, ["127.0.0.1", 9090, "rasp3b:0.5"]])"));
        QVERIFY(summary().find(R"("rasp3b": {"free": 0, "pending": 0})") != std::string::npos);
        QCOMPARE(server.call("[7]"), frame("[]"));
        RawClient c2(t->port());
        c2.send(frame(R"([4, "rasp3b", "", 1])"));
        QVERIFY(c2.silentFor(200));  // blocked: no reply until a resource exists
        QVERIFY(summary().find(R"("rasp3b": {"free": 0, "pending": 1})") != std::string::npos);
        QCOMPARE(server.call(R"([3, "rasp3b", [9090, "rasp3b:0.75"], null])"), kOk);
        QCOMPARE(c2.recvFrame(), frame(R"([0, ["127.0.0.1", 9090, "rasp3b:0.75"]])"));
    }

    // ---- byte examples of REFERENCE-TVM.md §7 ----
    void testReferenceExamples() {
        auto t = startTracker();
        RawClient server(t->port());
        const std::string upd = frame(R"([5, {"key": "server:rasp3b", "addr": ["10.0.0.5", 9090]}])");
        QCOMPARE(server.call(upd.substr(4)), kOk);
        const std::string put = frame(R"([3, "rasp3b", [9090, "rasp3b:0.4713140226013541"], "10.0.0.5"])");
        QCOMPARE(server.call(put.substr(4)), kOk);
        QCOMPARE(frame(R"([3, "rasp3b", [9090, "rasp3b:0.4713140226013541"], null])").substr(0, 4), hex("38000000"));
        RawClient q(t->port());
        QCOMPARE(q.call("[6]"),
                 hex("81000000") + R"([0, {"queue_info": {"rasp3b": {"free": 1, "pending": 0}}, "server_info": [{"key": "server:rasp3b", "addr": ["10.0.0.5", 9090]}]}])");
        QCOMPARE(q.call(R"([4, "rasp3b", "", 1])"),
                 hex("34000000") + R"([0, ["10.0.0.5", 9090, "rasp3b:0.4713140226013541"]])");
        // The client greeting of the data plane.
        std::string hello;
        appendLe32(hello, kRpcMagic);
        const std::string text = clientHello("rasp3b:0.4713140226013541", 60, "");
        appendLe32(hello, int(text.size()));
        hello += text;
        QCOMPARE(hello, hex("71f20f002c000000") + "client:rasp3b:0.4713140226013541 -timeout=60");
    }

    // ---- framing robustness (TRACKER-PROTOCOL.md "Framing") ----
    void testSplitAndPipelinedFrames() {
        auto t = startTracker();
        RawClient c(t->port());
        const std::string ping = frame("[1]");
        for (char b : ping) c.send(std::string(1, b));  // one byte per write
        QCOMPARE(c.recv(5), kOk);
        c.send(frame("[1]") + frame(R"([7])"));  // two requests in one segment
        QCOMPARE(c.recv(5), kOk);
        QCOMPARE(c.recvFrame(), frame("[]"));
        // Magic and first frame coalesced: TVM drops such a client, we answer both.
        RawClient d(t->port(), false);
        d.send(hex("71f20200") + frame("[1]"));
        QCOMPARE(d.recv(9), hex("71f20200") + kOk);
        // Compact JSON and Java-style spacing are accepted too.
        QCOMPARE(c.call(R"([5,{"key" : "server:x","addr":[null,"9090"]}])"), kOk);
    }

    void testMalformedClosesOnlyThatConnection_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<bool>("handshake");
        auto add = [](const char* name, const std::string& b, bool hs = true) {
            QTest::addRow("%s", name) << QByteArray::fromStdString(b) << hs;
        };
        add("wrong magic", hex("71f20f00"), false);
        add("unknown code", frame("[99]"));
        add("zero length", hex("00000000") + frame("[1]"));
        add("negative length", hex("ffffffff"));
        add("1 MiB + 1", hex("01001000"));
        add("malformed json", frame("[1, "));
        add("not a list", frame(R"({"0": 1})"));
        add("empty list", frame("[]"));
        add("code is a string", frame(R"(["1"])"));
        add("update_info without addr", frame(R"([5, {"key": "server:x"}])"));
        add("put without matchkey", frame(R"([3, "x", [9090]])"));
        add("request without priority", frame(R"([4, "x", ""])"));
        add("request with text priority", frame(R"([4, "x", "", "high"])"));
        add("invalid utf-8", frame("[\"\xff\"]"));
    }
    void testMalformedClosesOnlyThatConnection() {
        QFETCH(QByteArray, bytes);
        QFETCH(bool, handshake);
        std::vector<std::string> logs;
        TrackerOptions o;
        o.log = [&](const std::string& l) { logs.push_back(l); };
        auto t = startTracker(o);
        RawClient server(t->port());
        QCOMPARE(server.call(R"([5, {"key": "server:dev", "addr": [null, 9090]}])"), kOk);
        QCOMPARE(server.call(R"([3, "dev", [9090, "dev:0.5"], null])"), kOk);
        RawClient bad(t->port(), handshake);
        bad.send(bytes.toStdString());
        QVERIFY(bad.closedWithoutReply());
        // Everyone else is unaffected: the server's offer is still there.
        QCOMPARE(server.call("[1]"), kOk);
        QCOMPARE(server.call("[7]"), frame(R"(["dev:0.5"])"));
        t->stop();
        QVERIFY(logs.size() >= 2);  // bind + the reason of the close
    }

    void testTruncatedAndSilentConnections() {
        TrackerOptions o;
        o.handshakeTimeoutMs = 200;
        o.partialMessageTimeoutMs = 300;
        auto t = startTracker(o);
        RawClient other(t->port());
        {
            RawClient trunc(t->port());
            trunc.send(hex("10000000") + "[1");  // 16 announced, 2 sent, then EOF
        }
        RawClient silent(t->port(), false);
        QVERIFY(silent.closedWithoutReply(2000));  // no magic within 200 ms
        RawClient stalled(t->port());
        stalled.send(hex("10000000") + "[1");
        QVERIFY(stalled.closedWithoutReply(2000));  // frame not completed within 300 ms
        QCOMPARE(other.call("[1]"), kOk);
    }

    // ---- scheduling ----
    void testPriorityThenFifo() {
        auto t = startTracker();
        RawClient q(t->port());
        std::vector<std::unique_ptr<RawClient>> clients;
        const int prio[] = {1, 5, 1};
        for (int i = 0; i < 3; ++i) {
            clients.push_back(std::make_unique<RawClient>(t->port()));
            clients.back()->send(frame(R"([4, "dev", "", )" + std::to_string(prio[i]) + "]"));
            // Wait until the tracker has queued it, so arrival order is certain.
            const std::string want = R"("dev": {"free": 0, "pending": )" + std::to_string(i + 1) + "}";
            QTRY_VERIFY_WITH_TIMEOUT(q.call("[6]").find(want) != std::string::npos, 2000);
        }
        RawClient server(t->port());
        QCOMPARE(server.call(R"([5, {"key": "server:dev", "addr": [null, 9090]}])"), kOk);
        for (int i = 1; i <= 3; ++i)
            QCOMPARE(server.call(R"([3, "dev", [9090, "dev:)" + std::to_string(i) + R"("], null])"), kOk);
        QCOMPARE(clients[1]->recvFrame(), frame(R"([0, ["127.0.0.1", 9090, "dev:1"]])"));
        QCOMPARE(clients[0]->recvFrame(), frame(R"([0, ["127.0.0.1", 9090, "dev:2"]])"));
        QCOMPARE(clients[2]->recvFrame(), frame(R"([0, ["127.0.0.1", 9090, "dev:3"]])"));
    }

    void testResourcesFifoAcrossServers() {
        auto t = startTracker();
        RawClient s1(t->port()), s2(t->port());
        QCOMPARE(s1.call(R"([3, "dev", [1, "dev:a"], null])"), kOk);
        QCOMPARE(s2.call(R"([3, "dev", [2, "dev:b"], "10.1.1.1"])"), kOk);
        QCOMPARE(s1.call(R"([3, "dev", [1, "dev:c"], null])"), kOk);
        RawClient c(t->port());
        QCOMPARE(c.call(R"([4, "dev", "", 1])"), frame(R"([0, ["127.0.0.1", 1, "dev:a"]])"));
        QCOMPARE(c.call(R"([4, "dev", "", 9])"), frame(R"([0, ["10.1.1.1", 2, "dev:b"]])"));
        QCOMPARE(c.call(R"([4, "dev", "", 1])"), frame(R"([0, ["127.0.0.1", 1, "dev:c"]])"));
        // GET_PENDING_MATCHKEYS lists only the caller's own unclaimed keys.
        QCOMPARE(s1.call(R"([3, "dev", [1, "dev:d"], null])"), kOk);
        QCOMPARE(s1.call("[7]"), frame(R"(["dev:d"])"));
        QCOMPARE(s2.call("[7]"), frame("[]"));
    }

    void testPendingCounts() {
        auto t = startTracker();
        TrackerSession q = TrackerSession::connect("127.0.0.1", t->port());
        auto c1 = std::make_unique<RawClient>(t->port());
        RawClient c2(t->port());
        c1->send(frame(R"([4, "gpu", "", 1])"));
        c2.send(frame(R"([4, "gpu", "", 1])"));
        QTRY_COMPARE_WITH_TIMEOUT(q.summary().queue("gpu") ? q.summary().queue("gpu")->pending : -1, 2ll, 2000);
        QCOMPARE(q.summary().queue("gpu")->free, 0ll);
        c1.reset();  // a blocked client leaves: its request is dropped at once
        QTRY_COMPARE_WITH_TIMEOUT(q.summary().queue("gpu")->pending, 1ll, 2000);
        RawClient s(t->port());
        QCOMPARE(s.call(R"([3, "gpu", [7, "gpu:1"], null])"), kOk);
        QCOMPARE(c2.recvFrame(), frame(R"([0, ["127.0.0.1", 7, "gpu:1"]])"));  // not lost to the dead one
        const TrackerSummary sum = q.summary();
        QCOMPARE(sum.queue("gpu")->pending, 0ll);
        QCOMPARE(sum.queue("gpu")->free, 0ll);
        QVERIFY(sum.servers.empty());  // no UPDATE_INFO: not listed
    }

    void testWithdrawalOnDisconnect() {
        auto t = startTracker();
        TrackerSession q = TrackerSession::connect("127.0.0.1", t->port());
        {
            RawClient server(t->port());
            QCOMPARE(server.call(R"([5, {"key": "server:dev", "addr": [null, 9090]}])"), kOk);
            QCOMPARE(server.call(R"([3, "dev", [9090, "dev:1"], null])"), kOk);
            QCOMPARE(server.call(R"([3, "dev", [9090, "dev:2"], null])"), kOk);
            const TrackerSummary s = q.summary();
            QCOMPARE(s.queue("dev")->free, 2ll);
            QCOMPARE(int(s.servers.size()), 1);
            QCOMPARE(s.servers[0].key, std::string("server:dev"));
            QCOMPARE(s.servers[0].addr, (std::vector<std::string>{"127.0.0.1", "9090"}));
            QCOMPARE(s.servers[0].port(), 9090);
        }
        QTRY_COMPARE_WITH_TIMEOUT(q.summary().queue("dev")->free, 0ll, 2000);
        QVERIFY(q.summary().servers.empty());
        QVERIFY(q.summary().queue("dev"));  // the key stays listed, as in TVM
        // TVM withdraws only for connections that sent UPDATE_INFO; an anonymous PUT stays.
        {
            RawClient anon(t->port());
            QCOMPARE(anon.call(R"([3, "dev", [9091, "dev:3"], "10.9.9.9"])"), kOk);
        }
        QTest::qWait(100);
        QCOMPARE(q.summary().queue("dev")->free, 1ll);
    }

    void testUpdateInfoMergesAndReplacesNullAddress() {
        auto t = startTracker();
        RawClient s(t->port());
        QCOMPARE(s.call(R"([5, {"key": "server:a", "addr": [null, 1], "extra": [1.5, true]}])"), kOk);
        QCOMPARE(s.call(R"([5, {"key": "server:b", "addr": ["h", "2"]}])"), kOk);
        RawClient q(t->port());
        QCOMPARE(q.call("[6]"), frame(R"([0, {"queue_info": {}, "server_info": [{"key": "server:b", "addr": ["h", "2"], "extra": [1.5, true]}]}])"));
        RawClient client(t->port());
        QCOMPARE(client.call(R"([5, {"key": "client:x", "addr": [null, 0]}])"), kOk);
        QVERIFY(q.call("[6]").find("client:x") == std::string::npos);  // only "server*" keys are listed
    }

    void testClientLibraryAgainstTracker() {
        auto t = startTracker();
        TrackerSession s = TrackerSession::connect("127.0.0.1", t->port());
        s.ping();
        s.updateInfo("dev", 9000, std::nullopt);
        s.put("dev", 9000, "dev:0.1", std::nullopt);
        QCOMPARE(s.pendingMatchKeys(), std::vector<std::string>{"dev:0.1"});
        TrackerSession c = TrackerSession::connect("127.0.0.1", t->port());
        const DeviceAssignment a = c.request("dev", 1, 2000);
        QCOMPARE(a.host, std::string("127.0.0.1"));
        QCOMPARE(a.port, 9000);
        QCOMPARE(a.matchKey, std::string("dev:0.1"));
        // A request with nothing free times out, and the tracker forgets it.
        try {
            c.request("dev", 1, 200);
            QFAIL("request should time out");
        } catch (const RpcError& e) {
            QCOMPARE(int(e.kind()), int(RpcError::Kind::kTimeout));
        }
        QVERIFY(!c.connected());
        QTRY_COMPARE_WITH_TIMEOUT(s.summary().queue("dev")->pending, 0ll, 2000);
        QVERIFY(!s.stop("nope"));
        QVERIFY(s.stop(t->stopKey()));
        QVERIFY(t->waitStopped(2000));
        // Nobody listens any more: connecting fails fast when no retry is allowed.
        ConnectOptions once;
        once.retryTimeoutMs = 0;
        QVERIFY_THROWS_EXCEPTION(RpcError, TrackerSession::connect("127.0.0.1", t->port(), once));
    }

    void testPortRange() {
        TrackerOptions a;
        a.host = "127.0.0.1";
        a.port = 0;
        Tracker first(a);
        first.start();
        TrackerOptions b;
        b.host = "127.0.0.1";
        b.port = first.port();  // taken: the next port of the range is used
        b.portEnd = first.port() + 50;
        Tracker second(b);
        second.start();
        QVERIFY(second.port() > first.port());
        TrackerOptions c = b;
        c.portEnd = first.port() + 1;  // only the taken port
        Tracker third(c);
        QVERIFY_THROWS_EXCEPTION(RpcError, third.start());
    }

    // ---- query_rpc_tracker text (TRACKER-PROTOCOL.md, "query_rpc_tracker output") ----
    void testTextSummary() {
        // The document's data: four servers, a key with a pending request, and "prio" with
        // neither servers nor requests (not printed, but it counts towards the column width).
        const Json status = Json::parse(R"({"queue_info": {"v100": {"free": 2, "pending": 0}, "android": {"free": 1, "pending": 0},
            "rasp3b": {"free": 0, "pending": 1}, "prio": {"free": 0, "pending": 0}},
            "server_info": [{"key": "server:v100", "addr": ["192.168.10.22", 9091]},
                            {"key": "server:rasp3b", "addr": ["127.0.0.1", 9090]},
                            {"key": "server:v100", "addr": ["192.168.10.21", 9090]},
                            {"key": "server:android", "addr": ["10.0.0.7", "9091"]}]})");
        const TrackerSummary sum = TrackerSummary::fromJson(status);
        const std::string queue =
            "Queue Status\n"
            "-------------------------------\n"
            "key       total  free  pending\n"
            "-------------------------------\n"
            "android   1      1     0      \n"
            "rasp3b    1      0     1      \n"
            "v100      2      2     0      \n"
            "-------------------------------\n";
        const std::string head = "Server List\n"
                                 "------------------------------\n"
                                 "server-address           key\n"
                                 "------------------------------\n";
        // Equal keys keep the reply's order (Python's sort is stable).
        QCOMPARE(textSummary(sum), head +
                                       "10.0.0.7:9091            server:android\n"
                                       "127.0.0.1:9090           server:rasp3b\n"
                                       "192.168.10.22:9091       server:v100\n"
                                       "192.168.10.21:9090       server:v100\n"
                                       "------------------------------\n\n" +
                                       queue);
        QCOMPARE(textSummary(sum, SummaryLayout::kRightAligned), head +
                                                                    "        10.0.0.7:9091    server:android\n"
                                                                    "       127.0.0.1:9090    server:rasp3b\n"
                                                                    "   192.168.10.22:9091    server:v100\n"
                                                                    "   192.168.10.21:9090    server:v100\n"
                                                                    "------------------------------\n\n" +
                                                                    queue);
        // Nothing registered: "key" alone sets the width (26 + 1 dashes).
        const TrackerSummary empty = TrackerSummary::fromJson(Json::parse(R"({"queue_info": {}, "server_info": []})"));
        QCOMPARE(textSummary(empty), head + "------------------------------\n\nQueue Status\n" + std::string(27, '-') +
                                         "\nkey   total  free  pending\n" + std::string(27, '-') + "\n" +
                                         std::string(27, '-') + "\n");
        // Malformed summaries are refused with a clear error.
        QVERIFY_THROWS_EXCEPTION(RpcError, TrackerSummary::fromJson(Json::parse(R"({"queue_info": {"k": {"free": "1"}}, "server_info": []})")));
        QVERIFY_THROWS_EXCEPTION(RpcError, TrackerSummary::fromJson(Json::parse(R"({"server_info": []})")));
    }

    void testTextSummaryFromLiveTracker() {
        auto t = startTracker();
        RawClient server(t->port());
        QCOMPARE(server.call(R"([5, {"key": "server:rasp3b", "addr": ["10.0.0.5", 9090]}])"), kOk);
        QCOMPARE(server.call(R"([3, "rasp3b", [9090, "rasp3b:0.47"], null])"), kOk);
        TrackerSession q = TrackerSession::connect("127.0.0.1", t->port());
        QCOMPARE(textSummary(q.summary()), std::string("Server List\n"
                                                       "------------------------------\n"
                                                       "server-address           key\n"
                                                       "------------------------------\n"
                                                       "10.0.0.5:9090            server:rasp3b\n"
                                                       "------------------------------\n"
                                                       "\n"
                                                       "Queue Status\n"
                                                       "------------------------------\n"
                                                       "key      total  free  pending\n"
                                                       "------------------------------\n"
                                                       "rasp3b   1      1     0      \n"
                                                       "------------------------------\n"));
    }

    // ---- encoders ----
    // Integer fields of session messages take JSON integers only: a float there (6.5e20 as an
    // argument's shape, found by fuzz_session; kept as tests/fuzz/regressions/session/
    // float-outside-int64-in-integer-field) was cast to long by nlohmann, undefined behaviour.
    void testIntegerFieldsRejectFloats() {
        const Json j = Json::parse(R"({"n": 6.49223e20, "v": [1, 2.5], "ok": 7, "list": [1, 2]})");
        for (const char* name : {"n"}) {
            try {
                jsonField<long>(j, name, 0L, "run request");
                QFAIL("a float was accepted as an integer");
            } catch (const RpcError& e) {
                QCOMPARE(QString::fromStdString(e.what()), QStringLiteral("run request: field 'n' has the wrong type"));
            }
        }
        QVERIFY_THROWS_EXCEPTION(RpcError, jsonField<std::vector<long>>(j, "v", {}, "run request"));
        QCOMPARE(jsonField<long>(j, "ok", 0L, "run request"), 7L);
        QCOMPARE(jsonField<std::vector<long>>(j, "list", {}, "run request"), (std::vector<long>{1, 2}));
        QCOMPARE(jsonField<double>(j, "n", 0.0, "run request"), 6.49223e20);  // a double field keeps it
    }

    void testPyDumps_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("python");
        QTest::addRow("spacing") << R"([1,{"a":[null,true,false],"b":{}}])" << R"([1, {"a": [null, true, false], "b": {}}])";
        QTest::addRow("order kept") << R"({"z":1,"a":2})" << R"({"z": 1, "a": 2})";
        QTest::addRow("floats") << "[0.5,9090.0,1e-05,1e16,1e15,123456789.125,-0.0,0.0001]"
                                << "[0.5, 9090.0, 1e-05, 1e+16, 1000000000000000.0, 123456789.125, -0.0, 0.0001]";
        // (plain literals: moc mis-parses raw strings that contain \")
        QTest::addRow("escapes") << QString::fromUtf8("[\"a\\\"b\\\\c\\n\\t\\u0001\\u007f \u00e9 \U0001F600 /\"]")
                                 << QStringLiteral("[\"a\\\"b\\\\c\\n\\t\\u0001\\u007f \\u00e9 \\ud83d\\ude00 /\"]");
        QTest::addRow("big ints") << "[-5,18446744073709551615]" << "[-5, 18446744073709551615]";
    }
    void testPyDumps() {
        QFETCH(QString, json);
        QFETCH(QString, python);
        QCOMPARE(QString::fromStdString(pyDumps(Json::parse(json.toStdString()))), python);
    }

    void testRandomKeys() {
        const std::string k = randomKey("rasp3b");
        QVERIFY(k.rfind("rasp3b:0.", 0) == 0 || k == "rasp3b:0.0");
        QVERIFY(k != randomKey("rasp3b"));
        const double v = std::stod(splitRandomKey(k).second);
        QVERIFY(v >= 0 && v < 1);
        QCOMPARE(pyFloatRepr(std::stod(splitRandomKey(k).second)), splitRandomKey(k).second);  // round trip
        QCOMPARE(splitRandomKey("a:b:0.5"), (std::pair<std::string, std::string>{"a:b", "0.5"}));
    }
};

QTEST_APPLESS_MAIN(TestRpcTracker)
#include "tst_rpc_tracker.moc"
