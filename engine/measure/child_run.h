// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file child_run.h
/// \brief Runs a piece of work in a freshly forked child with a deadline and returns the bytes it
/// produced: how device servers and the GPU runtime keep a candidate's crash, hang or poisoned
/// driver state away from the process that serves requests (DESIGN.md decision 2).
///
/// Shared by the AArch64 device server (tools/arm/) and the GPU runtime (gpu_device.h); POSIX and
/// the standard library only, so both can be built without the engine's libraries.

#include <sys/types.h>
#include <sys/wait.h>

#include <functional>
#include <string>

namespace tb::measure {

/// What a forked child left: its output (all it wrote before exiting), its wait status, and
/// whether it was killed for outliving the deadline.
struct ChildOutcome {
    std::string out;
    int status = 0;
    bool timedOut = false;
    bool ok() const { return !timedOut && WIFEXITED(status) && WEXITSTATUS(status) == 0 && !out.empty(); }
};

/// Runs `body` in a fresh forked child and returns what it produced (the string it returned,
/// written through a pipe), killing it (SIGKILL) after timeoutSec seconds. In the child, every
/// inherited socket is closed first (the tracker connection, the session, the listen socket: a
/// candidate that outlives a dead server cannot keep them open; only sockets, since under
/// qemu-user other descriptors may belong to the emulator), and the child dies with its parent
/// (PR_SET_PDEATHSIG). Throws std::runtime_error when pipe or fork fail.
ChildOutcome runInChild(double timeoutSec, const std::function<std::string()>& body);

}  // namespace tb::measure
