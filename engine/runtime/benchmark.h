// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file benchmark.h
/// \brief What `module.benchmark(dev, repeat, number, min_repeat_ms)` returns in TVM
/// (python/tvm/runtime/module.py `BenchmarkResult`): the per-repeat mean run times and their
/// statistics, printed exactly as TVM prints them, so our numbers line up with a TVM user's:
/// ```
/// Execution time summary:
///  mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)
///    8.1600       8.1500       8.2000       8.1300       0.0300
/// ```
/// (each column centred in 12 characters, values with 4 decimals, numpy's median and population
/// standard deviation, 15 trailing spaces after the values, as TVM's `__str__`.)

#include <string>
#include <vector>

namespace tb::runtime {

struct BenchmarkResult {
    std::vector<double> results;  ///< seconds per run, one per repeat (each the mean of `number` runs)
    double mean = 0, median = 0, max = 0, min = 0, std = 0;  ///< seconds

    /// Statistics of `results` (seconds). An empty list gives zeros.
    static BenchmarkResult fromResults(std::vector<double> results);
    /// TVM's `str(BenchmarkResult)`: the three lines above, no final newline.
    std::string summary() const;
};

/// Python's `format(text, "^width")`: centred, the extra space on the right.
std::string centered(const std::string& text, int width);

}  // namespace tb::runtime
