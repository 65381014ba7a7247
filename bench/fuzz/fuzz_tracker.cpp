// SPDX-License-Identifier: Apache-2.0
// Fuzz harness: bytes a hostile peer sends to the RPC tracker after the handshake. One in-process
// Tracker (127.0.0.1, any port) lives for the whole run; each input is one connection: the magic,
// then the input (frames are int32 LE length + JSON, TVM's tracker protocol), then EOF; the
// harness reads every reply until the tracker closes, and parses each reply frame as a client
// does (a SUMMARY-shaped reply through TrackerSummary::fromJson). The input is also parsed as a
// SUMMARY status directly, the client's side of the protocol. Seeds: bench/fuzz/seeds/tracker.
#include <sys/socket.h>

#include <memory>

#include "bench/fuzz/fuzz_common.h"
#include "engine/rpc/protocol.h"
#include "engine/rpc/socket.h"
#include "engine/rpc/tracker.h"
#include "engine/rpc/tracker_client.h"

using namespace tb::rpc;

namespace {

Tracker& tracker() {
    static std::unique_ptr<Tracker> t;
    if (!t || !t->running()) {  // (re)start; a STOP would need the secret below
        TrackerOptions o;
        o.host = "127.0.0.1";
        o.port = 0;
        o.stopKey = "fuzz-stop-key-that-the-input-does-not-know:0.123456789";
        t.reset();
        t = std::make_unique<Tracker>(o);
        t->start();
    }
    return *t;
}

void parseReplies(const std::string& in) {
    size_t pos = 4;  // the echoed magic
    while (pos + 4 <= in.size()) {
        const std::int32_t n = readLe32(in.data() + pos);
        if (n <= 0 || pos + 4 + size_t(n) > in.size()) break;
        const Json reply = Json::parse(in.substr(pos + 4, size_t(n)));  // ours must be JSON
        pos += 4 + size_t(n);
        if (reply.is_array() && reply.size() == 2 && reply[1].is_object())
            tb::fuzz::expectUserErrorOr<RpcError>([&] { (void)TrackerSummary::fromJson(reply[1]); });
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > (1 << 16)) return 0;
    const std::string input = tb::fuzz::bytes(data, size);
    {
        const Json status = Json::parse(input, nullptr, false);
        if (!status.is_discarded())
            tb::fuzz::expectUserErrorOr<RpcError>([&] { (void)TrackerSummary::fromJson(status); });
    }
    Tracker& t = tracker();
    Socket s = connectTcp("127.0.0.1", t.port(), 5000);
    std::string out;
    appendLe32(out, kTrackerMagic);
    out += input;
    std::string replies;
    try {
        sendAll(s.fd(), out.data(), out.size(), deadlineAfterMs(5000));
    } catch (const RpcError&) {  // the tracker may close early (bad frame size): fine
    }
    ::shutdown(s.fd(), SHUT_WR);
    const Deadline deadline = deadlineAfterMs(10000);
    char buf[4096];
    for (;;) {
        try {
            recvAll(s.fd(), buf, 1, deadline);
        } catch (const RpcError& e) {
            if (e.kind() == RpcError::Kind::kTimeout) __builtin_trap();  // the tracker hangs on this input
            break;                                                       // closed: done
        }
        replies.push_back(buf[0]);
    }
    parseReplies(replies);
    return 0;
}
