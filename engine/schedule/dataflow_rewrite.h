// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file dataflow_rewrite.h
/// \brief The te operation rewrites behind the CHR, CHW and RF steps (TVM
/// src/te/schedule/schedule_dataflow_rewrite.cc: Schedule::cache_read, cache_write, rfactor).
///
/// These three steps change the operations themselves, not only loops: they create a new
/// operation, rewrite the operations that read the old one, and so give the state a new op list
/// (in stage order; TVM rebuilds its ComputeDAG from the rewritten schedule). The functions here
/// take the current op list in stage order and return the new one; transform_step.cpp updates the
/// stages. Consumers are rewritten by replacing loads only: their axes keep the same variables,
/// so a stage's loops and IterVarGraph stay valid across the rewrite.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/schedule/loop_state.h"

namespace tb {

/// Operation names and bodies exactly as te makes them:
/// * cache_read: `<op>.<scope>` (`.d` appended before the scope while the name is taken), axes
///   `ax0, ax1, ...`, body `<op>[ax0, ...]`, inserted after the read op; only `readers` read it.
/// * cache_write: `<op>.<scope>` with axes `<axis>.c` and the op's reduce axes and body, inserted
///   before the op, which becomes `<op>(axes) = <op>.<scope>[axes]`.
/// * rfactor: `<op>.rf` (no tag, no attrs) with the op's spatial axes and the factored loop's
///   variable inserted at factorAxis, the other loops derived from the same reduce axes as reduce
///   axes; the op becomes `<op>.repl` (axes `ax0, ...`, reduce axis `<factored loop>.v`).
/// Throws tb::UserError when a reader does not read the op, the op is not a compute op, the
/// loop to factor is not a reduction loop, or factorAxis is out of range.
std::vector<te::Operation> cacheReadOps(const std::vector<te::Operation>& ops, int stageId,
                                        const std::string& scope, const std::vector<int>& readerStageIds);
std::vector<te::Operation> cacheWriteOps(const std::vector<te::Operation>& ops, int stageId, const std::string& scope);
std::vector<te::Operation> rfactorOps(const std::vector<te::Operation>& ops, int stageId, const Stage& stage,
                                      int iterId, int factorAxis);

/// Rewrites the loads of an expression: `f` gets each load (TVM ProducerLoad) with its indices
/// already rewritten and returns what replaces it; the rest of the tree is rebuilt with te's
/// constant folding. Shared by the dataflow rewrites here and the layout rewrite (layout_rewrite.h).
using LoadRewriter = std::function<te::Expr(const te::LoadNode& load, std::vector<te::Expr> indices)>;
te::Expr rewriteLoads(const te::Expr& e, const LoadRewriter& f);

/// te's ReplaceDataFlow over `ops` in stage order (topological): every op that reads a key of `map`
/// is rebuilt to read the mapped op instead, and so, transitively, are its readers (the rebuilt ops
/// replace the old ones in `ops`). The keys' own entries in `ops` are left to the caller.
void replaceDataFlow(std::vector<te::Operation>& ops, std::map<const te::OperationNode*, te::Operation> map);

/// A ComputeDAG over the rewritten ops: placeholders (stage order) then the ops nobody reads.
std::shared_ptr<const te::ComputeDAG> makeDagFromOps(const std::vector<te::Operation>& ops);

}  // namespace tb
