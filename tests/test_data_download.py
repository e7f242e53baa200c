"""``specbench data download`` against a local mirror (a real HTTP server on
127.0.0.1 serving a folder made from ``../shared/datasets``): a full download
into an empty cache, a second run that makes no request, a tampered and a
truncated file (never used), an interrupted download (nothing left behind),
offline mode, and the plugin reading the downloaded root.

The fast tests fetch the ContractEval folders (13 files, 19 MB); the whole
root (1,800 files) is one test, which by default downloads the folders with few files
and checks the pins of the others without the network (``SPECBENCH_TESTS_FULL=1``:
downloads them all).
"""
from __future__ import annotations

import gzip
import io
import os
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
# Imported here, before any pytester test: pytester restores sys.modules after each
# test, and a requests whose http.cookiejar was dropped and re-imported fails with
# "You can only merge into CookieJar".
import requests  # noqa: F401

from pytest_specbench.data import fetch, sources
from shared_data import FULL, SHARED_DATA

CONTRACT = ["contracteval", "evalplus"]


class Mirror:
    """A folder served over HTTP; records every request; can cut a file short."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.requests: list[str] = []
        self.cut: dict[str, int] = {}  # path -> bytes sent before the connection is dropped
        mirror = self

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=str(folder), **kw)

            def do_GET(self):  # noqa: N802 - http.server's name
                mirror.requests.append(self.path)
                rel = self.path.lstrip("/")
                if rel in mirror.cut:
                    data = (folder / rel).read_bytes()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: mirror.cut[rel]])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                super().do_GET()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # close() waits until serve_forever next looks at its flag: 0.02 s, not the default 0.5 s
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _copy_folders(dest: Path, folders: list[str]) -> Path:
    for f in folders:
        shutil.copytree(SHARED_DATA / f, dest / f)
    return dest


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    if not (SHARED_DATA / "contracteval").is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    m = Mirror(_copy_folders(tmp_path / "mirror", CONTRACT))
    monkeypatch.setenv("SPECBENCH_DATA_MIRROR", m.url + "/")
    monkeypatch.delenv("SPECBENCH_OFFLINE", raising=False)
    yield m
    m.close()


@pytest.fixture(scope="module")
def downloaded(tmp_path_factory):
    """The ContractEval folders downloaded once, from a mirror of their own, for the tests whose
    starting point is a complete download (a copy each: ~0.02 CPU s, a download ~0.2-0.5).
    That a download into an empty cache is whole and byte for byte the shared copy is
    test_full_download_into_an_empty_cache_then_a_second_run_makes_no_request's."""
    if not (SHARED_DATA / "contracteval").is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    folder = tmp_path_factory.mktemp("downloaded")
    m = Mirror(_copy_folders(folder / "mirror", CONTRACT))
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SPECBENCH_DATA_MIRROR", m.url + "/")
            patch.delenv("SPECBENCH_OFFLINE", raising=False)
            rc, lines = _download(CONTRACT, folder / "cache")
    finally:
        m.close()
    assert rc == 0 and all(fetch.is_complete(folder / "cache", f) for f in CONTRACT), lines
    return folder / "cache"


def _a_copy_of(downloaded: Path, root: Path) -> Path:
    shutil.copytree(downloaded, root)
    return root


def _download(folders, root) -> tuple[int, list[str]]:
    out = io.StringIO()
    rc = fetch.download(folders, root, out=out)
    return rc, out.getvalue().splitlines()


def test_full_download_into_an_empty_cache_then_a_second_run_makes_no_request(mirror, tmp_path):
    root = tmp_path / "cache"
    rc, lines = _download(CONTRACT, root)
    assert rc == 0, lines
    pinned = [e for f in CONTRACT for e in fetch.entries(f)]
    assert len(mirror.requests) == len(pinned) == 13
    for e in pinned:  # byte for byte what the shared copy holds: the reference scores the same on it
        assert (root / e.rel).read_bytes() == (SHARED_DATA / e.rel).read_bytes(), e.rel
        assert fetch.content_sha256(root / e.rel) == e.sha256
        assert (root / e.rel).stat().st_mode & 0o044 == 0o044  # readable by the sandbox's uids
    assert all(fetch.is_complete(root, f) for f in CONTRACT)
    assert any(line.startswith("contracteval: 10 files verified") and "license: contracteval/LICENSE" in line
               for line in lines), lines
    assert not (root / ".partial").exists()

    mirror.requests.clear()
    rc, lines = _download(CONTRACT, root)
    assert rc == 0 and mirror.requests == []
    assert all("nothing fetched" in line for line in lines), lines


