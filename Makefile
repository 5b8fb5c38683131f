# kafka-iggy-bridge — build entry points. `make help` lists them.
#
# Sources are discovered: every src/**/*.cc except src/app/main.cc goes into the library,
# every tests/unit/*.cc into the unit-test binary, every tests/integration/*.cc into the
# integration-test binary, every tests/iggy_golden/*.cc into the golden-tier binary. Adding a file
# needs no Makefile edit.

# No built-in rules: every rule is written here. (With them, make's `%: %.o` offered to remake
# the fuzz build's dependency files, included below, from a `main-<target>.d.o` it then failed to
# compile on every build once build/fuzz existed.)
MAKEFLAGS += --no-builtin-rules

BUILD    ?= release
BUILDDIR ?= build/$(BUILD)
# Scoped builds (for working on one layer while others are mid-edit):
#   make BUILDDIR=build/iggy LIB_DIRS="src/common src/iggy" UNIT_GLOB="tests/unit/main.cc tests/unit/iggy_*.cc" build/iggy/unit-tests
LIB_DIRS ?= src
UNIT_GLOB ?= tests/unit/*.cc
INT_GLOB ?= tests/integration/*.cc
SUPPORT_GLOB ?= tests/support/*.cc
GOLDEN_GLOB ?= tests/iggy_golden/*.cc
CXX      ?= g++
# Kafka's JSON message specs for regen / check-regen. Empty: tools/kafka-specs extracts them from the
# kafka-clients jar of the version in tests/java/pom.xml (Maven Central, via tools/fetch-kafka).
SPECS    ?=

WARN     := -Wall -Wextra -Werror
CXXFLAGS_COMMON := -std=c++20 $(WARN) -Isrc -Itests -MMD -MP -pthread -DBOOST_TEST_DYN_LINK
ifeq ($(BUILD),release)
  OPT := -O2 -g -DNDEBUG
else ifeq ($(BUILD),debug)
  OPT := -O0 -g
else ifeq ($(BUILD),asan)
  # -O0: the unit and integration tiers run in seconds either way, and -O0 compiles the ~330 files
  # in about 60% of -O1's time (the ASan build is CI's longest step when the compiler cache is cold).
  OPT := -O0 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
  LDSAN := -fsanitize=address,undefined
else
  $(error BUILD must be release, debug or asan)
endif
CXXFLAGS += $(CXXFLAGS_COMMON) $(OPT)

PKGS   := libuv tomlplusplus spdlog fmt libsystemd libzstd liblz4 zlib snappy libxxhash openssl sqlite3 libpcre2-8 re2
LIBS   := -lSQLiteCpp $(shell pkg-config --libs $(filter-out snappy,$(PKGS)) 2>/dev/null) -lsnappy
TESTLIBS := -lboost_unit_test_framework

LIB_SRCS  := $(shell find $(LIB_DIRS) -name '*.cc' ! -path 'src/app/main.cc' | sort)
LIB_OBJS  := $(LIB_SRCS:%.cc=$(BUILDDIR)/obj/%.o)
MAIN_OBJ  := $(BUILDDIR)/obj/src/app/main.o
UNIT_SRCS := $(sort $(wildcard $(UNIT_GLOB)))
UNIT_OBJS := $(UNIT_SRCS:%.cc=$(BUILDDIR)/obj/%.o)
# tests/unit/fuzz_regressions_test.cc replays the fuzz targets' inputs: it links their code.
FUZZ_TARGET_SRCS := $(sort $(wildcard tests/fuzz/targets/*.cc))
ifneq ($(filter tests/unit/fuzz_regressions_test.cc,$(UNIT_SRCS)),)
  UNIT_OBJS += $(FUZZ_TARGET_SRCS:%.cc=$(BUILDDIR)/obj/%.o)
endif
INT_SRCS  := $(sort $(wildcard $(INT_GLOB)))
INT_OBJS  := $(INT_SRCS:%.cc=$(BUILDDIR)/obj/%.o)
GOLDEN_SRCS := $(sort $(wildcard $(GOLDEN_GLOB)))
GOLDEN_OBJS := $(GOLDEN_SRCS:%.cc=$(BUILDDIR)/obj/%.o)
TESTSUPPORT_SRCS := $(sort $(wildcard $(SUPPORT_GLOB)))
TESTSUPPORT_OBJS := $(TESTSUPPORT_SRCS:%.cc=$(BUILDDIR)/obj/%.o)

BENCH_BINS := $(BUILDDIR)/iggy-client-bench $(BUILDDIR)/kafka-load $(BUILDDIR)/hot-path-bench
BIN       := $(BUILDDIR)/kafka-iggy-bridge
LIBA      := $(BUILDDIR)/libbridge.a
UNIT_BIN  := $(BUILDDIR)/unit-tests
INT_BIN   := $(BUILDDIR)/integration-tests
GOLDEN_BIN := $(BUILDDIR)/iggy-golden-tests

.PHONY: all help test test-built setup run deps check-deps check asan regen check-regen schema check-schema bench bench-quick deb rpm clean unit integration fuzz fuzz-smoke fuzz-build
.PHONY: reliability reliability-smoke soak golden-iggy rehearsal rehearsal-short compaction-streams
all: check-deps $(BIN)

help:
	@echo "make            release build of $(BIN)"
	@echo "make test       build and run every test tier that can run here (README's test command)"
	@echo "make run        build, then run the bridge in the foreground on 127.0.0.1:9092"
	@echo "make deps       install the Debian packages the build and tests need (idempotent)"
	@echo "make setup      make deps, then the client test tier (venv, npm, Kafka jars; idempotent)"
	@echo "make asan       ASan+UBSan build and test run"
	@echo "make golden-iggy  the golden tier alone: tools/iggy-golden (Rust, the published"
	@echo "                iggy_binary_protocol 0.11.0-edge.4 and 0.11.0) against src/iggy (needs cargo)"
	@echo "make regen      regenerate src/kafka/protocol/generated (and its round-trip tests) from Kafka's"
	@echo "                message specs: the kafka-clients jar of tests/java/pom.xml (tools/kafka-specs);"
	@echo "                SPECS=DIR uses DIR's *.json instead"
	@echo "make check-regen  fail if the generated files differ from what make regen would write"
	@echo "make check      the code's shape: includes only where docs/architecture.md's layer table allows"
	@echo "                (tools/check-layers), no function over 80 lines (tools/long-functions); CI runs it"
	@echo "make schema     regenerate db/schema.sql from migrations/"
	@echo "make bench      benchmarks against native Iggy and a real Kafka broker (not part of test)"
	@echo "make fuzz       libFuzzer targets (clang, ASan+UBSan), FUZZ_SECONDS (default 180) each, one after another"
	@echo "make fuzz-smoke the same for a few seconds per target (CI)"
	@echo "make deb / rpm  packages under build/pkg"
	@echo "make reliability        acknowledged-writes checker and fault tests (tests/reliability/run):"
	@echo "                        100 bridge kill -9s under idempotent produce, iggy-server kills, SQLite"
	@echo "                        full disk / read-only, 10,000 idle connections + slowloris; figures in"
	@echo "                        build/reliability/ (not part of make test; KILLS=, SEED= override)"
	@echo "make reliability-smoke  the same with 5 bridge kills and 2 iggy kills (a few minutes; for CI)"
	@echo "make soak               producers, consumers, rebalancing groups for SOAK_SECONDS (default 3600);"
	@echo "                        RSS and open fds of the bridge sampled and checked for flatness"
	@echo "make rehearsal          the migration rehearsal (tests/migration/run, about 8 minutes): a live"
	@echo "                        Kafka broker cut over to the bridge with MirrorMaker 2 and the README's"
	@echo "                        commands; the checker's lost / re-read / order figures in build/migration/"
	@echo "make rehearsal-short    the same at a lower rate with short phases (about 3 minutes; make test's"
	@echo "                        migration tier)"
	@echo "make compaction-streams a Kafka Streams KTable over 1,000,000 updates of 1,000 keys restored from"
	@echo "                        its compacted changelog, on Kafka and on the bridge (docs/compaction.md,"
	@echo "                        Measured): changelog bytes on disk, restore ms, records restored side by"
	@echo "                        side in build/compaction-streams/ (about 2 minutes; make test runs 20,000)"

check-deps:
	@tools/check-deps

# The layering docs/architecture.md draws, and the length of functions, checked (CI runs it).
check:
	@tools/check-layers
	@tools/long-functions --check && echo "long-functions: none over 80 lines"

deps:
	tools/install-deps

$(BUILDDIR)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

# migrations/*.sql are compiled into the binary (state/migrations.h).
MIGRATIONS := $(sort $(wildcard migrations/*.sql))
MIGRATIONS_CC := $(BUILDDIR)/gen/migrations_data.cc
MIGRATIONS_OBJ := $(BUILDDIR)/obj/gen/migrations_data.o
$(MIGRATIONS_CC): $(MIGRATIONS) tools/embed-migrations
	@mkdir -p $(dir $@)
	tools/embed-migrations $@ $(MIGRATIONS)
$(MIGRATIONS_OBJ): $(MIGRATIONS_CC)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(LIBA): $(LIB_OBJS) $(MIGRATIONS_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(MAIN_OBJ) $(LIBA)
	$(CXX) $(LDSAN) -pthread -o $@ $(MAIN_OBJ) $(LIBA) $(LIBS)

$(UNIT_BIN): $(UNIT_OBJS) $(TESTSUPPORT_OBJS) $(LIBA)
	$(CXX) $(LDSAN) -pthread -o $@ $(UNIT_OBJS) $(TESTSUPPORT_OBJS) $(LIBA) $(LIBS) $(TESTLIBS)

$(INT_BIN): $(INT_OBJS) $(TESTSUPPORT_OBJS) $(LIBA)
	$(CXX) $(LDSAN) -pthread -o $@ $(INT_OBJS) $(TESTSUPPORT_OBJS) $(LIBA) $(LIBS) $(TESTLIBS)

# Golden wire tier (docs/iggy-client.md "Golden wire tests"): C++ side of tools/iggy-golden.
$(GOLDEN_BIN): $(GOLDEN_OBJS) $(LIBA)
	$(CXX) $(LDSAN) -pthread -o $@ $(GOLDEN_OBJS) $(LIBA) $(LIBS) $(TESTLIBS)

# Benchmark programs (not part of `make` or `make test`).
$(BUILDDIR)/iggy-client-bench: $(BUILDDIR)/obj/bench/iggy_client_bench.o $(LIBA)
	$(CXX) $(LDSAN) -pthread -o $@ $< $(LIBA) $(LIBS)

$(BUILDDIR)/hot-path-bench: $(BUILDDIR)/obj/bench/hot_path_bench.o $(LIBA)
	$(CXX) $(LDSAN) -pthread -o $@ $< $(LIBA) $(LIBS)

# librdkafka load generator (bench/kafka_load.c): the Kafka-protocol side of bench/run.
$(BUILDDIR)/kafka-load: bench/kafka_load.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -Werror -std=c11 -D_GNU_SOURCE -pthread -o $@ $< -lrdkafka

unit: check-deps $(UNIT_BIN)
integration: check-deps $(INT_BIN)

# The README's test command: installs what is missing (Debian packages, the client test
# tier's venv, npm modules and Kafka jars; each step is a no-op when done), builds, and runs
# every tier that can run on this machine; prints "N passed, N failed, N skipped" last.
test: setup
	@$(MAKE) --no-print-directory test-built

test-built: check-deps $(BIN) $(UNIT_BIN) $(INT_BIN) $(GOLDEN_BIN)
	@python3 tools/run-tests --build-dir $(BUILDDIR)

# Builds tools/iggy-golden with cargo (SKIPPED when cargo is absent), runs it, checks src/iggy.
golden-iggy: check-deps $(GOLDEN_BIN)
	@python3 tools/run-tests --build-dir $(BUILDDIR) --only golden

setup: deps
	@tests/clients/setup.sh

asan: setup
	$(MAKE) BUILD=asan test-built

# The README's run command: installs missing Debian packages, builds, runs in the foreground.
run: deps
	@$(MAKE) --no-print-directory all
	@tools/dev-run $(BIN) etc/kafka-iggy-bridge.toml

# The spec directory: SPECS, else the kafka-clients jar's specs (resolved and extracted on first use).
SPECS_DIR = specs='$(SPECS)'; if [ -z "$$specs" ]; then specs="$$(tools/kafka-specs)" || exit 1; fi

regen:
	@$(SPECS_DIR); echo "specs: $$specs"; \
	python3 tools/kafka_codegen.py --specs "$$specs" --out src/kafka/protocol/generated

check-regen:
	@$(SPECS_DIR); echo "specs: $$specs"; \
	python3 tools/kafka_codegen.py --specs "$$specs" --out src/kafka/protocol/generated --check

schema:
	tools/gen-schema > db/schema.sql

check-schema:
	@tools/gen-schema | diff -u db/schema.sql - && echo "db/schema.sql is current"

bench bench-quick: all $(BENCH_BINS)
	@BUILD_DIR=$(BUILDDIR) bench/run $(if $(filter bench-quick,$@),--quick,)

# The acknowledged-writes checker (tests/reliability/run): needs iggy-server, the client tier's
# venv and Kafka jars (make setup); mounts a small tmpfs for the SQLite faults when root.
RELIABILITY_ARGS = $(if $(KILLS),--kills $(KILLS),) $(if $(SEED),--seed $(SEED),)
RELIABILITY_PY = $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
reliability: all
	@$(RELIABILITY_PY) tests/reliability/run --profile full $(RELIABILITY_ARGS)

reliability-smoke: all
	@$(RELIABILITY_PY) tests/reliability/run --profile smoke $(RELIABILITY_ARGS)

soak: all
	@$(RELIABILITY_PY) tests/reliability/run --profile soak --soak-seconds $(or $(SOAK_SECONDS),3600) $(RELIABILITY_ARGS)

# The migration rehearsal (tests/migration/run, README "Migrating off Kafka"): needs iggy-server,
# the client tier's venv and Kafka jars (make setup). `make test` runs the short variant.
rehearsal: all
	@$(RELIABILITY_PY) tests/migration/run --profile full

rehearsal-short: all
	@$(RELIABILITY_PY) tests/migration/run --profile short

# Issue 35's Kafka Streams check at full size (tests/clients/test_compaction_streams.py; the client
# tier runs it with 20,000 updates): needs the client tier's setup, iggy-server and Java.
compaction-streams: all
	@mkdir -p build/compaction-streams
	@KIB_COMPACTION_STREAMS_FULL=1 KIB_JUNIT_XML=build/compaction-streams/junit.xml \
		tests/clients/run -q -s -k test_compaction_streams
	@cat build/compaction-streams/figures.txt

# ---- fuzzing (docs/fuzzing.md) ----------------------------------------------------------------
# libFuzzer targets built with Debian's clang against the library sources they exercise, with
# ASan+UBSan. The targets' code (tests/fuzz/targets/*.cc) is shared with the unit tests, which
# replay the seeds and regression inputs with g++ (tests/unit/fuzz_regressions_test.cc).
FUZZ_CXX     ?= clang++-14
FUZZ_DIR     ?= build/fuzz
FUZZ_SECONDS ?= 180
FUZZ_SMOKE_SECONDS ?= 3
FUZZ_RSS_MB  ?= 2048
FUZZ_TARGETS := $(shell grep -o '{"[a-z_]*", &fuzz_' tests/fuzz/targets/registry.cc | cut -d'"' -f2)
# -DNDEBUG as in the release build: libraries run as they ship (toml++ 3.3.0's debug assertions
# fire on inputs its release build refuses cleanly); the bridge's code has no assert().
FUZZ_CXXFLAGS := -std=c++20 $(WARN) -Isrc -Itests -MMD -MP -pthread -O1 -g -DNDEBUG -fno-omit-frame-pointer \
  -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
# Only what the targets reach: a fuzz build does not wait for the whole bridge.
FUZZ_GENERATED := wire api_keys request_header consumer_protocol_subscription consumer_protocol_assignment \
  produce fetch list_offsets metadata offset_commit offset_fetch find_coordinator join_group heartbeat \
  leave_group sync_group describe_groups list_groups api_versions create_topics init_producer_id \
  delete_groups offset_delete delete_topics delete_records offset_for_leader_epoch describe_configs \
  alter_configs describe_log_dirs create_partitions incremental_alter_configs describe_cluster \
  describe_topic_partitions add_partitions_to_txn add_offsets_to_txn end_txn txn_offset_commit \
  describe_producers describe_transactions list_transactions \
  sasl_handshake sasl_authenticate describe_user_scram_credentials alter_user_scram_credentials describe_client_quotas \
  describe_acls create_acls delete_acls consumer_group_heartbeat consumer_group_describe list_config_resources \
  streams_group_heartbeat streams_group_describe streams_group_topology_description_update
FUZZ_LIB_SRCS := $(sort $(wildcard src/common/*.cc src/kafka/records/*.cc src/bridge/mapping/*.cc src/security/*.cc)) \
  src/kafka/protocol/error_code.cc $(FUZZ_GENERATED:%=src/kafka/protocol/generated/%.cc) \
  src/bridge/errors.cc src/bridge/groups/consumer_protocol.cc src/iggy/protocol.cc src/iggy/server_profile.cc src/iggy/user_headers.cc \
  src/iggy/errors.cc src/http/http_server.cc src/http/http_client.cc src/http/metrics_access.cc \
  src/net/blocking_socket.cc src/net/listener.cc \
  src/net/tcp_server.cc src/net/tls.cc \
  $(wildcard src/uvx/*.cc) \
  src/metrics/metrics.cc src/metrics/bridge_metrics.cc src/config/config.cc
FUZZ_OBJS := $(FUZZ_LIB_SRCS:%.cc=$(FUZZ_DIR)/obj/%.o) $(FUZZ_TARGET_SRCS:%.cc=$(FUZZ_DIR)/obj/%.o)
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/%)

$(FUZZ_DIR)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -c $< -o $@

$(FUZZ_DIR)/libfuzztargets.a: $(FUZZ_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/obj/main-%.o: tests/fuzz/libfuzzer_main.cc
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -DFUZZ_ENTRY=fuzz_$* -c $< -o $@

$(FUZZ_BINS): $(FUZZ_DIR)/%: $(FUZZ_DIR)/obj/main-%.o $(FUZZ_DIR)/libfuzztargets.a
	$(FUZZ_CXX) -fsanitize=fuzzer,address,undefined -pthread -o $@ $< $(FUZZ_DIR)/libfuzztargets.a $(LIBS)

fuzz-build: $(FUZZ_BINS)

# One target after another, one process each (one core): FUZZ_SECONDS each; prints one line per
# target and "N passed, N failed, N skipped" (a target is one test; a crash fails it).
fuzz: fuzz-build
	@tools/fuzz-run --dir $(FUZZ_DIR) --seconds $(FUZZ_SECONDS) --rss-mb $(FUZZ_RSS_MB) $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	@tools/fuzz-run --dir $(FUZZ_DIR) --seconds $(FUZZ_SMOKE_SECONDS) --rss-mb $(FUZZ_RSS_MB) $(FUZZ_TARGETS)

deb rpm: all
	packaging/build-$@ $(BIN)

clean:
	rm -rf build tools/iggy-golden/target

-include $(wildcard $(FUZZ_OBJS:.o=.d) $(FUZZ_TARGETS:%=$(FUZZ_DIR)/obj/main-%.d))
-include $(BUILDDIR)/obj/bench/iggy_client_bench.d $(BUILDDIR)/obj/bench/hot_path_bench.d $(LIB_OBJS:.o=.d) $(MAIN_OBJ:.o=.d) $(UNIT_OBJS:.o=.d) $(INT_OBJS:.o=.d) $(GOLDEN_OBJS:.o=.d) $(TESTSUPPORT_OBJS:.o=.d)
