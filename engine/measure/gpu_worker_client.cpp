// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/gpu_worker_client.h"

#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
        nlohmann::json req = {{"api", gpu::gpuApiName(api)},
                              {"device_index", index},
                              {"options",
                               {{"number", options.number},
                                {"repeat", options.repeat},
                                {"min_repeat_ms", options.minRepeatMs},
                                {"seed", options.seed}}},
                              {"return_buffers", returnBuffers}};
        std::ofstream(dir.path + "/request.json") << req.dump();
        std::ofstream(dir.path + "/module.json") << codegen::toJson(module).dump();
        if (check) {
            const std::string blob = encodeCheckBlob(*check);
            std::ofstream(dir.path + "/check.bin", std::ios::binary).write(blob.data(), std::streamsize(blob.size()));
        }
    }
    std::vector<std::string> args = {worker, dir.path};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (const int rc = posix_spawn(&pid, worker.c_str(), nullptr, nullptr, argv.data(), environ); rc != 0)
        return failure(gpu::kErrorCompileDevice, "cannot start " + worker + ": " + std::strerror(rc));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSec);
    int status = 0;
    bool timedOut = false;
    auto pause = std::chrono::microseconds(200);
    for (;;) {
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return failure(gpu::kErrorUnknown, std::string("waitpid: ") + std::strerror(errno));
        if (std::chrono::steady_clock::now() >= deadline) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            timedOut = true;
            break;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(20000));
    }
    if (timedOut) return failure(gpu::kErrorRunTimeout, "the GPU module ran past the timeout of " + std::to_string(timeoutSec) + " s");
    if (WIFSIGNALED(status))
        return failure(gpu::kErrorRuntimeDevice,
                       std::string("the GPU worker was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                           strsignal(WTERMSIG(status)) + ")");
    std::ifstream in(dir.path + "/result.json");
    if (!in) return failure(gpu::kErrorUnknown, "the GPU worker exited with status " + std::to_string(WEXITSTATUS(status)) +
                                                    " without a result");
    gpu::GpuMeasureResult r;
    try {
        r = gpu::gpuMeasureResultFromJson(nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {})));
    } catch (const std::exception& e) {
        return failure(gpu::kErrorUnknown, std::string("the GPU worker's result is malformed: ") + e.what());
    }
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

}  // namespace tb::measure
