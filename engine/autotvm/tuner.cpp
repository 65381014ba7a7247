// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/tuner.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <queue>

#include "engine/support/error.h"
#include "engine/support/thread_pool.h"

namespace tb::autotvm {

// ---- Tuner ----------------------------------------------------------------------------------

Tuner::Tuner(const Task& task, std::uint64_t seed) : m_task(task), m_space(task.space), m_rng(seed) {}

void Tuner::update(const std::vector<ConfigEntity>&, const std::vector<measure::MeasureResult>&) {}

bool Tuner::loadHistory(const std::vector<record::AutoTvmRecord>&, int) {
    throw UserError("this tuner cannot load history (transfer learning needs an xgb tuner)");
}

double Tuner::flops(const measure::MeasureResult& r) const {
    if (!r.ok() || r.costs.empty()) return 0;
    const double mean = std::accumulate(r.costs.begin(), r.costs.end(), 0.0) / double(r.costs.size());
    return mean > 0 ? m_task.flop / mean : 0;
}

std::int64_t Tuner::randIndex(const std::set<std::int64_t>& exclude) {
    std::uniform_int_distribution<std::int64_t> dist(0, m_space.rangeLength() - 1);
    for (;;) {
        const std::int64_t i = dist(m_rng);
        if (m_space.isIndexValid(i) && !exclude.count(i)) return i;
    }
}

void Tuner::tune(const TuneOptions& options, const MeasureOption& measureOption,
                 const std::vector<TuneCallback>& callbacks) {
    const int nParallel = std::max(1, options.nParallel);
    const int earlyStopping = options.earlyStopping > 0 ? options.earlyStopping : std::numeric_limits<int>::max() / 2;
    int i = 0;
    while (i < options.nTrial) {
        if (!hasNext()) break;
        std::vector<ConfigEntity> configs = nextBatch(std::min(nParallel, options.nTrial - i));
        if (configs.empty()) break;
        std::vector<measure::MeasureResult> results = measureConfigs(m_task, configs, measureOption);
        for (size_t k = 0; k < configs.size(); ++k) {
            const double f = flops(results[k]);
            if (f > m_bestFlops) {
                m_bestFlops = f;
                m_bestConfig = configs[k];
                m_bestIter = i + int(k);
            }
        }
        i += int(results.size());
        m_trials = i;
        update(configs, results);
        for (const auto& cb : callbacks) cb(*this, configs, results);
        if (i >= m_bestIter + earlyStopping) break;
    }
}

// ---- RandomTuner / GridSearchTuner -------------------------------------------------------------

std::vector<ConfigEntity> RandomTuner::nextBatch(int batchSize) {
    std::vector<ConfigEntity> out;
    while (int(out.size()) < batchSize && hasNext()) {
        const std::int64_t index = randIndex(m_visited);
        m_visited.insert(index);
        out.push_back(m_space.get(index));
    }
    return out;
}

GridSearchTuner::GridSearchTuner(const Task& task) : Tuner(task) {
    while (m_index < m_space.rangeLength() && !m_space.isIndexValid(m_index)) ++m_index;
}

std::vector<ConfigEntity> GridSearchTuner::nextBatch(int batchSize) {
    std::vector<ConfigEntity> out;
    while (int(out.size()) < batchSize && hasNext() && m_index < m_space.rangeLength()) {
        out.push_back(m_space.get(m_index));
        ++m_count;
        do ++m_index;
        while (m_index < m_space.rangeLength() && !m_space.isIndexValid(m_index));
    }
    return out;
}

// ---- GATuner ----------------------------------------------------------------------------------

GATuner::GATuner(const Task& task, int popSize, int eliteNum, double mutationProb, std::uint64_t seed)
    : Tuner(task, seed), m_popSize(popSize), m_eliteNum(eliteNum), m_mutationProb(mutationProb) {
    TB_USER_CHECK(eliteNum <= popSize) << "GATuner: the number of elites must not exceed the population size";
    m_popSize = int(std::min<std::int64_t>(m_popSize, m_space.size()));
    m_eliteNum = std::min(m_popSize, m_eliteNum);
    // TVM: visited = set(space.sample_ints(pop_size)); genes in the set's order (ours: ascending).
    while (int(m_visited.size()) < m_popSize) m_visited.insert(randIndex(m_visited));
    for (std::int64_t idx : m_visited) m_genes.push_back(m_space.pointToKnob(idx));
}

std::vector<ConfigEntity> GATuner::nextBatch(int batchSize) {
    std::vector<ConfigEntity> out;
    // TVM wraps around the population (genes[trial_pt % pop_size]) when a batch outlasts the
    // generation, proposing measured genes again; we end the batch with the generation instead.
    while (int(out.size()) < batchSize && hasNext() && m_trialPt < m_genes.size()) {
        const Gene& gene = m_genes[m_trialPt];
        ++m_trialPt;
        out.push_back(m_space.get(m_space.knobToPoint(gene)));
    }
    return out;
}

bool GATuner::hasNext() const {
    return std::int64_t(m_visited.size()) - (std::int64_t(m_genes.size()) - std::int64_t(m_trialPt)) < m_space.size();
}

void GATuner::update(const std::vector<ConfigEntity>&, const std::vector<measure::MeasureResult>& results) {
    for (const auto& r : results) m_scores.push_back(flops(r));
    if (m_scores.size() < m_genes.size() || std::int64_t(m_visited.size()) >= m_space.size()) return;
    std::vector<Gene> next;
    if (m_space.size() - std::int64_t(m_visited.size()) <= m_popSize) {
        for (std::int64_t idx = 0; idx < m_space.rangeLength(); ++idx)
            if (m_space.isIndexValid(idx) && !m_visited.count(idx)) {
                next.push_back(m_space.pointToKnob(idx));
                m_visited.insert(idx);
            }
    } else {
        std::vector<Gene> genes = m_genes;
        genes.insert(genes.end(), m_elites.begin(), m_elites.end());
        std::vector<double> scores(m_scores.begin(), m_scores.begin() + std::ptrdiff_t(m_genes.size()));
        scores.insert(scores.end(), m_eliteScores.begin(), m_eliteScores.end());
        // elites: the eliteNum best of genes + previous elites
        std::vector<size_t> order(genes.size());
        std::iota(order.begin(), order.end(), size_t(0));
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
        m_elites.clear();
        m_eliteScores.clear();
        for (int e = 0; e < m_eliteNum && size_t(e) < order.size(); ++e) {
            m_elites.push_back(genes[order[size_t(e)]]);
            m_eliteScores.push_back(scores[order[size_t(e)]]);
        }
        // fitness-proportional selection (scores + 1e-8, normalized)
        double maxScore = 0;
        for (double& s : scores) {
            s += 1e-8;
            maxScore = std::max(maxScore, s);
        }
        for (double& s : scores) s /= maxScore;
        std::discrete_distribution<size_t> pick(scores.begin(), scores.end());
        const std::vector<std::int64_t> dims = m_space.dims();
        std::uniform_int_distribution<size_t> pointDist(0, dims.size() - 1);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        // Bounded so that a space whose unvisited points are all filtered out cannot hang.
        for (int attempts = 0; int(next.size()) < m_popSize && attempts < 1000 * m_popSize; ++attempts) {
            const size_t p1 = pick(m_rng);
            size_t p2 = pick(m_rng);
            if (genes.size() > 1)
                for (int t = 0; p2 == p1 && t < 100; ++t) p2 = pick(m_rng);  // replace=False
            const size_t point = pointDist(m_rng);
            Gene child(genes[p1].begin(), genes[p1].begin() + std::ptrdiff_t(point));
            child.insert(child.end(), genes[p2].begin() + std::ptrdiff_t(point), genes[p2].end());
            for (size_t j = 0; j < dims.size(); ++j)
                if (unit(m_rng) < m_mutationProb) child[j] = std::uniform_int_distribution<std::int64_t>(0, dims[j] - 1)(m_rng);
            const std::int64_t idx = m_space.knobToPoint(child);
            if (!m_space.isIndexValid(idx)) continue;
            // TVM may repeat a visited gene here; we keep the proposals unvisited (the brief of
            // next_batch), so a child already measured is redrawn.
            if (m_visited.count(idx)) continue;
            next.push_back(child);
            m_visited.insert(idx);
        }
        if (next.empty())  // the population converged: continue with random unvisited genes
            while (int(next.size()) < m_popSize && std::int64_t(m_visited.size()) < m_space.size()) {
                const std::int64_t idx = randIndex(m_visited);
                m_visited.insert(idx);
                next.push_back(m_space.pointToKnob(idx));
            }
    }
    m_genes = std::move(next);
    m_trialPt = 0;
    m_scores.clear();
}

// ---- XGBoost cost model -------------------------------------------------------------------------

namespace {

void check(int rc, const char* what) {
    TB_CHECK(rc == 0) << "XGBoost " << what << " failed: " << XGBGetLastError();
}

struct DMatrix {
    DMatrixHandle h = nullptr;
    ~DMatrix() {
        if (h) XGDMatrixFree(h);
    }
};

// metric.py: ranks (0 = largest) of values.
std::vector<size_t> getRank(const std::vector<float>& values) {
    std::vector<size_t> order(values.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] > values[b]; });
    std::vector<size_t> ranks(values.size());
    for (size_t i = 0; i < order.size(); ++i) ranks[order[i]] = i;
    return ranks;
}

