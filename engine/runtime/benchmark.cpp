// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/benchmark.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tb::runtime {

BenchmarkResult BenchmarkResult::fromResults(std::vector<double> results) {
    BenchmarkResult r;
    r.results = std::move(results);
    if (r.results.empty()) return r;
    const size_t n = r.results.size();
    double sum = 0;
    for (double x : r.results) sum += x;
    r.mean = sum / double(n);
    double var = 0;
    for (double x : r.results) var += (x - r.mean) * (x - r.mean);
    r.std = std::sqrt(var / double(n));  // numpy np.std: population
    std::vector<double> s = r.results;
    std::sort(s.begin(), s.end());
    r.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    r.min = s.front();
    r.max = s.back();
    return r;
}

std::string centered(const std::string& text, int width) {
    const int pad = std::max(0, width - int(text.size()));
    return std::string(size_t(pad / 2), ' ') + text + std::string(size_t(pad - pad / 2), ' ');
}

std::string BenchmarkResult::summary() const {
    auto ms = [](double s) {
        char b[64];
        std::snprintf(b, sizeof b, "%.4f", s * 1000);
        return centered(b, 12);
    };
    return "Execution time summary:\n" + centered("mean (ms)", 12) + " " + centered("median (ms)", 12) + " " +
           centered("max (ms)", 12) + " " + centered("min (ms)", 12) + " " + centered("std (ms)", 12) + "\n" +
           ms(mean) + " " + ms(median) + " " + ms(max) + " " + ms(min) + " " + ms(std) + std::string(15, ' ');
}

}  // namespace tb::runtime
