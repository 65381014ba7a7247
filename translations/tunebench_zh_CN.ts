<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>tb::models::AutotvmTaskModel</name>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>ID</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Template</source>
        <translation>模板</translation>
    </message>
    <message>
        <source>Args</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Configs</source>
        <translation>配置数</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>进度</translation>
    </message>
    <message>
        <source>Current GFLOPS</source>
        <translation>当前 GFLOPS</translation>
    </message>
    <message>
        <source>Best GFLOPS</source>
        <translation>最佳 GFLOPS</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
</context>
<context>
    <name>tb::models::DeviceQueueModel</name>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>总数</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Pending</source>
        <translation>排队</translation>
    </message>
</context>
<context>
    <name>tb::models::FleetKeyStatsModel</name>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>设备数</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Busy</source>
        <translation>忙碌</translation>
    </message>
    <message>
        <source>Pending</source>
        <translation>排队</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行次数</translation>
    </message>
    <message>
        <source>Errors</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>Runs/min</source>
        <translation>每分钟运行</translation>
    </message>
    <message>
        <source>Lost</source>
        <translation>丢失</translation>
    </message>
</context>
<context>
    <name>tb::models::FleetModel</name>
    <message>
        <source>no longer registered with the tracker %1</source>
        <translation>已不再在跟踪器 %1 注册</translation>
    </message>
</context>
<context>
    <name>tb::models::MeasurementModel</name>
    <message>
        <source>Trial</source>
        <translation>试验</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Latency (ms)</source>
        <translation>延迟 (ms)</translation>
    </message>
    <message>
        <source>GFLOPS</source>
        <translation>GFLOPS</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Time (s)</source>
        <translation>时间 (s)</translation>
    </message>
    <message>
        <source>Read back from the log of an earlier run (times are seconds before this run started)</source>
        <translation>从先前运行的日志中读回（时间为本次运行开始前的秒数）</translation>
    </message>
</context>
<context>
    <name>tb::models::TaskTableModel</name>
    <message>
        <source>pending</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>tuning</source>
        <translation>调优中</translation>
    </message>
    <message>
        <source>tuned</source>
        <translation>已调优</translation>
    </message>
    <message>
        <source>dead</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>ID</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Task Description</source>
        <translation>任务描述</translation>
    </message>
    <message>
        <source>Weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>浮点运算数</translation>
    </message>
    <message>
        <source>Latency (ms)</source>
        <translation>延迟 (ms)</translation>
    </message>
    <message>
        <source>Speed (GFLOPS)</source>
        <translation>速度 (GFLOPS)</translation>
    </message>
    <message>
        <source>Trials</source>
        <translation>试验次数</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
</context>
<context>
    <name>tb::session::OnnxInputs</name>
    <message>
        <source>%1 (for this model, e.g. %2)</source>
        <translation>%1（此模型示例：%2）</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not an input of this model (its inputs: %2)</source>
        <translation>“%1”不是此模型的输入（其输入：%2）</translation>
    </message>
    <message>
        <source>Input &apos;%1&apos; has dynamic dimensions %2: bind them, e.g. %3</source>
        <translation>输入“%1”含有动态维度 %2：请绑定，例如 %3</translation>
    </message>
    <message>
        <source>Input &apos;%1&apos; is declared %2; the binding %3 does not fit it (e.g. %4)</source>
        <translation>输入“%1”声明为 %2；绑定 %3 与之不符（例如 %4）</translation>
    </message>
</context>
<context>
    <name>tb::session::AutotvmWorker</name>
    <message>
        <source>Extracting the AutoTVM tasks of %1 (NCHW, batch %2) for %3…</source>
        <translation>正在为 %3 提取 %1（NCHW，批大小 %2）的 AutoTVM 任务…</translation>
    </message>
    <message numerus="yes">
        <source>%n AutoTVM task(s) extracted%1; tuner %2, n_trial %3 per task, log %4</source>
        <translation>
            <numerusform>已提取 %n 个 AutoTVM 任务%1；调优器 %2，每任务 n_trial %3，日志 %4</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source> (%n conv2d/dense op(s) without a template that runs here skipped)</source>
        <translation>
            <numerusform>（跳过了 %n 个在此无可运行模板的 conv2d/dense 算子）</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not start AutoTVM tuning: %1</source>
        <translation>无法开始 AutoTVM 调优：%1</translation>
    </message>
    <message numerus="yes">
        <source>Paused after %n trial(s).</source>
        <translation>
            <numerusform>已在 %n 次试验后暂停。</numerusform>
        </translation>
    </message>
    <message>
        <source>[Task %1/%2] %3 %4: %5 configs, %6 GFLOP, tuner %7, n_trial %8</source>
        <translation>[任务 %1/%2] %3 %4：%5 个配置，%6 GFLOP，调优器 %7，n_trial %8</translation>
    </message>
    <message>
        <source>AutoTVM tuning stopped by an error in task %1: %2</source>
        <translation>AutoTVM 调优因任务 %1 出错而停止：%2</translation>
    </message>
    <message>
        <source>[Task %1/%2] Current/Best: %3/%4 GFLOPS | Progress: (%5/%6) | %7 s Done.</source>
        <translation>[任务 %1/%2] 当前/最佳：%3/%4 GFLOPS | 进度：(%5/%6) | %7 秒 完成。</translation>
    </message>
    <message>
        <source>Best config: %1</source>
        <translation>最佳配置：%1</translation>
    </message>
    <message>
        <source>AutoTVM tuning stopped: %1 trials (%2 failed) in %3 s, log %4</source>
        <translation>AutoTVM 调优已停止：%1 次试验（%2 次失败），用时 %3 秒，日志 %4</translation>
    </message>
    <message>
        <source>AutoTVM tuning finished: %1 trials (%2 failed) in %3 s, log %4</source>
        <translation>AutoTVM 调优完成：%1 次试验（%2 次失败），用时 %3 秒，日志 %4</translation>
    </message>
