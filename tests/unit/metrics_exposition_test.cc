#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <thread>
#include <vector>

#include "metrics/bridge_metrics.h"
#include "metrics/metrics.h"

using namespace kib::metrics;

BOOST_AUTO_TEST_SUITE(metrics_exposition)

BOOST_AUTO_TEST_CASE(counter_without_labels_renders_help_type_and_value) {
  Registry r;
  r.counter("kib_things_total", "Things counted.").get().inc(3);
  BOOST_TEST(r.render() == "# HELP kib_things_total Things counted.\n# TYPE kib_things_total counter\nkib_things_total 3\n");
}

BOOST_AUTO_TEST_CASE(families_render_in_name_order_and_children_in_label_order) {
  Registry r;
  auto& g = r.gauge("b_gauge", "B.", {"x"});
  g.labels({"z"}).set(1);
  g.labels({"a"}).set(-2.5);
  r.counter("a_total", "A.", {"api", "version"}).labels({"Produce", "9"}).inc();
  BOOST_TEST(r.render() ==
             "# HELP a_total A.\n# TYPE a_total counter\na_total{api=\"Produce\",version=\"9\"} 1\n"
             "# HELP b_gauge B.\n# TYPE b_gauge gauge\nb_gauge{x=\"a\"} -2.5\nb_gauge{x=\"z\"} 1\n");
}

