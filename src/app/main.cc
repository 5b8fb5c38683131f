// kafka-iggy-bridge: command line entry point. Subcommands: serve (default), check-config,
// migrate, version. See kafka-iggy-bridge(8).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "app/bridge.h"
#include "app/version.h"
#include "common/log.h"
#include "config/config.h"
#include "http/bridge_status.h"
#include "state/state_store.h"

namespace {

// Exit codes (documented in kafka-iggy-bridge(8)).
constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;
constexpr int kExitConfig = 3;
constexpr int kExitState = 4;

struct Overrides {
  std::string listen, iggy_address, state_path, log_level;
};

int load(const std::string& path, const Overrides& o, kib::config::Config& out) {
  auto c = path.empty() ? kib::config::parse_config("", "<defaults>") : kib::config::load_config(path);
  if (!c) {
    std::cerr << c.error().message << "\n";
    return kExitConfig;
  }
  out = *c;
  if (!o.listen.empty()) {
    auto hp = kib::config::parse_host_port(o.listen);
    if (!hp) {
      std::cerr << "--listen: " << hp.error().message << "\n";
      return kExitConfig;
    }
    out.kafka.listeners = {*hp};
  }
  if (!o.iggy_address.empty()) {
    auto hp = kib::config::parse_host_port(o.iggy_address);
    if (!hp) {
      std::cerr << "--iggy-address: " << hp.error().message << "\n";
      return kExitConfig;
    }
    out.iggy.address = *hp;
  }
  if (!o.state_path.empty()) out.state.path = o.state_path;
  if (!o.log_level.empty()) out.log.level = o.log_level;
  // Re-validate what the overrides touched by rendering and parsing again.
  auto again = kib::config::parse_config(kib::config::render_config(out), "<command line>");
  if (!again) {
    std::cerr << again.error().message << "\n";
    return kExitConfig;
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kafka-iggy-bridge: Apache Kafka wire protocol in front of Apache Iggy"};
  app.require_subcommand(0, 1);
  std::string config_path = "/etc/kafka-iggy-bridge/kafka-iggy-bridge.toml";
  Overrides o;
  app.add_option("-c,--config", config_path, "configuration file (TOML)");
  app.add_option("--listen", o.listen, "override [kafka] listeners with one host:port");
  app.add_option("--iggy-address", o.iggy_address, "override [iggy] address");
  app.add_option("--state", o.state_path, "override [state] path");
  app.add_option("--log-level", o.log_level, "override [log] level");

  auto* serve = app.add_subcommand("serve", "run the bridge in the foreground (default)");
  auto* check = app.add_subcommand("check-config", "validate the configuration and print the effective values");
  auto* migrate = app.add_subcommand("migrate", "create or upgrade the state database, then exit");
  auto* status = app.add_subcommand("status", "ask the running bridge ([http] listen) whether it is ready, and summarise its metrics");
  bool status_json = false;
  status->add_flag("--json", status_json, "print JSON instead of a table");
  auto* version = app.add_subcommand("version", "print versions and exit");
  for (auto* sc : {serve, check, migrate, status}) {
    sc->add_option("-c,--config", config_path, "configuration file (TOML)");
    sc->add_option("--listen", o.listen, "override [kafka] listeners");
    sc->add_option("--iggy-address", o.iggy_address, "override [iggy] address");
    sc->add_option("--state", o.state_path, "override [state] path");
    sc->add_option("--log-level", o.log_level, "override [log] level");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  if (version->parsed()) {
    std::printf("kafka-iggy-bridge %s\ntested with Iggy server %s\n", kib::kBridgeVersion, kib::kTestedIggyServer);
    return kExitOk;
  }

  kib::config::Config cfg;
  if (int rc = load(config_path, o, cfg); rc != kExitOk) return rc;

  if (status->parsed()) return kib::http::run_status_command(cfg, status_json, std::cout, std::cerr);

  if (check->parsed()) {
    std::cout << "# " << config_path << ": valid\n" << kib::config::render_config(cfg);
    return kExitOk;
  }

  kib::log::init(cfg.log.level);

  if (migrate->parsed()) {
    auto db = kib::state::open_database(cfg.state.path);
    if (!db) {
      spdlog::error("{}", db.error().message);
      return kExitState;
    }
    auto v = kib::state::migrate(**db);
    if (!v) {
      spdlog::error("{}", v.error().message);
      return kExitState;
    }
    std::printf("%s: schema version %d\n", cfg.state.path.c_str(), *v);
    return kExitOk;
  }

  kib::Bridge bridge(cfg, config_path);
  auto started = bridge.start();
  if (!started) {
    spdlog::critical("cannot start: {}", started.error().message);
    return started.error().domain == kib::ErrorDomain::kState ? kExitState : kExitRuntime;
  }
  return bridge.run() ? kExitOk : kExitRuntime;
}