</context>
<context>
    <name>tb::session::LogLoader</name>
    <message>
        <source>%1 records read, %2 kept in %3</source>
        <translation>读取 %1 条记录，保留 %2 条，写入 %3</translation>
    </message>
    <message>
        <source>the file does not exist</source>
        <translation>文件不存在</translation>
    </message>
    <message>
        <source>it is a folder, not a log file</source>
        <translation>这是一个文件夹，不是日志文件</translation>
    </message>
    <message>
        <source>the file cannot be read (permission denied)</source>
        <translation>无法读取文件（权限不足）</translation>
    </message>
    <message>
        <source>the file is empty</source>
        <translation>文件为空</translation>
    </message>
    <message numerus="yes">
        <source>it is not a TVM tuning log: none of its %n line(s) is an auto_scheduler or AutoTVM record (line %1: %2)</source>
        <translation>
            <numerusform>这不是 TVM 调优日志：其 %n 行中没有一行是 auto_scheduler 或 AutoTVM 记录（第 %1 行：%2）</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>the log holds no records, only %n comment line(s)</source>
        <translation>
            <numerusform>日志中没有记录，只有 %n 行注释</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tb::session::TrackerPoller</name>
    <message>
        <source>Could not start the local fleet: %1</source>
        <translation>无法启动本地设备集群：%1</translation>
    </message>
    <message>
        <source>Tracker %1:%2 unreachable: %3</source>
        <translation>无法连接跟踪器 %1:%2：%3</translation>
    </message>
    <message>
        <source>Could not start a device: %1</source>
        <translation>无法启动设备：%1</translation>
    </message>
</context>
<context>
    <name>tb::session::TuningSession</name>
    <message>
        <source>A job is already running: stop it first.</source>
        <translation>已有任务正在运行：请先停止它。</translation>
    </message>
</context>
<context>
    <name>tb::session::TuningWorker</name>
    <message>
        <source>Extracting the tasks of %1 (%2, batch %3) for %4…</source>
        <translation>正在为 %4 提取 %1 的任务（%2，批大小 %3）…</translation>
    </message>
    <message numerus="yes">
        <source>%n task(s) extracted; budget %1 trials, log %2</source>
        <translation>
            <numerusform>已提取 %n 个任务；预算 %1 次试验，日志 %2</numerusform>
        </translation>
    </message>
    <message>
        <source>Resumed from %1: %2 records, %3 of this network, %4 replayed, %5 unreadable lines</source>
        <translation>已从 %1 恢复：%2 条记录，其中 %3 条属于本网络，重放 %4 条，%5 行无法读取</translation>
    </message>
    <message>
        <source>Could not start tuning: %1</source>
        <translation>无法开始调优：%1</translation>
    </message>
    <message numerus="yes">
        <source>Paused after %n trial(s).</source>
        <translation>
            <numerusform>已在 %n 次试验后暂停。</numerusform>
        </translation>
    </message>
    <message>
        <source>Tuning stopped by an error: %1</source>
        <translation>调优因错误而停止：%1</translation>
    </message>
    <message>
        <source>Measured task %1: %2 trials, %3 valid, best %4 ms</source>
        <translation>已测量任务 %1：%2 次试验，%3 次有效，最佳 %4 ms</translation>
    </message>
    <message>
        <source>Tuning stopped: %1 trials (%2 failed) in %3 s, log %4</source>
        <translation>调优已停止：%1 次试验（%2 次失败），用时 %3 秒，日志 %4</translation>
    </message>
    <message>
        <source>Tuning finished: %1 trials (%2 failed) in %3 s, log %4</source>
        <translation>调优完成：%1 次试验（%2 次失败），用时 %3 秒，日志 %4</translation>
    </message>
    <message>
        <source>Runner: %1</source>
        <translation>运行器：%1</translation>
    </message>
</context>
<context>
    <name>tb::widgets::AutotvmPanel</name>
    <message>
        <source>Trials of the task</source>
        <translation>该任务的试验次数</translation>
    </message>
    <message>
        <source>GFLOPS</source>
        <translation>GFLOPS</translation>
    </message>
    <message>
        <source>measured config</source>
        <translation>已测配置</translation>
    </message>
    <message>
        <source>best so far</source>
        <translation>目前最佳</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Best config</source>
        <translation>最佳配置</translation>
    </message>
    <message>
        <source>Task %1 %2: no valid config yet</source>
        <translation>任务 %1 %2：尚无有效配置</translation>
    </message>
    <message>
        <source>Task %1 %2: best config #%3 of %4, trial %5, %6 GFLOPS</source>
        <translation>任务 %1 %2：最佳配置 #%3（共 %4 个），第 %5 次试验，%6 GFLOPS</translation>
    </message>
</context>
<context>
    <name>tb::widgets::DagView</name>
    <message>
        <source>Graph</source>
        <translation>图</translation>
    </message>
    <message>
        <source>Compute DAG</source>
        <translation>计算 DAG</translation>
    </message>
    <message>
        <source>Loop state</source>
        <translation>循环状态</translation>
    </message>
    <message>
        <source>Loop nest</source>
        <translation>循环嵌套</translation>
    </message>
    <message>
        <source>LLVM IR</source>
        <translation>LLVM IR</translation>
    </message>
    <message>
        <source>Assembly</source>
        <translation>汇编</translation>
    </message>
    <message>
        <source>No task selected</source>
        <translation>未选择任务</translation>
    </message>
    <message>
        <source>Task %1: %2</source>
        <translation>任务 %1：%2</translation>
    </message>
    <message>
        <source> — best %1 ms</source>
        <translation> — 最佳 %1 ms</translation>
    </message>
    <message>
        <source>(no measured schedule yet)</source>
        <translation>（尚无已测量的调度）</translation>
    </message>
    <message>
        <source>(the best schedule could not be compiled: %1)</source>
        <translation>（无法编译最佳调度：%1）</translation>
    </message>
    <message>
        <source>Loop nest + kernel source</source>
        <translation>循环嵌套 + 内核源码</translation>
    </message>
    <message>
        <source>%1 of the GPU default schedule (no measured schedule yet)</source>
        <translation>GPU 默认调度的 %1（尚无已测量的调度）</translation>
    </message>
    <message>
        <source>%1 of the best schedule</source>
        <translation>最佳调度的 %1</translation>
    </message>
    <message numerus="yes">
        <source>%n launch(es), in order:</source>
        <translation>
            <numerusform>%n 次启动，依次为：</numerusform>
        </translation>
    </message>
    <message>
        <source>(the kernels could not be generated: %1)</source>
        <translation>（无法生成内核：%1）</translation>
    </message>
