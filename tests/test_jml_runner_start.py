"""What a JML runner JVM pays at its start (issue 48, docs/timing.md "Session 19"): the runners'
classes make no invokedynamic call site (each one's bootstrap spins classes at every start) and
do not reach java.lang.management (its platform beans' set-up was ~35 ms of a ~200 ms JVM); the
archive of the runner's class path is trained by a run of the runner on a trusted program, so
that the JDK classes its start makes (the security manager's lambdas) are mapped, not made; and
the runner's records are the same with it."""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from pytest_specbench.execution import class_sharing
from pytest_specbench.execution.jvm import JavaJob, JvmExecutor
from pytest_specbench.jml import JmlChecker, runners

pytestmark = pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                                reason="javac/java not found: apt-get install openjdk-17-jdk-headless")

# constant-pool entry sizes after the tag (JVMS 4.4); Long and Double take two slots
_SIZES = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}
INVOKE_DYNAMIC = 18


def constant_pool(data: bytes) -> tuple[set[int], list[str]]:
    """The tags and the UTF-8 strings of a class file's constant pool."""
    count = struct.unpack(">H", data[8:10])[0]
    pos, index, tags, texts = 10, 1, set(), []
    while index < count:
        tag = data[pos]
        tags.add(tag)
        if tag == 1:
            n = struct.unpack(">H", data[pos + 1:pos + 3])[0]
            texts.append(data[pos + 3:pos + 3 + n].decode("utf-8", "replace"))
            pos += 3 + n
        else:
            pos += 1 + _SIZES[tag]
        index += 2 if tag in (5, 6) else 1
    return tags, texts


def test_the_runners_classes_start_without_invokedynamic_or_management(tmp_path):
    jvm = JvmExecutor(tmp_path / "jvm", isolate=False)
    classes = runners.runtime_classes(jvm)  # the JML runtime and JmlRunner (the suite's store: compiled once)
    # JUnitRunner's source (compiled only where JUnit 4 is installed) is held to the same by its text
    files = sorted(classes.rglob("*.class"))
    assert {f.name for f in files} >= {"JmlRunner.class", "RunnerSupport.class", "JmlRt.class"}
    for f in files:
        tags, texts = constant_pool(f.read_bytes())
        assert INVOKE_DYNAMIC not in tags, f"{f.name} has an invokedynamic call site (a lambda or a string concat)"
        assert not any("java/lang/management" in t for t in texts), f"{f.name} reaches java.lang.management"
    junit = (runners.JUNIT_DIR / "specbench" / "jml" / "JUnitRunner.java").read_text()
    assert "->" not in junit and "::" not in junit and "ManagementFactory" not in junit


def test_the_runners_archive_is_trained_by_a_run_and_keeps_the_records(tmp_path, monkeypatch):
    monkeypatch.setattr(class_sharing, "BUILD_AFTER", 1)  # (the first start builds it)
    log = ("-Xlog:class+load=info:stderr",)  # (part of the archive's key: this test's own archive)
    jvm = JvmExecutor(tmp_path / "jvm", isolate=False, class_sharing=True)
    checker = JmlChecker(jvm)
    training = checker.training()
    args, files = training.prepare()  # the training program (trusted, in the store), checked on its 8 calls
    job = JavaJob(main=runners.JML_RUNNER, args=args, classpath=(checker.runtime(),), files=dict(files),
                  flags=log, training=training, wall_seconds=120)
    trained = jvm.run(None, job)  # the archive built (trained by a run of the same), then used
    jvm.sharing.enabled = False
    untrained = jvm.run(None, job)
    assert jvm.starts == 2 and jvm.shared_starts == 1
    records = [[{k: v for k, v in r.items() if k not in ("cpu_ms", "wall_ms")}
                for r in runners.read_records(res.stdout, "specbench-training")] for res in (trained, untrained)]
    assert records[0] == records[1] and len(records[0]) == 9 and records[0][-1] == {"nonce": "specbench-training",
                                                                                    "done": True}
    assert [r["verdict"] for r in records[0][:-1]] == ["holds", "precondition", "holds", "holds", "holds",
                                                         "violated", "crashed", "violated"]
    # made by the security manager's start, only ever loaded by running it: in the archive (the training ran)
    assert "java.lang.SecurityManager$$Lambda" in untrained.stderr
    made = [ln for ln in trained.stderr.splitlines() if "SecurityManager$$Lambda" in ln]
    assert made and all("shared objects file (top)" in ln for ln in made), made[:2]
    assert "specbench.jml.JmlRunner source: shared objects file (top)" in trained.stderr
    assert "shared objects file (top)" not in untrained.stderr
