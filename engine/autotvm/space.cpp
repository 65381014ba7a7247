// SPDX-License-Identifier: Apache-2.0
#include "engine/autotvm/space.h"

#include <algorithm>
#include <numeric>

#include "engine/support/error.h"

namespace tb::autotvm {

namespace {

using ojson = nlohmann::ordered_json;

// CPython's set table (Objects/setobject.c, 3.7 to 3.12) for positive small ints, whose hash is
// the value itself: open addressing with 9 linear probes then perturbed jumps, growth when 3/5
// full. Only what `list(set(a) | set(b))` touches: add, merge (copy / union), resize, iteration.
class PySetTable {
public:
    static PySetTable fromList(const std::vector<std::int64_t>& keys) {
        PySetTable s;
        for (std::int64_t k : keys) s.add(k);
        return s;
    }
    // set_merge: what `set_copy` (into an empty set) and `|` (into the copy) do.
    void merge(const PySetTable& other) {
        if (other.m_used == 0) return;
        if ((m_fill + other.m_used) * 5 >= m_mask * 3) resize((m_used + other.m_used) * 2);
        if (m_fill == 0 && m_mask == other.m_mask) {
            m_table = other.m_table;
            m_fill = m_used = other.m_used;
            return;
        }
        if (m_fill == 0) {
            for (std::int64_t k : other.m_table)
                if (k) m_table[probe(k)] = k;
            m_fill = m_used = other.m_used;
            return;
        }
        for (std::int64_t k : other.m_table)
            if (k) add(k);
    }
    std::vector<std::int64_t> list() const {
        std::vector<std::int64_t> out;
        for (std::int64_t k : m_table)
            if (k) out.push_back(k);
        return out;
    }

private:
    static constexpr std::size_t kLinearProbes = 9;
    static constexpr int kPerturbShift = 5;

    // The slot holding `key`, or the first empty slot of its probe sequence.
    std::size_t probe(std::int64_t key) const {
        const std::size_t hash = std::size_t(key);
        std::size_t perturb = hash;
        std::size_t i = hash & m_mask;
        while (true) {
            const std::size_t probes = i + kLinearProbes <= m_mask ? kLinearProbes : 0;
            for (std::size_t j = i; j <= i + probes; ++j)
                if (m_table[j] == 0 || m_table[j] == key) return j;
            perturb >>= kPerturbShift;
            i = (i * 5 + 1 + perturb) & m_mask;
        }
    }
    void add(std::int64_t key) {
        const std::size_t slot = probe(key);
        if (m_table[slot] == key) return;
        m_table[slot] = key;
        ++m_fill;
        ++m_used;
        if (m_fill * 5 < m_mask * 3) return;
        resize(m_used > 50000 ? m_used * 2 : m_used * 4);
    }
    void resize(std::size_t minUsed) {
        std::size_t newSize = 8;
        while (newSize <= minUsed) newSize <<= 1;
        const std::vector<std::int64_t> old = std::move(m_table);
        m_table.assign(newSize, 0);
        m_mask = newSize - 1;
        for (std::int64_t k : old)
            if (k) m_table[probe(k)] = k;
    }