// xgb_average_recalln_curve_score(N): mean over i < N of |{j < i : rank_j <= i}| / (i + 1), the
// ranks being the true ranks of the points sorted by prediction.
double averageRecall(const float* preds, const std::vector<float>& labels, int n) {
    std::vector<size_t> trials(labels.size());
    std::iota(trials.begin(), trials.end(), size_t(0));
    std::stable_sort(trials.begin(), trials.end(), [&](size_t a, size_t b) { return preds[a] > preds[b]; });
    std::vector<float> sortedLabels;
    for (size_t t : trials) sortedLabels.push_back(labels[t]);
    const std::vector<size_t> ranks = getRank(sortedLabels);
    double sum = 0;
    for (size_t i = 0; i < ranks.size() && int(i) < n; ++i) {
        size_t hit = 0;
        for (size_t j = 0; j < i; ++j) hit += ranks[j] <= i ? 1 : 0;
        sum += double(hit) / double(i + 1);
    }
    return sum / double(n);
}

}  // namespace

XGBCostModel::XGBCostModel(const Task& task, FeatureType featureType, std::string lossType, std::uint64_t seed)
    : m_task(task), m_featureType(featureType), m_lossType(std::move(lossType)), m_seed(seed), m_rng(seed),
      m_cache(std::make_shared<FeatureCache>()) {
    TB_USER_CHECK(m_lossType == "reg" || m_lossType == "rank" || m_lossType == "rank-binary")
        << "XGBTuner loss_type must be 'reg', 'rank' or 'rank-binary', not '" << m_lossType << "'";
}