BOOST_AUTO_TEST_CASE(label_values_escape_backslash_quote_and_newline) {
  BOOST_TEST(escape_label_value("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
  Registry r;
  r.counter("c_total", "C.", {"client"}).labels({"evil\"}\n"}).inc();
  BOOST_TEST(r.render().find("c_total{client=\"evil\\\"}\\n\"} 1\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(help_text_escapes_backslash_and_newline_but_not_quotes) {
  BOOST_TEST(escape_help("a\\b\n\"c\"") == "a\\\\b\\n\"c\"");
}

BOOST_AUTO_TEST_CASE(values_use_integers_shortest_floats_and_prometheus_infinities) {
  BOOST_TEST(format_value(0) == "0");
  BOOST_TEST(format_value(1234567) == "1234567");
  BOOST_TEST(format_value(0.25) == "0.25");
  BOOST_TEST(format_value(0.1) == "0.1");
  BOOST_TEST(format_value(1e20) == "1e+20");
  BOOST_TEST(format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  BOOST_TEST(format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  BOOST_TEST(format_value(std::numeric_limits<double>::quiet_NaN()) == "NaN");
}

BOOST_AUTO_TEST_CASE(histogram_renders_cumulative_buckets_inf_sum_and_count) {
  Registry r;
  auto& h = r.histogram("lat_seconds", "Latency.", {"api"}, {0.1, 1}).labels({"Fetch"});
  h.observe(0.05);
  h.observe(0.1);  // "le" is inclusive
  h.observe(0.5);
  h.observe(7);
  BOOST_TEST(r.render() ==
             "# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n"
             "lat_seconds_bucket{api=\"Fetch\",le=\"0.1\"} 2\n"
             "lat_seconds_bucket{api=\"Fetch\",le=\"1\"} 3\n"
             "lat_seconds_bucket{api=\"Fetch\",le=\"+Inf\"} 4\n"
             "lat_seconds_sum{api=\"Fetch\"} 7.65\n"
             "lat_seconds_count{api=\"Fetch\"} 4\n");
}

BOOST_AUTO_TEST_CASE(histogram_without_labels_has_only_le) {
  Registry r;
  r.histogram("h", "H.", {}, {1}).get().observe(2);
  BOOST_TEST(r.render().find("h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 1\nh_sum 2\nh_count 1\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(registering_the_same_name_again_returns_the_same_family) {
  Registry r;
  auto& a = r.counter("x_total", "X.", {"k"});
  auto& b = r.counter("x_total", "X.", {"k"});
  BOOST_TEST(&a == &b);
  BOOST_CHECK_THROW(r.gauge("x_total", "X.", {"k"}), std::logic_error);
  BOOST_CHECK_THROW(r.counter("x_total", "X.", {"other"}), std::logic_error);
}

BOOST_AUTO_TEST_CASE(invalid_names_and_label_counts_are_programming_errors) {
  Registry r;
  BOOST_CHECK_THROW(r.counter("1bad", "."), std::logic_error);
  BOOST_CHECK_THROW(r.counter("bad-name", "."), std::logic_error);
  BOOST_CHECK_THROW(r.counter("ok_total", ".", {"__reserved"}), std::logic_error);
  BOOST_CHECK_THROW(r.histogram("h", ".", {"le"}, {1}), std::logic_error);
  BOOST_CHECK_THROW(r.histogram("h2", ".", {}, {2, 1}), std::logic_error);
  auto& f = r.counter("two_total", ".", {"a", "b"});
  BOOST_CHECK_THROW(f.labels({"only-one"}), std::logic_error);
  BOOST_TEST(valid_metric_name("kib:rate_5m"));
  BOOST_TEST(!valid_label_name("a:b"));
}

BOOST_AUTO_TEST_CASE(collect_hooks_run_before_rendering_until_released) {
  Registry r;
  auto& g = r.gauge("conns", "C.").get();
  int runs = 0;
  {
    CollectHook hook = r.on_collect([&] {
      ++runs;
      g.set(42);
    });
    BOOST_TEST(r.render().find("conns 42\n") != std::string::npos);
  }
  g.set(1);
  BOOST_TEST(r.render().find("conns 1\n") != std::string::npos);
  BOOST_TEST(runs == 1);
}

BOOST_AUTO_TEST_CASE(counters_are_exact_under_concurrent_increments) {
  Registry r;
  auto& fam = r.counter("n_total", "N.", {"t"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) fam.labels({"same"}).inc();
    });
  for (auto& t : threads) t.join();
  BOOST_TEST(fam.labels({"same"}).value() == 40000);
}

BOOST_AUTO_TEST_CASE(bridge_metrics_are_registered_with_kib_names) {
  BridgeMetrics& m = bridge_metrics();
  record_frame_received(100);
  record_request("Produce", 9);
  record_request_error("Produce", "UNKNOWN_TOPIC_OR_PARTITION");
  record_response("Produce", std::chrono::milliseconds(3), 50);
  BOOST_TEST(m.requests.labels({"Produce", "9"}).value() >= 1);
  std::string text = global().render();
  for (const char* name :
       {"# TYPE kib_requests_total counter", "# TYPE kib_request_errors_total counter",
        "# TYPE kib_request_duration_seconds histogram", "# TYPE kib_bytes_received_total counter",
        "# TYPE kib_bytes_sent_total counter", "# TYPE kib_connections gauge", "# TYPE kib_connections_refused_total counter",
        "# TYPE kib_iggy_pool_connected gauge", "# TYPE kib_iggy_pool_queued gauge",
        "# TYPE kib_state_write_batches_total counter", "kib_build_info{version=\"", "process_start_time_seconds ",
        "process_resident_memory_bytes ", "kib_request_errors_total{api=\"Produce\",code=\"UNKNOWN_TOPIC_OR_PARTITION\"}"})
    BOOST_TEST_CONTEXT(name) { BOOST_TEST(text.find(name) != std::string::npos); }
}

BOOST_AUTO_TEST_CASE(redacted_exposition_sums_over_client_named_labels_and_keeps_the_others) {
  Registry r;
  auto& lag = r.gauge("lag", "Lag.", {"group", "topic", "partition"}, {"group", "topic"});
  lag.labels({"orders-eu", "payments", "0"}).set(1);
  lag.labels({"fraud-team", "audit-log", "0"}).set(2);
  lag.labels({"orders-eu", "payments", "1"}).set(4);
  r.counter("req_total", "Requests.", {"api", "client"}, {"client"}).labels({"Fetch", "acme-app"}).inc(3);
  r.counter("req_total", "Requests.", {"api", "client"}, {"client"}).labels({"Fetch", "other-app"}).inc(2);
  r.gauge("members", "Members.", {"group"}, {"group"}).labels({"orders-eu"}).set(2);
  r.gauge("members", "Members.", {"group"}, {"group"}).labels({"fraud-team"}).set(1);
  r.gauge("plain", "Plain.", {"state"}).labels({"Stable"}).set(7);

  const std::string shown = r.render(), redacted = r.render(ClientNames::kRedacted);
  BOOST_TEST(shown == r.render(ClientNames::kShown));
  BOOST_TEST(shown.find("lag{group=\"fraud-team\",topic=\"audit-log\",partition=\"0\"} 2\n") != std::string::npos);
  BOOST_TEST(redacted ==
             "# HELP lag Lag. Summed over group and topic, which [http] metrics_labels leaves out.\n"
             "# TYPE lag gauge\nlag{partition=\"0\"} 3\nlag{partition=\"1\"} 4\n"
             "# HELP members Members. Summed over group, which [http] metrics_labels leaves out.\n"
             "# TYPE members gauge\nmembers 3\n"
             "# HELP plain Plain.\n# TYPE plain gauge\nplain{state=\"Stable\"} 7\n"
             "# HELP req_total Requests. Summed over client, which [http] metrics_labels leaves out.\n"
             "# TYPE req_total counter\nreq_total{api=\"Fetch\"} 5\n");
  for (const char* name : {"orders-eu", "fraud-team", "payments", "audit-log", "acme-app", "other-app"})
    BOOST_TEST_CONTEXT(name) { BOOST_TEST(redacted.find(name) == std::string::npos); }
}

BOOST_AUTO_TEST_CASE(redacted_histograms_add_up_bucket_by_bucket) {
  Registry r;
  auto& h = r.histogram("wait_seconds", "Wait.", {"api", "group"}, {0.1, 1}, {"group"});
  h.labels({"JoinGroup", "g1"}).observe(0.05);
  h.labels({"JoinGroup", "g2"}).observe(0.5);
  h.labels({"JoinGroup", "g2"}).observe(5);
  BOOST_TEST(r.render(ClientNames::kRedacted) ==
             "# HELP wait_seconds Wait. Summed over group, which [http] metrics_labels leaves out.\n"
             "# TYPE wait_seconds histogram\n"
             "wait_seconds_bucket{api=\"JoinGroup\",le=\"0.1\"} 1\n"
             "wait_seconds_bucket{api=\"JoinGroup\",le=\"1\"} 2\n"
             "wait_seconds_bucket{api=\"JoinGroup\",le=\"+Inf\"} 3\n"
             "wait_seconds_sum{api=\"JoinGroup\"} 5.55\n"
             "wait_seconds_count{api=\"JoinGroup\"} 3\n");
}

BOOST_AUTO_TEST_CASE(client_named_labels_must_be_labels_of_the_family_in_order) {
  Registry r;
  BOOST_CHECK_THROW(r.gauge("a", ".", {"group"}, {"topic"}), std::logic_error);
  BOOST_CHECK_THROW(r.gauge("b", ".", {"group", "topic"}, {"topic", "group"}), std::logic_error);
  BOOST_CHECK_THROW(r.gauge("c", ".", {"group"}, {"group", "group"}), std::logic_error);
  r.gauge("d", ".", {"group"}, {"group"});
  BOOST_CHECK_THROW(r.gauge("d", ".", {"group"}), std::logic_error);  // registered as client-named
  BOOST_CHECK_NO_THROW(r.gauge("d", ".", {"group"}, {"group"}));
}

BOOST_AUTO_TEST_CASE(the_bridge_group_families_name_no_group_or_topic_when_redacted) {
  BridgeMetrics& m = bridge_metrics();
  m.group_members.labels({"secret-group"}).set(2);
  m.group_lag.labels({"secret-group", "secret-topic", "0"}).set(5);
  m.group_lag.labels({"other-secret-group", "secret-topic", "1"}).set(6);
  m.group_lag_sum.labels({"secret-group"}).set(5);
  m.group_lag_sum.labels({"other-secret-group"}).set(6);
  const std::string redacted = global().render(ClientNames::kRedacted), shown = global().render();
  m.group_members.clear();
  m.group_lag.clear();
  m.group_lag_sum.clear();
  BOOST_TEST(redacted.find("secret") == std::string::npos);
  BOOST_TEST(redacted.find("\nkib_group_members 2\n") != std::string::npos);
  BOOST_TEST(redacted.find("\nkib_group_lag 11\n") != std::string::npos);  // the partition goes with its topic
  BOOST_TEST(redacted.find("\nkib_group_lag_sum 11\n") != std::string::npos);
  BOOST_TEST(shown.find("kib_group_lag{group=\"secret-group\",topic=\"secret-topic\",partition=\"0\"} 5\n") !=
             std::string::npos);
  // Every other family's labels are the bridge's own words: the same either way.
  BOOST_TEST(redacted.find("kib_http_requests_refused_total{reason=\"unauthorized\"}") != std::string::npos);
  BOOST_TEST(redacted.find("kib_build_info{version=\"") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
