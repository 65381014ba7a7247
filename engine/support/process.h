// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file process.h
/// \brief The process-level conventions TuneBench's executables share: how main() turns the
/// engine's exceptions into an exit status, how port and HOST:PORT arguments are read, how a
/// foreground server waits for Ctrl-C / SIGTERM, how a child process is started with its output
/// in a log file, and how a child process's end is described.
///
/// Used by tunebench-cli, tunebench-runner, the measure layer's sandbox runner and the AArch64
/// device server (tools/arm/, cross-compiled without the engine's libraries): hence header-only,
/// POSIX and the standard library only (plus error.h, itself header-only).

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/support/error.h"

namespace tb {

/// Runs a program's body and returns its exit status. The engine's exceptions become the status
/// every TuneBench executable uses: a UserError prints `error: <what>` on stderr and gives 2 (bad
/// input, like a usage error); any other exception prints `internal error: <what>` and gives 1.
template <class Body>
int runMain(Body&& body) {
    try {
        return std::forward<Body>(body)();
    } catch (const UserError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "internal error: %s\n", e.what());
        return 1;
    }
}

/// A TCP port argument: decimal, 0..65535 (0: any free port). Throws UserError
/// `<what>: '<text>' is not a port number (0..65535)`.
inline int parsePort(const std::string& text, const char* what) {
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    TB_USER_CHECK(!text.empty() && *end == '\0' && v >= 0 && v <= 65535)
        << what << ": '" << text << "' is not a port number (0..65535)";
    return int(v);
}

/// A `HOST:PORT` argument (`--tracker 127.0.0.1:9190`), split at the last ':'. Throws UserError
/// when there is no ':' or no host, or the port is not a port number (parsePort).
inline std::pair<std::string, int> parseHostPort(const std::string& text, const char* what) {
    const size_t colon = text.rfind(':');
    TB_USER_CHECK(colon != std::string::npos && colon > 0) << what << ": '" << text << "' is not HOST:PORT";
    return {text.substr(0, colon), parsePort(text.substr(colon + 1), what)};
}

/// SIGINT and SIGTERM taken synchronously by a foreground server. The constructor blocks both in
/// the calling thread, so create the object before starting any thread (threads inherit the mask
/// and then never receive them); wait() returns when one arrives. The mask is left blocked.
class StopSignals {
public:
    StopSignals() {
        sigemptyset(&m_set);
        sigaddset(&m_set, SIGINT);
        sigaddset(&m_set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &m_set, nullptr);
    }

    /// Waits for SIGINT or SIGTERM and returns its number; returns 0 as soon as `keepWaiting`
    /// (when given; polled every 200 ms) returns false, e.g. when the server stopped on its own.
    int wait(const std::function<bool()>& keepWaiting = {}) const {
        for (;;) {
            if (keepWaiting && !keepWaiting()) return 0;
            const timespec poll{0, 200 * 1000 * 1000};
            const int sig = sigtimedwait(&m_set, nullptr, &poll);
            if (sig > 0) return sig;
        }
    }

private:
    sigset_t m_set;
};

/// Starts the program `args[0]` (a path) with `args`: stdin from /dev/null, stdout and stderr into
/// `logFile` (appended, or truncated when `append` is false), SIGINT and SIGTERM unblocked and at
/// their default action in the child (a parent waiting with StopSignals blocks them). Returns the
/// child's pid; throws tb::UserError naming the program when it cannot be started.
inline pid_t spawnLogged(std::vector<std::string> args, const std::string& logFile, bool append = true) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, logFile.c_str(), O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, stops;
    sigemptyset(&none);
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &stops);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    TB_USER_CHECK(rc == 0) << "cannot start " << args[0] << ": " << std::strerror(rc);
    return pid;
}

/// How a child process ended, from waitpid()'s status: "killed by signal 11 (Segmentation fault)",
/// "exited with status 3", or "ended".
inline std::string describeWaitStatus(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    }
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    return "ended";
}

}  // namespace tb