def test_a_tampered_file_is_never_used_and_the_line_names_file_and_hashes(mirror, tmp_path):
    license_ = mirror.folder / "contracteval" / "LICENSE"
    license_.write_text(license_.read_text() + "\nAll rights reserved, actually.\n")
    pinned = next(e for e in fetch.entries("contracteval") if e.rel == "contracteval/LICENSE")
    root = tmp_path / "cache"
    rc, lines = _download(["contracteval"], root)
    assert rc == 1
    bad = [line for line in lines if "contracteval/LICENSE" in line and "sha256" in line]
    assert len(bad) == 1, lines
    assert pinned.sha256 in bad[0] and fetch.content_sha256(license_) in bad[0] and "not used" in bad[0]
    assert not (root / "contracteval" / "LICENSE").exists()
    assert not fetch.is_complete(root, "contracteval")

    shutil.copy(SHARED_DATA / "contracteval" / "LICENSE", license_)  # the mirror is repaired: only that file again
    mirror.requests.clear()
    rc, _ = _download(["contracteval"], root)
    assert rc == 0 and mirror.requests == ["/contracteval/LICENSE"]


def test_truncated_files_are_never_used(mirror, tmp_path):
    for rel in ("evalplus/HumanEvalPlus-v0.1.10.jsonl.gz", "evalplus/MbppPlus-v0.2.0.jsonl"):
        data = (mirror.folder / rel).read_bytes()
        (mirror.folder / rel).write_bytes(data[: len(data) // 2])
    root = tmp_path / "cache"
    rc, lines = _download(["evalplus"], root)
    assert rc == 1
    assert any("HumanEvalPlus-v0.1.10.jsonl.gz" in line and "not used" in line for line in lines), lines
    assert any("MbppPlus-v0.2.0.jsonl: sha256" in line and "not used" in line for line in lines), lines
    assert not (root / "evalplus" / "HumanEvalPlus-v0.1.10.jsonl.gz").exists()
    assert not (root / "evalplus" / "MbppPlus-v0.2.0.jsonl").exists()
    assert (root / "evalplus" / "LICENSE").is_file()  # the good file is kept: the next run fetches only the rest


def test_an_interrupted_download_leaves_nothing_and_the_next_run_starts_it_again(mirror, tmp_path):
    rel = "evalplus/MbppPlus-v0.2.0.jsonl"
    mirror.cut[rel] = 100_000  # the connection drops after 100 kB of 2.6 MB
    root = tmp_path / "cache"
    rc, lines = _download(["evalplus"], root)
    assert rc == 1
    assert any(rel.split("/")[1] in line for line in lines), lines
    assert not (root / rel).exists() and not (root / ".partial").exists()
    del mirror.cut[rel]
    mirror.requests.clear()
    rc, lines = _download(["evalplus"], root)
    assert rc == 0 and mirror.requests == ["/" + rel], (lines, mirror.requests)


def test_a_tampered_file_in_the_cache_is_fetched_again(mirror, tmp_path, downloaded):
    root = _a_copy_of(downloaded, tmp_path / "cache")
    target = root / "contracteval" / "upstream" / "total_CS" / "total.jsonl"
    target.write_bytes(target.read_bytes()[:-10])
    mirror.requests.clear()
    rc, lines = _download(["contracteval"], root)
    assert rc == 0 and mirror.requests == ["/contracteval/upstream/total_CS/total.jsonl"]
    assert any(str(target) in line and "does not match the pinned" in line for line in lines), lines


def test_offline_never_touches_the_network(mirror, tmp_path, monkeypatch, downloaded):
    monkeypatch.setenv("SPECBENCH_OFFLINE", "1")
    root = tmp_path / "cache"
    rc, lines = _download(CONTRACT, root)
    assert rc == 1 and mirror.requests == []
    assert len(lines) == 1 and "offline (SPECBENCH_OFFLINE=1)" in lines[0] and "and 10 more" in lines[0], lines
    shutil.rmtree(root, ignore_errors=True)  # then a complete cache (a download's copy), offline again
    _a_copy_of(downloaded, root)
    rc, lines = _download(CONTRACT, root)
    assert rc == 0 and mirror.requests == []
    assert all("offline, nothing fetched" in line for line in lines), lines


def test_a_file_no_upstream_publishes_is_one_line_without_a_mirror(tmp_path, monkeypatch):
    """contracteval_rebuilt.jsonl is derived; this project has no rebuild from the raw files."""
    monkeypatch.delenv("SPECBENCH_DATA_MIRROR", raising=False)
    entry = next(e for e in fetch.entries("contracteval") if e.rel.endswith("contracteval_rebuilt.jsonl"))
    assert entry.url is None
    with pytest.raises(fetch.DownloadError, match="not published upstream"):
        fetch.fetch_file(tmp_path, entry, None, tmp_path / "staging")


def test_the_plugin_reads_the_downloaded_root_by_default_and_refuses_it_once_edited(downloaded, tmp_path, pytester,
                                                                                      monkeypatch, capsys):
    root = _a_copy_of(downloaded, tmp_path / "cache")
    monkeypatch.setenv("SPECBENCH_DATA", str(root))
    result = pytester.runpytest_inprocess(  # in this process: it reads SPECBENCH_DATA at configure
        "-p", "no:cacheprovider", "--specbench=contract,cife", "--model=reference",
        f"--specbench-dir={pytester.path / 'state'}", "-k", "HumanEval/0")
    out = result.stdout.str()
    assert f"specbench: contract on {root} (the SPECBENCH_DATA download cache" in out, out[-2000:]
    # cife/ was not downloaded: cife alone falls back, in one line (contract keeps the cache).
    assert "specbench: cife on the bundled sample suite" in out, out[-2000:]
    assert out.count("cife reads its bundled sample suite") == 1 and f"{root} has no verified cife/" in out
    assert result.ret == 0, out[-3000:]
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 1 and not outcomes.get("failed") and not outcomes.get("errors"), outcomes

    # #44: a downloaded file edited afterwards was used silently.  The run compares the
    # hashes it takes for the manifest with the pins, and refuses in one line.
    edited = root / "contracteval" / "contracteval_rebuilt.jsonl"
    edited.write_text("\n".join(edited.read_text().splitlines()[:-1]) + "\n")
    refused = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--specbench=contract", "--model=reference",
                                           f"--specbench-dir={pytester.path / 'state'}", "--collect-only", "-q")
    errors = [line for line in refused.stderr.lines if line.strip()]
    assert refused.ret == pytest.ExitCode.USAGE_ERROR and len(errors) == 1, errors
    assert str(edited) in errors[0] and "run `specbench data download contracteval` to repair it" in errors[0], errors
    from pytest_specbench.data.cli import _path

    capsys.readouterr()
    assert _path(None) == 1  # `specbench data path` no longer calls it verified
    listed = capsys.readouterr().out.splitlines()
    assert listed[0] == f"{root} (evalplus)" and "altered since it was downloaded" in listed[1], listed
    assert "specbench data download contracteval" in listed[1]
    # A folder of the user's own (no download marker) is taken as it is.
    own = tmp_path / "own"
    shutil.copytree(root / "contracteval", own / "contracteval", ignore=shutil.ignore_patterns(fetch.MARKER))
    shutil.copytree(root / "evalplus", own / "evalplus", ignore=shutil.ignore_patterns(fetch.MARKER))
    mine = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--specbench=contract", "--model=reference",
                                        f"--specbench-data={own}", f"--specbench-dir={pytester.path / 'state'}",
                                        "--collect-only", "-q")
    assert mine.ret == 0, mine.stderr.str()[-1000:]


