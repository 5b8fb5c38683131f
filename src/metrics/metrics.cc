#include "metrics/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace kib::metrics {

Histogram::Histogram(const std::vector<double>& bounds)
    : bounds_(bounds), counts_(new std::atomic<uint64_t>[bounds.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double v) {
  // First bucket whose upper bound is >= v ("le" is inclusive); past the end = +Inf.
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

const std::vector<double>& latency_buckets() {
  static const std::vector<double> kBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                            0.1,    0.25,  0.5,    1,     2.5,  5,    10, 30};
  return kBuckets;
}

template <typename M>
M& Family<M>::labels(const std::vector<std::string>& values) {
  if (values.size() != label_names_.size())
    throw std::logic_error("metric " + name_ + ": " + std::to_string(label_names_.size()) + " label values expected, got " +
                           std::to_string(values.size()));
  std::lock_guard lock(mu_);
  auto it = children_.find(values);
  if (it != children_.end()) return *it->second;
  std::unique_ptr<M> child;
  if constexpr (std::is_same_v<M, Histogram>) child = std::make_unique<Histogram>(bounds_);
  else child = std::make_unique<M>();
  return *children_.emplace(values, std::move(child)).first->second;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

CollectHook& CollectHook::operator=(CollectHook&& o) noexcept {
  if (this != &o) {
    reset();
    registry_ = o.registry_;
    id_ = o.id_;
    o.registry_ = nullptr;
  }
  return *this;
}

void CollectHook::reset() {
  if (registry_) registry_->remove_hook(id_);
  registry_ = nullptr;
}

bool valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

Registry::Entry& Registry::entry(const std::string& name, Type type, const std::vector<std::string>& label_names,
                                 const std::vector<std::string>& client_named) {
  if (!valid_metric_name(name)) throw std::logic_error("invalid metric name \"" + name + "\"");
  for (const auto& l : label_names) {
    if (!valid_label_name(l) || (type == Type::kHistogram && l == "le"))
      throw std::logic_error("metric " + name + ": invalid label name \"" + l + "\"");
  }
  // In label order, each once: the redacted exposition keeps the others in their order.
  size_t at = 0;
  for (const auto& l : client_named) {
    while (at < label_names.size() && label_names[at] != l) ++at;
    if (at == label_names.size())
      throw std::logic_error("metric " + name + ": client-named label \"" + l + "\" is not one of its labels, in order");
    ++at;
  }
  auto [it, inserted] = families_.try_emplace(name);
  Entry& e = it->second;
  if (inserted) {
    e.type = type;
    return e;
  }
  auto same = [&](const auto& f) { return f->label_names() == label_names && f->client_named() == client_named; };
  if (e.type != type || !(e.counter ? same(e.counter) : e.gauge ? same(e.gauge) : same(e.histogram)))
    throw std::logic_error("metric " + name + " is already registered with another type or other labels");
  return e;
}

CounterFamily& Registry::counter(const std::string& name, const std::string& help, std::vector<std::string> label_names,
                                 std::vector<std::string> client_named) {
  std::lock_guard lock(mu_);
  Entry& e = entry(name, Type::kCounter, label_names, client_named);
  if (!e.counter)
    e.counter = std::make_unique<CounterFamily>(name, help, std::move(label_names), std::vector<double>{},
                                                std::move(client_named));
  return *e.counter;
}

GaugeFamily& Registry::gauge(const std::string& name, const std::string& help, std::vector<std::string> label_names,
                             std::vector<std::string> client_named) {
  std::lock_guard lock(mu_);
  Entry& e = entry(name, Type::kGauge, label_names, client_named);
  if (!e.gauge)
    e.gauge = std::make_unique<GaugeFamily>(name, help, std::move(label_names), std::vector<double>{},
                                            std::move(client_named));
  return *e.gauge;
}

HistogramFamily& Registry::histogram(const std::string& name, const std::string& help,
                                     std::vector<std::string> label_names, std::vector<double> bounds,
                                     std::vector<std::string> client_named) {
  if (bounds.empty()) throw std::logic_error("metric " + name + ": a histogram needs at least one bucket");
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1]))
      throw std::logic_error("metric " + name + ": bucket bounds must be finite and strictly increasing");
  }
  std::lock_guard lock(mu_);
  Entry& e = entry(name, Type::kHistogram, label_names, client_named);
  if (!e.histogram)
    e.histogram = std::make_unique<HistogramFamily>(name, help, std::move(label_names), std::move(bounds),
                                                    std::move(client_named));
  return *e.histogram;
}

CollectHook Registry::on_collect(std::function<void()> fn) {
  std::lock_guard lock(hooks_mu_);
  uint64_t id = next_hook_++;
  hooks_.emplace_back(id, std::move(fn));
  return CollectHook(this, id);
}

void Registry::remove_hook(uint64_t id) {
  std::lock_guard lock(hooks_mu_);
  hooks_.remove_if([id](const auto& h) { return h.first == id; });
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Integral values (every counter in practice) print without an exponent or decimals.
  if (v == std::trunc(v) && std::fabs(v) < 1e15) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
    return std::string(buf, end);
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  return std::string(buf, end);
}

