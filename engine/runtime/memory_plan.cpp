// SPDX-License-Identifier: Apache-2.0
#include "engine/runtime/memory_plan.h"

#include <algorithm>
#include <map>

#include "engine/support/error.h"

namespace tb::runtime {

MemoryPlan planMemory(const std::vector<PlanTensor>& tensors) {
    MemoryPlan plan;
    plan.storageOf.assign(tensors.size(), -1);
    int numSteps = 0;
    for (const auto& t : tensors) {
        TB_CHECK(t.bytes > 0) << "tensor of " << t.bytes << " bytes";
        TB_CHECK(t.lastUse < 0 || t.lastUse >= t.defStep) << "tensor read at step " << t.lastUse
                                                          << " before it is written at step " << t.defStep;
        numSteps = std::max({numSteps, t.defStep + 1, t.lastUse + 1});
    }
    // Pinned tensors first: one storage each, never shared.
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (!tensors[i].pinned) continue;
        plan.storageOf[i] = int(plan.storageBytes.size());
        plan.storageBytes.push_back(tensors[i].bytes);
    }
    std::vector<std::vector<size_t>> bornAt(size_t(numSteps) + 1), diesAfter(size_t(numSteps) + 1);
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i].pinned) continue;
        plan.naiveBytes += tensors[i].bytes;
        bornAt[size_t(tensors[i].defStep + 1)].push_back(i);  // slot 0: before the first kernel
        // A tensor nobody reads still needs its storage while its writer runs.
        const int last = std::max(tensors[i].lastUse, tensors[i].defStep);
        diesAfter[size_t(last + 1)].push_back(i);
    }
    std::multimap<int64_t, int> freeBySize;  // bytes -> storage id
    for (size_t slot = 0; slot <= size_t(numSteps); ++slot) {
        for (size_t i : bornAt[slot]) {
            const int64_t need = tensors[i].bytes;
            int sid = -1;
            if (auto it = freeBySize.lower_bound(need); it != freeBySize.end()) {
                sid = it->second;  // smallest free storage that fits
                freeBySize.erase(it);
            } else if (!freeBySize.empty()) {
                auto last = std::prev(freeBySize.end());  // largest free one, grown
                sid = last->second;
                freeBySize.erase(last);
                plan.storageBytes[size_t(sid)] = need;
            } else {
                sid = int(plan.storageBytes.size());
                plan.storageBytes.push_back(need);
            }
            plan.storageOf[i] = sid;
        }
        for (size_t i : diesAfter[slot]) {
            const int sid = plan.storageOf[i];
            freeBySize.emplace(plan.storageBytes[size_t(sid)], sid);
        }
    }
    for (size_t s = 0; s < plan.storageBytes.size(); ++s) {
        bool pinnedStorage = false;
        for (size_t i = 0; i < tensors.size() && !pinnedStorage; ++i)
            pinnedStorage = tensors[i].pinned && plan.storageOf[i] == int(s);
        if (!pinnedStorage) plan.plannedBytes += plan.storageBytes[s];
    }
    return plan;
}

}  // namespace tb::runtime