def test_registries_pin_every_file_with_a_sha256():
    for folder in sources.FOLDERS:
        pinned = fetch.entries(folder)
        assert pinned, folder
        for e in pinned:
            assert e.rel.startswith(folder + "/") and len(e.sha256) == 64 and int(e.sha256, 16) >= 0
            assert e.url is None or e.url.startswith("https://")
    licensed = {f for f, info in sources.FOLDERS.items() if info.license}
    for f in licensed:
        assert any(e.rel == f"{f}/{sources.FOLDERS[f].license}" for e in fetch.entries(f)), f


def test_benchmark_names_map_to_data_folders():
    assert sources.folders_for(["contract", "evalplus"]) == ["contracteval", "evalplus"]
    assert sources.folders_for(["all"]) == list(sources.FOLDERS)
    # a benchmark and a folder of its optional data: the run needs evalplus/, the download brings both
    assert sources.folders_for(["nl2postcond"]) == ["evalplus"]
    assert sources.folders_for(["nl2postcond"], download=True) == ["evalplus", "nl2postcond"]
    with pytest.raises(KeyError, match="unknown family 'nope'"):
        sources.folders_for(["nope"])


def test_each_family_declares_its_data_folders_and_a_family_without_any_keeps_the_download_cache(tmp_path, monkeypatch):
    """No central table: a family folder's DATA names what each of its adapters reads, an
    entry-point family its ``data_folders`` (none here).  Such a family beside the others
    (``--specbench=all`` with a family from another package) used to make the download
    cache look incomplete (an unknown name), so the run silently took the bundled suites."""
    import importlib
    import sys

    from fakes import install_family
    from test_house_toy_family import TOY_FAMILY

    from pytest_specbench import benchmarks

    for package in benchmarks.family_packages():
        family = importlib.import_module(package)
        assert set(getattr(family, "ADAPTERS", {})) <= set(getattr(family, "DATA", {})), package
        assert all(set(f) <= set(sources.FOLDERS) for f in family.DATA.values()), package
    monkeypatch.syspath_prepend(str(install_family(tmp_path / "site", "toyfamily", TOY_FAMILY, "toy")))
    try:
        assert "toy" in benchmarks.known_benchmarks() and benchmarks.data_folders("toy") == ()
        everything = benchmarks.known_benchmarks()
        assert sources.folders_for(everything) == ["cife", "contracteval", "evalplus", "postcondbench",
                                                   "specgenbench", "verina"]
        assert sources.folders_for(["postcond", "toy"]) == ["postcondbench"]
        seen = []
        monkeypatch.setattr(fetch, "is_complete", lambda root, folder: seen.append(folder) or True)
        # nl2postcond/ is optional data (the family runs on evalplus/ alone): not needed to hold the cache
        assert fetch.holds(tmp_path, everything) and sorted(seen) == sorted(set(sources.FOLDERS) - {"nl2postcond"})
        assert not fetch.holds(tmp_path, ["toy"])  # it reads nothing from the cache: bundled, its own data
    finally:
        sys.modules.pop("toyfamily", None)


