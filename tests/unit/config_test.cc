#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>

#include "config/config.h"
#include "net/tcp_server.h"

using namespace kib::config;

namespace kib::config {
std::ostream& operator<<(std::ostream& os, SecurityProtocol p) { return os << security_protocol_name(p); }
}  // namespace kib::config

BOOST_AUTO_TEST_SUITE(configuration)

BOOST_AUTO_TEST_CASE(empty_file_gives_documented_defaults) {
  auto c = parse_config("", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->kafka.listeners.at(0).str() == "PLAINTEXT://127.0.0.1:9092");
  BOOST_TEST(c->kafka.listeners.at(0).protocol == SecurityProtocol::kPlaintext);
  BOOST_TEST(c->iggy.address.str() == "127.0.0.1:8090");
  BOOST_TEST(c->iggy.stream == "kafka");
  BOOST_TEST(c->kafka.auto_create_topics);
}

BOOST_AUTO_TEST_CASE(shipped_default_file_parses_and_equals_builtin_defaults) {
  std::ifstream in("etc/kafka-iggy-bridge.toml");
  BOOST_REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  auto c = parse_config(ss.str(), "etc/kafka-iggy-bridge.toml");
  BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error().message));
  auto defaults = parse_config("", "x");
  BOOST_REQUIRE(defaults.ok());
  BOOST_TEST(render_config(*c) == render_config(*defaults));
}

