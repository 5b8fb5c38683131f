// kafka-iggy-bridge: command line entry point. Subcommands: serve (default), check-config,
// migrate, status, topics, groups, offsets, users, version. See kafka-iggy-bridge(8).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "admin/admin_commands.h"
#include "admin/principal_commands.h"
#include "app/bridge.h"
#include "common/log.h"
#include "common/version.h"
#include "config/config.h"
#include "http/bridge_status.h"
#include "http/metrics_access.h"
#include "net/tls.h"
#include "state/state_store.h"

namespace {

// Exit codes (documented in kafka-iggy-bridge(8)).
constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;
constexpr int kExitConfig = 3;
constexpr int kExitState = 4;
static_assert(kib::Bridge::kExitIggyUnsupported == 5);  // the Iggy server's protocol is not supported

constexpr const char* kDefaultConfig = "/etc/kafka-iggy-bridge/kafka-iggy-bridge.toml";

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
    out.kafka.listeners = {kib::config::ListenerConfig{"PLAINTEXT", kib::config::SecurityProtocol::kPlaintext, *hp, std::nullopt}};
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

// The command line as parsed: which subcommand, and its options.
struct Cli {
  CLI::App app{"kafka-iggy-bridge: Apache Kafka wire protocol in front of Apache Iggy"};
  std::string config_path = kDefaultConfig;
  Overrides o;
  bool json = false;
  std::string bootstrap;
  CLI::App *serve, *check, *migrate, *status, *version;
  CLI::App *topics, *topics_list, *groups, *groups_list, *groups_describe;
  std::vector<std::string> describe_ids;
  CLI::App *offsets, *offsets_import, *offsets_export;
  kib::admin::ImportOptions import_opts;
  std::string import_format = "auto", import_group;
  kib::admin::ExportOptions export_opts;
  std::string iggy_group, iggy_consumer;
  CLI::App *principals, *principals_map, *principals_list, *principals_unmap;
  kib::admin::PrincipalMapOptions map_opts;
  std::string unmap_principal;
  CLI::App *users, *users_add, *users_list, *users_delete;
  kib::admin::UserOptions user_opts;

  Cli();
  // The admin subcommands run on operators' machines too: without the installed file and
  // without -c they use the defaults (and --bootstrap-server).
  bool runs_anywhere() const {
    return topics->parsed() || groups->parsed() || offsets->parsed() || users->parsed() || principals->parsed();
  }