# The folders of many small files (VERINA 1,217, SpecGenBench 537): each file is one HTTP
# request, which was most of this test's cost.  By default they are checked without the
# network (every pin against the shared copy, below) and the download itself is shown on
# the other folders, which take the same code path file by file; SPECBENCH_TESTS_FULL=1
# downloads every folder.
MANY_FILES = ("verina", "specgenbench")


@pytest.mark.slow
def test_the_whole_root_downloads_from_a_mirror_of_the_shared_data(tmp_path, monkeypatch):
    """``SPECBENCH_DATA_MIRROR=URL specbench data download FOLDERS`` against a server of the
    shared folder itself: every pinned file arrives, checked, identical to the shared copy
    (every folder with SPECBENCH_TESTS_FULL=1; by default all but MANY_FILES, whose pins are
    checked against the shared copy without a download)."""
    if not (SHARED_DATA / "verina").is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    downloaded = [f for f in sources.FOLDERS if FULL or f not in MANY_FILES]
    m = Mirror(SHARED_DATA)
    monkeypatch.setenv("SPECBENCH_DATA_MIRROR", m.url)
    try:
        rc, lines = _download(downloaded, tmp_path / "root")
    finally:
        m.close()
    # the shared folder has no repository archives: PostcondBench's repository is one skip line
    assert rc == 0, lines
    assert [line for line in lines if "skipped" in line] == [
        line for line in lines if line.startswith("postcondbench: skipped keon/algorithms@")]
    for folder in downloaded:
        assert fetch.is_complete(tmp_path / "root", folder)
        for e in fetch.entries(folder):
            assert (tmp_path / "root" / e.rel).read_bytes() == (SHARED_DATA / e.rel).read_bytes()
    # every pin of the folders not downloaded holds for the shared copy a mirror of it serves
    for folder in set(sources.FOLDERS) - set(downloaded):
        assert fetch.verify_folder(SHARED_DATA, folder) == [], folder


