"""The code-shape gates `make check` runs (issue 32): tools/check-layers (src/'s include graph
against docs/architecture.md's layer table) and tools/long-functions (no function over 80 lines
outside generated code and the declarative config parser). Each passes on the tree as it is and
fails on a copy with one planted fault, so a gate that stopped seeing anything would show here."""
import os, shutil, subprocess, sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(tool, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", tool), *args], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def tree(tmp_path):
    """A copy of src/ and docs/architecture.md to plant faults in."""
    shutil.copytree(os.path.join(ROOT, "src"), tmp_path / "src")
    (tmp_path / "docs").mkdir()
    shutil.copy(os.path.join(ROOT, "docs", "architecture.md"), tmp_path / "docs" / "architecture.md")
    return tmp_path


def test_the_tree_keeps_its_layers():
    r = run("check-layers")
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 problems" in r.stdout


def test_an_include_that_runs_up_fails_the_check(tree):
    victim = tree / "src" / "bridge" / "log" / "reader.cc"
    text = victim.read_text()
    victim.write_text(text.replace('#include "bridge/log/reader.h"',
                                   '#include "bridge/log/reader.h"\n#include "server/context/request.h"', 1))
    r = run("check-layers", "--root", str(tree))
    assert r.returncode == 1
    assert ("src/bridge/log/reader.cc:2: includes server/context/request.h (src/server/context), which the row of "
            "src/bridge/log in docs/architecture.md does not allow") in r.stdout


def test_a_row_that_allows_one_above_it_and_a_folder_without_a_row_fail(tree):
    doc = tree / "docs" / "architecture.md"
    doc.write_text(doc.read_text().replace("| `common`, `uvx`, `config`, `security` |",
                                           "| `common`, `uvx`, `config`, `security`, `app` |", 1))
    (tree / "src" / "newfolder").mkdir()
    (tree / "src" / "newfolder" / "x.h").write_text("#pragma once\n")
    timer = tree / "src" / "net" / "listener.cc"
    timer.write_text(timer.read_text() + "\nstatic uv_timer_t stray;\n")
    r = run("check-layers", "--root", str(tree))
    assert r.returncode == 1
    assert "row src/net allows src/app, which is not below it" in r.stdout
    assert "src/newfolder: a folder with source files and no row" in r.stdout
    assert "src/net/listener.cc" in r.stdout and "a uv_timer_t outside src/uvx" in r.stdout


def test_no_function_is_over_80_lines():
    r = run("long-functions", "--check")
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_long_function_fails_the_length_check(tree):
    body = "".join("  x += %d;\n" % i for i in range(85))
    (tree / "src" / "common" / "planted.cc").write_text("int planted(int x) {\n" + body + "  return x;\n}\n")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "long-functions"), "--check",
                        str(tree / "src")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "planted.cc:1 planted" in r.stdout
