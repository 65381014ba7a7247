// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file protocol.h
/// \brief Constants and encodings shared by TVM's RPC tracker protocol and our RPC data plane.
///
/// TuneBench speaks TVM's tracker protocol byte for byte (DESIGN.md §3.1), so a TVM tracker, a TVM
/// `rpc_server` or TVM's `query_rpc_tracker` interoperate with ours. This header holds what every
/// piece of engine/rpc needs to agree on: the magic numbers and `TrackerCode`s of
/// `python/tvm/rpc/base.py`, the exact JSON text Python's `json.dumps` produces (support/py_json.h;
/// the tracker's replies are compared byte for byte with TVM's), TVM's random match keys, and the
/// one error type the network code throws. Reference: /work/shared/TRACKER-PROTOCOL.md and
/// REFERENCE-TVM.md §7.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/support/py_json.h"

namespace tb::rpc {

/// JSON value type of the whole layer: keeps object keys in insertion order, as Python dicts do,
/// so SUMMARY replies list `queue_info` keys in the order the tracker first saw them (TVM does).
using Json = nlohmann::ordered_json;

/// Tracker handshake, sent by the peer and echoed by the tracker (`RPC_TRACKER_MAGIC`, `71 f2 02 00`).
inline constexpr std::int32_t kTrackerMagic = 0x2F271;
/// Data-plane handshake, client -> server (`RPC_MAGIC`, `71 f2 0f 00`); also `RPC_CODE_SUCCESS`.
inline constexpr std::int32_t kRpcMagic = 0xFF271;
inline constexpr std::int32_t kRpcCodeSuccess = kRpcMagic + 0;
/// Only the TVM proxy sends it (duplicate server key); listed for completeness.
inline constexpr std::int32_t kRpcCodeDuplicate = kRpcMagic + 1;
/// Server -> client when the match key (or, in TuneBench, the token) is wrong; then it closes.
inline constexpr std::int32_t kRpcCodeMismatch = kRpcMagic + 2;

/// TVM's `TrackerCode` (python/tvm/rpc/base.py; same numbers in rpc_endpoint.h and RPC.java).
enum class TrackerCode : int {
    kFail = -1,
    kSuccess = 0,
    kPing = 1,
    kStop = 2,
    kPut = 3,
    kRequest = 4,
    kUpdateInfo = 5,
    kSummary = 6,
    kGetPendingMatchKeys = 7,
};

/// The largest tracker frame TVM accepts since v0.25 (`MAX_TRACKER_MSG_BYTES`, 1 MiB).
inline constexpr int kDefaultMaxTrackerMessageBytes = 1 << 20;

/// Failure of a network operation or a protocol violation by the peer. These are expected at run
/// time (a tracker restarts, a device drops off), so callers catch them; `kind()` says which.
class RpcError : public std::runtime_error {
public:
    enum class Kind {
        kIo,           ///< socket error, refused connection, unresolvable host
        kClosed,       ///< the peer closed the connection
        kTimeout,      ///< a deadline passed
        kProtocol,     ///< the peer sent bytes that break the protocol
        kRejected,     ///< the server answered MISMATCH (wrong match key or token)
        kInterrupted,  ///< the local owner asked us to stop (RpcServer::stop)
        kRemote,       ///< the server reported an error in a session reply
    };
    RpcError(Kind kind, const std::string& msg) : std::runtime_error(msg), m_kind(kind) {}
    Kind kind() const { return m_kind; }

private:
    Kind m_kind;
};

/// `json.dumps(value)` byte for byte, as the tracker protocol needs it (support/py_json.h). The
/// result is pure ASCII, so its byte length equals the Python `len()` TVM puts in the frame header.
using tb::pyDumps;

/// Python's `repr(float)` (support/py_json.h): random match keys and addresses print with it.
using tb::pyFloatRepr;

/// Python's `str(x)` of a JSON-decoded value, as `':'.join(map(str, addr))` in TVM's text summary
/// uses it: strings as is, `None`, `True`/`False`, ints in decimal, floats by pyFloatRepr, lists and
/// dicts in JSON form (an approximation of Python's repr that never occurs in practice).
std::string pyStr(const Json& value);

/// A fresh TVM-style match key `<prefix>:<random.random()>`, e.g. `rasp3b:0.4713140226013541`
/// (python/tvm/rpc/base.py random_key). Thread-safe; seeded from std::random_device.
std::string randomKey(std::string_view prefix);

/// Splits a match key at its LAST ':' (TVM `split_random_key`, since #13420): "a:b:0.5" -> {"a:b",
/// "0.5"}. A key without ':' gives {key, ""}.
std::pair<std::string, std::string> splitRandomKey(std::string_view key);

/// Little-endian int32 helpers for frame headers (TVM packs with struct "<i").
inline void appendLe32(std::string& out, std::int32_t v) {
    auto u = static_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}
inline std::int32_t readLe32(const char* p) {
    std::uint32_t u = 0;
    for (int i = 0; i < 4; ++i) u |= std::uint32_t(static_cast<unsigned char>(p[i])) << (8 * i);
    return static_cast<std::int32_t>(u);
}
inline void appendLe64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline std::uint64_t readLe64(const char* p) {
    std::uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= std::uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
    return u;
}

/// One tracker frame: int32 LE byte length of `json`, then `json`.
std::string trackerFrame(std::string_view json);

}  // namespace tb::rpc
