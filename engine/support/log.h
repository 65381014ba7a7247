// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file log.h
/// \brief The one log line format of TuneBench's servers (`tunebench-cli tracker`, `rpc-server`,
/// the AArch64 device server): `2024-01-31 12:00:00.123 INFO message` on stderr (local time to the
/// millisecond, level, message: Python logging's `%(asctime)s %(levelname)s %(message)s` layout
/// with a '.' before the milliseconds).
///
/// Header-only and dependency-free, so the cross-compiled device server (tools/arm/) uses it
/// without linking the engine. Engine layers report through callbacks (e.g.
/// rpc::TrackerOptions::log) and never write to stderr themselves; the programs pass logLine there.

#include <cstdio>
#include <ctime>
#include <string>

namespace tb {

/// Writes `line` to stderr with a local-time timestamp and the INFO level, then flushes. Thread
/// safe (one fprintf call per line).
inline void logLine(const std::string& line) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    tm t{};
    localtime_r(&ts.tv_sec, &t);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &t);
    std::fprintf(stderr, "%s.%03ld INFO %s\n", stamp, ts.tv_nsec / 1000000, line.c_str());
    std::fflush(stderr);
}

}  // namespace tb
