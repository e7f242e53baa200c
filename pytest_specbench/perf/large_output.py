"""Where the time of a large output goes in the sandbox child (issue #28, point 2).

Mbpp/255's canonical output on plus input #88 is ``combinations_with_replacement``
of 5 colours taken 77 at a time: 1,663,740 tuples of 77 strings (128 million
references, 935 MB encoded).  The child encodes it and digests the encoding
(:func:`pytest_specbench.execution.wire.encode_capped`); this prints the CPU
seconds of each part beside the program's own, in this process:

    python -m pytest_specbench.perf.large_output            # 5 colours, 40 at a time (quick)
    python -m pytest_specbench.perf.large_output --r 77     # Mbpp/255's input #88 (~1.2 GB of memory)
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import time

from ..execution import wire


def _cpu(fn) -> tuple[float, object]:
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=5, help="colours (Mbpp/255 input #88: 5)")
    ap.add_argument("--r", type=int, default=40, help="taken at a time (Mbpp/255 input #88: 77)")
    args = ap.parse_args()
    colours = ["Red", "Green", "Blue", "A", "Bird", "Cat", "Dog"][:args.items]

    compute, out = _cpu(lambda: list(itertools.combinations_with_replacement(colours, args.r)))
    exact, _ = _cpu(lambda: wire.is_exact(out))
    to_plain, plain = _cpu(lambda: [wire.to_plain(v) for v in out])
    encode, text = _cpu(lambda: wire._encode(plain))
    del plain
    digest, _ = _cpu(lambda: hashlib.blake2b(text.encode("ascii"), digest_size=16).hexdigest())
    size = len(text)
    del text
    total, _ = _cpu(lambda: wire.encode_capped(out, 1 << 20))
    elements = sum(map(len, out[:1])) * len(out)
    print(f"{len(out):,} tuples of {args.r} ({elements:,} references), {size:,} bytes encoded; "
          f"load {os.getloadavg()[0]:.2f}")
    rows = [("the program (list of the combinations)", compute), ("encode_capped (what the child does)", total),
            ("  is_exact (the digest-comparable test)", exact), ("  to_plain (tuples tagged)", to_plain),
            ("  json encoder", encode), ("  blake2b of the encoding", digest)]
    for name, seconds in rows:
        print(f"{name:42s} {seconds:8.3f} s CPU  {seconds / compute:6.2f}x the program")


if __name__ == "__main__":
    main()
