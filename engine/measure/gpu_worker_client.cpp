// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/gpu_worker_client.h"

#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/measure/check_blob.h"
#include "engine/support/error.h"

extern char** environ;

namespace tb::measure {

namespace {

bool isExecutable(const std::string& p) { return access(p.c_str(), X_OK) == 0; }

gpu::GpuMeasureResult failure(int errorNo, std::string message) {
    gpu::GpuMeasureResult r;
    r.errorNo = errorNo;
    r.errorMsg = std::move(message);
    return r;
}

/// A private directory removed with its files when it goes out of scope.
struct TempDir {
    std::string path;
    TempDir() {
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/tb-gpu-XXXXXX";
        if (!mkdtemp(tmpl.data())) throw UserError("cannot create a temporary directory: " + std::string(std::strerror(errno)));
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

/// Starts `worker DIR`; returns its pid, or 0 with `error` set.
pid_t spawnWorker(const std::string& worker, const std::string& dir, std::string& error) {
    std::vector<std::string> args = {worker, dir};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (const int rc = posix_spawn(&pid, worker.c_str(), nullptr, nullptr, argv.data(), environ); rc != 0) {
        error = "cannot start " + worker + ": " + std::strerror(rc);
        return 0;
    }
    return pid;
}

/// Kills `pid` and reaps it.
void killWorker(pid_t pid) {
    int status = 0;
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

std::string signalMessage(int status) {
    return std::string("the GPU worker was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

gpu::GpuMeasureResult readResult(const std::string& path) {
    std::ifstream in(path);
    if (!in) return failure(gpu::kErrorUnknown, "cannot read the GPU worker's " + path);
    try {
        return gpu::gpuMeasureResultFromJson(nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {})));
    } catch (const std::exception& e) {
        return failure(gpu::kErrorUnknown, std::string("the GPU worker's result is malformed: ") + e.what());
    }
}

nlohmann::json requestJson(gpu::GpuApi api, int index, const gpu::GpuMeasureOptions& options) {
    return {{"api", gpu::gpuApiName(api)},
            {"device_index", index},
            {"options",
             {{"number", options.number},
              {"repeat", options.repeat},
              {"min_repeat_ms", options.minRepeatMs},
              {"seed", options.seed}}}};
}

}  // namespace

std::string findGpuWorker() {
    if (const char* env = std::getenv("TB_GPU_WORKER_PATH"); env && *env) {
        TB_USER_CHECK(isExecutable(env)) << "TB_GPU_WORKER_PATH='" << env << "' is not an executable file";
        return env;
    }
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        std::string dir(self, size_t(n));
        dir = dir.substr(0, dir.rfind('/'));
        for (const char* rel : {"/tunebench-gpu-worker", "/../bin/tunebench-gpu-worker", "/lib/tunebench-gpu-worker"})
            if (isExecutable(dir + rel)) return dir + rel;
    }
    TB_USER_ERROR() << "cannot find the GPU measure worker 'tunebench-gpu-worker' (set TB_GPU_WORKER_PATH)";
    return {};
}

gpu::GpuMeasureResult measureGpuModuleInWorker(gpu::GpuApi api, int index, const codegen::GpuModule& module,
                                               const gpu::GpuMeasureOptions& options, const gpu::GpuCheck* check,
                                               double timeoutSec, const std::vector<int>& returnBuffers,
                                               const std::string& workerPath) {
    std::string worker;
    try {
        worker = workerPath.empty() ? findGpuWorker() : workerPath;
    } catch (const std::exception& e) {
        return failure(gpu::kErrorCompileDevice, e.what());
    }
    TempDir dir;
    {
        nlohmann::json req = requestJson(api, index, options);
        req["return_buffers"] = returnBuffers;
        std::ofstream(dir.path + "/request.json") << req.dump();
        std::ofstream(dir.path + "/module.json") << codegen::toJson(module).dump();
        if (check) {
            const std::string blob = encodeCheckBlob(*check);
            std::ofstream(dir.path + "/check.bin", std::ios::binary).write(blob.data(), std::streamsize(blob.size()));
        }
    }
    std::string spawnError;
    const pid_t pid = spawnWorker(worker, dir.path, spawnError);
    if (pid == 0) return failure(gpu::kErrorCompileDevice, spawnError);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSec);
    int status = 0;
    bool timedOut = false;
    auto pause = std::chrono::microseconds(200);
    for (;;) {
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return failure(gpu::kErrorUnknown, std::string("waitpid: ") + std::strerror(errno));
        if (std::chrono::steady_clock::now() >= deadline) {
            killWorker(pid);
            timedOut = true;
            break;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(20000));
    }
    if (timedOut) return failure(gpu::kErrorRunTimeout, "the GPU module ran past the timeout of " + std::to_string(timeoutSec) + " s");
    if (WIFSIGNALED(status)) return failure(gpu::kErrorRuntimeDevice, signalMessage(status));
    if (!exists(dir.path + "/result.json"))
        return failure(gpu::kErrorUnknown, "the GPU worker exited with status " + std::to_string(WEXITSTATUS(status)) +
                                               " without a result");
    gpu::GpuMeasureResult r = readResult(dir.path + "/result.json");
    if (r.ok() && !returnBuffers.empty()) {
        r.outputs.assign(module.bufferElements.size(), {});
        for (int b : returnBuffers) {
            if (b < 0 || size_t(b) >= module.bufferElements.size()) continue;
            std::ifstream o(dir.path + "/out" + std::to_string(b) + ".bin", std::ios::binary);
            std::vector<float>& v = r.outputs[size_t(b)];
            v.resize(size_t(module.bufferElements[size_t(b)]));
            o.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
            if (!o) return failure(gpu::kErrorUnknown, "the GPU worker did not return buffer " + std::to_string(b));
        }
    }
    return r;
}

std::vector<gpu::GpuMeasureResult> measureGpuModulesInWorker(
    gpu::GpuApi api, int index, const std::vector<const codegen::GpuModule*>& modules,
    const gpu::GpuMeasureOptions& options, const std::vector<const gpu::GpuCheck*>& checks, double timeoutSec,
    int compileThreads, const std::string& workerPath,
    const std::function<void(int, const gpu::GpuMeasureResult&)>& onResult) {
    const int n = int(modules.size());
    std::vector<gpu::GpuMeasureResult> results(static_cast<size_t>(n));
    int next = 0;  // the first candidate without a result
    int reported = 0;
    auto report = [&] {  // onResult sees each result once, in order, as soon as it is known
        for (; reported < next; ++reported)
            if (onResult) onResult(reported, results[size_t(reported)]);
    };
    if (n == 0) return results;
    std::string worker;
    try {
        worker = workerPath.empty() ? findGpuWorker() : workerPath;
    } catch (const std::exception& e) {
        for (auto& r : results) r = failure(gpu::kErrorCompileDevice, e.what());
        next = n;
        report();
        return results;
    }
    compileThreads = std::max(1, compileThreads);
    TempDir dir;
    for (int i = 0; i < n; ++i) {
        std::ofstream(dir.path + "/module" + std::to_string(i) + ".json") << codegen::toJson(*modules[size_t(i)]).dump();
        if (size_t(i) < checks.size() && checks[size_t(i)]) {
            const std::string blob = encodeCheckBlob(*checks[size_t(i)]);
            std::ofstream(dir.path + "/check" + std::to_string(i) + ".bin", std::ios::binary)
                .write(blob.data(), std::streamsize(blob.size()));
        }
    }
    const auto seconds = [](double s) {
        return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
    };
    while (next < n) {
        nlohmann::json req = requestJson(api, index, options);
        req["count"] = n;
        req["first"] = next;
        req["compile_threads"] = compileThreads;
        std::ofstream(dir.path + "/request.json") << req.dump();
        std::string spawnError;
        const pid_t pid = spawnWorker(worker, dir.path, spawnError);
        if (pid == 0) {
            for (int i = next; i < n; ++i) results[size_t(i)] = failure(gpu::kErrorCompileDevice, spawnError);
            next = n;
            report();
            break;
        }
        const int startedAt = next, remaining = n - next;
        auto deadline = std::chrono::steady_clock::now() +
                        seconds(timeoutSec * (1 + (remaining + compileThreads - 1) / compileThreads));
        auto pause = std::chrono::microseconds(200);
        int status = 0;
        bool exited = false;
        for (;;) {
            // Collect every result written so far; each one restarts the next candidate's clock.
            bool progressed = false;
            while (next < n && exists(dir.path + "/result" + std::to_string(next) + ".json")) {
                results[size_t(next)] = readResult(dir.path + "/result" + std::to_string(next) + ".json");
                ++next;
                progressed = true;
            }
            if (progressed) {
                report();
                deadline = std::chrono::steady_clock::now() + seconds(timeoutSec);
                pause = std::chrono::microseconds(200);
            }
            if (exited || next >= n) break;
            const pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                exited = true;  // one more pass collects what it wrote last
                continue;
            }
            if (w < 0 && errno != EINTR) {
                killWorker(pid);
                results[size_t(next)] = failure(gpu::kErrorUnknown, std::string("waitpid: ") + std::strerror(errno));
                ++next;
                break;
            }
            if (std::chrono::steady_clock::now() >= deadline) {
                killWorker(pid);
                results[size_t(next)] = failure(gpu::kErrorRunTimeout, "the GPU module ran past the timeout of " +
                                                                           std::to_string(timeoutSec) + " s");
                ++next;
                break;
            }
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::microseconds(20000));
        }
        if (!exited && next >= n) {
            // Every result is in: reap the worker (it exits right after its last result).
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
        } else if (exited && next < n) {
            // The worker ended before this candidate's result: it crashed on it, or stopped after a
            // run-time fault of the one before (then it starts again here without blame).
            const bool stoppedAfterFault = next > startedAt && results[size_t(next - 1)].errorNo == gpu::kErrorRuntimeDevice &&
                                           WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (!stoppedAfterFault) {
                results[size_t(next)] =
                    WIFSIGNALED(status)
                        ? failure(gpu::kErrorRuntimeDevice, signalMessage(status))
                        : failure(gpu::kErrorUnknown, "the GPU worker exited with status " +
                                                          std::to_string(WEXITSTATUS(status)) + " without a result");
                ++next;
            }
        }
        report();
    }
    return results;
}

}  // namespace tb::measure
