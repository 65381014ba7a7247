// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/builder.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace tb::measure {

struct LocalBuilder::Pending {
    std::mutex mutex;
    std::condition_variable cv;
    int running = 0;
};

LocalBuilder::LocalBuilder(codegen::Target target, BuilderOptions options)
    : m_target(std::move(target)), m_options(options), m_pending(std::make_shared<Pending>()) {
    if (m_options.nParallel <= 0) m_options.nParallel = std::max(1, int(std::thread::hardware_concurrency()));
}

LocalBuilder::~LocalBuilder() {
    std::unique_lock lock(m_pending->mutex);
    m_pending->cv.wait(lock, [&] { return m_pending->running == 0; });
}

namespace {
// Shared between the waiting caller and a (possibly abandoned) compile thread.
struct Job {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    BuildResult result;
    double startTime = 0;  // nowTimestamp() when the compile began
};
}  // namespace

std::vector<BuildResult> LocalBuilder::build(const std::vector<MeasureInput>& inputs) {
    using clock = std::chrono::steady_clock;
    std::vector<BuildResult> out(inputs.size());
    const size_t wave = size_t(m_options.nParallel);
    for (size_t start = 0; start < inputs.size(); start += wave) {
        const size_t end = std::min(inputs.size(), start + wave);
        std::vector<std::shared_ptr<Job>> jobs;
        const auto t0 = clock::now();
        for (size_t i = start; i < end; ++i) {
            auto job = std::make_shared<Job>();
            jobs.push_back(job);
            MeasureInput in = inputs[i];
            {
                std::lock_guard lock(m_pending->mutex);
                ++m_pending->running;
            }
            // Detached on purpose: a compile past the timeout is abandoned, not joined.
            std::thread([job, in, target = m_target, opts = m_options.compile, pending = m_pending] {
                BuildResult r;
                const auto s = clock::now();
                const double startTime = nowTimestamp();
                try {
                    if (in.gpuModule) {
                        r.gpuModule = in.gpuModule;  // GPU source is compiled on the device
                    } else if (in.prebuilt) {
                        r.kernel = in.prebuilt;
                    } else if (in.func) {
                        r.kernel = codegen::compileCached(*in.func, target, opts);
                    } else {
                        r.errorNo = MeasureErrorNo::InstantiationError;
                        r.errorMsg = "candidate has neither a lowered function nor a compiled kernel";
                    }
                } catch (const std::exception& e) {
                    r.kernel.reset();
                    r.gpuModule.reset();
                    r.errorNo = MeasureErrorNo::CompileHost;
                    r.errorMsg = e.what();
                }
                r.timeCost = std::chrono::duration<double>(clock::now() - s).count();
                {
                    std::lock_guard lock(job->mutex);
                    job->result = std::move(r);
                    job->startTime = startTime;
                    job->done = true;
                    job->cv.notify_all();
                }
                std::lock_guard lock(pending->mutex);
                if (--pending->running == 0) pending->cv.notify_all();
            }).detach();
        }
        const auto deadline = t0 + std::chrono::duration<double>(m_options.timeoutS);
        for (size_t k = 0; k < jobs.size(); ++k) {
            std::unique_lock lock(jobs[k]->mutex);
            // A compile that finished but took longer than the limit is a timeout too: on a loaded
            // machine this thread may wake only after a slow compile is done, and the verdict must
            // not depend on when the waiter was scheduled.
            if (jobs[k]->cv.wait_until(lock, deadline, [&] { return jobs[k]->done; }) &&
                jobs[k]->result.timeCost <= m_options.timeoutS) {
                out[start + k] = std::move(jobs[k]->result);
                if (hasEventSink()) {
                    // After the wave: the compile threads may outlive the builder, the sink may not.
                    MeasureEvent e;
                    e.kind = MeasureEvent::Kind::Finished;
                    e.phase = MeasureEvent::Phase::Build;
                    e.batch = m_batches + 1;
                    e.candidate = int(start + k);
                    e.workloadKey = inputs[start + k].workloadKey;
                    e.device = "host";
                    e.deviceKey = "builder";
                    e.startTime = jobs[k]->startTime;
                    e.endTime = e.startTime + out[start + k].timeCost;
                    e.errorNo = out[start + k].errorNo;
                    e.message = out[start + k].errorMsg;
                    emitEvent(e);
                }
            } else {
                BuildResult r;
                r.errorNo = MeasureErrorNo::BuildTimeout;
                r.errorMsg = "build exceeded " + std::to_string(m_options.timeoutS) + " s";
                r.timeCost = m_options.timeoutS;
                out[start + k] = std::move(r);
            }
        }
    }
    ++m_batches;
    return out;
}

}  // namespace tb::measure
