"""The record area: a child's result records in memory shared with its zygote.

Why.  A Python job answers one record per call, often a thousand calls in a
few milliseconds.  Written to a pipe, every record cost a write in the child,
a wake-up, a read and a frame in the zygote, and a frame read in the harness:
about 10 µs per call against the sample's 1 µs.  Buffering the records in the
child's own memory would save that but lose the records of a child that dies
mid-batch (``os._exit``, SIGKILL at the CPU rlimit, a segfault): EvalPlus keeps
the per-input results written before such a death, and so must we.  So the
child appends its records to a shared mapping the zygote created before the
fork; the mapping outlives the child, and the zygote forwards what it holds
when woken, every :data:`POLL_SECONDS` while the child runs, and once more
after it died.

Layout: a header page, then the records as bytes, never overwritten within a
job (so the zygote can read them while the child writes, without locks):

* ``end`` (u64 at 0): bytes of records committed so far.  The child copies a
  record in first and moves ``end`` after, so a child killed mid-copy leaves
  no partial record behind.
* ``sealed`` (u64 at 8): 0, or 1 + the final ``end`` once the area was full.
  A record that does not fit seals the area, and that record and all after it
  go through the pipe instead (the zygote forwards the sealed area first, so
  the order is kept).  Outputs of megabytes take that path.

Before the seal the pipe carries only wake-up newlines, written at most once
per :data:`WAKE_CPU_SECONDS` of the child's CPU time, so the harness learns
of a wrong answer (and stops the child) within about a millisecond of work
without paying a wake-up per call.  The zygote drops what the pipe carries
before the seal: whatever else is there, sample code wrote.

Trust: sample code can find the mapping and write there, as it can write on
the pipe; the harness trusts only what a sample could have said anyway (one
record per call, in call order, each field within its cap).  The zygote reads
at most the area's size, whatever ``end`` says.  A fresh mapping per job: a
reused one kept the previous job's records behind a cleared header, for a
sample to read and return (issue #50).
"""
from __future__ import annotations

import mmap
import os
import struct

HEADER = 4096
SIZE = 16 << 20  # virtual; pages are touched only as records are written
POLL_SECONDS = 0.02  # the zygote's look at the area while the child runs (a child stuck in a call)
WAKE_CPU_SECONDS = 0.001
_U64 = struct.Struct("<Q")


def create(size: int = SIZE) -> mmap.mmap:
    """A shared anonymous mapping, made by the zygote for one job and inherited by its
    child (zero-filled by the kernel: nothing of an earlier job is in it)."""
    return mmap.mmap(-1, HEADER + size, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)


class Writer:
    """The child's end.  ``write`` appends one or more whole records."""

    def __init__(self, area: mmap.mmap, fd: int):
        self.area, self.fd, self.cap = area, fd, len(area) - HEADER
        self.end = 0
        self.sealed = False
        # Bound now: sample code runs between our calls and may replace builtins or os.write.
        self._len, self._write, self._view, self._pack = len, os.write, memoryview, _U64.pack_into
        self._oserror = OSError

    def write(self, data: bytes) -> None:
        n = self._len(data)
        if not self.sealed:
            if self.end + n <= self.cap:
                at = HEADER + self.end
                self.area[at:at + n] = data
                self.end += n
                self._pack(self.area, 0, self.end)  # after the copy: a whole record or nothing
                return
            self._pack(self.area, 8, self.end + 1)  # before the first record on the pipe
            self.sealed = True
        view = self._view(data)  # slicing a view copies nothing
        while view:
            view = view[self._write(self.fd, view):]

    def wake(self) -> None:
        """Tell the zygote there is something to forward (a newline: not a record)."""
        if not self.sealed:
            try:
                self._write(self.fd, b"\n")
            except self._oserror:  # the sample closed or replaced fd 3: the zygote's poll still finds the records
                pass


class Reader:
    """The zygote's end: what the child committed and nobody forwarded yet."""

    def __init__(self, area: mmap.mmap):
        self.area, self.cap = area, len(area) - HEADER
        self.taken = 0

    def take(self) -> bytes:
        """Records committed since the last call (up to the seal, if sealed)."""
        sealed = _U64.unpack_from(self.area, 8)[0]
        end = sealed - 1 if sealed else _U64.unpack_from(self.area, 0)[0]
        end = min(end, self.cap)  # the child (or a sample) may have written anything there
        if end <= self.taken:
            return b""
        data = self.area[HEADER + self.taken:HEADER + end]
        self.taken = end
        return data

    @property
    def sealed(self) -> bool:
        return bool(_U64.unpack_from(self.area, 8)[0])
