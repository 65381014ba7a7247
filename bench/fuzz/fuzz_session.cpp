// SPDX-License-Identifier: Apache-2.0
// Fuzz harness: the byte stream of a measurement session (session_protocol.h), as a server reads
// a hostile client's requests or a client reads a hostile server's replies: readSessionMessage
// frames it (uint64 N | int32 op | int32 H | header JSON | blob) from a socket, then each header
// is decoded as what its op carries: RunRequest (kRun), RunReply (kOk) or an upload name. The
// input goes through a socketpair (the real recv path). Seeds: bench/fuzz/seeds/session.
#include <sys/socket.h>
#include <unistd.h>

#include "bench/fuzz/fuzz_common.h"
#include "engine/rpc/measure_executor.h"
#include "engine/rpc/session_protocol.h"

using namespace tb::rpc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > (1 << 16)) return 0;  // fits the socket buffer, so one thread can write then read
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) __builtin_trap();
    const int big = 1 << 20;
    ::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    ::setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    Socket writer(sv[0]), reader(sv[1]);
    sendAll(writer.fd(), data, size, deadlineAfterMs(5000));
    writer.close();
    for (int k = 0; k < 64; ++k) {
        SessionMessage m;
        try {
            m = readSessionMessage(reader.fd(), 1 << 20, deadlineAfterMs(5000));
        } catch (const RpcError& e) {
            if (e.kind() == RpcError::Kind::kTimeout) __builtin_trap();
            break;
        }
        tb::fuzz::expectUserErrorOr<RpcError>([&] {
            switch (m.op) {
                case SessionOp::kRun: (void)toJson(runRequestFromJson(m.header)); break;
                case SessionOp::kOk: (void)toJson(runReplyFromJson(m.header)); break;
                default: break;  // upload names are checked by the server (rpc_server.cpp)
            }
        });
    }
    return 0;
}