XGBCostModel::~XGBCostModel() {
    if (m_booster) XGBoosterFree(m_booster);
}

std::unique_ptr<XGBCostModel> XGBCostModel::spawnBaseModel() const {
    auto base = std::make_unique<XGBCostModel>(m_task, m_featureType, m_lossType, m_seed + 7919);
    base->m_cache = m_cache;  // TVM: the base model shares the upper model's feature cache
    return base;
}

void XGBCostModel::loadBaseModel(std::unique_ptr<XGBCostModel> base) { m_base = std::move(base); }

double XGBCostModel::baseModelDiscount() const { return 1.0 / std::pow(2.0, double(m_sampleSize) / 64.0); }

std::vector<float> XGBCostModel::features(std::int64_t index) const {
    if (m_cache->size() >= 100000) m_cache->clear();
    auto it = m_cache->find(index);
    if (it != m_cache->end()) return it->second;
    std::vector<float> f;
    try {
        f = configFeatures(m_task, m_task.space.get(index), m_featureType);
    } catch (const std::exception&) {  // TVM: a failed extraction is None, a row of zeros
    }
    return (*m_cache)[index] = std::move(f);
}

// Rows of xs, `width` floats each (0 = the longest row's length), extracting the features not
// cached yet on the thread pool.
std::vector<float> XGBCostModel::matrix(const std::vector<std::int64_t>& xs, size_t width) const {
    if (m_cache->size() >= 100000) m_cache->clear();
    std::vector<std::int64_t> need;
    for (auto x : xs)
        if (!m_cache->count(x)) need.push_back(x);
    std::sort(need.begin(), need.end());
    need.erase(std::unique(need.begin(), need.end()), need.end());
    std::vector<std::vector<float>> extracted(need.size());
    parallelFor(std::int64_t(need.size()), [&](std::int64_t i) {
        try {
            extracted[size_t(i)] = configFeatures(m_task, m_task.space.get(need[size_t(i)]), m_featureType);
        } catch (const std::exception&) {
        }
    });
    for (size_t i = 0; i < need.size(); ++i) (*m_cache)[need[i]] = std::move(extracted[i]);
    std::vector<const std::vector<float>*> rows;
    for (auto x : xs) rows.push_back(&m_cache->at(x));
    if (width == 0)
        for (const auto* r : rows) width = std::max(width, r->size());
    std::vector<float> data(xs.size() * width, 0.f);
    for (size_t i = 0; i < rows.size(); ++i)
        std::copy_n(rows[i]->begin(), std::min(width, rows[i]->size()), data.begin() + std::ptrdiff_t(i * width));
    return data;
}

