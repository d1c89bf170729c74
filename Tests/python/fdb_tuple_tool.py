"""Reference side of the tuple differential tests: FoundationDB's own tuple layer.

  repack            stdin: one hex encoding per line -> stdout: pack(unpack(x)) as hex, or ERROR ...
  generate N SEED   stdout: N random tuples packed by fdb.tuple, as hex
  compare           stdin: "hexA hexB" per line ("-" for the empty tuple) -> stdout: fdb.tuple.compare(unpack(a), unpack(b))
"""
import random
import sys
import uuid

import fdb
from fdb import tuple as fdbt

# Versionstamp.to_bytes checks isinstance(x, fdb.impl.Value), and fdb.impl loads the
# FoundationDB client library, which tuple encoding does not need. A stand-in class
# makes that check False, as it is for every value here.
if not hasattr(fdb, "impl"):
    fdb.impl = type("impl", (), {"Value": type("Value", (), {})})


def repack():
    for line in sys.stdin:
        line = line.strip()
        try:
            print(fdbt.pack(fdbt.unpack(bytes.fromhex(line))).hex())
        except Exception as e:  # reported, not raised: the Swift side shows which input
            print("ERROR " + repr(e))


def random_element(rng, depth):
    kind = rng.randrange(11)
    if kind == 0:
        return None
    if kind == 1:
        return bytes(rng.choice([0, 1, 0x7F, 0xFF]) for _ in range(rng.randrange(5)))
    if kind == 2:
        return "".join(rng.choice(["a", "Z", "\x00", "é", "😀", "中"]) for _ in range(rng.randrange(5)))
    if kind == 3 and depth < 3:
        return tuple(random_element(rng, depth + 1) for _ in range(rng.randrange(4)))
    if kind == 4:
        return rng.choice([0, 1, -1, 255, -255, 256, -256, 2**63 - 1, -(2**63), 2**64 - 1, -(2**64 - 1),
                           2**64, -(2**64), rng.randrange(-(2**70), 2**70), rng.randrange(-70000, 70000),
                           rng.randrange(2**64), -rng.randrange(2**64)])
    if kind == 5:
        return rng.choice([0.0, -0.0, 1.5, -1.5, float("inf"), float("-inf"), float("nan"), 5e-324,
                           -1.7976931348623157e308, rng.uniform(-1e6, 1e6)])
    if kind == 6:
        return fdbt.SingleFloat(rng.choice([0.0, -0.0, 1.5, -42.0, float("inf"), float("-inf"), rng.uniform(-100, 100)]))
    if kind == 7:
        return rng.random() < 0.5
    if kind == 8:
        return uuid.UUID(bytes=bytes(rng.randrange(256) for _ in range(16)))
    if kind == 9:
        return fdbt.Versionstamp(bytes(rng.randrange(256) for _ in range(10)), rng.randrange(65536))
    return rng.randrange(-5, 5)


def generate(n, seed):
    rng = random.Random(seed)
    for _ in range(n):
        t = tuple(random_element(rng, 0) for _ in range(rng.randrange(6)))
        print(fdbt.pack(t).hex())


def compare():
    for line in sys.stdin:
        a, b = (bytes.fromhex(x.strip("-")) for x in line.split())
        print(fdbt.compare(fdbt.unpack(a), fdbt.unpack(b)))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "repack":
        repack()
    elif command == "generate":
        generate(int(sys.argv[2]), int(sys.argv[3]))
    elif command == "compare":
        compare()
    else:
        sys.exit("unknown command " + command)
