// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file graph_json.h
/// \brief The files of an exported network, in TVM's deploy formats: the graph JSON of TVM's
/// graph executor (`deploy_graph.json`) and the parameter dictionary of `relay.save_param_dict`
/// (`deploy_param.params`). The kernels go into a shared library (`deploy_lib.so`, build_module.h).
///
/// Why TVM's formats: users of TVM know them (`graph_executor.create(json, lib, dev)`,
/// `load_param_dict`), tools that read them work on ours, and they carry everything a runner needs:
/// nodes (`"op": "null"` for inputs and params, `"tvm_op"` with `func_name` for kernels), entries,
/// `arg_nodes`, `heads`, and per entry `storage_id`, `shape` and `dltype`. TuneBench kernels use
/// their own calling convention (codegen/kernel_abi.h), so the library itself is not a TVM module.
///
/// Param file layout (little-endian, dmlc::Stream): u64 magic 0xF7E58D4F05049CB7, u64 0,
/// u64 n + n names (u64 length + bytes), u64 n + n arrays; an array is u64 magic
/// 0xDD5E40F096B4A13F, u64 0, i32 device type (1 = CPU), i32 device id, i32 ndim, u8 type code
/// (2 = float), u8 bits, u16 lanes, i64 shape[ndim], i64 byte count, the bytes.

#include <map>
#include <string>
#include <vector>

#include "engine/runtime/graph_runtime.h"

namespace tb::runtime {

/// TVM graph JSON text of `g`. Param nodes are named as in the param dictionary; storage sizes are
/// not stored (they follow from the shapes of the entries sharing a storage id).
std::string graphToJson(const ExecGraph& g);

/// Parses graph JSON written by graphToJson (or by TVM for a single-output-per-node float32 graph).
/// Nodes in `paramNames` become Param nodes, other "null" nodes Inputs. Throws UserError naming
/// `source` for malformed JSON, a dtype other than float32, a node with several outputs or an
/// entry out of range.
ExecGraph graphFromJson(const std::string& text, const std::vector<std::string>& paramNames,
                        const std::string& source);

/// One named float32 array of a param dictionary.
struct NamedArray {
    std::vector<int64_t> shape;
    std::vector<float> data;
};

/// The bytes of a param dictionary (see the file comment); entries in map order.
std::string saveParams(const std::map<std::string, NamedArray>& params);
/// Parses a param dictionary. Throws UserError naming `source` for a bad magic, a truncated file, or
/// an array that is not float32 on the CPU.
std::map<std::string, NamedArray> loadParams(const std::string& bytes, const std::string& source);

}  // namespace tb::runtime
