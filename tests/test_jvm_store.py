"""The store of the JVM's trusted build products (execution/jvm_store.py, issues 45 and 48) as
an attacker sees it: a place to poison so that later checks, in this run or another state
folder's, load forged runtime classes.  A Java job (its entries on its class path) and a Python
job (the store on no path of its) try to write, replace, plant and read the key; an entry
changed on disk is never used again, whoever changed it.

The store here is the shared one (``$SPECBENCH_JVM_STORE``) in a folder of the checkout, not in
/tmp (which every sandbox covers anyway): only the store's own walls can keep it then."""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from pathlib import Path

import pytest

from pytest_specbench.execution import jvm_store
from pytest_specbench.execution.jvm import JavaJob, JvmExecutor

PROJECT = Path(__file__).resolve().parents[1]
JAVA = bool(shutil.which("javac") and shutil.which("java"))

# Program code (a trusted fixture standing for what a sample's code can do in a JVM job)
# with the store's entry on its class path: each attempt prints "name:yes" or "name:no".
ATTACK = r"""
package specbench.t;
import java.nio.file.*;
public class Attack {
    static void attempt(StringBuilder out, String name, java.util.concurrent.Callable<Object> what) {
        String got;
        try { Object v = what.call(); got = v == null ? "yes" : "yes " + v; } catch (Throwable t) { got = "no"; }
        out.append(name).append(':').append(got).append('\n');
    }
    public static void main(String[] a) throws Exception {
        Path entry = Paths.get(a[0]), root = Paths.get(a[1]);
        Path mine = entry.resolve("specbench/t/Trusted.class");
        StringBuilder out = new StringBuilder();
        attempt(out, "read", () -> { Files.readAllBytes(mine); return null; });
        attempt(out, "overwrite", () -> { Files.write(mine, new byte[] {1, 2, 3}); return null; });
        attempt(out, "append", () -> { Files.write(mine, new byte[] {1}, StandardOpenOption.APPEND); return null; });
        attempt(out, "chmod", () -> mine.toFile().setWritable(true, false) ? null : "refused");
        attempt(out, "delete", () -> { Files.delete(mine); return null; });
        attempt(out, "plant in entry", () -> { Files.write(entry.resolve("specbench/t/Evil.class"), new byte[] {1}); return null; });
        attempt(out, "seal", () -> { Files.write(entry.resolve(".seal"), "0".getBytes()); return null; });
        attempt(out, "rename entry", () -> { Files.move(entry, entry.resolveSibling("moved")); return null; });
        attempt(out, "list store", () -> { try (var s = Files.list(root)) { return s.count() > 0 ? null : "empty"; } });
        attempt(out, "read key", () -> { Files.readAllBytes(root.resolve("key")); return null; });
        attempt(out, "plant entry", () -> {
            Path e = root.resolve("classes").resolve("f00d");
            Files.createDirectories(e);
            Files.write(e.resolve("X.class"), new byte[] {1});
            return null;
        });
        System.out.print(out);
    }
}
"""
TRUSTED = "package specbench.t;\npublic class Trusted { public static String word() { return \"trusted\"; } }\n"

# The same, from a Python job (a sample's code): the store is on no path it was given.
PYTHON_ATTACK = """
import json, os
def f(root, entry):
    out = {}
    def attempt(name, what):
        try:
            what()
            out[name] = "yes"
        except BaseException as exc:
            out[name] = "no " + type(exc).__name__
    def plant():
        os.makedirs(os.path.join(root, "classes", "f00d"))
    def replace():
        os.makedirs(os.path.join(root, "classes", "tmp-x"))
        os.rename(os.path.join(root, "classes", "tmp-x"), entry)
    def overwrite():
        with open(os.path.join(entry, "specbench", "t", "Trusted.class"), "wb") as fh:
            fh.write(b"forged")
    attempt("list store", lambda: os.listdir(root) or 1 / 0)
    attempt("read key", lambda: open(os.path.join(root, "key"), "rb").read())
    attempt("read entry", lambda: os.listdir(entry))
    attempt("overwrite", overwrite)
    attempt("plant entry", plant)
    attempt("replace entry", replace)
    return json.dumps(out, sort_keys=True)
"""


@pytest.fixture(scope="module")
def store_root():
    """The shared store, in a folder of the checkout (removed at the end), for this module."""
    root = PROJECT / f".jvm-store-test-{os.getpid()}-{secrets.token_hex(3)}"
    before = os.environ.get(jvm_store.ENV)
    os.environ[jvm_store.ENV] = str(root)
    try:
        yield root
    finally:
        if before is None:
            os.environ.pop(jvm_store.ENV, None)
        else:
            os.environ[jvm_store.ENV] = before
        if root.exists():
            jvm_store._remove(root)


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.skipif(not JAVA, reason="javac/java not found: apt-get install openjdk-17-jdk-headless")
def test_a_java_job_cannot_write_replace_or_plant_a_store_entry(store_root, tmp_path):
    ex = JvmExecutor(tmp_path / "jvm", isolate=True, state_dir=tmp_path, class_sharing=False)
    try:
        assert ex.store.root == store_root
        res = ex.compile({"specbench/t/Trusted.java": TRUSTED, "specbench/t/Attack.java": ATTACK},
                         use_server=False, trusted=True)
        entry = res.classes
        assert res.ok and entry.parent == store_root / "classes"
        before, listing = _snapshot(entry), sorted(os.listdir(store_root / "classes"))
        run = ex.run(None, JavaJob(main="specbench.t.Attack", classpath=(entry,), args=(str(entry), str(store_root)),
                                   wall_seconds=120))
    finally:
        ex.close()
    got = dict(line.split(":", 1) for line in run.stdout.split("\n") if ":" in line)
    assert got == {"read": "yes", "overwrite": "no", "append": "no", "chmod": "yes refused", "delete": "no",
                   "plant in entry": "no", "seal": "no", "rename entry": "no", "list store": "no",
                   "read key": "no", "plant entry": "no"}, run.stdout + run.stderr[-500:]
    assert _snapshot(entry) == before and sorted(os.listdir(store_root / "classes")) == listing
    jvm_store._CHECKED.clear()  # as a new process: the seal is checked again, and holds
    assert jvm_store.opened(store_root).get("classes", entry.name) == entry


