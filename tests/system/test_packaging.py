"""Packaging: the .deb and .rpm built from the bridge binary under test, the systemd unit and
the man pages. Nothing is installed onto this machine: archives are inspected, and installs go
into temporary roots (dpkg -x, rpm --root, and a debootstrapped Debian 12 root in a chroot).

Tools each test needs are checked first; a missing one skips that test with a SKIPPED line
naming the Debian package that provides it. The debootstrap test needs root and network
access to the Debian mirror; KIB_PKG_DEBOOTSTRAP=0 skips it. Its base system is cached in
build/pkg-cache/ (first run about 2 minutes, later runs seconds)."""
import gzip, os, re, shutil, signal, socket, stat, subprocess, tarfile, tempfile, time, tomllib, urllib.error
import urllib.request

import pytest

from conftest import ROOT, bridge_bin, free_port

NAME = "kafka-iggy-bridge"
UNIT = os.path.join(ROOT, "packaging", NAME + ".service")
MAN8 = os.path.join(ROOT, "man", NAME + ".8")
MAN5 = os.path.join(ROOT, "man", NAME + ".toml.5")
SHIPPED_TOML = os.path.join(ROOT, "etc", NAME + ".toml")
CACHE = os.path.join(ROOT, "build", "pkg-cache")
MIRROR = os.environ.get("KIB_DEBIAN_MIRROR", "http://deb.debian.org/debian")


def require(tool, package):
    if shutil.which(tool) is None:
        pytest.skip(f"SKIPPED: {tool} is not installed (apt-get install {package})")


def require_binary():
    if not os.path.exists(bridge_bin()):
        pytest.fail("bridge binary not built: " + bridge_bin())


def run(cmd, timeout=300, check=True, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise AssertionError("%s exited %d\nstdout:\n%s\nstderr:\n%s" % (cmd, r.returncode, r.stdout, r.stderr))
    return r


def bridge_version():
    with open(os.path.join(ROOT, "src", "common", "version.h")) as f:
        return re.search(r'kBridgeVersion = "([^"]+)"', f.read()).group(1)


@pytest.fixture(scope="module")
def pkg_dir():
    with tempfile.TemporaryDirectory(prefix="kib-pkg-") as d:
        yield d


@pytest.fixture(scope="module")
def deb(pkg_dir):
    require("dpkg-deb", "dpkg")
    require_binary()
    r = run([os.path.join(ROOT, "packaging", "build-deb"), bridge_bin(), pkg_dir])
    path = r.stdout.strip().splitlines()[-1]
    assert os.path.isfile(path), r.stdout + r.stderr
    print(r.stdout + r.stderr)
    return path


@pytest.fixture(scope="module")
def rpm(pkg_dir):
    require("rpmbuild", "rpm")
    require_binary()
    r = run([os.path.join(ROOT, "packaging", "build-rpm"), bridge_bin(), pkg_dir])
    path = r.stdout.strip().splitlines()[-1]
    assert os.path.isfile(path), r.stdout + r.stderr
    return path


# ---- the systemd unit -------------------------------------------------------------------

def man_tree(dest):
    for src, section in ((MAN8, "8"), (MAN5, "5")):
        os.makedirs(os.path.join(dest, "man" + section), exist_ok=True)
        shutil.copy(src, os.path.join(dest, "man" + section))
    return dest


def test_unit_passes_systemd_analyze_verify(tmp_path):
    require("systemd-analyze", "systemd")
    require("man", "man-db")
    require_binary()
    # This machine has no /usr/bin/kafka-iggy-bridge: verify a copy whose ExecStart names the
    # binary under test; everything else (including Documentation= man pages) is as shipped.
    with open(UNIT) as f:
        text = f.read()
    assert "ExecStart=/usr/bin/kafka-iggy-bridge serve --config /etc/kafka-iggy-bridge/kafka-iggy-bridge.toml" in text
    unit = tmp_path / (NAME + ".service")
    unit.write_text(text.replace("ExecStart=/usr/bin/kafka-iggy-bridge", "ExecStart=" + os.path.abspath(bridge_bin())))
    env = dict(os.environ, MANPATH=man_tree(str(tmp_path / "man")))
    r = run(["systemd-analyze", "verify", str(unit)], check=False, env=env)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stdout + r.stderr


def test_unit_security_exposure_is_at_most_2():
    require("systemd-analyze", "systemd")
    r = run(["systemd-analyze", "security", "--offline=yes", "--no-pager", UNIT], check=False)
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout)
    assert m, r.stdout + r.stderr
    score = float(m.group(1))
    print(f"systemd-analyze security: {NAME}.service exposure {score}")
    for line in r.stdout.splitlines():
        if line.lstrip().startswith("✗"):
            print("  " + " ".join(line.split()))
    assert score <= 2.0


