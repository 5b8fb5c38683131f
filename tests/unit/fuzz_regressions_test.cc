// Replays the fuzz targets (tests/fuzz/targets) built with g++: every seed, every regression
// input (a crash the fuzzers found, kept after its fix) and the golden captures each target is
// seeded with. An input fails when its target's check fails or an exception escapes the target.
// Inputs under tests/fuzz/open/ are known, unfixed findings and are not replayed.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/targets/fuzz_targets.h"
#include "server/handlers/registry.h"

namespace fs = std::filesystem;

namespace kib::fuzz {
struct FuzzFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const char* where, const char* what) { throw FuzzFailure(std::string(where) + ": " + what); }
}  // namespace kib::fuzz

namespace {

fs::path repo_root() {
  for (fs::path p : {fs::current_path(), fs::path(__FILE__).parent_path().parent_path().parent_path()})
    if (fs::exists(p / "tests/fuzz/targets/registry.cc")) return p;
  return fs::current_path();
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "README.md") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The golden captures tools/fuzz-run seeds a target with (keep the two lists in step).
std::vector<fs::path> golden_for(const std::string& target, const fs::path& root) {
  std::vector<fs::path> out;
  auto add = [&](const fs::path& dir, const std::string& ext) {
    for (const auto& p : files_in(dir))
      if (p.extension() == ext) out.push_back(p);
  };
  if (target == "kafka_request") add(root / "tests/golden", ".bin");
  if (target == "record_batch" || target == "produce_mapping") add(root / "tests/golden/records", ".bin");
  if (target == "config_toml") add(root / "etc", ".toml");
  return out;
}

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fuzz_regressions)

BOOST_AUTO_TEST_CASE(every_seed_regression_and_golden_input_passes_its_target) {
  const fs::path root = repo_root();
  BOOST_TEST_REQUIRE(fs::exists(root / "tests/fuzz/targets/registry.cc"), "run from the repository root");
  size_t replayed = 0;
  for (const kib::fuzz::Target& t : kib::fuzz::targets()) {
    std::vector<fs::path> inputs = files_in(root / "tests/fuzz/seeds" / t.name);
    for (auto& p : files_in(root / "tests/fuzz/regressions" / t.name)) inputs.push_back(p);
    for (auto& p : golden_for(t.name, root)) inputs.push_back(p);
    BOOST_TEST(!inputs.empty(), t.name << " has no seed");
    for (const fs::path& p : inputs) {
      const std::vector<uint8_t> data = read_all(p);
      try {
        t.fn(data.data(), data.size());
      } catch (const std::exception& e) {
        BOOST_ERROR(t.name << " on " << p.string() << ": " << e.what());
      }
      ++replayed;
    }
  }
  BOOST_TEST_MESSAGE("fuzz inputs replayed: " << replayed);
  BOOST_TEST(replayed > 0u);
}

// Every seed and regression folder names a target (a typo would silently replay nothing).
BOOST_AUTO_TEST_CASE(input_folders_name_existing_targets) {
  std::set<std::string> names;
  for (const auto& t : kib::fuzz::targets()) names.insert(t.name);
  const fs::path root = repo_root();
  for (const char* kind : {"seeds", "regressions", "open"}) {
    const fs::path dir = root / "tests/fuzz" / kind;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory()) BOOST_TEST(names.count(e.path().filename().string()) == 1u, e.path().string());
  }
}

// fuzz_kafka_request decodes exactly the APIs and versions the bridge serves.
BOOST_AUTO_TEST_CASE(request_target_covers_the_handler_registry) {
  std::set<std::array<int16_t, 3>> fuzzed, served;
  for (const auto& v : kib::fuzz::fuzz_served_versions()) fuzzed.insert(v);
  for (const auto& h : kib::kafka::handler_registry()) served.insert({h.api_key, h.min_version, h.max_version});
  BOOST_TEST((fuzzed == served), "tests/fuzz/targets/kafka_request.cc kServed differs from the handler registry");
}

BOOST_AUTO_TEST_SUITE_END()