 private:
  void add_inspection();
  void add_offsets();
  void add_principals();
  void add_users();
  void add_common_options();
};

Cli::Cli() {
  app.require_subcommand(0, 1);
  app.add_option("-c,--config", config_path, "configuration file (TOML)");
  app.add_option("--listen", o.listen, "override [kafka] listeners with one host:port");
  app.add_option("--iggy-address", o.iggy_address, "override [iggy] address");
  app.add_option("--state", o.state_path, "override [state] path");
  app.add_option("--log-level", o.log_level, "override [log] level");
  serve = app.add_subcommand("serve", "run the bridge in the foreground (default)");
  check = app.add_subcommand("check-config", "validate the configuration and print the effective values");
  migrate = app.add_subcommand("migrate", "create or upgrade the state database, then exit");
  status = app.add_subcommand("status",
                              "ask the running bridge ([http] listen) whether it is ready, and summarise its metrics");
  add_inspection();
  add_offsets();
  add_principals();
  add_users();
  version = app.add_subcommand("version", "print versions and exit");
  add_common_options();
}

void Cli::add_inspection() {
  topics = app.add_subcommand("topics", "topics of the running bridge");
  topics_list = topics->add_subcommand("list", "every topic with its partitions, message count and topic id");
  topics->require_subcommand(1);
  groups = app.add_subcommand("groups", "consumer groups of the running bridge");
  groups_list = groups->add_subcommand("list", "every group with its state, members and assignor");
  groups_describe = groups->add_subcommand("describe", "members, committed offsets and lag of groups");
  groups_describe->add_option("group", describe_ids, "group ids")->required();
  groups->require_subcommand(1);
}

void Cli::add_offsets() {
  offsets = app.add_subcommand("offsets", "move committed offsets in (from Kafka) and out (to Iggy)");
  offsets->require_subcommand(1);
  offsets_import = offsets->add_subcommand(
      "import", "commit offsets listed in a CSV file or a kafka-consumer-groups --describe output");
  offsets_import->add_option("file", import_opts.file, "the listing; - reads standard input")->required();
  offsets_import->add_option("--format", import_format, "auto, csv or describe")
      ->check(CLI::IsMember({"auto", "csv", "describe"}));
  offsets_import->add_option("--group", import_group, "only this group (and the group of 3-column CSV rows)");
  offsets_import->add_flag("--execute", import_opts.execute, "commit (without it: print the plan only)");
  offsets_export = offsets->add_subcommand(
      "export", "store a group's committed offsets as Iggy consumer offsets, for native Iggy consumers");
  offsets_export->add_option("--group", export_opts.group, "the Kafka consumer group")->required();
  offsets_export->add_option("--topic", export_opts.topics, "only these topics (repeatable)");
  auto* ig = offsets_export->add_option("--iggy-consumer-group", iggy_group,
                                        "Iggy consumer group to write (default: the Kafka group id)");
  auto* ic = offsets_export->add_option("--iggy-consumer", iggy_consumer, "write a plain named Iggy consumer instead");
  ig->excludes(ic);
  offsets_export->add_flag("--execute", export_opts.execute, "write to Iggy (without it: print the plan only)");
}

void Cli::add_principals() {
  principals = app.add_subcommand(
      "principals", "which Iggy user each Kafka principal's data requests run as ([principals] per_principal)");
  principals->require_subcommand(1);
  principals_map = principals->add_subcommand("map", "run a Kafka principal as an Iggy user");
  principals_map->add_option("principal", map_opts.principal, "the Kafka principal, e.g. User:alice")->required();
  principals_map->add_option("--iggy-user", map_opts.iggy_user, "the Iggy user")->required();
  auto* pw = principals_map->add_option("--password-file", map_opts.password_file,
                                        "the Iggy user's password, first line of FILE (- = standard input)");
  auto* tok = principals_map->add_option("--token-file", map_opts.token_file,
                                         "a personal access token of the Iggy user, from FILE (- = standard input)");
  pw->excludes(tok);
  principals_map->add_flag("--create", map_opts.create,
                           "create the Iggy user with that password when it does not exist (as the [iggy] user)");
  principals_list = principals->add_subcommand("list", "every mapping (never the secrets)");
  principals_unmap = principals->add_subcommand("unmap", "remove a principal's mapping");
  principals_unmap->add_option("principal", unmap_principal, "the Kafka principal")->required();
}

// SASL users in the state database (docs/security.md "Credentials").
void Cli::add_users() {
  users = app.add_subcommand("users", "SASL users (SCRAM-SHA-256, SCRAM-SHA-512, PLAIN) in the state database");
  users->require_subcommand(1);
  users_add = users->add_subcommand("add", "add a user's credential, or replace it");
  users_add->add_option("name", user_opts.name, "the user name")->required();
  users_add->add_option("--mechanism", user_opts.mechanism, "SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN")
      ->required()
      ->check(CLI::IsMember({"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"}));
  users_add->add_option("--password-file", user_opts.password_file,
                        "read the password from the first line of FILE (- : standard input); default: ask on the "
                        "terminal");
  users_add->add_option("--iterations", user_opts.iterations,
                        "PBKDF2 iterations, 4096..16384 (default: [sasl] scram_iterations)");
  users_list = users->add_subcommand("list", "every user with its mechanisms and iterations (never a secret)");
  users_delete = users->add_subcommand("delete", "delete a user's credentials");
  users_delete->add_option("name", user_opts.name, "the user name")->required();
  users_delete->add_option("--mechanism", user_opts.mechanism, "only this mechanism's credential")
      ->check(CLI::IsMember({"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"}));
}

// Every subcommand that reads the configuration takes the same overrides; the listing ones
// print JSON on request, and the admin ones talk to a Kafka listener.
void Cli::add_common_options() {
  for (auto* sc : {serve, check, migrate, status, topics_list, groups_list, groups_describe, offsets_import,
                   offsets_export, users_add, users_list, users_delete, principals_map, principals_list,
                   principals_unmap}) {
    sc->add_option("-c,--config", config_path, "configuration file (TOML)");
    sc->add_option("--listen", o.listen, "override [kafka] listeners");
    sc->add_option("--iggy-address", o.iggy_address, "override [iggy] address");
    sc->add_option("--state", o.state_path, "override [state] path");
    sc->add_option("--log-level", o.log_level, "override [log] level");
  }
  status->add_flag("--json", json, "print JSON instead of a table");
  principals_list->add_flag("--json", json, "print JSON instead of a table");
  users_list->add_flag("--json", json, "print JSON instead of a table");
  for (auto* sc : {topics_list, groups_list, groups_describe, offsets_import, offsets_export}) {
    sc->add_flag("--json", json, "print JSON instead of a table");
    sc->add_option("--bootstrap-server", bootstrap, "the bridge's Kafka listener (default: the first [kafka] listener)");
  }
}

int run_principals(Cli& c, const kib::config::Config& cfg) {
  kib::log::init(c.o.log_level.empty() ? "warn" : c.o.log_level);
  kib::admin::AdminContext ctx{cfg, kib::admin::default_bootstrap(cfg), c.json, std::cout, std::cerr};
  if (c.principals_map->parsed()) return kib::admin::principals_map(ctx, c.map_opts);
  if (c.principals_list->parsed()) return kib::admin::principals_list(ctx);
  return kib::admin::principals_unmap(ctx, c.unmap_principal);
}

int run_users(Cli& c, const kib::config::Config& cfg) {
  kib::log::init(c.o.log_level.empty() ? "warn" : c.o.log_level);
  kib::admin::AdminContext ctx{cfg, kib::admin::default_bootstrap(cfg), c.json, std::cout, std::cerr};
  if (c.users_add->parsed()) return kib::admin::users_add(ctx, c.user_opts);
  if (c.users_list->parsed()) return kib::admin::users_list(ctx);
  return kib::admin::users_delete(ctx, c.user_opts);
}

// topics, groups, offsets: Kafka requests to the running bridge.
int run_admin(Cli& c, const kib::config::Config& cfg) {
  // The Iggy client logs; keep standard output for the table or JSON, and only warnings.
  kib::log::init(c.o.log_level.empty() ? "warn" : c.o.log_level);
  kib::admin::AdminContext ctx{cfg, kib::admin::default_bootstrap(cfg), c.json, std::cout, std::cerr};
  if (!c.bootstrap.empty()) {
    auto hp = kib::config::parse_host_port(c.bootstrap);
    if (!hp) {
      std::cerr << "--bootstrap-server: " << hp.error().message << "\n";
      return kExitUsage;
    }
    ctx.bootstrap = *hp;
  }
  if (c.topics_list->parsed()) return kib::admin::topics_list(ctx);
  if (c.groups_list->parsed()) return kib::admin::groups_list(ctx);
  if (c.groups_describe->parsed()) return kib::admin::groups_describe(ctx, c.describe_ids);
  if (c.offsets_import->parsed()) {
    c.import_opts.format = c.import_format == "csv"        ? kib::admin::ListingFormat::kCsv
                           : c.import_format == "describe" ? kib::admin::ListingFormat::kDescribe
                                                           : kib::admin::ListingFormat::kAuto;
    if (!c.import_group.empty()) c.import_opts.group = c.import_group;
    return kib::admin::offsets_import(ctx, c.import_opts);
  }
  if (!c.iggy_consumer.empty())
    c.export_opts.target = {kib::admin::IggyOffsetTarget::Kind::kConsumer, c.iggy_consumer};
  else
    c.export_opts.target = {kib::admin::IggyOffsetTarget::Kind::kConsumerGroup, c.iggy_group};
  return kib::admin::offsets_export(ctx, c.export_opts);
}

// check-config: the [tls] files and [http] metrics_bearer_token_file are read and checked as the
// bridge would at start (the token never printed); then the effective values.
int run_check(const std::string& config_path, const kib::config::Config& cfg) {
  for (const auto& l : cfg.kafka.listeners)
    if (kib::config::uses_tls(l.protocol)) {
      if (auto tls = kib::net::TlsContext::load(cfg.tls); !tls) {
        std::cerr << config_path << ": " << tls.error().message << "\n";
        return kExitConfig;
      }
      break;
    }
  if (!cfg.http.listen.empty()) {
    std::string warning;
    if (auto access = kib::http::load_metrics_access(cfg.http, &warning); !access) {
      std::cerr << config_path << ": " << access.error().message << "\n";
      return kExitConfig;
    }
    if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
  }
  std::cout << "# " << config_path << ": valid\n" << kib::config::render_config(cfg);
  return kExitOk;
}

int run_migrate(const kib::config::Config& cfg) {
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

int run_serve(const std::string& config_path, const kib::config::Config& cfg) {
  kib::Bridge bridge(cfg, config_path);
  auto started = bridge.start();
  if (!started) {
    spdlog::critical("cannot start: {}", started.error().message);
    return started.error().domain == kib::ErrorDomain::kState ? kExitState : kExitRuntime;
  }
  if (!bridge.run()) return kExitRuntime;
  return bridge.exit_code() != 0 ? bridge.exit_code() : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Cli c;
  try {
    c.app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = c.app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (c.version->parsed()) {
    std::printf("kafka-iggy-bridge %s\ntested with Iggy server %s\n", kib::kBridgeVersion, kib::kTestedIggyServer);
    return kExitOk;
  }
  if (c.runs_anywhere() && c.config_path == kDefaultConfig && !std::filesystem::exists(c.config_path))
    c.config_path.clear();
  kib::config::Config cfg;
  if (int rc = load(c.config_path, c.o, cfg); rc != kExitOk) return rc;
  if (c.status->parsed()) return kib::http::run_status_command(cfg, c.json, std::cout, std::cerr);
  if (c.principals->parsed()) return run_principals(c, cfg);
  if (c.users->parsed()) return run_users(c, cfg);
  if (c.topics->parsed() || c.groups->parsed() || c.offsets->parsed()) return run_admin(c, cfg);
  if (c.check->parsed()) return run_check(c.config_path, cfg);
  kib::log::init(cfg.log.level);
  if (c.migrate->parsed()) return run_migrate(cfg);
  return run_serve(c.config_path, cfg);
}
