// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file log_check.h
/// \brief `log check`: does each AutoTVM record's config index decode, in our rebuilt config
/// space, to the knob values the record wrote?
///
/// A record stores both the config index and the decoded entity. Rebuilding the task's space
/// from its template name and args (template.h; vta/vta_task.h for conv2d_packed.vta,
/// group_conv2d_packed.vta, dense_packed.vta, add.vta and multiply.vta, the latter with a tensor or a scalar rhs) and
/// decoding the index (ConfigSpace::get) must
/// give the record's entity back; if it does, the record means the same schedule here as in the
/// TVM that wrote it. It does not when the template's space changed since the log was written
/// (TopHub's x86 log predates `tile_ow` becoming a "verbose" split), which is the other use of
/// the check: finding logs that TVM v0.14 itself would apply to the wrong config.
///
/// Comparison is knob by knob: same names, kinds and order; equal values, except that a split
/// whose recorded outermost factor is explicit where ours is -1 (older TVM wrote it, TVM >= 0.8
/// writes -1) is equal when the inner factors are equal and the outer one is what -1 stands for,
/// ceil(length / product of the inner factors) (for splits without a tail: the product matches).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/autotvm/space.h"
#include "engine/record/autotvm_record.h"
#include "engine/record/record_io.h"

namespace tb::autotvm {

/// The outcome for one record.
struct RecordCheck {
    enum class Outcome {
        UnknownTemplate,  ///< we do not implement the record's template
        Unchecked,        ///< implemented, but the space cannot be built or the record not read (reason)
        Agree,
        Disagree,         ///< reason says which knob differs, or that the index is out of range
    };
    Outcome outcome = Outcome::UnknownTemplate;
    std::string reason;
    std::optional<ConfigEntity> decoded;  ///< our decoding of the record's index, when in range
};

/// Compares a recorded config entity (`[[name, kind, value], ...]`) with `decoded`, a config of
/// `space`. Returns nullopt when equal (the split rule above included), else the first difference
/// as one English sentence.
std::optional<std::string> entityMismatch(const nlohmann::ordered_json& recordedEntity, const ConfigEntity& decoded,
                                          const ConfigSpace& space);

/// Checks one record against a freshly built space. AutoTVM v0.1 records (older template
/// scheme) are Unchecked.
RecordCheck checkRecord(const record::AutoTvmRecord& record);

struct TemplateCheckCounts {
    int records = 0;  ///< records naming the template
    int checked = 0;  ///< of those, decoded and compared
    int agree = 0;
};

/// A record of an implemented template that disagreed or could not be checked.
struct CheckNote {
    int line = 0;              ///< 1-based line in the log
    std::string taskName;
    std::int64_t index = -1;   ///< the record's config index
    std::string reason;
};

struct LogCheckReport {
    int records = 0;    ///< AutoTVM records read (any template)
    int checked = 0;    ///< records of implemented templates that were decoded and compared
    int agree = 0;
    int disagree = 0;   ///< checked - agree
    int v01Records = 0; ///< records in the old v0.1 format (never checked)
    std::map<std::string, TemplateCheckCounts> templates;   ///< implemented templates present, by name
    std::map<std::string, int> unknownTemplates;            ///< template name -> record count
    std::vector<CheckNote> disagreements;                   ///< in line order
    std::vector<CheckNote> unchecked;                       ///< in line order
    std::vector<record::BadLine> badLines;                  ///< lines that are not AutoTVM records
};

/// Checks every record of a parsed log (spaces are built once per distinct task).
LogCheckReport checkLog(const record::LogContents<record::AutoTvmRecord>& log);
/// Reads and checks an AutoTVM log file. Throws tb::UserError if it cannot be read or is an
/// auto_scheduler log.
LogCheckReport checkLogFile(const std::string& path);

}  // namespace tb::autotvm
