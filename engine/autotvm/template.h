// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file template.h
/// \brief AutoTVM schedule templates, TVM-named, and the registry that finds them by task name.
///
/// In TVM a template is a pair of Python functions registered under one task name
/// (`@autotvm.register_topi_compute("conv2d_NCHWc.x86")` and `register_topi_schedule`). Run with a
/// ConfigSpace they declare the knobs; run with a ConfigEntity they build the compute and the
/// schedule that config describes. A record names the template and the task args, so a template
/// here must declare exactly TVM's knobs, in TVM's order, with TVM's arguments, for the args as
/// serialized in records (task_args.h) — otherwise a TVM log's index means another config.
///
/// This milestone provides the space side (`defineSpace`). The interface grows, in the next
/// milestone, a function that builds the task's compute and schedule from a ConfigEntity
/// (`instantiate(args, entity)` returning the ComputeDAG plus the applied schedule), so a template
/// stays one object that knows its space, its compute and its schedule.
///
/// Implemented (TVM v0.14, python/tvm/topi/): x86 `conv2d_NCHWc.x86`,
/// `depthwise_conv2d_NCHWc.x86`, `dense_nopack.x86`, `dense_pack.x86`; ARM
/// `conv2d_nchw_spatial_pack.arm_cpu`, `conv2d_nchw_winograd.arm_cpu`,
/// `depthwise_conv2d_nchw.arm_cpu`; Mali `conv2d_nchw_spatial_pack.mali`,
/// `conv2d_nchw_winograd.mali`, `depthwise_conv2d_nchw.mali`, `dense.mali`.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/autotvm/space.h"
#include "engine/autotvm/task_args.h"

namespace tb::autotvm {

/// One AutoTVM template (stateless; shared by all tasks that use it).
class Template {
public:
    virtual ~Template() = default;
    /// TVM's task name, e.g. "conv2d_NCHWc.x86" (the second element of a record's "input").
    virtual const std::string& name() const = 0;
    /// Where TVM defines the knobs, e.g. "python/tvm/topi/x86/conv2d.py: conv2d_NCHWc".
    virtual const std::string& tvmSource() const = 0;
    /// Declares the knobs of the task with these args into `cfg`, as TVM's template does when it
    /// runs with a ConfigSpace (compute first, then schedule). Throws tb::UserError if the args do
    /// not fit the template (wrong count or form, or a case TVM's template asserts against).
    virtual void defineSpace(const TaskArgs& args, ConfigSpace& cfg) const = 0;

    /// The whole space for serialized args (`["TENSOR", ...], ...`).
    ConfigSpace space(const nlohmann::ordered_json& args) const;
};

/// The template registered under `taskName`, or nullptr if we do not implement it.
const Template* findTemplate(std::string_view taskName);
/// Every implemented template, sorted by name.
std::vector<const Template*> allTemplates();

}  // namespace tb::autotvm