void XGBCostModel::train(std::vector<float> data, std::vector<float> labels, size_t width,
                         const std::vector<float>* baseMargin, int planSize, int numRounds, int stoppingRounds) {
    const bst_ulong nrow = bst_ulong(labels.size());
    TB_CHECK(width > 0) << "XGBCostModel: no features to train on";
    DMatrix dm;
    check(XGDMatrixCreateFromMat(data.data(), nrow, bst_ulong(width), std::numeric_limits<float>::quiet_NaN(), &dm.h),
          "DMatrix creation");
    check(XGDMatrixSetFloatInfo(dm.h, "label", labels.data(), nrow), "set label");
    if (baseMargin) check(XGDMatrixSetFloatInfo(dm.h, "base_margin", baseMargin->data(), nrow), "set base margin");
    BoosterHandle bst = nullptr;
    check(XGBoosterCreate(&dm.h, 1, &bst), "booster creation");
    auto set = [&](const char* k, const std::string& v) { check(XGBoosterSetParam(bst, k, v.c_str()), "set param"); };
    // xgboost_cost_model.py's parameters ("reg:linear" is today's "reg:squarederror").
    set("max_depth", "3");
    set("gamma", "0.0001");
    set("min_child_weight", "1");
    set("subsample", "1.0");
    set("eta", "0.3");
    set("lambda", "1.0");
    set("alpha", "0");
    set("objective", m_lossType == "reg" ? "reg:squarederror" : "rank:pairwise");
    set("verbosity", "0");
    set("nthread", "1");
    set("seed", std::to_string(m_rng() % 1000000));
    // TVM's CustomCallback: evaluate every other round (skip_every = 2) the average recall@planSize
    // on the training set (labels binarized at 0.5 for rank-binary) and stop `stoppingRounds` rounds
    // after the best.
    std::vector<float> evalLabels = labels;
    if (m_lossType == "rank-binary")
        for (float& l : evalLabels) l = l < 0.5f ? 0.f : 1.f;
    double best = -std::numeric_limits<double>::infinity();
    int bestIter = 0;
    for (int it = 0; it < numRounds; ++it) {
        check(XGBoosterUpdateOneIter(bst, it, dm.h), "boost");
        if (it % 2 == 1) continue;
        bst_ulong len = 0;
        const float* pred = nullptr;
        check(XGBoosterPredict(bst, dm.h, 0, 0, 0, &len, &pred), "predict");
        const double score = averageRecall(pred, evalLabels, planSize);
        if (score > best) {
            best = score;
            bestIter = it;
        } else if (it - bestIter >= stoppingRounds) {
            break;
        }
    }
    if (m_booster) XGBoosterFree(m_booster);
    m_booster = bst;
    m_width = width;
}

void XGBCostModel::fit(const std::vector<std::int64_t>& xs, const std::vector<double>& ys, int planSize) {
    TB_CHECK(xs.size() == ys.size() && !xs.empty()) << "XGBCostModel::fit: " << xs.size() << " xs, " << ys.size() << " ys";
    const std::vector<float> all = matrix(xs, 0);
    const size_t width = all.size() / xs.size();
    const double yMax = std::max(*std::max_element(ys.begin(), ys.end()), 1e-8);
    std::vector<size_t> perm(xs.size());
    std::iota(perm.begin(), perm.end(), size_t(0));
    std::shuffle(perm.begin(), perm.end(), m_rng);
    m_sampleSize = xs.size();
    std::vector<float> margin;
    if (m_base) {
        const double discount = baseModelDiscount();
        if (discount < 0.05) {
            m_base.reset();  // discard the base model
        } else {
            const std::vector<float> b = m_base->predict(xs, true);
            for (size_t p : perm) margin.push_back(float(discount * b[p]));
        }
    }
    std::vector<float> data, labels;
    data.reserve(all.size());
    for (size_t p : perm) {
        data.insert(data.end(), all.begin() + std::ptrdiff_t(p * width), all.begin() + std::ptrdiff_t((p + 1) * width));
        labels.push_back(float(ys[p] / yMax));
    }
    train(std::move(data), std::move(labels), width, m_base ? &margin : nullptr, planSize, 8000, 20);
}