@pytest.mark.slow
def test_a_python_job_sees_no_store(store_root, tmp_path):
    from pytest_specbench.execution.limits import Limits
    from pytest_specbench.execution.python import CallsJob, PythonExecutor

    store = jvm_store.opened(store_root)
    entry = store.put("classes", "e" * 32, {"specbench/t/Trusted.class": b"\xca\xfe\xba\xbe trusted"})
    before = _snapshot(entry)
    ex = PythonExecutor(Limits(call_cpu=2.0, startup_cpu=2.0, memory_mb=512, processes=16, tmp_mb=16))
    try:
        calls = [((str(store_root), str(entry)), {})]
        result = ex.run(None, CallsJob(PYTHON_ATTACK, "f", "store", lambda: calls, range(1)))
    finally:
        ex.close()
    outcome = result.outcomes[0]
    assert outcome.status == "ok", (outcome.status, outcome.exc_type)
    got = {k: v.split(" ")[0] for k, v in json.loads(outcome.value).items()}
    assert got == {k: "no" for k in ("list store", "read key", "read entry", "overwrite", "plant entry",
                                     "replace entry")}, outcome.value
    assert _snapshot(entry) == before and not (store_root / "classes" / "f00d").exists()
    jvm_store._CHECKED.clear()
    assert store.get("classes", entry.name) == entry


def test_an_entry_changed_on_disk_is_moved_aside_and_built_again(store_root, tmp_path, monkeypatch):
    """Damaged, forged with a plain digest, another user's, writable by others, a link, or
    planted without a seal: each is refused when a process first uses it; the executor
    compiles the trusted classes again rather than load what is there."""
    store = jvm_store.opened(store_root)
    good = {"specbench/t/Trusted.class": b"\xca\xfe\xba\xbe trusted", "specbench/t/Other.class": b"other"}

    def tamper_content(e):
        target = e / "specbench" / "t" / "Trusted.class"
        target.chmod(0o644)
        target.write_bytes(b"\xca\xfe\xba\xbe forged")

    def forge_seal(e):  # an attacker without the key: the content changed, the "digest" recomputed
        tamper_content(e)
        (e / jvm_store.SEAL).chmod(0o644)
        (e / jvm_store.SEAL).write_text(hashlib.sha256(b"forged").hexdigest())

    def writable(e):
        (e / "specbench" / "t" / "Trusted.class").chmod(0o666)

    def link(e):
        (e / "specbench").chmod(0o755)
        os.symlink("/etc/passwd", e / "specbench" / "Link.class")

    def foreign(e):
        os.chown(e / "specbench" / "t" / "Trusted.class", 4242, 4242)

    changes = {"content": tamper_content, "forged seal": forge_seal, "writable": writable, "link": link}
    if os.geteuid() == 0:
        changes["another user's file"] = foreign
    for i, (name, change) in enumerate(changes.items()):
        entry = store.put("classes", f"{i:032x}", good)
        jvm_store._CHECKED.clear()
        assert store.get("classes", entry.name) == entry, name  # whole and sealed
        entry.chmod(0o755)
        change(entry)
        entry.chmod(0o555)
        jvm_store._CHECKED.clear()  # a new process
        assert store.get("classes", entry.name) is None and not entry.exists(), name
    planted = store_root / "classes" / ("f" * 32)
    (planted / "specbench").mkdir(parents=True)
    assert store.get("classes", planted.name) is None and not planted.exists()
    assert not list((store_root / "aside").iterdir())  # moved aside, then removed

    # Through the executor: a trusted compile finds its entry changed and builds it again.
    # (never by the warm javac, which compiles samples' sources too: a javac job of its own)
    ex = JvmExecutor(tmp_path / "jvm", isolate=False, state_dir=tmp_path, class_sharing=False)
    javac = []
    monkeypatch.setattr(ex, "_javac_once", lambda *a: javac.append(1) or (0, "", dict(good)))
    monkeypatch.setattr(ex, "_serve", lambda *a: pytest.fail("a trusted compile asked the warm javac"))
    first = ex.compile({"specbench/t/Trusted.java": TRUSTED}, trusted=True)
    first.classes.chmod(0o755)
    tamper_content(first.classes)
    jvm_store._CHECKED.clear()
    again = ex.compile({"specbench/t/Trusted.java": TRUSTED}, trusted=True)
    assert javac == [1, 1] and not again.cached and again.classes == first.classes
    assert (again.classes / "specbench" / "t" / "Trusted.class").read_bytes() == good["specbench/t/Trusted.class"]


def test_a_store_others_may_write_is_not_used(tmp_path, monkeypatch):
    """A shared folder another user could write (or that is not ours) is no store: each state
    folder then keeps its own."""
    root = tmp_path / "open"
    root.mkdir()
    root.chmod(0o777)
    monkeypatch.setenv(jvm_store.ENV, str(root))
    store = jvm_store.for_state(tmp_path / "state" / "jvm")
    assert store.root == tmp_path / "state" / "jvm" / "store"
    monkeypatch.setenv(jvm_store.ENV, "off")
    assert jvm_store.for_state(tmp_path / "s2").root == tmp_path / "s2" / "store"