BOOST_AUTO_TEST_CASE(the_compaction_stream_follows_the_iggy_stream_unless_given) {
  auto c = parse_config("[iggy]\nstream = \"orders\"\n", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->compaction.stream == "orders-compacted");
  auto given = parse_config("[iggy]\nstream = \"orders\"\n[compaction]\nstream = \"cleaned\"\n", "t.toml");
  BOOST_REQUIRE(given.ok());
  BOOST_TEST(given->compaction.stream == "cleaned");
  auto same = parse_config("[iggy]\nstream = \"orders\"\n[compaction]\nstream = \"orders\"\n", "t.toml");
  BOOST_REQUIRE(!same.ok());
  BOOST_TEST(same.error().message.find("[compaction] stream: must differ from [iggy] stream") != std::string::npos);
  auto d = parse_config("", "t.toml");
  BOOST_REQUIRE(d.ok());
  BOOST_TEST(d->compaction.stream == "kafka-compacted");
  BOOST_TEST(d->compaction.enabled);
  BOOST_TEST(d->compaction.threads == 1u);
  BOOST_TEST(d->compaction.io_bytes_per_second == 0u);
  BOOST_TEST(d->compaction.dedupe_buffer_bytes == 128u << 20);
  BOOST_TEST(d->compaction.backoff_ms == 15000u);
  BOOST_TEST(d->compaction.iggy_consumer_id == 2131230u);
  auto bad = parse_config("[compaction]\ndedupe_buffer_bytes = 1024\n", "t.toml");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.error().message.find("dedupe_buffer_bytes") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(unknown_key_is_rejected_naming_the_key) {
  auto c = parse_config("[kafka]\nlistenrs = [\"1.2.3.4:1\"]\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().message.find("[kafka] listenrs: unknown key") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(unknown_section_is_rejected) {
  auto c = parse_config("[kafak]\nx = 1\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().message.find("kafak") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(out_of_range_value_names_key_and_bounds) {
  auto c = parse_config("[kafka]\ndefault_partitions = 0\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().message.find("default_partitions: must be between 1 and 1000, got 0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(max_inflight_request_bytes_is_a_limits_key_with_a_floor) {
  auto c = parse_config("[limits]\nmax_inflight_request_bytes = 2048\nmax_frame_bytes = 2048\n", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->limits.max_inflight_request_bytes == 2048u);
  BOOST_TEST(render_config(*c).find("max_inflight_request_bytes = 2048") != std::string::npos);
  auto low = parse_config("[limits]\nmax_inflight_request_bytes = 10\n", "t.toml");
  BOOST_REQUIRE(!low.ok());
  BOOST_TEST(low.error().message.find("max_inflight_request_bytes: must be between 1024") != std::string::npos);
}

// The pipelining bound is smaller than the largest frame by default (16 vs 64 MiB): a frame above
// it is read once the requests before it are answered (tcp_server_test), so both are accepted.
BOOST_AUTO_TEST_CASE(max_frame_bytes_may_exceed_max_inflight_request_bytes) {
  auto d = parse_config("", "t.toml");
  BOOST_REQUIRE(d.ok());
  BOOST_TEST(d->limits.max_frame_bytes == 64u << 20);
  BOOST_TEST(d->limits.max_inflight_request_bytes == 16u << 20);
  auto c = parse_config("[limits]\nmax_inflight_request_bytes = 1048576\nmax_frame_bytes = 134217728\n", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->limits.max_frame_bytes == 128u << 20);
  BOOST_TEST(c->limits.max_inflight_request_bytes == 1u << 20);
}

BOOST_AUTO_TEST_CASE(memory_trim_keys_are_limits_keys_and_zero_turns_the_checks_off) {
  auto d = parse_config("", "t.toml");
  BOOST_REQUIRE(d.ok());
  BOOST_TEST(d->limits.memory_trim_interval_ms == 1000u);
  BOOST_TEST(d->limits.memory_trim_min_free_bytes == 16u << 20);
  auto c = parse_config("[limits]\nmemory_trim_interval_ms = 0\nmemory_trim_min_free_bytes = 1048576\n", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->limits.memory_trim_interval_ms == 0u);
  BOOST_TEST(c->limits.memory_trim_min_free_bytes == 1u << 20);
  BOOST_TEST(render_config(*c).find("memory_trim_interval_ms = 0\nmemory_trim_min_free_bytes = 1048576") !=
             std::string::npos);
  BOOST_TEST(!parse_config("[limits]\nmemory_trim_interval_ms = 3600001\n", "t.toml").ok());
}

BOOST_AUTO_TEST_CASE(frame_read_timeout_and_per_ip_connection_limit_are_limits_keys) {
  auto d = parse_config("", "t.toml");
  BOOST_REQUIRE(d.ok());
  BOOST_TEST(d->limits.frame_read_timeout_ms == 30000u);
  BOOST_TEST(d->limits.max_connections_per_ip == 1000u);
  auto c = parse_config("[limits]\nframe_read_timeout_ms = 0\nmax_connections_per_ip = 7\n", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->limits.frame_read_timeout_ms == 0u);
  BOOST_TEST(c->limits.max_connections_per_ip == 7u);
  std::string r = render_config(*c);
  BOOST_TEST(r.find("frame_read_timeout_ms = 0\n") != std::string::npos);
  BOOST_TEST(r.find("max_connections_per_ip = 7\n") != std::string::npos);
  auto bad = parse_config("[limits]\nmax_connections_per_ip = 0\nframe_read_timeout_ms = -1\n", "t.toml");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.error().message.find("max_connections_per_ip: must be between 1") != std::string::npos);
  BOOST_TEST(bad.error().message.find("frame_read_timeout_ms: must be between 0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(fetch_and_iggy_queue_bounds_are_limits_keys_with_kafka_defaults) {
  auto d = parse_config("", "t.toml");
  BOOST_REQUIRE(d.ok());
  BOOST_TEST(d->limits.fetch_max_bytes == 57671680u);  // Kafka's broker fetch.max.bytes (55 MiB)
  BOOST_TEST(d->limits.fetch_max_wait_ms == 30000u);
  BOOST_TEST(d->limits.max_iggy_queue_per_connection == 10000u);
  auto c = parse_config("[limits]\nfetch_max_bytes = 65536\nfetch_max_wait_ms = 1500\n"
                        "max_iggy_queue_per_connection = 64\n",
                        "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->limits.fetch_max_bytes == 65536u);
  BOOST_TEST(c->limits.fetch_max_wait_ms == 1500u);
  BOOST_TEST(c->limits.max_iggy_queue_per_connection == 64u);
  const std::string r = render_config(*c);
  BOOST_TEST(r.find("fetch_max_bytes = 65536") != std::string::npos);
  BOOST_TEST(r.find("fetch_max_wait_ms = 1500") != std::string::npos);
  BOOST_TEST(r.find("max_iggy_queue_per_connection = 64") != std::string::npos);
  BOOST_TEST(!parse_config("[limits]\nfetch_max_bytes = 2147483648\n", "t.toml").ok());
  BOOST_TEST(!parse_config("[limits]\nmax_iggy_queue_per_connection = 0\n", "t.toml").ok());
}

BOOST_AUTO_TEST_CASE(failed_authentication_delay_is_a_limits_key_with_kafkas_default) {
  auto d = parse_config("", "t.toml");
  BOOST_REQUIRE(d.ok());
  BOOST_TEST(d->limits.failed_authentication_delay_ms == 100u);  // connection.failed.authentication.delay.ms
  auto c = parse_config("[limits]\nfailed_authentication_delay_ms = 0\n", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->limits.failed_authentication_delay_ms == 0u);
  BOOST_TEST(render_config(*c).find("failed_authentication_delay_ms = 0") != std::string::npos);
  BOOST_TEST(kib::net::server_limits(c->limits).failed_authentication_delay_ms == 0u);
  auto high = parse_config("[limits]\nfailed_authentication_delay_ms = 60001\n", "t.toml");
  BOOST_REQUIRE(!high.ok());
  BOOST_TEST(high.error().message.find("failed_authentication_delay_ms") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(produced_batch_cache_is_a_limits_key_that_zero_turns_off) {
  auto d = parse_config("", "t.toml");
  BOOST_REQUIRE(d.ok());
  BOOST_TEST(d->limits.produced_batch_cache_bytes == 32u << 20);
  auto c = parse_config("[limits]\nproduced_batch_cache_bytes = 0\n", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->limits.produced_batch_cache_bytes == 0u);
  BOOST_TEST(render_config(*c).find("produced_batch_cache_bytes = 0") != std::string::npos);
  BOOST_TEST(!parse_config("[limits]\nproduced_batch_cache_bytes = -1\n", "t.toml").ok());
}

BOOST_AUTO_TEST_CASE(wrong_type_and_bad_address_are_rejected_together) {
  auto c = parse_config("[iggy]\naddress = \"nohost\"\npool_size = \"four\"\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().message.find("[iggy] address") != std::string::npos);
  BOOST_TEST(c.error().message.find("[iggy] pool_size: expected an integer") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(syntax_error_reports_line) {
  auto c = parse_config("[kafka\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().message.find("t.toml:1:") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(rendered_config_never_contains_secrets) {
  auto c = parse_config("[iggy]\npassword = \"s3cret-pw\"\npersonal_access_token = \"tok123\"\n", "t.toml");
  BOOST_REQUIRE(c.ok());
  std::string r = render_config(*c);
  BOOST_TEST(r.find("s3cret") == std::string::npos);
  BOOST_TEST(r.find("tok123") == std::string::npos);
  BOOST_TEST(parse_config(r, "rendered").ok());
}

BOOST_AUTO_TEST_CASE(advertised_address_defaults_to_first_listener) {
  auto c = parse_config("[kafka]\nlisteners=[\"0.0.0.0:9999\"]\nadvertised_host=\"bridge.local\"\n", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->advertised().str() == "bridge.local:9999");
}

BOOST_AUTO_TEST_CASE(listeners_take_kafkas_name_and_protocol_forms) {
  auto c = parse_config(
      "[kafka]\nlisteners=[\"INTERNAL://127.0.0.1:9092\", \"SASL_SSL://0.0.0.0:9093\", \"SSL://0.0.0.0:9094\"]\n"
      "listener_security_protocol_map=[\"INTERNAL:PLAINTEXT\"]\n"
      "advertised_listeners=[\"SASL_SSL://kafka.example.com:19093\"]\nadvertised_host=\"ignored.for.others\"\n"
      "[tls]\ncertificate_file=\"/etc/b.crt\"\nkey_file=\"/etc/b.key\"\n",
      "t.toml");
  BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error().message));
  const auto& l = c->kafka.listeners;
  BOOST_REQUIRE(l.size() == 3u);
  BOOST_TEST(l[0].name == "INTERNAL");
  BOOST_TEST(l[0].protocol == SecurityProtocol::kPlaintext);
  BOOST_TEST(l[1].protocol == SecurityProtocol::kSaslSsl);
  BOOST_TEST(l[2].protocol == SecurityProtocol::kSsl);
  // Each listener advertises its own address: the first one with advertised_host applied, one
  // with an advertised_listeners entry that entry, the others their bind address.
  BOOST_TEST(c->advertised(0).str() == "ignored.for.others:9092");
  BOOST_TEST(c->advertised(1).str() == "kafka.example.com:19093");
  BOOST_TEST(c->advertised(2).str() == "0.0.0.0:9094");
  // What check-config prints parses back to the same listeners.
  auto again = parse_config(render_config(*c), "rendered");
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(render_config(*again) == render_config(*c));
  BOOST_TEST(again->kafka.listeners[0].protocol == SecurityProtocol::kPlaintext);
}

BOOST_AUTO_TEST_CASE(listener_errors_name_the_key_and_the_entry) {
  auto err = [](const std::string& kafka) {
    auto c = parse_config("[kafka]\n" + kafka + "\n", "t.toml");
    return c.ok() ? std::string() : c.error().message;
  };
  BOOST_TEST(err("listeners=[\"EXTERNAL://0.0.0.0:9093\"]").find(
                 "[kafka] listeners: listener EXTERNAL is not a security protocol") != std::string::npos);
  BOOST_TEST(err("listeners=[\"SSL://0.0.0.0:9093\", \"SSL://0.0.0.0:9094\"]").find("used twice") != std::string::npos);
  BOOST_TEST(err("listeners=[\"ssl://0.0.0.0:9093\"]").find("A-Z, 0-9 and _") != std::string::npos);
  BOOST_TEST(err("listener_security_protocol_map=[\"X:TLS\"]").find("[kafka] listener_security_protocol_map") !=
             std::string::npos);
  BOOST_TEST(err("advertised_listeners=[\"SSL://a:1\"]").find("no listener is named SSL") != std::string::npos);
  BOOST_TEST(err("listeners=[\"127.0.0.1:1\", \"127.0.0.1:2\"]\nadvertised_listeners=[\"PLAINTEXT://a:1\"]")
                 .find("names 2 listeners") != std::string::npos);
  BOOST_TEST(err("listeners=[\"127.0.0.1:1\", \"PLAINTEXT://127.0.0.1:2\"]").find("cannot both be given") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(tls_defaults_are_kafkas) {
  auto c = parse_config("", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->tls.certificate_file.empty());
  BOOST_TEST(c->tls.ca_file.empty());
  BOOST_TEST(client_auth_name(c->tls.client_auth) == "none");
  BOOST_TEST((c->tls.protocols == std::vector<std::string>{"TLSv1.2", "TLSv1.3"}));
  BOOST_TEST(c->tls.cipher_list.empty());
  BOOST_TEST(c->tls.ciphersuites.empty());
  BOOST_TEST(c->tls.principal_mapping_rules == "DEFAULT");
}

BOOST_AUTO_TEST_CASE(tls_keys_parse_and_render_back_with_the_key_password_redacted) {
  auto c = parse_config(
      "[kafka]\nlisteners=[\"SSL://0.0.0.0:9093\"]\n"
      "[tls]\ncertificate_file=\"/etc/kib/server.pem\"\nkey_file=\"/etc/kib/server.key\"\nkey_password=\"k3y-pw\"\n"
      "ca_file=\"/etc/kib/ca.pem\"\nclient_auth=\"required\"\nprotocols=[\"TLSv1.3\"]\n"
      "cipher_list=\"ECDHE+AESGCM\"\nciphersuites=\"TLS_AES_256_GCM_SHA384\"\n"
      "principal_mapping_rules=\"RULE:^CN=([^,]+),.*$/$1/L, DEFAULT\"\n",
      "t.toml");
  BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error().message));
  BOOST_TEST(c->tls.certificate_file == "/etc/kib/server.pem");
  BOOST_TEST(c->tls.key_password == "k3y-pw");
  BOOST_TEST(client_auth_name(c->tls.client_auth) == "required");
  BOOST_TEST((c->tls.protocols == std::vector<std::string>{"TLSv1.3"}));
  BOOST_TEST(c->tls.principal_mapping_rules == "RULE:^CN=([^,]+),.*$/$1/L, DEFAULT");
  std::string r = render_config(*c);
  BOOST_TEST(r.find("k3y-pw") == std::string::npos);
  BOOST_TEST(r.find("key_password = \"<redacted>\"") != std::string::npos);
  auto again = parse_config(r, "rendered");
  BOOST_REQUIRE_MESSAGE(again.ok(), (again.ok() ? std::string() : again.error().message));
  BOOST_TEST(again->tls.principal_mapping_rules == c->tls.principal_mapping_rules);
  BOOST_TEST(again->tls.ca_file == c->tls.ca_file);
  BOOST_TEST((again->tls.protocols == c->tls.protocols));
}

BOOST_AUTO_TEST_CASE(tls_errors_name_the_key) {
  auto err = [](const std::string& toml) {
    auto c = parse_config(toml, "t.toml");
    return c.ok() ? std::string() : c.error().message;
  };
  const std::string ssl = "[kafka]\nlisteners=[\"PLAINTEXT://127.0.0.1:9092\", \"SASL_SSL://0.0.0.0:9093\"]\n";
  const std::string files = "[tls]\ncertificate_file=\"/c\"\nkey_file=\"/k\"\n";
  BOOST_TEST(err(ssl).find("[tls] certificate_file: required by listener SASL_SSL://0.0.0.0:9093 (SASL_SSL)") !=
             std::string::npos);
  BOOST_TEST(err(ssl).find("[tls] key_file: required by listener") != std::string::npos);
  BOOST_TEST(err(ssl + files).empty());
  // A plaintext-only bridge needs no files.
  BOOST_TEST(err("[kafka]\nlisteners=[\"SASL_PLAINTEXT://0.0.0.0:9093\"]\n").empty());
  BOOST_TEST(err(ssl + files + "client_auth=\"want\"\n").find("[tls] client_auth: must be one of none, requested, required") !=
             std::string::npos);
  BOOST_TEST(err(ssl + files + "client_auth=\"requested\"\n").find("[tls] ca_file: required when client_auth") !=
             std::string::npos);
  BOOST_TEST(err(ssl + files + "client_auth=\"required\"\nca_file=\"/ca\"\n").empty());
  BOOST_TEST(err(ssl + files + "protocols=[\"TLSv1.1\"]\n").find("[tls] protocols") != std::string::npos);
  BOOST_TEST(err(ssl + files + "protocols=[]\n").find("[tls] protocols") != std::string::npos);
  BOOST_TEST(err(ssl + files + "protocols=[\"TLSv1.3\", \"TLSv1.3\"]\n").find("[tls] protocols") != std::string::npos);
  BOOST_TEST(err(ssl + files + "principal_mapping_rules=\"DEFAULT/L\"\n")
                 .find("[tls] principal_mapping_rules: invalid rule: `DEFAULT/L`") != std::string::npos);
  BOOST_TEST(err(ssl + files + "principal_mapping_rules=\"RULE:^CN=(.*$/$1/\"\n").find("[tls] principal_mapping_rules") !=
             std::string::npos);
  BOOST_TEST(err(ssl + files + "cert_file=\"/x\"\n").find("[tls] cert_file: unknown key") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(ipv6_listener_in_brackets) {
  auto hp = parse_host_port("[::1]:9092");
  BOOST_REQUIRE(hp.ok());
  BOOST_TEST(hp->host == "::1");
  BOOST_TEST(hp->port == 9092);
}

BOOST_AUTO_TEST_CASE(sasl_section_defaults_are_kafkas) {
  auto c = parse_config("", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST((c->sasl.enabled_mechanisms == std::vector<std::string>{"SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"}));
  BOOST_TEST(c->sasl.connections_max_reauth_ms == 0u);
  BOOST_TEST(c->sasl.scram_iterations == 8192);
}

BOOST_AUTO_TEST_CASE(sasl_section_parses_and_renders_back) {
  auto c = parse_config(
      "[sasl]\nenabled_mechanisms = [\"SCRAM-SHA-512\", \"PLAIN\"]\nconnections_max_reauth_ms = 3600000\n"
      "scram_iterations = 16384\n",
      "t.toml");
  BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error().message));
  BOOST_TEST((c->sasl.enabled_mechanisms == std::vector<std::string>{"SCRAM-SHA-512", "PLAIN"}));
  BOOST_TEST(c->sasl.connections_max_reauth_ms == 3600000u);
  BOOST_TEST(c->sasl.scram_iterations == 16384);
  auto again = parse_config(render_config(*c), "rendered");
  BOOST_REQUIRE(again.ok());
  BOOST_TEST((again->sasl.enabled_mechanisms == c->sasl.enabled_mechanisms));
  BOOST_TEST(again->sasl.connections_max_reauth_ms == 3600000u);
  BOOST_TEST(again->sasl.scram_iterations == 16384);
}

BOOST_AUTO_TEST_CASE(sasl_section_errors_name_the_key) {
  auto error = [](const std::string& body) {
    auto c = parse_config("[sasl]\n" + body + "\n", "t.toml");
    BOOST_REQUIRE(!c.ok());
    return c.error().message;
  };
  for (std::string bad : {"enabled_mechanisms = []", "enabled_mechanisms = [\"GSSAPI\"]",
                          "enabled_mechanisms = [\"PLAIN\", \"PLAIN\"]", "enabled_mechanisms = \"PLAIN\"",
                          "enabled_mechanisms = [1]", "enabled_mechanisms = [\"scram-sha-256\"]"})
    BOOST_TEST(error(bad).find("[sasl] enabled_mechanisms: expected a non-empty array of distinct mechanisms") !=
                   std::string::npos,
               bad);
  BOOST_TEST(error("scram_iterations = 4095").find("[sasl] scram_iterations: must be between 4096 and 16384") !=
             std::string::npos);
  BOOST_TEST(error("scram_iterations = 16385").find("[sasl] scram_iterations") != std::string::npos);
  BOOST_TEST(error("connections_max_reauth_ms = -1").find("[sasl] connections_max_reauth_ms") != std::string::npos);
  BOOST_TEST(error("mechanisms = [\"PLAIN\"]").find("[sasl] mechanisms: unknown key") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(configuration_authorization)

BOOST_AUTO_TEST_CASE(authorization_is_off_by_default_with_kafkas_defaults) {
  auto c = parse_config("", "t.toml");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(!c->authorization.enabled);
  BOOST_TEST(c->authorization.super_users.empty());
  BOOST_TEST(!c->authorization.allow_everyone_if_no_acl_found);
  BOOST_TEST(c->authorization.max_acls == 100000u);
  BOOST_TEST(c->authorization.max_acl_filters_per_request == 1000u);
}

BOOST_AUTO_TEST_CASE(authorization_keys_parse_and_render) {
  auto c = parse_config(
      "[authorization]\nenabled = true\nsuper_users = [\"User:admin\", \"User:CN=ops,O=x\"]\n"
      "allow_everyone_if_no_acl_found = true\nmax_acls = 50\nmax_acl_filters_per_request = 7\n",
      "t.toml");
  BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error().message));
  BOOST_TEST(c->authorization.enabled);
  BOOST_TEST(c->authorization.super_users.size() == 2u);
  BOOST_TEST(c->authorization.super_users[1] == "User:CN=ops,O=x");
  BOOST_TEST(c->authorization.allow_everyone_if_no_acl_found);
  BOOST_TEST(c->authorization.max_acls == 50u);
  BOOST_TEST(c->authorization.max_acl_filters_per_request == 7u);
  // What check-config prints reads back as the same configuration.
  auto again = parse_config(render_config(*c), "rendered");
  BOOST_REQUIRE_MESSAGE(again.ok(), (again.ok() ? std::string() : again.error().message));
  BOOST_TEST(render_config(*again) == render_config(*c));
  BOOST_TEST(again->authorization.super_users == c->authorization.super_users);
}

BOOST_AUTO_TEST_CASE(super_users_must_be_principals) {
  auto c = parse_config("[authorization]\nsuper_users = [\"admin\"]\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().message.find("[authorization] super_users: \"admin\" is not a principal") != std::string::npos);
  c = parse_config("[authorization]\nsuper_users = \"User:admin\"\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().message.find("[authorization] super_users: expected an array") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(authorization_limits_are_bounded_and_unknown_keys_refused) {
  auto c = parse_config("[authorization]\nmax_acls = 0\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().message.find("[authorization] max_acls: must be between 1") != std::string::npos);
  c = parse_config("[authorization]\nmax_acl_filters_per_request = 0\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  c = parse_config("[authorization]\nauthorizer_class_name = \"x\"\n", "t.toml");
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().message.find("[authorization] authorizer_class_name: unknown key") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
