// SPDX-License-Identifier: Apache-2.0
#include "app/session/devicefleet.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "engine/support/error.h"
#include "engine/support/process.h"

extern char** environ;

namespace tb::session {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0; }

// Waits for the devices' pids until `deadline`, then SIGKILLs those still there.
void reapUntil(std::vector<DeviceFleet::Device*>& devices, Clock::time_point deadline) {
    for (DeviceFleet::Device* d : devices) {
        while (d->pid > 0) {
            int status = 0;
            const pid_t r = ::waitpid(d->pid, &status, WNOHANG);
            if (r == d->pid || (r < 0 && errno != EINTR)) {
                d->pid = -1;
            } else if (Clock::now() >= deadline) {
                std::fprintf(stderr, "fleet: %s (pid %d) ignored SIGTERM; killing it\n", d->name.c_str(), int(d->pid));
                ::kill(d->pid, SIGKILL);
                ::waitpid(d->pid, &status, 0);
                d->pid = -1;
            } else {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
        if (d->ended.empty()) d->ended = "stopped";
    }
}

}  // namespace

FleetPaths FleetPaths::defaults() {
    std::error_code ec;
    const fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
    FleetPaths p;
    p.cli = (dir / "tunebench-cli").string();
    if (!executable(p.cli) && executable(dir / ".." / "bin" / "tunebench-cli"))
        p.cli = (dir / ".." / "bin" / "tunebench-cli").lexically_normal().string();
    p.armScript = (dir / ".." / ".." / "scripts" / "arm-board").lexically_normal().string();
    p.armBuildDir = (dir / ".." / "aarch64").lexically_normal().string();
    p.maliScript = (dir / ".." / ".." / "scripts" / "mali-board").lexically_normal().string();
    p.buildDir = (dir / "..").lexically_normal().string();
    const char* tmp = std::getenv("TMPDIR");
    p.logDir = std::string(tmp && *tmp ? tmp : "/tmp") + "/tunebench-fleet-" + std::to_string(::getpid());
    return p;
}

DeviceFleet::DeviceFleet(FleetPaths paths, std::string trackerAddr, std::string host)
    : m_paths(std::move(paths)), m_tracker(std::move(trackerAddr)), m_host(std::move(host)) {}

DeviceFleet::~DeviceFleet() { stopAll(10); }

int DeviceFleet::add(Kind kind, const std::string& key, int threads) {
    TB_USER_CHECK(!key.empty() && key.find_first_of(" \t\r\n") == std::string::npos)
        << "device key '" << key << "' must be non-empty without whitespace";
    std::error_code ec;
    fs::create_directories(m_paths.logDir, ec);
    TB_USER_CHECK(!ec) << "cannot create the log directory " << m_paths.logDir << ": " << ec.message();
    Device d;
    d.id = int(m_devices.size());
    d.kind = kind;
    d.key = key;
    const int n = m_next[int(kind)]++;
    if (kind == Kind::Local || kind == Kind::Vta) {
        const bool vta = kind == Kind::Vta;
        TB_USER_CHECK(executable(m_paths.cli)) << "cannot find tunebench-cli to start a " << (vta ? "VTA" : "host")
                                               << " server (looked for " << m_paths.cli << ")";
        d.name = (vta ? "VTA sim " : "host server ") + std::to_string(n);
        d.log = m_paths.logDir + (vta ? "/vta-" : "/local-") + std::to_string(n) + ".log";
        std::vector<std::string> argv{m_paths.cli, "rpc-server", "--tracker", m_tracker, "--key", key, "--host", m_host};
        if (vta) {
            static const char* kTargets[] = {"sim", "tsim", "pynq", "de10nano", "ultra96", "intelfocl"};
            const bool named = std::find(std::begin(kTargets), std::end(kTargets), key) != std::end(kTargets);
            for (const char* a : {"--device", "vta", "--vta-target"}) argv.emplace_back(a);
            argv.push_back(named ? key : "intelfocl");
        } else {
            argv.insert(argv.end(), {"--num-threads", std::to_string(std::max(1, threads))});
        }
        d.pid = spawnLogged(argv, d.log);
    } else {
        // An emulated board (ARM under qemu, Mali on PoCL): one script per board, so that each board
        // can be stopped alone (the script stops its server on SIGTERM); each writes its board's log
        // into its own folder.
        const bool arm = kind == Kind::Arm;
        const std::string& script = arm ? m_paths.armScript : m_paths.maliScript;
        const std::string what = arm ? "ARM" : "Mali";
        TB_USER_CHECK(executable(script)) << "an emulated " << what << " board needs scripts/" << (arm ? "arm" : "mali")
                                          << "-board of the source tree (looked for " << script << ")";
        d.name = what + " board " + std::to_string(n);
        const std::string boardLogs = m_paths.logDir + (arm ? "/arm-" : "/mali-") + std::to_string(n);
        d.log = boardLogs + ".log";
        d.pid = spawnLogged({"/bin/bash", script, "-n", "1", "--tracker", m_tracker, "--key", key, "--host", m_host,
                             "--build-dir", arm ? m_paths.armBuildDir : m_paths.buildDir, "--log-dir", boardLogs},
                            d.log);
    }
    m_devices.push_back(d);
    return d.id;
}

bool DeviceFleet::stop(int id, double graceS) {
    if (id < 0 || size_t(id) >= m_devices.size() || m_devices[size_t(id)].pid <= 0) return false;
    Device& d = m_devices[size_t(id)];
    ::kill(d.pid, SIGTERM);
    std::vector<Device*> one{&d};
    reapUntil(one, Clock::now() + std::chrono::milliseconds(long(graceS * 1000)));
    return true;
}

void DeviceFleet::stopAll(double graceS) {
    std::vector<Device*> live;
    for (Device& d : m_devices)
        if (d.pid > 0) {
            ::kill(d.pid, SIGTERM);
            live.push_back(&d);
        }
    reapUntil(live, Clock::now() + std::chrono::milliseconds(long(graceS * 1000)));
}

std::vector<DeviceFleet::Device> DeviceFleet::reap() {
    std::vector<Device> ended;
    for (Device& d : m_devices) {
        int status = 0;
        if (d.pid > 0 && ::waitpid(d.pid, &status, WNOHANG) == d.pid) {
            d.pid = -1;
            d.ended = describeWaitStatus(status);
            ended.push_back(d);
        }
    }
    return ended;
}

int DeviceFleet::running(Kind kind) const {
    int n = 0;
    for (const Device& d : m_devices)
        if (d.kind == kind && d.pid > 0) ++n;
    return n;
}

}  // namespace tb::session