bool XGBCostModel::fitLog(const std::vector<record::AutoTvmRecord>& records, int planSize, int minSeedRecords) {
    // only the records of this template (TVM: inp.task.name == self.task.name)
    std::vector<const record::AutoTvmRecord*> data;
    for (const auto& r : records)
        if (r.taskName == m_task.taskName) data.push_back(&r);
    // their tasks, made once per (args, target)
    std::map<std::string, std::shared_ptr<const Task>> tasks;
    std::vector<const Task*> taskOf(data.size(), nullptr);
    for (size_t i = 0; i < data.size(); ++i) {
        const std::string key = data[i]->args.dump() + "|" + data[i]->target;
        auto it = tasks.find(key);
        if (it == tasks.end()) {
            std::shared_ptr<const Task> t;
            try {
                t = std::make_shared<const Task>(Task::create(data[i]->taskName, data[i]->args, data[i]->target));
            } catch (const std::exception&) {  // args this template refuses: skipped
            }
            it = tasks.emplace(key, std::move(t)).first;
        }
        taskOf[i] = it->second.get();
    }
    std::vector<std::vector<float>> xs(data.size());
    std::vector<double> ys(data.size(), 0.0);
    std::vector<char> ok(data.size(), 0);
    parallelFor(std::int64_t(data.size()), [&](std::int64_t k) {
        const size_t i = size_t(k);
        if (!taskOf[i]) return;
        try {
            const ConfigEntity config = ConfigEntity::fromJson(data[i]->config);
            xs[i] = configFeatures(*taskOf[i], config, m_featureType);
            const double cost = data[i]->meanCost();
            ys[i] = data[i]->errorNo == 0 && cost > 0 ? taskOf[i]->flop / cost : 0.0;
            ok[i] = 1;
        } catch (const std::exception&) {  // TVM skips the records whose extraction fails
        }
    });
    size_t width = 0, n = 0;
    for (size_t i = 0; i < data.size(); ++i)
        if (ok[i]) {
            width = std::max(width, xs[i].size());
            ++n;
        }
    if (int(n) < minSeedRecords || n == 0 || width == 0) return false;
    double yMax = 1e-8;
    for (size_t i = 0; i < data.size(); ++i)
        if (ok[i]) yMax = std::max(yMax, ys[i]);
    std::vector<size_t> perm;
    for (size_t i = 0; i < data.size(); ++i)
        if (ok[i]) perm.push_back(i);
    std::shuffle(perm.begin(), perm.end(), m_rng);
    std::vector<float> rows(perm.size() * width, 0.f), labels;
    for (size_t r = 0; r < perm.size(); ++r) {
        const auto& x = xs[perm[r]];
        std::copy(x.begin(), x.end(), rows.begin() + std::ptrdiff_t(r * width));  // padded with zeros
        labels.push_back(float(ys[perm[r]] / yMax));
    }
    train(std::move(rows), std::move(labels), width, nullptr, planSize * 2, 400, 100);
    return true;
}

std::vector<float> XGBCostModel::predict(const std::vector<std::int64_t>& xs, bool outputMargin) const {
    std::vector<float> out(xs.size(), 0.f);
    if (!m_booster || xs.empty()) return out;
    std::vector<float> data = matrix(xs, m_width);
    DMatrix dm;
    check(XGDMatrixCreateFromMat(data.data(), bst_ulong(xs.size()), bst_ulong(m_width),
                                 std::numeric_limits<float>::quiet_NaN(), &dm.h),
          "DMatrix creation");
    if (m_base) {
        std::vector<float> margin = m_base->predict(xs, true);
        const double discount = baseModelDiscount();
        for (float& m : margin) m = float(discount * m);
        check(XGDMatrixSetFloatInfo(dm.h, "base_margin", margin.data(), bst_ulong(xs.size())), "set base margin");
    }
    bst_ulong len = 0;
    const float* pred = nullptr;
    check(XGBoosterPredict(m_booster, dm.h, outputMargin ? 1 : 0, 0, 0, &len, &pred), "predict");
    TB_CHECK(len == xs.size()) << "XGBoost predicted " << len << " values for " << xs.size() << " rows";
    std::copy(pred, pred + len, out.begin());
    return out;
}

