// SPDX-License-Identifier: Apache-2.0
#pragma once
// The measurement side of the RPC servers the window starts (DESIGN.md §4): an
// rpc::MeasureExecutor that runs an uploaded object file in the sandboxed worker process of
// engine/measure, so the local fleet measures for real and never in our own process.

#include <memory>
#include <mutex>

#include "engine/rpc/measure_executor.h"

namespace tb::measure {
class LocalRunner;
}

namespace tb::session {

class SandboxExecutor : public rpc::MeasureExecutor {
public:
    SandboxExecutor();
    ~SandboxExecutor() override;
    rpc::RunReply run(const rpc::RunRequest& request) override;

private:
    std::mutex m_mutex;  // one run at a time, even if several servers share the executor
    std::unique_ptr<measure::LocalRunner> m_runner;
    std::string m_runnerKey;  // timer options the runner was made with
};

}  // namespace tb::session
