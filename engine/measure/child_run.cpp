// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/child_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace tb::measure {

namespace {

// Closes every socket descriptor but `keep` (the open ones are listed in /proc/self/fd; without
// /proc the first 1024 descriptors are tried).
void closeSocketsExcept(int keep) {
    std::vector<int> fds;
    if (DIR* d = opendir("/proc/self/fd")) {
        while (const dirent* e = readdir(d))
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9') fds.push_back(std::atoi(e->d_name));
        closedir(d);
    } else {
        for (int fd = 3; fd < 1024; ++fd) fds.push_back(fd);
    }
    for (int fd : fds) {
        struct stat st;
        if (fd > 2 && fd != keep && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) close(fd);
    }
}

}  // namespace

ChildOutcome runInChild(double timeoutSec, const std::function<std::string()>& body) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        const int keep = fds[1];
        closeSocketsExcept(keep);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        const std::string out = body();
        size_t off = 0;
        while (off < out.size()) {
            const ssize_t n = write(keep, out.data() + off, out.size() - off);
            if (n <= 0) _exit(2);
            off += size_t(n);
        }
        _exit(0);
    }
    close(fds[1]);
    ChildOutcome c;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSec);
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            c.timedOut = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int rc = poll(&p, 1, int(std::min<long long>(left, 1000)));
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) continue;
        char buf[65536];
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        c.out.append(buf, size_t(n));
    }
    close(fds[0]);
    if (c.timedOut) kill(pid, SIGKILL);
    while (waitpid(pid, &c.status, 0) < 0 && errno == EINTR) {
    }
    return c;
}

}  // namespace tb::measure