// ---- SimulatedAnnealingOptimizer ----------------------------------------------------------------

SimulatedAnnealingOptimizer::SimulatedAnnealingOptimizer(const ConfigSpace& space, std::uint64_t seed, int nIter,
                                                         int parallelSize, int earlyStop)
    : m_space(space), m_rng(seed), m_nIter(nIter),
      m_parallelSize(int(std::min<std::int64_t>(parallelSize, space.size()))), m_earlyStop(earlyStop) {}

std::vector<std::int64_t> SimulatedAnnealingOptimizer::findMaximums(const XGBCostModel& model, int num,
                                                                    const std::set<std::int64_t>& exclusive) {
    std::uniform_int_distribution<std::int64_t> anyIndex(0, m_space.rangeLength() - 1);
    if (m_points.empty()) {  // sample_ints(parallel_size)
        std::set<std::int64_t> vis;
        while (int(vis.size()) < m_parallelSize) {
            const std::int64_t i = anyIndex(m_rng);
            if (m_space.isIndexValid(i)) vis.insert(i);
        }
        m_points.assign(vis.begin(), vis.end());
    }
    std::vector<std::int64_t>& points = m_points;
    std::vector<float> scores = model.predict(points);

    // A min-heap of (score, point) of size num, initialized with (-inf, -1 - i).
    using Item = std::pair<double, std::int64_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    std::set<std::int64_t> inHeap(exclusive.begin(), exclusive.end());
    for (int i = 0; i < num; ++i) {
        heap.push({-std::numeric_limits<double>::infinity(), -1 - i});
        inHeap.insert(-1 - i);
    }
    auto offer = [&](double s, std::int64_t p) {
        if (s > heap.top().first && !inHeap.count(p)) {
            inHeap.erase(heap.top().second);
            heap.pop();
            heap.push({s, p});
            inHeap.insert(p);
            return true;
        }
        return false;
    };
    for (size_t i = 0; i < points.size(); ++i) offer(scores[i], points[i]);

    const std::vector<std::int64_t> dims = m_space.dims();
    std::uniform_int_distribution<size_t> knobDist(0, dims.size() - 1);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    auto randomWalk = [&](std::int64_t p) {  // space.random_walk
        const auto old = m_space.pointToKnob(p);
        auto knob = old;
        std::int64_t np = p;
        for (int guard = 0; (knob == old || !m_space.isIndexValid(np)) && guard < 10000; ++guard) {
            const size_t from = knobDist(m_rng);
            knob[from] = std::uniform_int_distribution<std::int64_t>(0, dims[from] - 1)(m_rng);
            np = m_space.knobToPoint(knob);
        }
        return m_space.isIndexValid(np) ? np : p;
    };
    double t = 1.0;
    const double cool = 1.0 / double(m_nIter + 1);
    int k = 0, kLastModify = 0;
    while (k < m_nIter && k < kLastModify + m_earlyStop) {
        std::vector<std::int64_t> newPoints(points.size());
        for (size_t i = 0; i < points.size(); ++i) newPoints[i] = randomWalk(points[i]);
        const std::vector<float> newScores = model.predict(newPoints);
        for (size_t i = 0; i < points.size(); ++i) {
            const double acProb = std::exp(std::min((double(newScores[i]) - scores[i]) / (t + 1e-5), 1.0));
            if (unit(m_rng) < acProb) {
                points[i] = newPoints[i];
                scores[i] = newScores[i];
            }
        }
        for (size_t i = 0; i < newPoints.size(); ++i)
            if (offer(newScores[i], newPoints[i])) kLastModify = k;
        ++k;
        t -= cool;
    }
    std::vector<Item> items;
    while (!heap.empty()) {
        items.push_back(heap.top());
        heap.pop();
    }
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.first > b.first; });
    std::vector<std::int64_t> out;
    for (const auto& [s, p] : items)
        if (s >= 0) out.push_back(p);
    return out;
}

