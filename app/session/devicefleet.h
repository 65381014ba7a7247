// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fleet of devices on this machine, each a separate child process that registers with one RPC
// tracker (issue 21): sandboxed host servers (`tunebench-cli rpc-server --key local`), emulated
// AArch64 boards (`scripts/arm-board -n 1 --key rasp4b-64`, qemu-aarch64) and emulated Mali boards
// (`scripts/mali-board -n 1 --key rk3399`: a GPU device server on PoCL) and simulated VTA
// accelerators (`tunebench-cli rpc-server --device vta --vta-target intelfocl --key intelfocl`: the
// bit-exact VTA simulator, whose measurements are simulated time). Devices are added and
// stopped one at a time, also while a tuning job measures on them. Plain C++ (no Qt): shared by
// `tunebench-cli fleet up` and the window's tracker monitor, which drive it from one thread.

#include <sys/types.h>

#include <string>
#include <vector>

namespace tb::session {

/// Where the programs a fleet starts are, and where their logs go.
struct FleetPaths {
    std::string cli;          ///< tunebench-cli (its `rpc-server` runs a host device)
    std::string armScript;    ///< scripts/arm-board of the source tree
    std::string armBuildDir;  ///< the build's aarch64 folder (tunebench-device-server)
    std::string logDir;       ///< one log per device (created when missing)
    std::string maliScript;   ///< scripts/mali-board of the source tree
    std::string buildDir;     ///< the build folder (its bin/tunebench-gpu-server runs a Mali board)

    /// Next to the running executable (build/<bin|tests>/X): <dir>/tunebench-cli (or
    /// <dir>/../bin/tunebench-cli), <dir>/../../scripts/arm-board, <dir>/../aarch64,
    /// <dir>/../../scripts/mali-board, <dir>/..; logs in $TMPDIR/tunebench-fleet-<pid>.
    static FleetPaths defaults();
};

class DeviceFleet {
public:
    enum class Kind { Local, Arm, Mali, Vta };
    struct Device {
        int id = 0;            ///< 0, 1, 2... in the order added (never reused)
        Kind kind = Kind::Local;
        std::string name;      ///< "host server 0", "ARM board 1", "Mali board 0", "VTA sim 0"
        std::string key;       ///< device key it registers under
        std::string log;       ///< its log file
        pid_t pid = -1;        ///< -1 once it ended or was stopped
        std::string ended;     ///< how it ended ("stopped", "exited with status 1", ...); empty while running
    };

    /// Devices register with the tracker at `trackerAddr` ("host:port") and listen on `host`.
    DeviceFleet(FleetPaths paths, std::string trackerAddr, std::string host = "127.0.0.1");
    /// Stops every device still running (stopAll).
    ~DeviceFleet();
    DeviceFleet(const DeviceFleet&) = delete;
    DeviceFleet& operator=(const DeviceFleet&) = delete;

    /// Starts one device of `kind` under `key` (host servers run `threads` worker threads; boards
    /// one; a VTA device simulates TVM's default config of the VTA TARGET named `key` when that is
    /// one (pynq, intelfocl, sim, ...), else of intelfocl, the target seed 004 tunes) and returns its id. Throws tb::UserError when the program is missing, the key is bad or
    /// the process cannot be started.
    int add(Kind kind, const std::string& key, int threads = 1);
    /// SIGTERM to device `id`, SIGKILL after `graceS` seconds; false when it is not running.
    bool stop(int id, double graceS = 10);
    /// Stops every running device (SIGTERM to all at once, then SIGKILL after graceS).
    void stopAll(double graceS = 10);
    /// The devices that ended by themselves since the last call (their `ended` says how).
    std::vector<Device> reap();

    const std::vector<Device>& devices() const { return m_devices; }
    /// Running devices of `kind`.
    int running(Kind kind) const;
    const std::string& trackerAddress() const { return m_tracker; }
    const FleetPaths& paths() const { return m_paths; }

private:
    FleetPaths m_paths;
    std::string m_tracker, m_host;
    std::vector<Device> m_devices;
    int m_next[4] = {0, 0, 0, 0};  // per kind, for names
};

}  // namespace tb::session
