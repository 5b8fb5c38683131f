// [http] metrics_bearer_token_file and metrics_labels: reading the token file, the bearer check,
// and what "auto" decides for a listener.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "http/metrics_access.h"

using namespace kib;
using namespace kib::http;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kib-token-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& content, mode_t mode = 0600) {
    auto p = path / name;
    std::ofstream(p, std::ios::binary) << content;
    ::chmod(p.c_str(), mode);
    return p.string();
  }
};

config::HttpConfig http_config(const std::string& listen, config::HttpConfig::MetricsLabels labels) {
  config::HttpConfig h;
  h.listen = listen;
  h.metrics_labels = labels;
  return h;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(http_metrics_access)

BOOST_AUTO_TEST_CASE(the_token_is_the_file_without_surrounding_whitespace) {
  TempDir d;
  auto t = read_bearer_token_file(d.write("t", "  s3cr3t-T0ken_/+=\n\n"));
  BOOST_REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message));
  BOOST_TEST(*t == "s3cr3t-T0ken_/+=");
}

BOOST_AUTO_TEST_CASE(a_file_that_holds_no_token_is_an_error_naming_the_key_and_the_file) {
  TempDir d;
  struct Case {
    std::string path, why;
  };
  for (const Case& c : {Case{d.write("empty", ""), "empty"}, Case{d.write("blank", " \n\t\n"), "empty"},
                        Case{(d.path / "missing").string(), "No such file"},
                        Case{d.path.string(), "not a regular file"},
                        Case{d.write("big", std::string(kMaxBearerTokenFileBytes + 1, 'a')), "larger than 4096 bytes"},
                        Case{d.write("spaces", "two words\n"), "printable ASCII without spaces"},
                        Case{d.write("binary", std::string("tok\0en", 6)), "printable ASCII without spaces"},
                        Case{d.write("utf8", "t\xc3\xb6ken"), "printable ASCII without spaces"}}) {
    BOOST_TEST_CONTEXT(c.path) {
      auto t = read_bearer_token_file(c.path);
      BOOST_REQUIRE(!t.ok());
      BOOST_TEST(t.error().message.starts_with("[http] metrics_bearer_token_file " + c.path + ": "));
      BOOST_TEST(t.error().message.find(c.why) != std::string::npos, t.error().message);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_file_others_may_read_draws_a_warning_one_only_its_owner_reads_does_not) {
  TempDir d;
  std::string warning = "stale";
  BOOST_REQUIRE(read_bearer_token_file(d.write("private", "tok\n", 0600), &warning).ok());
  BOOST_TEST(warning.empty());
  BOOST_REQUIRE(read_bearer_token_file(d.write("ours", "tok\n", 0640), &warning).ok());
  BOOST_TEST(warning.empty());  // the file's group is the one it was created with: ours
  BOOST_REQUIRE(read_bearer_token_file(d.write("world", "Zq9xW\n", 0644), &warning).ok());
  BOOST_TEST(warning.find("is readable by others (mode 0644)") != std::string::npos, warning);
  BOOST_TEST(warning.find("Zq9xW") == std::string::npos);  // never the token itself
}

BOOST_AUTO_TEST_CASE(bearer_credentials_are_checked_exactly_with_a_case_insensitive_scheme) {
  const std::string token = "s3cr3t";
  auto check = [&](const std::string& header) { return check_bearer(&header, token); };
  BOOST_TEST((check_bearer(nullptr, token) == Bearer::kMissing));
  BOOST_TEST((check("Bearer s3cr3t") == Bearer::kAccepted));
  BOOST_TEST((check("bearer s3cr3t") == Bearer::kAccepted));
  BOOST_TEST((check("BEARER   s3cr3t") == Bearer::kAccepted));
  BOOST_TEST((check("Bearer s3cr3") == Bearer::kWrongToken));
  BOOST_TEST((check("Bearer s3cr3tt") == Bearer::kWrongToken));
  BOOST_TEST((check("Bearer S3CR3T") == Bearer::kWrongToken));
  BOOST_TEST((check("Bearer s3cr3t, Bearer s3cr3t") == Bearer::kWrongToken));  // two headers, joined
  BOOST_TEST((check("Bearer ") == Bearer::kWrongToken));
  BOOST_TEST((check("Bearers3cr3t") == Bearer::kOtherScheme));
  BOOST_TEST((check("Basic s3cr3t") == Bearer::kOtherScheme));
  BOOST_TEST((check("s3cr3t") == Bearer::kOtherScheme));
  BOOST_TEST((check("") == Bearer::kOtherScheme));
  const std::string empty_credential = "Bearer  ";
  BOOST_TEST((check_bearer(&empty_credential, "") == Bearer::kWrongToken));  // no token accepts nothing
  BOOST_TEST(describe(Bearer::kWrongToken) == "wrong bearer token");
}

BOOST_AUTO_TEST_CASE(loopback_is_127_slash_8_the_ipv6_loopback_and_localhost_never_a_wildcard) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "localhost"})
    BOOST_TEST_CONTEXT(h) { BOOST_TEST(is_loopback_host(h)); }
  for (const char* h : {"0.0.0.0", "::", "10.0.0.5", "192.0.2.2", "fe80::1", "::ffff:10.0.0.1", "128.0.0.1", "",
                        "localhost.example.com", "127.0.0.1.example.com"})
    BOOST_TEST_CONTEXT(h) { BOOST_TEST(!is_loopback_host(h)); }
}

BOOST_AUTO_TEST_CASE(auto_names_groups_only_on_loopback_or_behind_a_token) {
  using L = config::HttpConfig::MetricsLabels;
  using metrics::ClientNames;
  BOOST_TEST((metrics_client_names(http_config("127.0.0.1:9644", L::kAuto), false) == ClientNames::kShown));
  BOOST_TEST((metrics_client_names(http_config("[::1]:9644", L::kAuto), false) == ClientNames::kShown));
  BOOST_TEST((metrics_client_names(http_config("0.0.0.0:9644", L::kAuto), false) == ClientNames::kRedacted));
  BOOST_TEST((metrics_client_names(http_config("[::]:9644", L::kAuto), false) == ClientNames::kRedacted));
  BOOST_TEST((metrics_client_names(http_config("10.0.0.5:9644", L::kAuto), false) == ClientNames::kRedacted));
  BOOST_TEST((metrics_client_names(http_config("10.0.0.5:9644", L::kAuto), true) == ClientNames::kShown));
  BOOST_TEST((metrics_client_names(http_config("10.0.0.5:9644", L::kFull), false) == ClientNames::kShown));
  BOOST_TEST((metrics_client_names(http_config("127.0.0.1:9644", L::kRedacted), true) == ClientNames::kRedacted));
}

BOOST_AUTO_TEST_CASE(load_reads_the_token_and_decides_the_labels_with_it) {
  TempDir d;
  auto h = http_config("0.0.0.0:9644", config::HttpConfig::MetricsLabels::kAuto);
  auto open = load_metrics_access(h);
  BOOST_REQUIRE(open.ok());
  BOOST_TEST(open->bearer_token.empty());
  BOOST_TEST((open->names == metrics::ClientNames::kRedacted));
  h.metrics_bearer_token_file = d.write("t", "tok\n");
  auto guarded = load_metrics_access(h);
  BOOST_REQUIRE(guarded.ok());
  BOOST_TEST(guarded->bearer_token == "tok");
  BOOST_TEST((guarded->names == metrics::ClientNames::kShown));
  h.metrics_bearer_token_file = d.write("e", "");
  BOOST_TEST(!load_metrics_access(h).ok());
}

BOOST_AUTO_TEST_SUITE_END()