def test_unit_declares_notify_user_directories_and_hardening():
    with open(UNIT) as f:
        keys = {}
        for line in f:
            if "=" in line and not line.startswith("#"):
                k, v = line.rstrip("\n").split("=", 1)
                keys.setdefault(k, []).append(v)
    one = {k: v[-1] for k, v in keys.items()}
    assert one["Type"] == "notify"
    assert one["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert one["User"] == one["Group"] == NAME
    assert one["StateDirectory"] == one["ConfigurationDirectory"] == NAME
    assert one["CapabilityBoundingSet"] == "" and one["AmbientCapabilities"] == ""
    assert one["Restart"] == "on-failure" and int(one["LimitNOFILE"]) >= 65536
    for k in ("NoNewPrivileges", "ProtectHome", "PrivateTmp", "PrivateDevices", "ProtectKernelTunables",
              "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups", "ProtectClock",
              "ProtectHostname", "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID", "LockPersonality",
              "MemoryDenyWriteExecute"):
        assert one[k] == "yes", k
    assert one["ProtectSystem"] == "strict"
    assert one["RestrictAddressFamilies"] == "AF_INET AF_INET6 AF_UNIX"
    assert "@system-service" in keys["SystemCallFilter"]
    assert one["SystemCallArchitectures"] == "native" and one["UMask"] == "0077"


def unit_keys():
    with open(UNIT) as f:
        return {k: v for k, v in (line.rstrip("\n").split("=", 1) for line in f
                                  if "=" in line and not line.startswith("#"))}


def size_bytes(v):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return int(v[:-1]) * units[v[-1]] if v[-1] in units else int(v)


def test_unit_memory_and_task_ceilings_fit_the_limits():
    # MemoryHigh throttles before MemoryMax kills; both leave room for many connections at the
    # shipped per-connection bounds (requests in flight plus responses not yet written) and
    # for max_connections idle ones; TasksMax covers the bridge's few threads.
    one = unit_keys()
    with open(SHIPPED_TOML, "rb") as f:
        limits = tomllib.load(f)["limits"]
    # A frame larger than the in-flight bound is read once the ones before it are answered, so
    # one connection holds at most the larger of the two plus its unwritten responses.
    per_conn = (max(limits["max_inflight_request_bytes"], limits["max_frame_bytes"])
                + limits["max_pending_response_bytes"])
    high, mx = size_bytes(one["MemoryHigh"]), size_bytes(one["MemoryMax"])
    assert high < mx
    assert high >= 16 * per_conn + limits["max_connections"] * 16 * 1024, (high, per_conn)
    assert 16 <= int(one["TasksMax"]) <= 1024


# ---- man pages --------------------------------------------------------------------------

@pytest.mark.parametrize("page", [MAN8, MAN5], ids=["kafka-iggy-bridge.8", "kafka-iggy-bridge.toml.5"])
def test_man_page_renders_without_warnings(page):
    require("groff", "groff")
    require("man", "man-db")
    r = run(["groff", "-ww", "-man", "-Tutf8", page])
    assert r.stderr == "", r.stderr
    r = run(["man", "--warnings", "-l", page], env=dict(os.environ, MANWIDTH="80"))
    assert r.stderr == "", r.stderr
    text = re.sub(".\b", "", r.stdout)  # overstrike bold/underline
    assert "NAME" in text and "SEE ALSO" in text


def man_sections(page):
    """{section heading: text} of a man page's source."""
    with open(page) as f:
        src = f.read()
    parts = re.split(r"^\.SH (.+)$", src, flags=re.M)
    return {parts[i].strip().strip('"'): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_toml_page_documents_every_key_of_the_shipped_config_with_its_default():
    with open(SHIPPED_TOML, "rb") as f:
        cfg = tomllib.load(f)
    sections = man_sections(MAN5)
    for table, keys in cfg.items():
        assert f"[{table}]" in sections, f"section [{table}] missing from {MAN5}"
        body = sections[f"[{table}]"].replace("\\-", "-").replace("\\(dq", '"')
        for key, default in keys.items():
            m = re.search(r"^\.TP\n\.B %s\n(.*?)(?=^\.TP|\Z)" % re.escape(key), body, flags=re.M | re.S)
            assert m, f"[{table}] {key} is not documented in {MAN5}"
            text = m.group(1)
            if isinstance(default, bool):
                shown = "true" if default else "false"
            elif isinstance(default, list):
                shown = "[" + ", ".join('"%s"' % x for x in default) + "]"
            elif isinstance(default, str):
                shown = '"%s"' % default
            else:
                shown = str(default)
            assert "default" in text and shown in text, f"[{table}] {key}: default {shown} not stated"


def test_daemon_page_documents_every_subcommand_option_and_exit_code():
    require_binary()
    sections = man_sections(MAN8)
    page = "\n".join(sections.values()).replace("\\-", "-")
    helptext = run([bridge_bin(), "--help"]).stdout
    listed = re.split(r"(?im)^subcommands:\s*$", helptext)
    assert len(listed) == 2, helptext
    subcommands = re.findall(r"^\s+([a-z][a-z-]+)\s{2,}", listed[1], flags=re.M)
    assert {"serve", "check-config", "migrate", "version"} <= set(subcommands), helptext
    options = set(re.findall(r"(--[a-z][a-z-]+)", helptext))

    def children(help_text):
        parts = re.split(r"(?im)^subcommands:\s*$", help_text)
        return re.findall(r"^\s+([a-z][a-z-]+)\s{2,}", parts[1], flags=re.M) if len(parts) == 2 else []
    for sc in subcommands:
        sc_help = run([bridge_bin(), sc, "--help"]).stdout
        options |= set(re.findall(r"(--[a-z][a-z-]+)", sc_help))
        # A subcommand with subcommands of its own (topics, groups, offsets) documents each one.
        for name in [f"{sc} {child}" for child in children(sc_help)] or [sc]:
            if name != sc:
                options |= set(re.findall(r"(--[a-z][a-z-]+)", run([bridge_bin(), *name.split(), "--help"]).stdout))
            entry = re.escape(name.replace("-", "\\-"))
            assert re.search(r"^\.BI? \"?" + entry + r"(\"| |$)", sections["SUBCOMMANDS"], re.M), \
                f"subcommand {name} has no entry under SUBCOMMANDS"
    for opt in options:
        assert opt in page, f"option {opt} is not documented"
    for code in ("0", "1", "2", "3", "4"):
        assert re.search(r"^\.B %s$" % code, sections["EXIT STATUS"], re.M), f"exit status {code} not documented"
    for sig in ("SIGTERM", "SIGINT", "SIGHUP"):
        assert sig in sections["SIGNALS"]
    for f in ("/etc/kafka-iggy-bridge/kafka-iggy-bridge.toml", "/var/lib/kafka-iggy-bridge/state.db"):
        assert f in sections["FILES"].replace("\\-", "-")
    assert "ENVIRONMENT" in sections


# ---- the .deb ---------------------------------------------------------------------------

EXPECTED_DEB_FILES = {
    "./usr/bin/kafka-iggy-bridge": 0o755,
    "./etc/kafka-iggy-bridge/kafka-iggy-bridge.toml": 0o644,
    "./lib/systemd/system/kafka-iggy-bridge.service": 0o644,
    "./usr/share/man/man8/kafka-iggy-bridge.8.gz": 0o644,
    "./usr/share/man/man5/kafka-iggy-bridge.toml.5.gz": 0o644,
    "./usr/share/doc/kafka-iggy-bridge/copyright": 0o644,
    "./usr/share/doc/kafka-iggy-bridge/README.md.gz": 0o644,
    "./usr/share/doc/kafka-iggy-bridge/changelog.Debian.gz": 0o644,
    "./usr/share/doc/kafka-iggy-bridge/examples/mm2.properties": 0o644,
    "./usr/share/doc/kafka-iggy-bridge/examples/mm2-exactly-once.properties": 0o644,
}


def test_deb_contents_are_the_binary_conffile_unit_man_pages_and_docs(deb):
    listing = run(["dpkg-deb", "-c", deb]).stdout
    files = {}
    for line in listing.splitlines():
        perms, owner, _size, _date, _time, path = line.split(None, 5)
        files[path] = (perms, owner)
        assert owner == "root/root", line
    for path, mode in EXPECTED_DEB_FILES.items():
        assert path in files, f"{path} missing from the .deb:\n{listing}"
        want = stat.filemode(stat.S_IFREG | mode)
        assert files[path][0] == want, f"{path}: {files[path][0]}, want {want}"


def test_deb_control_names_version_runtime_libraries_and_conffile(deb):
    info = run(["dpkg-deb", "-I", deb]).stdout
    field = lambda name: re.search(r"^ %s: (.*)$" % name, info, re.M).group(1)
    assert field("Package") == NAME
    assert field("Version").startswith(bridge_version() + "-")
    depends = field("Depends")
    print("Depends:", depends)
    names = {d.split()[0] for d in depends.split(", ")}
    for lib in ("libc6", "libstdc++6", "libuv1", "libsqlite3-0", "libssl3", "libzstd1", "liblz4-1", "zlib1g",
                "libsnappy1v5", "libsystemd0", "libfmt9", "libxxhash0", "adduser"):
        assert lib in names, f"{lib} not in Depends: {depends}"
    # Every shared library the binary needs comes from a package in Depends.
    # The owner is looked up by the path the loader resolves, not by the soname alone: another
    # package may ship the same soname for another architecture (libc6-i386's /lib32/libm.so.6,
    # pulled in by clang).
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", run(["readelf", "-d", bridge_bin()]).stdout)
    resolved = dict(re.findall(r"^\s*(\S+) => (/\S+)", run(["ldd", bridge_bin()]).stdout, re.M))
    for soname in needed:
        path = resolved.get(soname)
        assert path, f"{soname} is not resolved by ldd"
        # usrmerge: dpkg records /lib/... while the loader may report /usr/lib/... (or the reverse).
        candidates = [path, path[4:] if path.startswith("/usr/") else "/usr" + path]
        owners = set()
        for c in candidates:
            out = run(["dpkg", "-S", c], check=False).stdout
            owners |= {line.split(":")[0] for line in out.splitlines() if ": " in line}
        if owners:
            assert owners & names, f"{soname} ({path}, package {sorted(owners)}) not in Depends: {depends}"
    assert run(["dpkg-deb", "-f", deb, "Installed-Size"]).stdout.strip().isdigit()
    assert run(["dpkg-deb", "-I", deb, "conffiles"]).stdout.split() == [f"/etc/{NAME}/{NAME}.toml"]
    for script in ("postinst", "prerm", "postrm"):
        text = run(["dpkg-deb", "-I", deb, script]).stdout
        with tempfile.NamedTemporaryFile("w", suffix=script) as f:
            f.write(text)
            f.flush()
            run(["sh", "-n", f.name])
    postinst = run(["dpkg-deb", "-I", deb, "postinst"]).stdout
    assert "adduser --quiet --system --group" in postinst and "check-config" in postinst


def test_deb_unpacks_and_the_unpacked_binary_accepts_the_unpacked_config(deb, tmp_path):
    root = str(tmp_path / "root")
    run(["dpkg-deb", "-x", deb, root])
    binary = os.path.join(root, "usr/bin", NAME)
    conf = os.path.join(root, "etc", NAME, NAME + ".toml")
    with open(conf, "rb") as f:
        assert tomllib.load(f)["state"]["path"] == "/var/lib/kafka-iggy-bridge/state.db"
    r = run([binary, "check-config", "--config", conf])
    assert 'path = "/var/lib/kafka-iggy-bridge/state.db"' in r.stdout
    assert bridge_version() in run([binary, "version"]).stdout
    with open(os.path.join(root, "lib/systemd/system", NAME + ".service")) as f, open(UNIT) as g:
        assert f.read() == g.read()
    for page, src in (("usr/share/man/man8/kafka-iggy-bridge.8.gz", MAN8),
                      ("usr/share/man/man5/kafka-iggy-bridge.toml.5.gz", MAN5)):
        with gzip.open(os.path.join(root, page), "rt") as f, open(src) as g:
            assert f.read() == g.read()


def wait_port(port, proc, timeout=15, log=lambda: ""):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError("bridge exited with %s\n%s" % (proc.returncode, log()))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("bridge did not listen on %d\n%s" % (port, log()))


def http_status(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return None, str(e)


def point_config_at(conf_path, kafka_port, http_port, iggy_address, state_path=None):
    """Edits an installed config the way an operator would: ports, the Iggy address, and
    (outside a real install) the state path."""
    with open(conf_path) as f:
        text = f.read()
    text = text.replace('listeners = ["PLAINTEXT://127.0.0.1:9092"]', f'listeners = ["PLAINTEXT://127.0.0.1:{kafka_port}"]')
    text = text.replace('address = "127.0.0.1:8090"', f'address = "{iggy_address}"')
    text = text.replace('listen = "127.0.0.1:9644"', f'listen = "127.0.0.1:{http_port}"')
    if state_path:
        text = text.replace('path = "/var/lib/kafka-iggy-bridge/state.db"', f'path = "{state_path}"')
    with open(conf_path, "w") as f:
        f.write(text)


def serve_and_check_with_kcat(cmd, kafka_port, http_port, log_path):
    require("kcat", "kcat")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    read_log = lambda: open(log_path, errors="replace").read()
    try:
        wait_port(kafka_port, proc, log=read_log)
        r = run(["kcat", "-b", f"127.0.0.1:{kafka_port}", "-L", "-m", "10"], timeout=30)
        assert "1 brokers:" in r.stdout, r.stdout
        deadline = time.time() + 15
        while time.time() < deadline and http_status(http_port, "/readyz")[0] != 200:
            time.sleep(0.2)
        assert http_status(http_port, "/healthz") == (200, "ok\n"), read_log()
        assert http_status(http_port, "/readyz")[0] == 200, read_log()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0, read_log()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return read_log()


def test_unpacked_binary_serves_kcat_with_the_unpacked_config_against_iggy(deb, tmp_path, iggy):
    root = str(tmp_path / "root")
    run(["dpkg-deb", "-x", deb, root])
    conf = os.path.join(root, "etc", NAME, NAME + ".toml")
    kafka_port, http_port = free_port(), free_port()
    point_config_at(conf, kafka_port, http_port, iggy.address, state_path=str(tmp_path / "state.db"))
    serve_and_check_with_kcat([os.path.join(root, "usr/bin", NAME), "serve", "--config", conf],
                              kafka_port, http_port, str(tmp_path / "bridge.log"))
    assert (tmp_path / "state.db").exists()


# ---- the .rpm ---------------------------------------------------------------------------

EXPECTED_RPM_FILES = {
    "/usr/bin/kafka-iggy-bridge", "/etc/kafka-iggy-bridge", "/etc/kafka-iggy-bridge/kafka-iggy-bridge.toml",
    "/usr/lib/systemd/system/kafka-iggy-bridge.service", "/usr/share/man/man8/kafka-iggy-bridge.8.gz",
    "/usr/share/man/man5/kafka-iggy-bridge.toml.5.gz", "/var/lib/kafka-iggy-bridge",
    "/usr/share/doc/kafka-iggy-bridge/examples/mm2.properties",
    "/usr/share/doc/kafka-iggy-bridge/examples/mm2-exactly-once.properties",
}


def test_rpm_lists_files_requires_config_and_scriptlets(rpm):
    files = set(run(["rpm", "-qpl", rpm]).stdout.split())
    assert EXPECTED_RPM_FILES <= files, files
    requires = run(["rpm", "-qpR", rpm]).stdout.split("\n")
    print("Requires:", ", ".join(r.strip() for r in requires if r.strip()))
    for name in ("libuv", "sqlite-libs", "openssl-libs", "snappy", "lz4-libs", "libzstd", "zlib", "systemd-libs",
                 "fmt", "xxhash-libs", "libstdc++", "glibc", "shadow-utils"):
        assert name in [r.strip() for r in requires], f"{name} not required"
    assert run(["rpm", "-qp", "--qf", "%{VERSION}", rpm]).stdout == bridge_version()
    flags = run(["rpm", "-qp", "--qf", "[%{FILENAMES}|%{FILEFLAGS:fflags}|%{FILEUSERNAME}:%{FILEGROUPNAME}|"
                                      "%{FILEMODES:perms}\n]", rpm]).stdout
    attrs = {l.split("|")[0]: l.split("|")[1:] for l in flags.splitlines()}
    assert attrs[f"/etc/{NAME}/{NAME}.toml"] == ["cn", f"root:{NAME}", "-rw-r-----"], flags  # %config(noreplace)
    assert attrs[f"/var/lib/{NAME}"] == ["", f"{NAME}:{NAME}", "drwxr-x---"], flags
    scripts = run(["rpm", "-qp", "--scripts", rpm]).stdout
    assert "useradd -r -g kafka-iggy-bridge" in scripts and "preinstall scriptlet" in scripts


def test_rpm_installs_and_erases_in_a_temporary_root(rpm, tmp_path):
    root = str(tmp_path / "root")
    os.makedirs(root)
    db = ["--root", root, "--dbpath", "/var/lib/rpm"]
    run(["rpm", *db, "--initdb"])
    # An empty root has no /bin/sh for the scriptlets: they run in the debootstrap test.
    r = run(["rpm", "-i", "--nodeps", "--noscripts", *db, rpm])
    for path in EXPECTED_RPM_FILES:
        assert os.path.exists(root + path), f"{path} not installed\n{r.stderr}"
    assert os.access(root + "/usr/bin/kafka-iggy-bridge", os.X_OK)
    assert run(["rpm", "-q", *db, NAME]).stdout.startswith(f"{NAME}-{bridge_version()}-")
    run(["rpm", "-V", "--nodeps", "--nouser", "--nogroup", *db, NAME])
    run(["rpm", "-e", "--nodeps", "--noscripts", *db, NAME])
    for path in EXPECTED_RPM_FILES:
        assert not os.path.exists(root + path), f"{path} left after rpm -e"


# ---- a real install into a fresh Debian 12 root ------------------------------------------

def debootstrap_base(dest):
    """A minbase Debian 12 root in `dest`, from the cache when there is one."""
    os.makedirs(CACHE, exist_ok=True)
    tarball = os.path.join(CACHE, "debian12-minbase.tar.gz")
    if os.path.exists(tarball):
        run(["tar", "-xzf", tarball, "-C", dest, "--numeric-owner"], timeout=300)
        return
    t0 = time.time()
    r = run(["debootstrap", "--variant=minbase", "bookworm", dest, MIRROR], timeout=900, check=False)
    if r.returncode != 0:
        pytest.skip("SKIPPED: debootstrap of Debian 12 failed (no network to %s?):\n%s" % (MIRROR, r.stderr[-2000:]))
    print("debootstrap took %.0fs" % (time.time() - t0))
    tmp = tarball + ".tmp"
    run(["tar", "-czf", tmp, "-C", dest, "--numeric-owner", "."], timeout=600)
    os.replace(tmp, tarball)


class Chroot:
    def __init__(self, root):
        self.root = root
        self.mounted = []

    def __enter__(self):
        for fs, target in (("proc", "proc"),):
            path = os.path.join(self.root, target)
            run(["mount", "-t", fs, fs, path])
            self.mounted.append(path)
        shutil.copy("/etc/resolv.conf", os.path.join(self.root, "etc/resolv.conf"))
        return self

    def __exit__(self, *exc):
        for path in reversed(self.mounted):
            subprocess.run(["umount", "-l", path])

    def run(self, *cmd, check=True, timeout=600, env=None):
        e = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LANG": "C.UTF-8",
             **(env or {})}
        return run(["chroot", self.root, *cmd], check=check, timeout=timeout, env=e)

    def path(self, p):
        return os.path.join(self.root, p.lstrip("/"))


def leftovers(root):
    """Every path under `root` whose name mentions the package, outside apt's logs and caches."""
    skip = {os.path.join(root, p) for p in ("proc", "var/log", "var/cache/apt", "var/lib/apt", "tmp")}
    found = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if os.path.join(d, x) not in skip]
        found += [os.path.join(d, x)[len(root):] for x in dirs + files if NAME in x]
    return sorted(found)


def optional_fixture(request, name):
    """The fixture's value, or None (with the reason printed) when it skips."""
    try:
        return request.getfixturevalue(name)
    except pytest.skip.Exception as e:
        print(f"{name}: {e}")
        return None


def test_deb_installs_runs_and_purges_in_a_fresh_debian12_root(deb, tmp_path, request):
    if os.environ.get("KIB_PKG_DEBOOTSTRAP") == "0":
        pytest.skip("SKIPPED: KIB_PKG_DEBOOTSTRAP=0")
    if os.geteuid() != 0:
        pytest.skip("SKIPPED: the Debian 12 root install needs root (debootstrap, chroot, mount)")
    require("debootstrap", "debootstrap")
    iggy = optional_fixture(request, "iggy")
    rpm = optional_fixture(request, "rpm")
    t0 = time.time()
    root = str(tmp_path / "debian12")
    os.makedirs(root)
    try:
        debootstrap_base(root)
        with Chroot(root) as ch:
            shutil.copy(deb, ch.path("/tmp/"))
            pkg = "/tmp/" + os.path.basename(deb)
            ch.run("apt-get", "update", "-qq", timeout=300)
            # The README's install command; apt resolves Depends from the Debian mirror.
            r = ch.run("apt-get", "install", "-y", "-q", "--no-install-recommends", pkg, timeout=600)
            print("apt install: %.0fs since start" % (time.time() - t0))
            assert ch.run("dpkg-query", "-W", "-f=${Status}", NAME).stdout == "install ok installed"

            # System user and group, state directory, config permissions, enabled unit.
            pw = ch.run("getent", "passwd", NAME).stdout.strip().split(":")
            assert int(pw[2]) < 1000 and pw[5] == f"/var/lib/{NAME}" and pw[6] == "/usr/sbin/nologin", pw
            st = os.stat(ch.path(f"/var/lib/{NAME}"))
            assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (int(pw[2]), 0o750)
            cf = os.stat(ch.path(f"/etc/{NAME}/{NAME}.toml"))
            assert (cf.st_uid, cf.st_gid, stat.S_IMODE(cf.st_mode)) == (0, int(pw[3]), 0o640)
            assert os.path.islink(ch.path(f"/etc/systemd/system/multi-user.target.wants/{NAME}.service")), \
                "a valid default config should enable the unit\n" + r.stdout + r.stderr
            ch.run("/usr/bin/" + NAME, "check-config")  # the default --config path

            # The installed binary, as the service user, with the installed (edited) config.
            if iggy is not None:
                kafka_port, http_port = free_port(), free_port()
                point_config_at(ch.path(f"/etc/{NAME}/{NAME}.toml"), kafka_port, http_port, iggy.address)
                # As the unit would run it: the service user, UMask=0077.
                log = serve_and_check_with_kcat(
                    ["chroot", f"--userspec={pw[2]}:{pw[3]}", root, "/bin/sh", "-c",
                     f"umask 0077 && exec /usr/bin/{NAME} serve --config /etc/{NAME}/{NAME}.toml"],
                    kafka_port, http_port, str(tmp_path / "bridge.log"))
                db = os.stat(ch.path(f"/var/lib/{NAME}/state.db"))
                assert db.st_uid == int(pw[2]) and stat.S_IMODE(db.st_mode) & 0o007 == 0, log

            # Purge: nothing of the package is left (apt's own logs and caches aside).
            ch.run("apt-get", "purge", "-y", "-q", NAME)
            assert ch.run("getent", "passwd", NAME, check=False).returncode == 2
            assert ch.run("getent", "group", NAME, check=False).returncode == 2
            assert leftovers(root) == []

            # An invalid configuration: installed, but neither enabled nor started.
            os.makedirs(ch.path(f"/etc/{NAME}"))
            with open(ch.path(f"/etc/{NAME}/{NAME}.toml"), "w") as f:
                f.write("[kafka]\nlistenrs = []\n")
            r = ch.run("dpkg", "-i", "--force-confold", pkg)
            assert "is not valid; the service is not started" in r.stderr and "listenrs: unknown key" in r.stderr, \
                r.stdout + r.stderr
            assert not os.path.lexists(ch.path(f"/etc/systemd/system/multi-user.target.wants/{NAME}.service"))
            ch.run("dpkg", "--purge", NAME)
            assert leftovers(root) == []

            # The .rpm with its scriptlets (rpm from this machine, chrooted into the root).
            if rpm is not None:
                db_opts = ["--root", root, "--dbpath", "/var/lib/rpm"]
                run(["rpm", *db_opts, "--initdb"])
                run(["rpm", "-i", "--nodeps", *db_opts, rpm])
                assert ch.run("getent", "passwd", NAME).returncode == 0  # created by %pre
                st = os.stat(ch.path(f"/var/lib/{NAME}"))
                assert st.st_uid == int(ch.run("id", "-u", NAME).stdout) and stat.S_IMODE(st.st_mode) == 0o750
                ch.run("/usr/bin/" + NAME, "check-config")
                run(["rpm", "-e", "--nodeps", *db_opts, NAME])
                assert not os.path.exists(ch.path("/usr/bin/" + NAME))
    finally:
        subprocess.run(["umount", "-l", os.path.join(root, "proc")], capture_output=True)
        if not os.path.ismount(os.path.join(root, "proc")):
            shutil.rmtree(root, ignore_errors=True)  # ~300 MB
    print("Debian 12 root install test: %.0fs" % (time.time() - t0))
    missing = [what for what, have in (("serving kcat (no iggy-server)", iggy), ("the .rpm (no rpmbuild)", rpm))
               if have is None]
    if missing:
        pytest.skip("SKIPPED after install, purge and invalid-config checks passed: " + ", ".join(missing))


# ---- container files (no Docker engine here: syntax and references only) ----------------

def test_compose_file_parses_and_wires_the_bridge_to_iggy():
    try:
        import yaml
    except ImportError:
        pytest.skip("SKIPPED: PyYAML is not installed (pip install pyyaml) to parse packaging/docker-compose.yml")
    with open(os.path.join(ROOT, "packaging", "docker-compose.yml")) as f:
        doc = yaml.safe_load(f)
    services = doc["services"]
    assert set(services) == {"iggy", "bridge"}
    bridge = services["bridge"]
    assert bridge["build"]["dockerfile"] == "packaging/Dockerfile"
    assert os.path.isfile(os.path.join(ROOT, "packaging", bridge["build"]["context"], bridge["build"]["dockerfile"]))
    assert bridge["depends_on"]["iggy"]["condition"] == "service_healthy"
    assert "IGGY_IMAGE" in services["iggy"]["image"]
    with open(os.path.join(ROOT, "packaging", "docker", NAME + ".toml"), "rb") as f:
        cfg = tomllib.load(f)
    assert cfg["iggy"]["address"] == "iggy:8090"
    published = {p.split(":")[-1] for p in bridge["ports"]}
    assert {cfg["kafka"]["listeners"][0].split(":")[-1], cfg["http"]["listen"].split(":")[-1]} <= published


def test_container_config_is_accepted_by_check_config():
    require_binary()
    run([bridge_bin(), "check-config", "--config", os.path.join(ROOT, "packaging", "docker", NAME + ".toml")])


def test_dockerfile_copies_files_that_exist_and_builds_the_deb_like_make_deb():
    with open(os.path.join(ROOT, "packaging", "Dockerfile")) as f:
        text = f.read()
    assert text.count("\nFROM ") + text.startswith("FROM ") >= 2
    for src in re.findall(r"^COPY (?:--\S+ )*(?:\\\n\s*)?(\S+)\s", text, flags=re.M):
        if src not in (".",) and not src.startswith("/"):
            assert os.path.exists(os.path.join(ROOT, src)), f"Dockerfile copies missing {src}"
    assert "packaging/build-deb build/release/kafka-iggy-bridge" in text
    assert "USER kafka-iggy-bridge" in text
