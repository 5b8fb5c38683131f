// A small Prometheus registry: counters, gauges and histograms, each a family of children
// keyed by label values, rendered in the text exposition format 0.0.4.
//
// Threading: updating a child (inc, set, observe) is lock-free and safe from any thread (the
// state writer thread counts its batches). Looking a child up by label values takes the
// family's mutex; hot paths may keep the returned reference, which stays valid for the
// registry's lifetime. Collect hooks run on the thread that calls render(): the HTTP server
// renders on the loop thread, so a hook may read loop-only objects.
//
// Labels whose values a client chose (a group id, a topic name) are declared as such when the
// family is registered: render(ClientNames::kRedacted) leaves them out, each family's samples
// summed over them ([http] metrics_labels; docs/operations.md "Who may read /metrics").
//
// Misuse (an invalid metric or label name, the same name registered with another type or
// other label names, the wrong number of label values) is a programming error and throws
// std::logic_error.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kib::metrics {

enum class Type { kCounter, kGauge, kHistogram };

// Whether the exposition shows the labels that carry names a client chose.
enum class ClientNames { kShown, kRedacted };

class Counter {
 public:
  void inc(double by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  // For a total kept elsewhere (e.g. TcpServer::refused_connections()) copied in by a collect
  // hook; the source must itself be monotonic.
  void mirror(double total) { value_.store(total, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void inc(double by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  void dec(double by = 1) { value_.fetch_sub(by, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // `bounds`: upper bounds, strictly increasing, without +Inf (implied).
  explicit Histogram(const std::vector<double>& bounds);
  void observe(double v);

  const std::vector<double>& bounds() const { return bounds_; }
  // Non-cumulative count of bucket i (i == bounds().size() is the +Inf bucket).
  uint64_t bucket_count(size_t i) const { return counts_[i].load(std::memory_order_relaxed); }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// Default buckets for request latency in seconds: 0.5 ms .. 30 s (Fetch long-polls).
const std::vector<double>& latency_buckets();

template <typename M>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names, std::vector<double> bounds = {},
         std::vector<std::string> client_named = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        client_named_(std::move(client_named)),
        bounds_(std::move(bounds)) {}

  // The child for these label values (one per label name, in order), created on first use.
  M& labels(std::initializer_list<std::string_view> values) { return labels(std::vector<std::string>(values.begin(), values.end())); }
  M& labels(const std::vector<std::string>& values);
  // The only child of a family without labels.
  M& get() { return labels(std::vector<std::string>{}); }

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  // Those of label_names() whose values a client chose (a subset, in the same order).
  const std::vector<std::string>& client_named() const { return client_named_; }
  const std::vector<double>& bounds() const { return bounds_; }  // histograms only

  // Drops every child. For families a collect hook refills on each scrape (label sets that
  // come and go, such as one per consumer group); references from labels() die with it.
  void clear() {
    std::lock_guard lock(mu_);
    children_.clear();
  }

  // Calls fn(label_values, child) for every child, ordered by label values.
  template <typename Fn>
  void each(Fn&& fn) const {
    std::lock_guard lock(mu_);
    for (const auto& [values, child] : children_) fn(values, *child);
  }

 private:
  std::string name_, help_;
  std::vector<std::string> label_names_;
  std::vector<std::string> client_named_;
  std::vector<double> bounds_;  // histograms only
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<M>> children_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class Registry;

// Unregisters its collect hook when destroyed. Movable.
class CollectHook {
 public:
  CollectHook() = default;
  CollectHook(CollectHook&& o) noexcept : registry_(o.registry_), id_(o.id_) { o.registry_ = nullptr; }
  CollectHook& operator=(CollectHook&& o) noexcept;
  ~CollectHook() { reset(); }
  void reset();

 private:
  friend class Registry;
  CollectHook(Registry* r, uint64_t id) : registry_(r), id_(id) {}
  Registry* registry_ = nullptr;
  uint64_t id_ = 0;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers a family, or returns the one already registered under `name` (which must then
  // have the same type, label names and client-named labels). `client_named`: the labels of
  // `label_names` whose values a client chose (group ids, topic names, transactional ids, client
  // ids, principals); a label that only qualifies one of them (a partition number) belongs there
  // too, as it means nothing once that one is summed away.
  CounterFamily& counter(const std::string& name, const std::string& help, std::vector<std::string> label_names = {},
                         std::vector<std::string> client_named = {});
  GaugeFamily& gauge(const std::string& name, const std::string& help, std::vector<std::string> label_names = {},
                     std::vector<std::string> client_named = {});
  HistogramFamily& histogram(const std::string& name, const std::string& help, std::vector<std::string> label_names,
                             std::vector<double> bounds, std::vector<std::string> client_named = {});

  // `fn` runs at the start of every render() (to copy values owned by other objects into
  // gauges), until the returned hook is destroyed.
  [[nodiscard]] CollectHook on_collect(std::function<void()> fn);

  // The text exposition format 0.0.4, families ordered by name. kRedacted leaves out every
  // client-named label: a family that has any is summed over them (counters, gauges, and
  // histograms bucket by bucket), so its totals stay true, and its HELP line says what was
  // summed.
  std::string render(ClientNames names = ClientNames::kShown);

 private:
  friend class CollectHook;
  struct Entry {
    Type type;
    std::unique_ptr<CounterFamily> counter;
    std::unique_ptr<GaugeFamily> gauge;
    std::unique_ptr<HistogramFamily> histogram;
  };
  Entry& entry(const std::string& name, Type type, const std::vector<std::string>& label_names,
               const std::vector<std::string>& client_named);
  void remove_hook(uint64_t id);

  std::mutex mu_;
  std::map<std::string, Entry> families_;
  std::mutex hooks_mu_;
  std::list<std::pair<uint64_t, std::function<void()>>> hooks_;
  uint64_t next_hook_ = 1;
};

// The process-wide registry that /metrics renders.
Registry& global();

// Exposition helpers (exposed for tests).
std::string escape_label_value(std::string_view v);
std::string escape_help(std::string_view v);
std::string format_value(double v);
bool valid_metric_name(std::string_view name);
bool valid_label_name(std::string_view name);

}  // namespace kib::metrics
