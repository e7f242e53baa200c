"""AppCDS for the jvm executor (execution/class_sharing.py, issue 48): the archive is
built once per key after enough plain starts, used by the JVM (its classes come from
the "shared objects file"), bound read-only into the sandboxed job with nothing else of
the state folder, and a damaged archive costs a plain start with the same output (the
JVM's own fallback), then a rebuild by the next process."""
from __future__ import annotations

import shutil

import pytest

from pytest_specbench.execution import class_sharing, jvm_store
from pytest_specbench.execution.jvm import JVM_FLAGS, JavaJob, JvmExecutor

pytestmark = pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                                reason="javac/java not found: apt-get install openjdk-17-jdk-headless")

PROBE = """
import java.nio.file.*;
public class Probe {
    public static void main(String[] a) throws Exception {
        StringBuilder out = new StringBuilder(Helper.word());
        for (String p : a) {  // what the job may do with each path
            Path path = Paths.get(p);
            boolean read;
            try { Files.readAllBytes(path); read = true; } catch (Exception e) { read = false; }
            boolean write;
            try { Files.write(path, new byte[] {1}, StandardOpenOption.APPEND); write = true; } catch (Exception e) { write = false; }
            out.append(" ").append(read ? "r" : "-").append(write ? "w" : "-");
        }
        System.out.println(out);
    }
}
class Helper { static String word() { return "probe"; } }
"""
LOG = ("-Xlog:class+load=info:stderr",)  # part of the archive's key (its flags), the same in every start


def test_archive_built_once_used_read_only_and_a_damaged_one_is_a_plain_start(tmp_path, monkeypatch):
    monkeypatch.setattr(class_sharing, "BUILD_AFTER", 2)
    # The suite's store (tests/conftest.py): its warm-up classes are there, or made once for the
    # suite; Probe's classes, jar and archive are this test's alone (keys of their own), and the
    # builds are counted by this executor (``sharing.builds``).  A store of its own compiled the
    # harness's Java again for this test alone (a javac job, ~1.5 CPU s).
    ex = JvmExecutor(tmp_path / "jvm", isolate=True, state_dir=tmp_path, class_sharing=True)
    store = ex.store.root
    try:
        classes = ex.compile({"Probe.java": PROBE}, use_server=False, trusted=True).classes
        # (a javac job may have made the warm javac's archive first, if the store had none: not Probe's)
        ex.sharing.builds = 0
        job = JavaJob(main="Probe", classpath=(classes,), flags=LOG, wall_seconds=120)
        jar = store / "jars" / class_sharing._folder_digest(classes)
        entry = store / "cds" / ex.sharing.key([(classes, class_sharing._folder_digest(classes))], JVM_FLAGS + LOG, ())
        first = ex.run(None, job)  # one plain start counted: no archive yet
        assert first.exit_code == 0 and first.stdout.strip() == "probe" and ex.sharing.builds == 0
        assert "Probe source: file:" in first.stderr and not entry.exists()
        assert not jar.exists()  # below BUILD_AFTER nothing is made
        second = ex.run(None, job)  # the second: built, then used
        archive = entry / class_sharing.ARCHIVE
        assert jar.is_dir() and archive.is_file()
        assert ex.sharing.builds == 1 and oct(archive.stat().st_mode & 0o777) == "0o444"
        assert "Probe source: shared objects file (top)" in second.stderr
        assert "Helper source: shared objects file (top)" in second.stderr
        # In the job: the archive is readable and not writable; the rest of the state folder is hidden.
        side = archive.with_name(jvm_store.SEAL)
        probe = ex.run(None, JavaJob(main="Probe", classpath=(classes,), flags=LOG, wall_seconds=120,
                                     args=(str(archive), str(side))))
        assert probe.stdout.strip() == "probe r- --" and ex.sharing.builds == 1
        assert "Probe source: shared objects file (top)" in probe.stderr
        assert ex.shared_starts == 2 and ex.starts == 3

        # Damaged under a process that checked it already: the JVM refuses it, a plain start, same output.
        archive.chmod(0o644)
        with open(archive, "r+b") as fh:
            fh.seek(0)
            fh.write(b"\0" * 64)
        damaged = ex.run(None, job)
        assert damaged.exit_code == 0 and damaged.stdout == first.stdout
        assert "Probe source: file:" in damaged.stderr and "shared objects file (top)" not in damaged.stderr
    finally:
        ex.close()
    # The next process sees the seal differ: the archive is built again and used.
    jvm_store._CHECKED.clear()  # (what a new process has checked: nothing)
    again = JvmExecutor(tmp_path / "jvm", isolate=False, state_dir=tmp_path, class_sharing=True, store=store)
    rebuilt = again.run(None, JavaJob(main="Probe", classpath=(classes,), flags=LOG, wall_seconds=120))
    assert again.sharing.builds == 1 and rebuilt.stdout == first.stdout
    assert "Probe source: shared objects file (top)" in rebuilt.stderr