namespace {

void write_labels(std::string& out, const std::vector<std::string>& names, const std::vector<std::string>& values,
                  const std::string* le = nullptr) {
  if (names.empty() && !le) return;
  out += '{';
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += names[i];
    out += "=\"";
    out += escape_label_value(values[i]);
    out += '"';
  }
  if (le) {
    if (!names.empty()) out += ',';
    out += "le=\"";
    out += *le;
    out += '"';
  }
  out += '}';
}

// What one family shows: its label names and HELP text, and which label positions each sample
// keeps. Shown as registered unless client names are redacted and the family has any.
struct View {
  std::vector<std::string> names;
  std::vector<size_t> keep;
  std::string help;
};

template <typename F>
View view_of(const F& f, ClientNames mode) {
  View v;
  const auto& dropped = f.client_named();
  const bool redact = mode == ClientNames::kRedacted && !dropped.empty();
  for (size_t i = 0; i < f.label_names().size(); ++i) {
    if (redact && std::find(dropped.begin(), dropped.end(), f.label_names()[i]) != dropped.end()) continue;
    v.names.push_back(f.label_names()[i]);
    v.keep.push_back(i);
  }
  v.help = f.help();
  if (redact) {
    v.help += " Summed over ";
    for (size_t i = 0; i < dropped.size(); ++i) v.help += (i ? (i + 1 == dropped.size() ? " and " : ", ") : "") + dropped[i];
    v.help += ", which [http] metrics_labels leaves out.";
  }
  return v;
}

std::vector<std::string> kept(const std::vector<std::string>& values, const std::vector<size_t>& keep) {
  std::vector<std::string> out;
  out.reserve(keep.size());
  for (size_t i : keep) out.push_back(values[i]);
  return out;
}

void write_header(std::string& out, const std::string& name, const View& v, const char* type) {
  out += "# HELP " + name + " " + escape_help(v.help) + "\n";
  out += "# TYPE " + name + " " + type + "\n";
}

// One histogram's (or several summed) non-cumulative bucket counts and sum.
struct HistogramTotals {
  std::vector<uint64_t> buckets;
  double sum = 0;
};

}  // namespace

std::string Registry::render(ClientNames names) {
  {
    std::lock_guard lock(hooks_mu_);
    for (auto& [id, fn] : hooks_) fn();
  }
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& family : families_) {
    // Not a structured binding: the lambdas below capture them, which clang 14 cannot.
    const auto& name = family.first;
    const auto& e = family.second;
    // Children go through a map keyed by the label values shown: with every label shown each
    // key is one child (in the children's order), redacted the children that differ only in
    // client-named labels add up.
    if (e.counter || e.gauge) {
      std::map<std::vector<std::string>, double> rows;
      View v;
      if (e.counter) {
        v = view_of(*e.counter, names);
        e.counter->each([&](const std::vector<std::string>& values, const Counter& c) { rows[kept(values, v.keep)] += c.value(); });
      } else {
        v = view_of(*e.gauge, names);
        e.gauge->each([&](const std::vector<std::string>& values, const Gauge& g) { rows[kept(values, v.keep)] += g.value(); });
      }
      write_header(out, name, v, e.counter ? "counter" : "gauge");
      for (const auto& [values, value] : rows) {
        out += name;
        write_labels(out, v.names, values);
        out += ' ' + format_value(value) + '\n';
      }
    } else if (e.histogram) {
      const View v = view_of(*e.histogram, names);
      std::map<std::vector<std::string>, HistogramTotals> rows;
      e.histogram->each([&](const std::vector<std::string>& values, const Histogram& h) {
        HistogramTotals& t = rows[kept(values, v.keep)];
        t.buckets.resize(h.bounds().size() + 1);
        for (size_t i = 0; i <= h.bounds().size(); ++i) t.buckets[i] += h.bucket_count(i);
        t.sum += h.sum();
      });
      write_header(out, name, v, "histogram");
      const auto& bounds = e.histogram->bounds();
      for (const auto& [values, t] : rows) {
        // Buckets are read one by one while observers may run: make the cumulative counts,
        // +Inf and _count agree with each other (a scrape may lag an observation, never
        // contradict itself).
        uint64_t cumulative = 0;
        for (size_t i = 0; i <= bounds.size(); ++i) {
          cumulative += t.buckets[i];
          std::string le = i < bounds.size() ? format_value(bounds[i]) : "+Inf";
          out += name + "_bucket";
          write_labels(out, v.names, values, &le);
          out += ' ' + format_value(static_cast<double>(cumulative)) + '\n';
        }
        out += name + "_sum";
        write_labels(out, v.names, values);
        out += ' ' + format_value(t.sum) + '\n';
        out += name + "_count";
        write_labels(out, v.names, values);
        out += ' ' + format_value(static_cast<double>(cumulative)) + '\n';
      }
    }
  }
  return out;
}

Registry& global() {
  static Registry registry;
  return registry;
}

}  // namespace kib::metrics