def test_postcond_repositories_come_as_checked_source_archives_or_one_skip_line(tmp_path, monkeypatch):
    """keon/algorithms at the tasks' commit, as a source archive (here made with git
    archive from a local clone); every file is checked, a changed one skips the repository."""
    import subprocess
    import tarfile

    from shared_data import REPO_MIRRORS

    gitdir = REPO_MIRRORS / "keon+algorithms" / "repo"
    if not (SHARED_DATA / "postcondbench").is_dir() or not gitdir.is_dir():
        pytest.skip("needs ../shared/datasets/postcondbench and a keon/algorithms clone")
    (repo, commit), = sources.POSTCOND_REPOS
    folder = tmp_path / "mirror"
    _copy_folders(folder, ["postcondbench"])
    archive = folder / "postcondbench" / "repos" / f"keon--algorithms@{commit}.tar.gz"
    archive.parent.mkdir(parents=True)
    made = subprocess.run(["git", "--git-dir", str(gitdir), "archive", "--format=tar.gz",
                           f"--prefix=algorithms-{commit}/", commit], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"commit {commit[:12]} not in {gitdir}")
    # first a tampered archive: one file changed
    tampered = tmp_path / "t.tar.gz"
    with tarfile.open(fileobj=io.BytesIO(made.stdout)) as src, tarfile.open(tampered, "w:gz") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else None
            if m.name.endswith("/README.md") and m.name.count("/") == 1:
                data = data + b"\nchanged\n"
                m.size = len(data)
            dst.addfile(m, io.BytesIO(data) if data is not None else None)
    archive.write_bytes(tampered.read_bytes())
    m = Mirror(folder)
    monkeypatch.setenv("SPECBENCH_DATA_MIRROR", m.url)
    try:
        root = tmp_path / "root"
        rc, lines = _download(["postcondbench"], root)
        assert rc == 0  # the task files are whole; the repository is skipped with one line
        skip = [line for line in lines if "skipped keon/algorithms@" in line]
        assert len(skip) == 1 and "README.md: sha256" in skip[0], lines
        assert not fetch.repo_folder(root, repo).exists()
        archive.write_bytes(made.stdout)
        rc, lines = _download(["postcondbench"], root)
        assert rc == 0 and any("keon/algorithms@" in line and "files verified" in line for line in lines), lines
        assert (fetch.repo_folder(root, repo) / "README.md").is_file()
        assert fetch.repo_folder(root, repo).stat().st_mode & 0o055 == 0o055
    finally:
        m.close()


def test_a_terminal_gets_a_progress_bar_per_file_and_the_download_still_verifies(mirror, tmp_path, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(fetch.sys, "stderr", term)
    rc, lines = _download(["evalplus"], tmp_path / "cache")
    assert rc == 0, lines  # pooch asks the bar for its truth before it knows the size: no TypeError
    assert fetch._progress("x") and not isinstance(fetch._progress("x"), bool)


def test_without_network_each_folder_is_one_line_with_the_ways_out(tmp_path, monkeypatch):
    """#44: offline, `specbench data download evalplus` printed three ConnectionError lines cut
    mid-text and `all` 38 lines.  A proxy nobody listens on stands for "no network" (requests
    honours it for every upstream URL), a closed port for a mirror that is down."""
    dead = "http://127.0.0.1:9"  # the discard port: nothing listens there
    monkeypatch.delenv("SPECBENCH_DATA_MIRROR", raising=False)
    monkeypatch.delenv("SPECBENCH_OFFLINE", raising=False)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, dead)
    folders = sources.folders_for(["all"])
    rc, lines = _download(folders, tmp_path / "cache")
    assert rc == 1
    assert [line.split(":", 1)[0] for line in lines] == folders, lines  # one line per folder, nothing else
    for line in lines:
        assert "cannot reach" in line and "nothing fetched" in line, line
        assert "SPECBENCH_DATA_MIRROR=URL" in line and "by hand" in line and "run the command again" not in line, line
    assert "github" in lines[0]  # names the host it could not reach

    monkeypatch.setenv("SPECBENCH_DATA_MIRROR", dead)
    rc, lines = _download(["evalplus"], tmp_path / "cache")
    assert rc == 1 and len(lines) == 1 and "cannot reach the mirror 127.0.0.1:9 (SPECBENCH_DATA_MIRROR)" in lines[0], lines


def test_nl2postcond_downloads_its_programs_pinned_and_says_how_to_build_the_corpus(tmp_path, monkeypatch):
    """The corpus is derived from upstream's programs, so it is never served: the
    download brings the programs (pinned, checked) and names the build command."""
    if not (SHARED_DATA / "nl2postcond").is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    m = Mirror(_copy_folders(tmp_path / "mirror", ["nl2postcond"]))
    monkeypatch.setenv("SPECBENCH_DATA_MIRROR", m.url + "/")
    monkeypatch.delenv("SPECBENCH_OFFLINE", raising=False)
    try:
        root = tmp_path / "cache"
        rc, lines = _download(["nl2postcond"], root)
    finally:
        m.close()
    assert rc == 0, lines
    assert fetch.is_complete(root, "nl2postcond") and not fetch.verify_folder(root, "nl2postcond")
    programs = next(e for e in fetch.entries("nl2postcond") if e.rel.endswith("merged_codes_preprocessed.jsonl.zip"))
    assert programs.url.startswith("https://raw.githubusercontent.com/microsoft/nl-2-postcond/" + sources.NL2POSTCOND_COMMIT)
    assert not any(e.rel.endswith("corpus.jsonl") for e in fetch.entries("nl2postcond"))  # derived: never served
    assert "specbench nl2postcond build-corpus --specbench-data" in lines[-1] and "not downloaded" in lines[-1], lines
