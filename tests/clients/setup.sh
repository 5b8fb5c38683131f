#!/usr/bin/env bash
# Installs what the client test tier needs; idempotent (a second run does next to nothing).
#   - Debian tools if missing (root only): kcat, maven, a JDK, node/npm
#   - a Python venv at <repo>/.venv with tests/clients/requirements.txt
#   - kafkajs in tests/clients/node (npm ci from the committed lock file)
#   - Kafka's jars in tests/.java/lib (tools/fetch-kafka) and tests/clients/java/*.java compiled;
#     the newer reference tier's (tests/java/pom-next.xml) in tests/.java/lib-<version>
#   - tests/clients/go (franz-go) built into build/clients/txclient when go is installed
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.venv"

say() { echo "setup.sh: $*" >&2; }

# 1. Debian packages (only what is missing).
need=()
command -v kcat >/dev/null || need+=(kcat)
command -v mvn >/dev/null || need+=(maven)
command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing ${need[*]}"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
  else
    say "missing ${need[*]} (install them as root: apt-get install ${need[*]})"
  fi
fi

# 2. Python venv with the clients (and pytest).
req="$here/requirements.txt"
stamp="$venv/.kib-requirements-$(sha256sum "$req" | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  say "pip install -r tests/clients/requirements.txt into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
  rm -f "$venv"/.kib-requirements-*
  touch "$stamp"
fi

# 3. kafkajs.
node_dir="$here/node"
nstamp="$node_dir/node_modules/.kib-lock-$(sha256sum "$node_dir/package-lock.json" | cut -c1-16)"
if [ ! -f "$nstamp" ]; then
  say "npm ci in tests/clients/node"
  (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
  touch "$nstamp"
fi

# 4. Kafka jars, the Java programs in tests/clients/java.
"$root/tools/fetch-kafka" >/dev/null
"$root/tools/fetch-kafka" --next >/dev/null
"$venv/bin/python" - <<PY
import sys
sys.path.insert(0, "$here")
from runners import java
for name in ("Scenario", "GroupMember", "GroupCommandShell", "StreamsApp", "StreamsEosApp", "ConnectApp", "TxnClient"):
    java.compile_java(name)
PY
# 5. franz-go's transactions runner (tests/clients/go, go.sum committed) into build/clients/txclient.
if command -v go >/dev/null; then
  (cd "$here/go" && GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -o "$root/build/clients/txclient" . >&2) \
    || say "go build in tests/clients/go failed: test_transactions.py's franz-go cases will fail (franz-go v1.22.3 needs Go 1.26+)"
else
  say "no go toolchain: test_transactions.py's franz-go cases will be skipped (install Go 1.26+, which franz-go v1.22.3 needs)"
fi
say "ready: $venv, $node_dir/node_modules, $root/tests/.java/lib"