// ---- XGBTuner (ModelBasedTuner) -------------------------------------------------------------------

XGBTuner::XGBTuner(const Task& task, int planSize, const std::string& featureType, const std::string& lossType,
                   std::uint64_t seed)
    : Tuner(task, seed), m_planSize(planSize), m_model(task, featureTypeFromName(featureType), lossType, seed + 1),
      m_optimizer(task.space, seed + 2) {}

std::vector<ConfigEntity> XGBTuner::nextBatch(int batchSize) {
    std::vector<ConfigEntity> out;
    while (int(out.size()) < batchSize && hasNext()) {
        std::int64_t index = -1;
        while (m_trialPt < m_trials.size()) {
            index = m_trials[m_trialPt];
            if (!m_visited.count(index) && m_space.isIndexValid(index)) break;
            ++m_trialPt;
        }
        if (std::int64_t(m_trialPt) >= std::int64_t(m_trials.size()) - std::int64_t(0.05 * m_planSize))
            index = randIndex(m_visited);
        out.push_back(m_space.get(index));
        m_visited.insert(index);
    }
    return out;
}

void XGBTuner::update(const std::vector<ConfigEntity>& configs, const std::vector<measure::MeasureResult>& results) {
    for (size_t i = 0; i < configs.size(); ++i) {
        const double f = flops(results[i]);
        m_xs.push_back(configs[i].index);
        m_ys.push_back(f);
        m_flopsMax = std::max(m_flopsMax, f);
        m_visited.insert(configs[i].index);
    }
    if (int(m_xs.size()) >= m_planSize * (m_trainCt + 1) && m_flopsMax > 1e-6) {
        m_model.fit(m_xs, m_ys, m_planSize);
        m_trials = m_optimizer.findMaximums(m_model, m_planSize, m_visited);
        m_trialPt = 0;
        ++m_trainCt;
    }
}

bool XGBTuner::loadHistory(const std::vector<record::AutoTvmRecord>& records, int minSeedRecords) {
    std::unique_ptr<XGBCostModel> base = m_model.spawnBaseModel();
    if (!base->fitLog(records, m_planSize, minSeedRecords)) return false;
    if (m_trials.empty()) {  // no plan yet: the base model's maximums are the first
        m_trials = m_optimizer.findMaximums(*base, m_planSize, m_visited);
        m_trialPt = 0;
    }
    m_model.loadBaseModel(std::move(base));
    return true;
}

const std::vector<std::string>& tunerNames() {
    static const std::vector<std::string> names = {
        "xgb", "xgb_knob", "xgb_itervar", "xgb_curve", "xgb_rank", "xgb_rank_knob", "xgb_rank_itervar",
        "xgb_rank_curve", "xgb_rank_binary", "xgb_rank_binary_knob", "xgb_rank_binary_itervar",
        "xgb_rank_binary_curve", "ga", "random", "gridsearch"};
    return names;
}

std::unique_ptr<Tuner> makeTuner(const std::string& name, const Task& task, std::uint64_t seed) {
    if (name == "random") return std::make_unique<RandomTuner>(task, seed);
    if (name == "gridsearch") return std::make_unique<GridSearchTuner>(task);
    if (name == "ga") return std::make_unique<GATuner>(task, 50, 3, 0.1, seed);
    // xgb[_rank[_binary]][_knob|_itervar|_curve]
    if (std::find(tunerNames().begin(), tunerNames().end(), name) != tunerNames().end()) {
        std::string rest = name.substr(3), loss = "reg", feature = "itervar";
        for (const auto& [prefix, l] : {std::pair{"_rank_binary", "rank-binary"}, std::pair{"_rank", "rank"}})
            if (rest.rfind(prefix, 0) == 0) {
                loss = l;
                rest = rest.substr(std::string(prefix).size());
                break;
            }
        if (!rest.empty()) feature = rest.substr(1);
        return std::make_unique<XGBTuner>(task, 64, feature, loss, seed);
    }
    std::string known;
    for (const auto& n : tunerNames()) known += (known.empty() ? "" : ", ") + n;
    throw UserError("unknown tuner '" + name + "' (" + known + ")");
}

}  // namespace tb::autotvm