</context>
<context>
    <name>tb::widgets::FleetPanel</name>
    <message>
        <source>ARM boards</source>
        <translation>ARM 开发板</translation>
    </message>
    <message>
        <source>Host servers</source>
        <translation>主机服务器</translation>
    </message>
    <message>
        <source>Start fleet</source>
        <translation>启动设备集群</translation>
    </message>
    <message>
        <source>Start emulated AArch64 boards (qemu, key %1) and sandboxed host servers (key %2), each a separate process registering with the tracker watched in the tracker panel</source>
        <translation>启动模拟的 AArch64 开发板（qemu，键 %1）和沙箱化的主机服务器（键 %2），每个都是独立进程，向跟踪器面板所监视的跟踪器注册</translation>
    </message>
    <message>
        <source>Add ARM board</source>
        <translation>添加 ARM 开发板</translation>
    </message>
    <message>
        <source>Add host server</source>
        <translation>添加主机服务器</translation>
    </message>
    <message>
        <source>Stop device</source>
        <translation>停止设备</translation>
    </message>
    <message>
        <source>Stop the device selected in the list (also while tuning runs: its candidate is recorded as an error)</source>
        <translation>停止列表中选中的设备（调优运行时也可以：其正在测量的候选记为错误）</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>ARM board %1</source>
        <translation>ARM 开发板 %1</translation>
    </message>
    <message>
        <source>Host server %1</source>
        <translation>主机服务器 %1</translation>
    </message>
    <message>
        <source>running (pid %1)</source>
        <translation>运行中（pid %1）</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>Log: %1</source>
        <translation>日志：%1</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>timeout</source>
        <translation>超时</translation>
    </message>
    <message numerus="yes">
        <source>%n device(s) lost</source>
        <translation>
            <numerusform>%n 台设备丢失</numerusform>
        </translation>
    </message>
    <message>
        <source>Add Mali board</source>
        <translation>添加 Mali 开发板</translation>
    </message>
    <message>
        <source>Start an emulated Mali GPU board (scripts/mali-board: a GPU device server on PoCL, key %1) registering with the tracker; its device attributes appear in the tracker panel</source>
        <translation>启动一块模拟的 Mali GPU 开发板（scripts/mali-board：运行在 PoCL 上的 GPU 设备服务器，键 %1），向跟踪器注册；其设备属性显示在跟踪器面板中</translation>
    </message>
    <message>
        <source>Mali board %1</source>
        <translation>Mali 开发板 %1</translation>
    </message>
</context>
<context>
    <name>tb::widgets::FleetTimeline</name>
    <message>
        <source>No device has measured yet</source>
        <translation>尚无设备进行测量</translation>
    </message>
    <message>
        <source>build</source>
        <translation>构建</translation>
    </message>
    <message>
        <source>upload</source>
        <translation>上传</translation>
    </message>
    <message>
        <source>run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Task %1, candidate %2 of batch %3</source>
        <translation>任务 %1，第 %3 批的候选 %2</translation>
    </message>
    <message>
        <source>Candidate %1 of batch %2</source>
        <translation>第 %2 批的候选 %1</translation>
    </message>
    <message>
        <source>%1: %2 s, from %3 s to %4 s</source>
        <translation>%1：%2 秒，从 %3 秒到 %4 秒</translation>
    </message>
    <message>
        <source>%1: running since %2 s</source>
        <translation>%1：自 %2 秒起运行中</translation>
    </message>
    <message>
        <source>Error %1: %2</source>
        <translation>错误 %1：%2</translation>
    </message>
    <message>
        <source>Lost at %1 s: %2</source>
        <translation>于 %1 秒丢失：%2</translation>
    </message>
    <message>
        <source>%1 min</source>
        <translation>%1 分钟</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
