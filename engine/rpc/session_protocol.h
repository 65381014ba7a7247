// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file session_protocol.h
/// \brief TuneBench's measurement session protocol: what flows on an RPC server's data-plane
/// connection after TVM's handshake.
///
/// The handshake itself is TVM's (client: RPC_MAGIC, int32 length, "client:<matchkey>[ -timeout=N]
/// [ -token=T]"; server: RPC_CODE_SUCCESS, int32 length, "server:<key>", or RPC_CODE_MISMATCH and
/// close). After it TVM runs its binary RPC protocol; we run this simpler one instead, because our
/// servers only upload and time code (measure_executor.h).
///
/// Every message, both directions (little-endian):
/// ```
///   uint64 N | int32 op | int32 H | H bytes of JSON header | N - 8 - H bytes of blob
/// ```
/// Requests: kUpload {"name": file} + blob; kRun = RunRequest JSON; kCall {"function": name, ...}
/// + blob (a named device function, measure_executor.h CallRequest; added after kRun/kClose, so a
/// server that predates it answers kError "unknown session op 5"); kClose {}.
/// Replies: kOk with a JSON body (upload: {"name", "size"}; run: RunReply JSON; call: the
/// CallReply's result + blob; close: {}), or kError {"error": message}, after which the server
/// closes the connection. One reply per request, in order. The server rejects frames larger than
/// its upload limit, unknown ops, malformed JSON and invalid names with kError.

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/rpc/protocol.h"
#include "engine/rpc/socket.h"

namespace tb::rpc {

enum class SessionOp : std::int32_t {
    kOk = 0,
    kError = 1,
    kUpload = 2,
    kRun = 3,
    kClose = 4,
    kCall = 5,
};

struct SessionMessage {
    SessionOp op = SessionOp::kOk;
    Json header;
    std::string blob;
};

/// Writes one message. Throws RpcError (kClosed/kIo/kTimeout/kInterrupted).
void writeSessionMessage(int fd, SessionOp op, const Json& header, std::string_view blob, Deadline deadline,
                         int wakeFd = -1);
/// Reads one message of at most maxBytes (N). Throws RpcError; kProtocol for N < 8 or > maxBytes,
/// a header length outside [0, N-8], or a header that is not JSON.
SessionMessage readSessionMessage(int fd, std::uint64_t maxBytes, Deadline deadline, int wakeFd = -1);

/// Field `name` of the JSON object `j` as T, `dflt` when absent. Throws RpcError(kProtocol)
/// "<context>: field '<name>' has the wrong type" when it does not convert (the session messages'
/// JSON bodies: run requests, network calls).
namespace detail {
template <class T>
struct IsIntVector : std::false_type {};
template <class U>
struct IsIntVector<std::vector<U>> : std::bool_constant<std::is_integral_v<U> && !std::is_same_v<U, bool>> {};
}  // namespace detail

template <class T>
T jsonField(const Json& j, const char* name, T dflt, const std::string& context) {
    auto it = j.find(name);
    if (it == j.end()) return dflt;
    // An integer field must hold JSON integers: nlohmann converts a float such as 6.5e20 with a
    // cast that is undefined outside the integer's range (found by fuzz_session).
    bool integersOk = true;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        integersOk = it->is_number_integer();
    } else if constexpr (detail::IsIntVector<T>::value) {
        if (it->is_array())
            for (const auto& v : *it) integersOk = integersOk && v.is_number_integer();
    }
    if (!integersOk) throw RpcError(RpcError::Kind::kProtocol, context + ": field '" + name + "' has the wrong type");
    try {
        return it->get<T>();
    } catch (const std::exception&) {
        throw RpcError(RpcError::Kind::kProtocol, context + ": field '" + name + "' has the wrong type");
    }
}

/// The data-plane greeting a client sends: "client:<matchKey>", plus " -timeout=<s>" when
/// sessionTimeoutSec > 0 and " -token=<token>" when a token is given.
std::string clientHello(const std::string& matchKey, int sessionTimeoutSec, const std::string& token);

}  // namespace tb::rpc
