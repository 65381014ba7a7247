// SPDX-License-Identifier: Apache-2.0
#include "engine/measure/builder.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

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
// One batch's compiles, shared between the calling thread and the compile threads (which may be
// abandoned after a timeout and outlive the call).
struct Batch {
    struct Job {
        bool done = false;
        bool abandoned = false;  // past its deadline: its slot was given to the next candidate
        BuildResult result;
        double startTime = 0;  // nowTimestamp() when the compile began
    };
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<Job> jobs;
    int freeSlots = 0;
};
}  // namespace

std::vector<BuildResult> LocalBuilder::build(const std::vector<MeasureInput>& inputs) {
    using clock = std::chrono::steady_clock;
    const size_t n = inputs.size();
    std::vector<BuildResult> out(n);
    auto batch = std::make_shared<Batch>();
    batch->jobs.resize(n);
    batch->freeSlots = m_options.nParallel;
    std::vector<clock::time_point> deadline(n);
    const auto limit = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(m_options.timeoutS));
    // A queue, not waves: a thread that finishes takes the next candidate at once, so one slow
    // compile (a heavily unrolled candidate: seconds, where the median is ~0.1 s) does not leave
    // the other cores idle until it ends.
    for (size_t i = 0; i < n; ++i) {
        {
            std::unique_lock lock(batch->mutex);
            while (batch->freeSlots == 0) {
                // Wait for a slot, or for the earliest running compile to pass its deadline; that
                // one is abandoned (reported as BUILD_TIMEOUT below) and its slot reused.
                size_t oldest = n;
                for (size_t k = 0; k < i; ++k)
                    if (!batch->jobs[k].done && !batch->jobs[k].abandoned && (oldest == n || deadline[k] < deadline[oldest]))
                        oldest = k;
                if (oldest == n) break;  // cannot happen: a slot is taken only by a running compile
                if (!batch->cv.wait_until(lock, deadline[oldest], [&] { return batch->freeSlots > 0; })) {
                    batch->jobs[oldest].abandoned = true;
                    ++batch->freeSlots;
                }
            }
            --batch->freeSlots;
        }
        {
            std::lock_guard lock(m_pending->mutex);
            ++m_pending->running;
        }
        deadline[i] = clock::now() + limit;
        // Detached on purpose: a compile past the timeout is abandoned, not joined.
        std::thread([batch, i, in = inputs[i], target = m_target, opts = m_options.compile, nice = m_options.niceness,
                     pending = m_pending] {
            if (nice != 0) setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), nice);  // this thread only
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
                std::lock_guard lock(batch->mutex);
                Batch::Job& job = batch->jobs[i];
                job.result = std::move(r);
                job.startTime = startTime;
                job.done = true;
                if (!job.abandoned) ++batch->freeSlots;
                batch->cv.notify_all();
            }
            std::lock_guard lock(pending->mutex);
            if (--pending->running == 0) pending->cv.notify_all();
        }).detach();
    }
    for (size_t k = 0; k < n; ++k) {
        std::unique_lock lock(batch->mutex);
        Batch::Job& job = batch->jobs[k];
        // A compile that finished but took longer than the limit is a timeout too: on a loaded
        // machine this thread may wake only after a slow compile is done, and the verdict must
        // not depend on when the waiter was scheduled.
        if (!job.abandoned && batch->cv.wait_until(lock, deadline[k], [&] { return job.done; }) &&
            job.result.timeCost <= m_options.timeoutS) {
            out[k] = std::move(job.result);
            lock.unlock();
            if (hasEventSink()) {
                // From the calling thread: the compile threads may outlive the builder, the sink may not.
                MeasureEvent e;
                e.kind = MeasureEvent::Kind::Finished;
                e.phase = MeasureEvent::Phase::Build;
                e.batch = m_batches + 1;
                e.candidate = int(k);
                e.workloadKey = inputs[k].workloadKey;
                e.device = "host";
                e.deviceKey = "builder";
                e.startTime = job.startTime;
                e.endTime = e.startTime + out[k].timeCost;
                e.errorNo = out[k].errorNo;
                e.message = out[k].errorMsg;
                emitEvent(e);
            }
        } else {
            job.abandoned = true;  // a late finish must not free a slot of this (ended) batch
            BuildResult r;
            r.errorNo = MeasureErrorNo::BuildTimeout;
            r.errorMsg = "build exceeded " + std::to_string(m_options.timeoutS) + " s";
            r.timeCost = m_options.timeoutS;
            out[k] = std::move(r);
        }
    }
    ++m_batches;
    return out;
}

}  // namespace tb::measure