</context>
<context>
    <name>tb::widgets::LatencyChart</name>
    <message>
        <source>Export chart</source>
        <translation>导出图表</translation>
    </message>
    <message>
        <source>PNG images (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>Export data</source>
        <translation>导出数据</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>Estimated total latency vs trials</source>
        <translation>估计总延迟 / 试验次数</translation>
    </message>
    <message>
        <source>Estimated total latency vs time</source>
        <translation>估计总延迟 / 时间</translation>
    </message>
    <message>
        <source>Selected task: best GFLOPS vs trials</source>
        <translation>所选任务：最佳 GFLOPS / 试验次数</translation>
    </message>
    <message>
        <source>Selected task: every measured candidate</source>
        <translation>所选任务：所有已测量候选</translation>
    </message>
    <message>
        <source>Selected task: predicted vs measured</source>
        <translation>所选任务：预测值 / 实测值</translation>
    </message>
    <message>
        <source>Export PNG…</source>
        <translation>导出 PNG…</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <source>Wall time (s)</source>
        <translation>墙钟时间 (s)</translation>
    </message>
    <message>
        <source>Trials</source>
        <translation>试验次数</translation>
    </message>
    <message>
        <source>Estimated total latency (ms)</source>
        <translation>估计总延迟 (ms)</translation>
    </message>
    <message>
        <source>Trials of the task</source>
        <translation>该任务的试验次数</translation>
    </message>
    <message>
        <source>Best GFLOPS</source>
        <translation>最佳 GFLOPS</translation>
    </message>
    <message>
        <source>Trial</source>
        <translation>试验</translation>
    </message>
    <message>
        <source>GFLOPS</source>
        <translation>GFLOPS</translation>
    </message>
    <message>
        <source>Cost model score</source>
        <translation>代价模型得分</translation>
    </message>
    <message>
        <source>Measured GFLOPS</source>
        <translation>实测 GFLOPS</translation>
    </message>
    <message>
        <source>Estimated total latency</source>
        <translation>估计总延迟</translation>
    </message>
    <message>
        <source>Tasks measured so far: %1 of %2</source>
        <translation>已测量任务：%1 / %2</translation>
    </message>
    <message>
        <source>Waiting for measurements…</source>
        <translation>正在等待测量结果…</translation>
    </message>
    <message>
        <source>Select a task in the table</source>
        <translation>请在表格中选择一个任务</translation>
    </message>
    <message>
        <source>Warm-up: measured tasks only</source>
        <translation>预热：仅含已测量任务</translation>
    </message>
    <message>
        <source>resumed</source>
        <translation>续接</translation>
    </message>
    <message numerus="yes">
        <source>Last round: the cost model gave all %n candidate(s) the same score (it has not learned yet), so there is no ranking to compare</source>
        <translation>
            <numerusform>最近一轮：代价模型给所有 %n 个候选打出相同的分数（尚未学习），没有可比较的排序</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Last round: all %n candidate(s) measured the same: no ranking to compare</source>
        <translation>
            <numerusform>最近一轮：所有 %n 个候选的实测结果相同，没有可比较的排序</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Last round: Spearman ρ = %1 over %n candidate(s)</source>
        <translation>
            <numerusform>最近一轮：%n 个候选的 Spearman ρ = %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Last round: no candidate has a cost model score</source>
        <translation>最近一轮：没有候选带有代价模型得分</translation>
    </message>
    <message numerus="yes">
        <source>Last round: %n scored candidate(s), too few to rank</source>
        <translation>
            <numerusform>最近一轮：%n 个有得分的候选，太少，无法排序</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>; mean over %n round(s): ρ = %1</source>
        <translation>
            <numerusform>；%n 轮的平均 ρ = %1</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>; %n picked without a score (ε-greedy random pick or seed), not shown</source>
        <translation>
            <numerusform>；%n 个候选未经打分选出（ε-贪心随机选取或种子），未显示</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>tb::widgets::LogComparison</name>
    <message>
        <source>Workload</source>
        <translation>工作负载</translation>
    </message>
    <message>
        <source>Records A</source>
        <translation>记录数 A</translation>
    </message>
    <message>
        <source>Best A (ms)</source>
        <translation>最佳 A (ms)</translation>
    </message>
    <message>
        <source>Records B</source>
        <translation>记录数 B</translation>
    </message>
    <message>
        <source>Best B (ms)</source>
        <translation>最佳 B (ms)</translation>
    </message>
    <message>
        <source>Speedup B/A</source>
        <translation>加速比 B/A</translation>
    </message>
    <message>
        <source>Best latency in A divided by best latency in B: above 1, log B found the faster schedule</source>
        <translation>A 的最佳延迟除以 B 的最佳延迟：大于 1 表示日志 B 找到了更快的调度</translation>
    </message>
    <message>
        <source>Record of the workload</source>
        <translation>该工作负载的记录序号</translation>
    </message>
    <message>
        <source>Cost (ms)</source>
        <translation>耗时 (ms)</translation>
    </message>
    <message>
        <source>A: %1 — B: %2. %3 workloads in both logs, %4 only in A, %5 only in B</source>
        <translation>A：%1 — B：%2。两个日志共有 %3 个工作负载，仅在 A 中 %4 个，仅在 B 中 %5 个</translation>
    </message>
    <message numerus="yes">
        <source>; over the %n workload(s) with a valid record in both, B is %1× as fast as A (geometric mean)</source>
        <translation>
            <numerusform>；在两者都有有效记录的 %n 个工作负载上，B 的速度是 A 的 %1 倍（几何平均）</numerusform>
        </translation>
    </message>
    <message>
        <source>A: %1</source>
        <translation>A：%1</translation>
    </message>
    <message>
        <source>B: %1</source>
        <translation>B：%1</translation>
    </message>
</context>
<context>
    <name>tb::widgets::LogInspector</name>
    <message>
        <source>Open tuning log</source>
        <translation>打开调优日志</translation>
    </message>
    <message>
        <source>Tuning logs (*.json *.log);;All files (*)</source>
        <translation>调优日志 (*.json *.log);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Compare with log</source>
        <translation>与日志比较</translation>
    </message>
    <message>
        <source>Distill into</source>
        <translation>提炼到</translation>
    </message>
    <message>
        <source>TuneBench — Log Inspector</source>
        <translation>TuneBench — 日志检查器</translation>
    </message>
    <message>
        <source>Open log…</source>
        <translation>打开日志…</translation>
    </message>
    <message>
        <source>Compare with…</source>
        <translation>比较…</translation>
    </message>
    <message>
        <source>Distill…</source>
        <translation>提炼…</translation>
    </message>
    <message>
        <source>Keep the best record of every workload (TVM&apos;s distill / pick_best)</source>
        <translation>保留每个工作负载的最佳记录（TVM 的 distill / pick_best）</translation>
    </message>
    <message>
        <source>Reading %1…</source>
        <translation>正在读取 %1…</translation>
    </message>
    <message>
        <source>Read %1</source>
        <translation>已读取 %1</translation>
    </message>
    <message>
        <source>Open a second log and compare the two workload by workload</source>
        <translation>打开第二个日志，逐个工作负载比较两者</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
</context>
<context>
    <name>tb::widgets::LogPane</name>
    <message>
        <source>Workload</source>
        <translation>工作负载</translation>
    </message>
    <message>
        <source>Records</source>
        <translation>记录数</translation>
    </message>
    <message>
        <source>Valid</source>
        <translation>有效</translation>
    </message>
    <message>
        <source>Best (ms)</source>
        <translation>最佳 (ms)</translation>
    </message>
    <message>
        <source>GFLOPS</source>
        <translation>GFLOPS</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Count</source>
        <translation>数量</translation>
    </message>
    <message>
        <source>Record</source>
        <translation>记录</translation>
    </message>
    <message>
        <source>Cost (ms)</source>
        <translation>耗时 (ms)</translation>
    </message>
    <message>
        <source>No log open</source>
        <translation>未打开日志</translation>
    </message>
    <message>
        <source>%1 — %2 format, %3 lines, %4 records (%5 valid), %6 workloads, %7 unreadable lines</source>
        <translation>%1 — %2 格式，%3 行，%4 条记录（%5 条有效），%6 个工作负载，%7 行无法读取</translation>
    </message>
    <message>
        <source>unreadable lines</source>
        <translation>无法读取的行</translation>
    </message>
    <message>
        <source>line %1: %2</source>
        <translation>第 %1 行：%2</translation>
    </message>
    <message>
        <source>%1 cannot be shown: %2</source>
        <translation>无法显示 %1：%2</translation>
    </message>
</context>
<context>
    <name>tb::widgets::MainWindow</name>
    <message>
        <source>Tuning failed: %1</source>
        <translation>调优失败：%1</translation>
    </message>
    <message>
        <source>Tuning failed</source>
        <translation>调优失败</translation>
    </message>
    <message>
        <source>About TuneBench</source>
        <translation>关于 TuneBench</translation>
    </message>
    <message>
        <source>TuneBench %1
Auto-tuning of tensor programs, in the line of TVM&apos;s auto-scheduler.</source>
        <translation>TuneBench %1
张量程序自动调优，沿袭 TVM 自动调度器的思路。</translation>
    </message>
    <message>
        <source>TuneBench — auto-tuning workbench</source>
        <translation>TuneBench — 自动调优工作台</translation>
    </message>
    <message>
        <source>Session</source>
        <translation>会话</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>Extract the tasks of the network and tune them</source>
        <translation>提取网络的任务并进行调优</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Pause or resume between two search rounds</source>
        <translation>在两轮搜索之间暂停或继续</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stop after the current round (every measured record is kept)</source>
        <translation>在当前轮结束后停止（保留所有已测量的记录）</translation>
    </message>
    <message>
        <source>Engine log</source>
        <translation>引擎日志</translation>
    </message>
    <message>
        <source>Measurements</source>
        <translation>测量记录</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>Open &amp;Log Inspector…</source>
        <translation>打开日志检查器(&amp;L)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About TuneBench</source>
        <translation>关于 TuneBench(&amp;A)</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Extracting tasks…</source>
        <translation>正在提取任务…</translation>
    </message>
    <message numerus="yes">
        <source>Tuning: %n trial(s) measured</source>
        <translation>
            <numerusform>调优中：已测量 %n 次试验</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Paused: %n trial(s) measured</source>
        <translation>
            <numerusform>已暂停：已测量 %n 次试验</numerusform>
        </translation>
    </message>
    <message>
        <source>Stopping after the current round…</source>
        <translation>将在当前轮结束后停止…</translation>
    </message>
    <message numerus="yes">
        <source> (%n failed)</source>
        <translation>
            <numerusform>（%n 次失败）</numerusform>
        </translation>
    </message>
    <message>
        <source>Estimated total latency: %1 ms</source>
        <translation>估计总延迟：%1 ms</translation>
    </message>
    <message>
        <source>Warm-up: %1 of %2 tasks measured</source>
        <translation>预热：已测量 %1 / %2 个任务</translation>
    </message>
    <message>
        <source>Stopping after the current round, then closing…</source>
        <translation>将在当前轮结束后停止，然后关闭…</translation>
    </message>
    <message>
        <source> (%1 s of that paused)</source>
        <translation>（其中暂停 %1 秒）</translation>
    </message>
    <message>
        <source>Device tracker</source>
        <translation>设备跟踪器</translation>
    </message>
    <message>
        <source>The history of %1 could not be read back: %2</source>
        <translation>无法读回 %1 中的历史：%2</translation>
    </message>
    <message numerus="yes">
        <source>%n earlier measurement(s) read back from %1</source>
        <translation>
            <numerusform>已从 %1 读回 %n 条先前的测量记录</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Pausing after this round: %n trial(s) measured</source>
        <translation>
            <numerusform>将在本轮结束后暂停：已测量 %n 次试验</numerusform>
        </translation>
    </message>
    <message>
        <source>Device fleet</source>
        <translation>设备集群</translation>
    </message>
</context>
<context>
    <name>tb::widgets::SetupWidget</name>
    <message>
        <source>Open ONNX model</source>
        <translation>打开 ONNX 模型</translation>
    </message>
    <message>
        <source>ONNX models (*.onnx)</source>
        <translation>ONNX 模型 (*.onnx)</translation>
    </message>
    <message>
        <source>Network</source>
        <translation>网络</translation>
    </message>
    <message>
        <source>Zoo network</source>
        <translation>内置网络</translation>
    </message>
    <message>
        <source>ONNX file</source>
        <translation>ONNX 文件</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Layout</source>
        <translation>布局</translation>
    </message>
    <message>
        <source>(none: use the zoo network)</source>
        <translation>（无：使用内置网络）</translation>
    </message>
    <message>
        <source>Open ONNX…</source>
        <translation>打开 ONNX…</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Host CPU</source>
        <translation>本机 CPU</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Trials</source>
        <translation>试验次数</translation>
    </message>
    <message>
        <source>64 × tasks</source>
        <translation>64 × 任务数</translation>
    </message>
    <message>
        <source>Measures per round</source>
        <translation>每轮测量次数</translation>
    </message>
    <message>
        <source>Early stopping</source>
        <translation>提前停止</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Strategy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>gradient</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>round-robin</source>
        <translation>轮询</translation>
    </message>
    <message>
        <source>Cost model</source>
        <translation>代价模型</translation>
    </message>
    <message>
        <source>XGBoost</source>
        <translation>XGBoost</translation>
    </message>
    <message>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>XGBoost, pairwise rank</source>
        <translation>XGBoost（成对排序）</translation>
    </message>
    <message>
        <source>XGBoost as TVM (164 features, random warm-up)</source>
        <translation>XGBoost，同 TVM（164 个特征，预热期随机）</translation>
    </message>
    <message>
        <source>XGBoost: TVM&apos;s features plus 12 of the register block; until it has trained it ranks candidates by their estimated cycles instead of at random. XGBoost as TVM: TVM&apos;s model exactly (--cost-model xgb-tvm).</source>
        <translation>XGBoost：TVM 的特征外加 12 个寄存器块特征；训练之前按估计的周期数而非随机地为候选排序。XGBoost，同 TVM：与 TVM 完全相同的模型（--cost-model xgb-tvm）。</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Runner</source>
        <translation>运行器</translation>
    </message>
    <message>
        <source>local (sandboxed)</source>
        <translation>本地（沙箱）</translation>
    </message>
    <message>
        <source>RPC through a tracker</source>
        <translation>通过跟踪器的 RPC</translation>
    </message>
    <message>
        <source>Tracker</source>
        <translation>跟踪器</translation>
    </message>
    <message>
        <source>Device key</source>
        <translation>设备键</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Log file</source>
        <translation>日志文件</translation>
    </message>
    <message>
        <source>Resume from the existing log</source>
        <translation>从已有日志恢复</translation>
    </message>
    <message>
        <source>Input shapes</source>
        <translation>输入形状</translation>
    </message>
    <message>
        <source>Shapes of the ONNX model&apos;s dynamic inputs, NAME=DIMS separated by semicolons</source>
        <translation>ONNX 模型动态输入的形状，格式为 名称=维度，以分号分隔</translation>
    </message>
    <message>
        <source>Rewrite 3×3 convolutions to winograd (as TVM)</source>
        <translation>将 3×3 卷积改写为 Winograd（与 TVM 相同）</translation>
    </message>
    <message>
        <source>Off keeps NHWC 3×3 convolutions direct: the tasks then differ from TVM&apos;s</source>
        <translation>关闭时 NHWC 3×3 卷积保持直接计算：任务将与 TVM 的不同</translation>
    </message>
    <message>
        <source>Also tune them direct, run the faster</source>
        <translation>也以直接卷积调优，运行较快者</translation>
    </message>
    <message>
        <source>Adds, after TVM&apos;s tasks, the direct conv2d task of each winograd task (--winograd-or-direct); the compiled network runs whichever has the faster record, per convolution</source>
        <translation>在 TVM 的任务之后，为每个 Winograd 任务添加对应的直接 conv2d 任务（--winograd-or-direct）；编译后的网络按每个卷积选用记录更快的一种</translation>
    </message>
    <message>
        <source>Tasks</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Tune only these task IDs of the extraction order, e.g. 2,5</source>
        <translation>只调优这些任务 ID（按提取顺序），例如 2,5</translation>
    </message>
    <message>
        <source>Measure each task&apos;s default schedule first</source>
        <translation>先测量每个任务的默认调度</translation>
    </message>
    <message>
        <source>Off is pure Ansor: the search starts from random schedules only</source>
        <translation>关闭即纯 Ansor：搜索只从随机调度开始</translation>
    </message>
    <message>
        <source>Number</source>
        <translation>运行次数</translation>
    </message>
    <message>
        <source>Runs per measurement (TVM number), raised until one measurement lasts min_repeat_ms</source>
        <translation>每次测量的运行次数（TVM number），会增大到单次测量至少持续 min_repeat_ms</translation>
    </message>
    <message>
        <source>Repeat</source>
        <translation>重复次数</translation>
    </message>
    <message>
        <source>Measurements per candidate (TVM repeat)</source>
        <translation>每个候选的测量次数（TVM repeat）</translation>
    </message>
    <message>
        <source>Min. repeat time</source>
        <translation>最短测量时间</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> 毫秒</translation>
    </message>
    <message>
        <source>Timeout</source>
        <translation>超时</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>Per candidate: loading, checking and timing it</source>
        <translation>每个候选：加载、校验并计时</translation>
    </message>
    <message>
        <source>Latency log (TSV)</source>
        <translation>延迟日志 (TSV)</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>Estimated total latency after each round, as TVM&apos;s total_latency.tsv</source>
        <translation>每轮后的估计总延迟，与 TVM 的 total_latency.tsv 相同</translation>
    </message>
    <message>
        <source>no such file</source>
        <translation>文件不存在</translation>
    </message>
    <message>
        <source>Cannot read the model&apos;s inputs: %1</source>
        <translation>无法读取模型的输入：%1</translation>
    </message>
    <message>
        <source>Model inputs: %1
? marks a dynamic dimension: bind it above
(the sizes there are suggestions).</source>
        <translation>模型输入：%1
? 表示动态维度：请在上方绑定
（其中的尺寸为建议值）。</translation>
    </message>
    <message>
        <source>Model inputs: %1 (all static)</source>
        <translation>模型输入：%1（均为静态）</translation>
    </message>
    <message>
        <source>Dynamic dimensions: %1</source>
        <translation>动态维度：%1</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Choose the record log (an existing one can be resumed)</source>
        <translation>选择记录日志（已有日志可继续）</translation>
    </message>
    <message>
        <source>Record log</source>
        <translation>记录日志</translation>
    </message>
    <message>
        <source>Tuning logs (*.json *.log);;All files (*)</source>
        <translation>调优日志 (*.json *.log);;所有文件 (*)</translation>
    </message>
    <message>
        <source>The log already holds records</source>
        <translation>日志中已有记录</translation>
    </message>
    <message>
        <source>%1 already holds %2 records.</source>
        <translation>%1 中已有 %2 条记录。</translation>
    </message>
    <message>
        <source>Append starts a new search and adds its records after them, as TVM does with a log that is not resumed. Resume continues the search from them.</source>
        <translation>追加：重新开始搜索，并将新记录写在已有记录之后（与 TVM 不继续时的做法相同）。继续：从这些记录继续搜索。</translation>
    </message>
    <message>
        <source>Append</source>
        <translation>追加</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>Auto-scheduler</source>
        <translation>自动调度器（Ansor）</translation>
    </message>
    <message>
        <source>AutoTVM</source>
        <translation>AutoTVM</translation>
    </message>
    <message>
        <source>Auto-scheduler: Ansor&apos;s sketch search over all tasks; AutoTVM: each task&apos;s template config space, tuned task by task</source>
        <translation>自动调度器：Ansor 对所有任务做草图搜索；AutoTVM：按模板配置空间逐个任务调优</translation>
    </message>
    <message>
        <source>Tuner</source>
        <translation>调优器</translation>
    </message>
    <message>
        <source>The AutoTVM tuner, as TVM names it (xgb: XGBoost cost model + simulated annealing)</source>
        <translation>AutoTVM 调优器，名称同 TVM（xgb：XGBoost 代价模型 + 模拟退火）</translation>
    </message>
    <message>
        <source>Trials per task</source>
        <translation>每任务试验数</translation>
    </message>
    <message>
        <source>n_trial: configs measured per task, at most its config space</source>
        <translation>n_trial：每个任务测量的配置数，至多为其配置空间大小</translation>
    </message>
    <message>
        <source>A TVM target string, e.g. llvm -mcpu=znver4, llvm -mtriple=aarch64-linux-gnu -mattr=+neon, opencl -device=mali or cuda -arch=sm_90</source>
        <translation>TVM 目标字符串，例如 llvm -mcpu=znver4、llvm -mtriple=aarch64-linux-gnu -mattr=+neon、opencl -device=mali 或 cuda -arch=sm_90</translation>
    </message>
    <message>
        <source>Target host</source>
        <translation>目标主机</translation>
    </message>
    <message>
        <source>(none; GPU targets only)</source>
        <translation>（无；仅用于 GPU 目标）</translation>
    </message>
    <message>
        <source>The CPU that launches a GPU target&apos;s kernels (TVM&apos;s host=), e.g. llvm -mtriple=aarch64-linux-gnu on a Mali board</source>
        <translation>启动 GPU 目标内核的 CPU（TVM 的 host=），例如 Mali 开发板上的 llvm -mtriple=aarch64-linux-gnu</translation>
    </message>
</context>
<context>
    <name>tb::widgets::TrackerPanel</name>
    <message>
        <source>Invalid tracker address &apos;%1&apos;: expected host:port</source>
        <translation>无效的跟踪器地址“%1”：应为 主机:端口</translation>
    </message>
    <message>
        <source>Device tracker</source>
        <translation>设备跟踪器</translation>
    </message>
    <message>
        <source>Tracker</source>
        <translation>跟踪器</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Start local tracker + fleet</source>
        <translation>启动本地跟踪器和设备集群</translation>
    </message>
    <message>
        <source>Server address</source>
        <translation>服务器地址</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Not connected</source>
        <translation>未连接</translation>
    </message>
    <message numerus="yes">
        <source>Tracker %1: %n key(s)</source>
        <translation>
            <numerusform>跟踪器 %1：%n 个设备键</numerusform>
        </translation>
    </message>
    <message>
        <source>, %1 of %2 servers free</source>
        <translation>，%2 台服务器中 %1 台空闲</translation>
    </message>
    <message>
        <source>Start a tracker on a free loopback port with one sandboxed RPC server of key &quot;local&quot;</source>
        <translation>在空闲的回环端口上启动跟踪器，并启动一个设备键为“local”的沙箱 RPC 服务器</translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>正在连接 %1…</translation>
    </message>
    <message>
        <source>The queue below is the last one seen, not the current one.</source>
        <translation>下方为最后一次看到的队列，并非当前队列。</translation>
    </message>
    <message>
        <source>GPU device (key / attribute)</source>
        <translation>GPU 设备（键 / 属性）</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>What the GPU device servers of each key report through the tracker; the search takes its hardware parameters from these when tuning for the key</source>
        <translation>各键的 GPU 设备服务器通过跟踪器报告的属性；为该键调优时，搜索从这些属性取得硬件参数</translation>
    </message>
</context>
<context>
    <name>tb::widgets::MainWindow</name>
    <message>
        <source>Add &amp;Session…</source>
        <translation>添加会话(&amp;S)…</translation>
    </message>
    <message>
        <source>Tune a network for another target or device key beside this session</source>
        <translation>在此会话旁为另一目标或设备键调优网络</translation>
    </message>
    <message>
        <source>Add session</source>
        <translation>添加会话</translation>
    </message>
</context>
<context>
    <name>tb::widgets::SessionPage</name>
    <message>
        <source>this CPU</source>
        <translation>本机 CPU</translation>
    </message>
    <message>
        <source>Log: %1</source>
        <translation>日志：%1</translation>
    </message>
    <message>
        <source>Tuning failed: %1</source>
        <translation>调优失败：%1</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Extracting tasks…</source>
        <translation>正在提取任务…</translation>
    </message>
    <message numerus="yes">
        <source>Tuning: %n trial(s) measured</source>
        <translation>
            <numerusform>调优中：已测量 %n 次试验</numerusform>
        </translation>
    </message>
    <message>
        <source>Stopping after the current round…</source>
        <translation>将在当前轮结束后停止…</translation>
    </message>
    <message>
        <source> · estimated total latency %1 ms</source>
        <translation> · 估计总延迟 %1 ms</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stop this session after its current round (the others go on)</source>
        <translation>在当前轮结束后停止此会话（其他会话继续）</translation>
    </message>
    <message>
        <source>Latency</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>Compute DAG</source>
        <translation>计算 DAG</translation>
    </message>
</context>
<context>
    <name>tb::widgets::MainWindow</name>
    <message>
        <source>Compile &amp;&amp; benchmark</source>
        <translation>编译并测速</translation>
    </message>
    <message>
        <source>Compile the network with the best records of the log and time it: on a device of the key with the rpc runner (outputs checked against the interpreter), else here</source>
        <translation>用日志中的最佳记录编译网络并计时：使用 rpc 运行器时在该键的设备上运行（输出与解释器对照检查），否则在本机运行</translation>
    </message>
    <message>
        <source>Compiling and benchmarking…</source>
        <translation>正在编译并测速…</translation>
    </message>
</context>
<context>
    <name>tb::session::TuningSession</name>
    <message>
        <source>A benchmark is already running.</source>
        <translation>已有一个测速在运行。</translation>
    </message>
    <message>
        <source>A benchmark is running: tune when it has finished.</source>
        <translation>正在测速：请在其结束后再调优。</translation>
    </message>
    <message>
        <source>Stop the tuning job first: a benchmark beside it would time the tuning too.</source>
        <translation>请先停止调优任务：与其同时测速会把调优也计入时间。</translation>
    </message>
</context>
<context>
    <name>tb::session::BenchWorker</name>
    <message>
        <source>Benchmark on %1: median %2 ms, max error %3 (%4)</source>
        <translation>在 %1 上测速：中位数 %2 ms，最大误差 %3（%4）</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>FAILED</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>this machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>Compiling %1 (%2) without a tuning log: every group uses its default schedule…</source>
        <translation>正在编译 %1（%2），没有调优日志：每个组使用默认调度…</translation>
    </message>
    <message>
        <source>Compiling %1 (%2) with the best records of %3…</source>
        <translation>正在用 %3 中的最佳记录编译 %1（%2）…</translation>
    </message>
    <message>
        <source>Exported %1 kernels for %2</source>
        <translation>已为 %2 导出 %1 个内核</translation>
    </message>
    <message>
        <source>Benchmark failed: %1</source>
        <translation>测速失败：%1</translation>
    </message>
    <message>
        <source>Compile and benchmark failed: %1</source>
        <translation>编译并测速失败：%1</translation>
    </message>
</context>
<context>
    <name>tb::widgets::RooflineView</name>
    <message>
        <source>Arithmetic intensity (FLOP/byte)</source>
        <translation>运算强度（FLOP/字节）</translation>
    </message>
    <message>
        <source>GFLOP/s</source>
        <translation>GFLOP/s</translation>
    </message>
    <message>
        <source>Compile &amp; benchmark a network on this machine&apos;s CPU to see every kernel against its roofline.</source>
        <translation>在本机 CPU 上编译并测速一个网络，即可看到每个内核在屋顶线上的位置。</translation>
    </message>
    <message>
        <source>Measured roofs at %1 threads: FP32 FMA peak %2 GFLOP/s, triad bandwidth %3 GB/s (ridge %4 FLOP/byte). %5 kernels: %6 compute-bound, %7 memory-bound. Bytes: inputs + weights + output once per call.</source>
        <translation>%1 线程下实测的屋顶：FP32 FMA 峰值 %2 GFLOP/s，triad 带宽 %3 GB/s（脊点 %4 FLOP/字节）。%5 个内核：%6 个计算受限，%7 个访存受限。字节数：每次调用的输入 + 权重 + 输出各计一次。</translation>
    </message>
    <message>
        <source>compute-bound at %1% of peak</source>
        <translation>计算受限，达到峰值的 %1%</translation>
    </message>
    <message>
        <source>memory-bound at %1% of bandwidth</source>
        <translation>访存受限，达到带宽的 %1%</translation>
    </message>
    <message>
        <source>The roofs were measured on a busy machine and may be low.</source>
        <translation>屋顶是在繁忙的机器上测得的，可能偏低。</translation>
    </message>
    <message>
        <source>memory-bound at %1% of bandwidth (in cache)</source>
        <translation>访存受限，达到带宽的 %1%（数据在缓存中）</translation>
    </message>
    <message>
        <source>compute-bound</source>
        <translation>计算受限</translation>
    </message>
    <message>
        <source>memory-bound</source>
        <translation>访存受限</translation>
    </message>
    <message>
        <source>%1  %2 %3 (%4% of the time)</source>
        <translation>%1  %2 %3（占时间的 %4%）</translation>
    </message>
    <message>
        <source>bound unknown</source>
        <translation>受限类型未知</translation>
    </message>
    <message>
        <source>%1 → %10
%2 call(s), %3 ms each
%4 GFLOP/s, %5 GB/s, %6 FLOP/byte (%7 MFLOP, %8 MB)
%9</source>
        <translation>%1 → %10
%2 次调用，每次 %3 ms
%4 GFLOP/s，%5 GB/s，%6 FLOP/字节（%7 MFLOP，%8 MB）
%9</translation>
    </message>
    <message>
        <source>peak %1 GFLOP/s</source>
        <translation>峰值 %1 GFLOP/s</translation>
    </message>
    <message>
        <source>%1 GB/s</source>
        <translation>%1 GB/s</translation>
    </message>
</context>
<context>
    <name>tb::widgets::MainWindow</name>
    <message>
        <source>Tuning</source>
        <translation>调优</translation>
    </message>
    <message>
        <source>Roofline</source>
        <translation>屋顶线</translation>
    </message>
</context>
<context>
    <name>tb::widgets::SetupWidget</name>
    <message>
        <source>Cache flush</source>
        <translation>缓存清空</translation>
    </message>
    <message>
        <source>per task (auto)</source>
        <translation>按任务（自动）</translation>
    </message>
    <message>
        <source>every task</source>
        <translation>所有任务</translation>
    </message>
    <message>
        <source>never (warm caches)</source>
        <translation>从不（热缓存）</translation>
    </message>
    <message>
        <source>TVM enable_cpu_cache_flush: time kernels with cold caches, as in a whole network. Per task: flush where the task&apos;s inputs and weights, or the network&apos;s weights, exceed the last-level cache</source>
        <translation>TVM enable_cpu_cache_flush：在冷缓存下为内核计时，与整个网络运行时一致。按任务：当任务的输入和权重、或整个网络的权重超过末级缓存时清空</translation>
    </message>
</context>
<context>
    <name>tb::models::TaskTableModel</name>
    <message>
        <source>Cache</source>
        <translation>缓存</translation>
    </message>
    <message>
        <source>flush</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>warm</source>
        <translation>热</translation>
    </message>
    <message>
        <source>%1 (direct, beside task %2)</source>
        <translation>%1（直接卷积，与任务 %2 成对）</translation>
    </message>
    <message>
        <source>The same convolutions as task %1 (winograd), computed directly: the network runs the faster of the two, and the estimated latency counts the pair once.
%2</source>
        <translation>与任务 %1（winograd）相同的卷积，以直接卷积计算：网络运行两者中较快的一个，估计延迟只计这一对一次。
%2</translation>
    </message>
</context>
<context>
    <name>tb::session::BenchWorker</name>
    <message>
        <source>Profiling every kernel against this machine&apos;s roofline (%1 threads)…</source>
        <translation>正在对照本机屋顶线逐个剖析内核（%1 线程）…</translation>
    </message>
</context>
<context>
    <name>tb::widgets::FleetPanel</name>
    <message>
        <source>Add VTA</source>
        <translation>添加 VTA</translation>
    </message>
    <message>
        <source>Start a simulated VTA accelerator (rpc-server --device vta: the bit-exact VTA simulator, key %1) registering with the tracker; its measurements are simulated time</source>
        <translation>启动一个模拟的 VTA 加速器（rpc-server --device vta：逐位精确的 VTA 模拟器，键 %1），向跟踪器注册；其测量结果为模拟时间</translation>
    </message>
    <message>
        <source>VTA sim %1</source>
        <translation>VTA 模拟器 %1</translation>
    </message>
</context>
<context>
    <name>tb::widgets::AutotvmPanel</name>
    <message>
        <source>Task %1 %2: best config #%3 of %4, trial %5, %6 GOPS (simulated)</source>
        <translation>任务 %1 %2：最佳配置 #%3（共 %4），第 %5 次试验，%6 GOPS（模拟）</translation>
    </message>
    <message>
        <source>VTA simulator counters (one run):</source>
        <translation>VTA 模拟器计数器（一次运行）：</translation>
    </message>
    <message>
        <source>GOPS (simulated)</source>
        <translation>GOPS（模拟）</translation>
    </message>
    <message>
        <source>Trial %1: config #%2 failed (error_no %3)</source>
        <translation>试验 %1：配置 #%2 失败（error_no %3）</translation>
    </message>
    <message>
        <source>Trial %1: config #%2, %3 GOPS (simulated)</source>
        <translation>试验 %1：配置 #%2，%3 GOPS（模拟）</translation>
    </message>
    <message>
        <source>Trial %1: config #%2, %3 GFLOPS</source>
        <translation>试验 %1：配置 #%2，%3 GFLOPS</translation>
    </message>
</context>
<context>
    <name>tb::widgets::SetupWidget</name>
    <message>
        <source>A VTA target is tuned in AutoTVM mode (seed 004: the quantized network&apos;s VTA tasks)</source>
        <translation>VTA 目标在 AutoTVM 模式下调优（种子 004：量化网络的 VTA 任务）</translation>
    </message>
</context>
<context>
    <name>tb::session::AutotvmWorker</name>
    <message>
        <source>Quantizing %1 (int8, global scale 8, first conv kept float), packing it for VTA %2 (nn.max_pool2d .. nn.global_avg_pool2d) and extracting its VTA tasks…</source>
        <translation>正在量化 %1（int8，全局缩放 8，第一个卷积保留浮点），为 VTA %2 打包（nn.max_pool2d .. nn.global_avg_pool2d）并提取其 VTA 任务…</translation>
    </message>
    <message>
        <source>the VTA device &apos;%1&apos; of tracker %2:%3</source>
        <translation>跟踪器 %2:%3 的 VTA 设备“%1”</translation>
    </message>
    <message>
        <source>the VTA simulator in this process</source>
        <translation>本进程中的 VTA 模拟器</translation>
    </message>
    <message>
        <source>%1 VTA task(s) (%2 extracted, %3 packed and not float, merged as seed 004); tuner %4, n_trial %5 per task, measured on %6 (costs are simulated time), log %7</source>
        <translation>%1 个 VTA 任务（提取 %2 个，其中 %3 个为打包且非浮点，按种子 004 合并）；调优器 %4，每个任务 n_trial %5，在%6上测量（开销为模拟时间），日志 %7</translation>
    </message>
</context>
</TS>
