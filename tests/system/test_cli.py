"""The command line: check-config, migrate, version and exit codes."""
import os, sqlite3, subprocess
from conftest import bridge_bin, ROOT


def run(*args):
    return subprocess.run([bridge_bin(), *args], capture_output=True, text=True, timeout=30)


def test_check_config_accepts_shipped_default_and_prints_effective_values():
    r = run("check-config", "--config", os.path.join(ROOT, "etc", "kafka-iggy-bridge.toml"))
    assert r.returncode == 0, r.stderr
    assert 'listeners = ["PLAINTEXT://127.0.0.1:9092"]' in r.stdout
    assert 'listener_security_protocol_map = ["PLAINTEXT:PLAINTEXT"]' in r.stdout
    assert "iggy" in r.stdout and "<redacted>" in r.stdout


def test_check_config_rejects_unknown_key_with_exit_3(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("[kafka]\nlisteners = [\"127.0.0.1:1\"]\nbogus = 1\n")
    r = run("check-config", "--config", str(p))
    assert r.returncode == 3
    assert "[kafka] bogus: unknown key" in r.stderr


def test_migrate_creates_schema_and_is_idempotent(tmp_path):
    db = tmp_path / "s.db"
    for _ in range(2):
        r = run("migrate", "--config", os.path.join(ROOT, "etc", "kafka-iggy-bridge.toml"), "--state", str(db))
        assert r.returncode == 0, r.stderr
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] >= 1
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"topics", "committed_offsets", "consumer_groups", "producers"} <= names


def test_migrate_refuses_newer_database_with_exit_4(tmp_path):
    db = tmp_path / "s.db"
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA user_version = 9999")
    r = run("migrate", "--state", str(db), "--config", os.path.join(ROOT, "etc", "kafka-iggy-bridge.toml"))
    assert r.returncode == 4
    assert "newer than this binary" in r.stderr


def test_version_names_tested_iggy_server():
    r = run("version")
    assert r.returncode == 0
    assert "0.9.0-edge.5" in r.stdout