    std::vector<std::int64_t> m_table = std::vector<std::int64_t>(8, 0);
    std::size_t m_mask = 7;
    std::size_t m_fill = 0, m_used = 0;
};

// Multiplies without overflow: saturates at INT64_MAX (only compared against smaller values).
std::int64_t satMul(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

void splitDfs(const std::vector<std::int64_t>& factors, std::int64_t product, bool noTail, std::size_t now,
              std::int64_t prod, std::vector<std::int64_t>& stack, std::vector<Entity>& out) {
    if (now == stack.size()) {
        if (product % prod == 0 || (!noTail && prod < product)) {
            SplitEntity e;
            e.size.push_back(-1);
            e.size.insert(e.size.end(), stack.rbegin(), stack.rend());
            out.push_back(std::move(e));
        }
        return;
    }
    for (std::int64_t f : factors) {
        const std::int64_t p = satMul(prod, f);
        // TVM tests `prod > product` at the leaf; factors are >= 1, so no leaf below passes either.
        if (p > product) continue;
        stack[now] = f;
        splitDfs(factors, product, noTail, now + 1, p, stack, out);
    }
}

const Entity& knobOf(const ConfigEntity& c, const std::string& name) {
    const Entity* e = c.find(name);
    TB_USER_CHECK(e) << "the config has no knob '" << name << "'";
    return *e;
}

template <class T>
const T& knobAs(const ConfigEntity& c, const std::string& name, const char* kind) {
    const T* v = std::get_if<T>(&knobOf(c, name));
    TB_USER_CHECK(v) << "knob '" << name << "' is not a " << kind << " knob";
    return *v;
}

}  // namespace

const char* knobKindCode(KnobKind kind) {
    switch (kind) {
    case KnobKind::Split: return "sp";
    case KnobKind::Reorder: return "re";
    case KnobKind::Annotate: return "an";
    case KnobKind::Other: return "ot";
    }
    return "??";
}

std::vector<std::int64_t> getFactors(std::int64_t n) {
    TB_USER_CHECK(n >= 1) << "cannot factorize " << n << " (axis lengths must be positive)";
    std::vector<std::int64_t> small, large;
    for (std::int64_t i = 1; i * i <= n; ++i) {
        if (n % i) continue;
        small.push_back(i);
        if (i != n / i) large.push_back(n / i);
    }
    small.insert(small.end(), large.rbegin(), large.rend());
    return small;
}

std::vector<std::int64_t> getPow2s(std::int64_t n) {
    TB_USER_CHECK(n >= 1) << "no powers of two up to " << n;
    std::vector<std::int64_t> out;
    for (std::int64_t p = 1; p <= n && p > 0; p <<= 1) out.push_back(p);
    return out;
}

std::vector<std::int64_t> verboseFactors(std::int64_t n) {
    PySetTable u;
    u.merge(PySetTable::fromList(getFactors(n)));  // set_copy of set(divisibles)
    u.merge(PySetTable::fromList(getPow2s(n)));    // | set(pow2s)
    return u.list();
}

// ---- spaces ------------------------------------------------------------------------------------

SplitSpace::SplitSpace(std::int64_t length, const SplitOptions& o) : TransformSpace(KnobKind::Split, o.policy) {
    m_product = length;
    m_numOutputs = o.numOutputs;
    TB_USER_CHECK(o.numOutputs > 0) << "define_split needs num_outputs > 0 (got " << o.numOutputs << ")";
    if (o.policy == "candidate") {
        for (const auto& size : o.candidate) {
            TB_USER_CHECK(int(size.size()) == o.numOutputs)
                << "split candidate of " << size.size() << " factors for num_outputs=" << o.numOutputs;
            m_entities.push_back(SplitEntity{size});
        }
    } else {
        TB_USER_CHECK(length >= 1) << "define_split of an axis of length " << length;
        // TVM multiplies the factor stack with functools.reduce, which fails on an empty stack.
        TB_USER_CHECK(o.numOutputs >= 2) << "define_split policy '" << o.policy << "' needs num_outputs >= 2";
        std::vector<std::int64_t> factors;
        if (o.policy == "verbose") factors = verboseFactors(length);
        else if (o.policy == "factors") factors = getFactors(length);
        else if (o.policy == "power2") factors = getPow2s(length);
        else TB_USER_ERROR() << "invalid split policy '" << o.policy << "'";
        std::erase_if(factors, [&](std::int64_t f) { return f > o.maxFactor; });
        const bool noTail = o.noTail.value_or(o.policy == "factors");
        std::vector<std::int64_t> stack(std::size_t(o.numOutputs - 1), 0);
        splitDfs(factors, length, noTail, 0, 1, stack, m_entities);
    }
    if (o.filter)
        std::erase_if(m_entities, [&](const Entity& e) { return !o.filter(std::get<SplitEntity>(e)); });
}

ReorderSpace::ReorderSpace(int numAxes, const std::string& policy, const ReorderOptions& o)
    : TransformSpace(KnobKind::Reorder, policy) {
    TB_USER_CHECK(numAxes >= 0) << "define_reorder over " << numAxes << " axes";
    m_numOutputs = numAxes;
    std::vector<int> ident(static_cast<std::size_t>(numAxes));
    std::iota(ident.begin(), ident.end(), 0);
    if (policy == "identity") {
        m_entities.push_back(ReorderEntity{ident});
    } else if (policy == "all" || policy == "interval_all") {
        // itertools.permutations of a sorted range = lexicographic order = std::next_permutation.
        const auto [begin, end] = policy == "all" ? std::pair<int, int>(0, numAxes) : o.interval;
        TB_USER_CHECK(0 <= begin && begin <= end && end <= numAxes)
            << "reorder interval [" << begin << ", " << end << ") outside " << numAxes << " axes";
        std::vector<int> perm = ident;
        do m_entities.push_back(ReorderEntity{perm});
        while (std::next_permutation(perm.begin() + begin, perm.begin() + end));
    } else if (policy == "candidate") {
        for (const auto& c : o.candidate) {
            for (int a : c)
                TB_USER_CHECK(0 <= a && a < numAxes) << "reorder candidate names axis " << a << " of " << numAxes;
            m_entities.push_back(ReorderEntity{c});
        }
    } else {
        TB_USER_ERROR() << "reorder policy '" << policy << "' is not supported";
    }
}

AnnotateSpace::AnnotateSpace(int numAxes, const std::string& policy, int numAnchor)
    : TransformSpace(KnobKind::Annotate, policy) {
    TB_USER_CHECK(numAxes >= 0) << "define_annotate over " << numAxes << " axes";
    m_numOutputs = numAxes;
    auto withFuse = [&](std::vector<std::string> tail) {
        std::vector<std::string> anns(std::size_t(numAxes) - tail.size(), "fuse");
        anns.insert(anns.end(), tail.begin(), tail.end());
        m_entities.push_back(AnnotateEntity{anns, {}});
    };
    if (policy == "bind_gpu") {
        if (numAxes >= 6) withFuse({"blockIdx.z", "blockIdx.y", "blockIdx.x", "threadIdx.z", "threadIdx.y", "threadIdx.x"});
        else if (numAxes >= 4) withFuse({"blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"});
        else if (numAxes >= 2) withFuse({"blockIdx.x", "threadIdx.x"});
        else TB_USER_ERROR() << "annotate policy bind_gpu needs at least 2 axes (got " << numAxes << ")";
    } else if (policy == "bind_gpu_virtual") {
        if (numAxes >= 9)
            withFuse({"blockIdx.z", "blockIdx.y", "blockIdx.x", "vthread", "vthread", "vthread", "threadIdx.z",
                      "threadIdx.y", "threadIdx.x"});
        else if (numAxes >= 6) withFuse({"blockIdx.y", "blockIdx.x", "vthread", "vthread", "threadIdx.y", "threadIdx.x"});
        else if (numAxes >= 3) withFuse({"blockIdx.x", "vthread", "threadIdx.x"});
        else TB_USER_ERROR() << "annotate policy bind_gpu_virtual needs at least 3 axes (got " << numAxes << ")";
    } else if (policy == "locate_cache") {
        TB_USER_CHECK(0 <= numAnchor && numAnchor <= numAxes)
            << "locate_cache with num_anchor " << numAnchor << " over " << numAxes << " axes";
        // itertools.combinations(range(n), k): lexicographic; walk a selection mask.
        std::vector<bool> pick(std::size_t(numAxes), false);
        std::fill(pick.begin(), pick.begin() + numAnchor, true);
        do {
            AnnotateEntity e;
            for (int i = 0; i < numAxes; ++i)
                if (pick[std::size_t(i)]) e.anchors.push_back(i);
            m_entities.push_back(std::move(e));
        } while (std::prev_permutation(pick.begin(), pick.end()));
    } else {
        // policy.replace("try", "none").split("_"), each part one of none/unroll/vec.
        std::string p = policy;
        for (std::size_t at = p.find("try"); at != std::string::npos; at = p.find("try", at + 4)) p.replace(at, 3, "none");
        std::vector<std::string> anns;
        for (std::size_t start = 0;;) {
            const std::size_t us = p.find('_', start);
            anns.push_back(p.substr(start, us == std::string::npos ? std::string::npos : us - start));
            if (us == std::string::npos) break;
            start = us + 1;
        }
        for (const auto& a : anns)
            TB_USER_CHECK(a == "none" || a == "unroll" || a == "vec") << "invalid annotate policy '" << policy << "'";
        // DFS, axis 0 slowest; only the combinations with at most one "vec" are kept.
        std::vector<std::size_t> digit(std::size_t(numAxes), 0);
        while (true) {
            AnnotateEntity e;
            int vec = 0;
            for (std::size_t d : digit) {
                e.anns.push_back(anns[d]);
                vec += anns[d] == "vec";
            }
            if (vec <= 1) m_entities.push_back(std::move(e));
            int k = numAxes - 1;
            while (k >= 0 && ++digit[std::size_t(k)] == anns.size()) digit[std::size_t(k--)] = 0;
            if (k < 0) break;
        }
    }
}

OtherOptionSpace::OtherOptionSpace(std::vector<nlohmann::ordered_json> candidate)
    : TransformSpace(KnobKind::Other, "candidate") {
    for (auto& c : candidate) m_entities.push_back(OtherOptionEntity{std::move(c)});
}

// ---- entities ----------------------------------------------------------------------------------

nlohmann::ordered_json entityValueJson(const Entity& entity) {
    return std::visit(
        [](const auto& e) -> ojson {
            using T = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<T, SplitEntity>) return ojson(e.size);
            else if constexpr (std::is_same_v<T, ReorderEntity>) return ojson(e.perm);
            else if constexpr (std::is_same_v<T, AnnotateEntity>)
                return e.anchors.empty() ? ojson(e.anns) : ojson(e.anchors);
            else return e.val;
        },
        entity);
}

const Entity* ConfigEntity::find(const std::string& name) const {
    for (const auto& [n, e] : knobs)
        if (n == name) return &e;
    return nullptr;
}

const SplitEntity& ConfigEntity::split(const std::string& name) const { return knobAs<SplitEntity>(*this, name, "split"); }
const ReorderEntity& ConfigEntity::reorder(const std::string& name) const {
    return knobAs<ReorderEntity>(*this, name, "reorder");
}
const AnnotateEntity& ConfigEntity::annotate(const std::string& name) const {
    return knobAs<AnnotateEntity>(*this, name, "annotate");
}
const nlohmann::ordered_json& ConfigEntity::knobValue(const std::string& name) const {
    return knobAs<OtherOptionEntity>(*this, name, "define_knob").val;
}

nlohmann::ordered_json ConfigEntity::entityJson() const {
    ojson out = ojson::array();
    for (const auto& [name, e] : knobs)
        out.push_back(ojson::array({name, knobKindCode(KnobKind(e.index())), entityValueJson(e)}));
    return out;
}

nlohmann::ordered_json ConfigEntity::toJson() const {
    ojson j = ojson::object();
    j["index"] = index;
    j["code_hash"] = codeHash ? ojson(*codeHash) : ojson(nullptr);
    j["entity"] = entityJson();
    return j;
}

ConfigEntity ConfigEntity::fromJson(const nlohmann::ordered_json& config) {
    TB_USER_CHECK(config.is_object()) << "a config must be a JSON object";
    TB_USER_CHECK(config.contains("index") && config["index"].is_number_integer()) << "config.index must be an integer";
    TB_USER_CHECK(config.contains("entity") && config["entity"].is_array()) << "config.entity must be a list";
    ConfigEntity c;
    c.index = config["index"].get<std::int64_t>();
    if (config.contains("code_hash") && config["code_hash"].is_string()) c.codeHash = config["code_hash"].get<std::string>();
    for (const auto& item : config["entity"]) {
        TB_USER_CHECK(item.is_array() && item.size() == 3 && item[0].is_string() && item[1].is_string())
            << "config.entity item " << item.dump() << " is not [name, kind, value]";
        const std::string name = item[0].get<std::string>(), kind = item[1].get<std::string>();
        const ojson& v = item[2];
        auto ints = [&](const char* what) {
            TB_USER_CHECK(v.is_array()) << "knob '" << name << "': " << what << " must be a list";
            std::vector<std::int64_t> out;
            for (const auto& x : v) {
                TB_USER_CHECK(x.is_number_integer()) << "knob '" << name << "': " << x.dump() << " is not an integer";
                out.push_back(x.get<std::int64_t>());
            }
            return out;
        };
        if (kind == "sp") {
            c.knobs.emplace_back(name, SplitEntity{ints("split sizes")});
        } else if (kind == "re") {
            const auto p = ints("a permutation");
            c.knobs.emplace_back(name, ReorderEntity{std::vector<int>(p.begin(), p.end())});
        } else if (kind == "an") {
            TB_USER_CHECK(v.is_array()) << "knob '" << name << "': annotations must be a list";
            AnnotateEntity a;
            if (!v.empty() && v[0].is_number_integer()) {
                for (auto x : ints("anchors")) a.anchors.push_back(int(x));
            } else {
                for (const auto& x : v) {
                    TB_USER_CHECK(x.is_string()) << "knob '" << name << "': annotation " << x.dump() << " is not a string";
                    a.anns.push_back(x.get<std::string>());
                }
            }
            c.knobs.emplace_back(name, std::move(a));
        } else if (kind == "ot") {
            c.knobs.emplace_back(name, OtherOptionEntity{v});
        } else {
            TB_USER_ERROR() << "knob '" << name << "' has unknown kind '" << kind << "'";
        }
    }
    return c;
}

// ---- ConfigSpace -------------------------------------------------------------------------------

const TransformSpace& ConfigSpace::add(const std::string& name, TransformSpace space) {
    TB_USER_CHECK(!find(name)) << "knob '" << name << "' is defined twice";
    m_knobs.emplace_back(name, std::move(space));
    return m_knobs.back().second;
}

const TransformSpace& ConfigSpace::defineSplit(const std::string& name, std::int64_t length, const SplitOptions& options) {
    return add(name, SplitSpace(length, options));
}

const TransformSpace& ConfigSpace::defineReorder(const std::string& name, int numAxes, const std::string& policy,
                                                 const ReorderOptions& options) {
    return add(name, ReorderSpace(numAxes, policy, options));
}

const TransformSpace& ConfigSpace::defineAnnotate(const std::string& name, int numAxes, const std::string& policy,
                                                  int numAnchor) {
    return add(name, AnnotateSpace(numAxes, policy, numAnchor));
}

const TransformSpace& ConfigSpace::defineKnob(const std::string& name, std::vector<nlohmann::ordered_json> candidate) {
    return add(name, OtherOptionSpace(std::move(candidate)));
}

void ConfigSpace::multiFilter(std::function<bool(const ConfigEntity&)> filter) { m_multiFilter = std::move(filter); }

const TransformSpace* ConfigSpace::find(const std::string& name) const {
    for (const auto& [n, s] : m_knobs)
        if (n == name) return &s;
    return nullptr;
}

std::vector<std::int64_t> ConfigSpace::dims() const {
    std::vector<std::int64_t> d;
    for (const auto& [n, s] : m_knobs) d.push_back(std::int64_t(s.size()));
    return d;
}

std::int64_t ConfigSpace::rangeLength() const {
    std::int64_t r = 1;
    for (std::int64_t d : dims())
        TB_USER_CHECK(!__builtin_mul_overflow(r, d, &r)) << "the config space has more than 2^63 points";
    return r;
}

std::int64_t ConfigSpace::size() const {
    const std::int64_t range = rangeLength();
    if (!m_multiFilter) return range;
    std::int64_t n = 0;
    for (std::int64_t i = 0; i < range; ++i) n += m_multiFilter(decode(i)) ? 1 : 0;
    return n;
}

bool ConfigSpace::isIndexValid(std::int64_t index) const {
    if (index < 0 || index >= rangeLength()) return false;
    return !m_multiFilter || m_multiFilter(decode(index));
}

std::vector<std::int64_t> ConfigSpace::pointToKnob(std::int64_t index) const {
    std::vector<std::int64_t> knob;
    for (std::int64_t d : dims()) {
        knob.push_back(d ? index % d : 0);
        index = d ? index / d : 0;
    }
    return knob;
}

std::int64_t ConfigSpace::knobToPoint(const std::vector<std::int64_t>& knob) const {
    const auto d = dims();
    TB_USER_CHECK(knob.size() == d.size()) << "a knob vector of " << knob.size() << " values for " << d.size() << " knobs";
    std::int64_t point = 0, radix = 1;
    for (std::size_t j = 0; j < d.size(); ++j) {
        TB_USER_CHECK(0 <= knob[j] && knob[j] < d[j]) << "knob " << j << " value " << knob[j] << " outside [0, " << d[j] << ")";
        point += radix * knob[j];
        radix *= d[j];
    }
    return point;
}

ConfigEntity ConfigSpace::decode(std::int64_t index) const {
    ConfigEntity c;
    c.index = index;
    std::int64_t t = index;
    for (const auto& [name, s] : m_knobs) {
        const std::int64_t d = std::int64_t(s.size());
        c.knobs.emplace_back(name, s[std::size_t(t % d)]);
        t /= d;
    }
    return c;
}

ConfigEntity ConfigSpace::get(std::int64_t index) const {
    const std::int64_t range = rangeLength();
    TB_USER_CHECK(0 <= index && index < range) << "Index out of range: size " << range << ", got index " << index;
    ConfigEntity c = decode(index);
    TB_USER_CHECK(!m_multiFilter || m_multiFilter(c))
        << "Index does not correspond to the multi-filter condition, got index " << index;
    return c;
}

std::optional<std::int64_t> ConfigSpace::indexOf(const ConfigEntity& entity) const {
    if (entity.knobs.size() != m_knobs.size()) return std::nullopt;
    std::vector<std::int64_t> knob;
    for (std::size_t j = 0; j < m_knobs.size(); ++j) {
        if (entity.knobs[j].first != m_knobs[j].first) return std::nullopt;
        const auto& cands = m_knobs[j].second.entities();
        const auto it = std::find(cands.begin(), cands.end(), entity.knobs[j].second);
        if (it == cands.end()) return std::nullopt;
        knob.push_back(std::int64_t(it - cands.begin()));
    }
    return knobToPoint(knob);
}

}  // namespace tb::autotvm
