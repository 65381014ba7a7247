// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file worker_protocol.h
/// \brief (internal to measure/) The messages between LocalRunner and its sandbox worker process.
///
/// Frames on a Unix stream socket: u64 little-endian payload length, then the payload. A request
/// carries one candidate (object bytes, entry symbol, argument sizes, timer options, seed, the
/// optional check data); the reply carries the error code, a message and the costs. The worker is
/// `tunebench-worker --fd=N` (worker_main.cpp); it exits on EOF.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/measure/measure.h"
#include "engine/measure/timer.h"

namespace tb::measure::detail {

/// "TBW" and the protocol version, which changes with the message layout (2: TimerOptions::slices,
/// 3: RunRequest::flushArgs),
/// so that a worker and a caller from different builds say so instead of misreading each other.
inline constexpr uint32_t kWorkerMagic = 0x54425703;

struct RunRequest {
    std::string symbol;
    std::vector<uint8_t> object;
    std::vector<int64_t> argElements;
    TimerOptions timer;
    bool flushCache = false;
    /// The arguments a flush evicts, resolved by LocalRunner::runOne (TVM's rule, every argument
    /// but the first, when the input names none) and checked against argElements.
    std::vector<int32_t> flushArgs;
    uint64_t seed = 0;
    bool hasCheck = false;
    CheckSpec check;
};

struct RunReply {
    int32_t errorNo = 0;
    std::string message;
    std::vector<double> costs;
};

std::string encode(const RunRequest& r);
RunRequest decodeRequest(const std::string& payload);  ///< throws InternalError on a malformed payload
std::string encode(const RunReply& r);
RunReply decodeReply(const std::string& payload);

/// Write one frame; false when the peer is gone (no SIGPIPE: uses send(MSG_NOSIGNAL)).
bool writeFrame(int fd, const std::string& payload);
/// Read one frame. Returns 1 on success, 0 on EOF / error, -1 when `timeoutMs` (< 0: no limit)
/// passed before the frame was complete.
int readFrame(int fd, std::string* payload, double timeoutMs);

}  // namespace tb::measure::detail
