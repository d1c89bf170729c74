"""Reference for the JSON differential tests: Python's json module (exact float parsing,
shortest-repr printing, arbitrary-precision integers).

  json_reference.py numbers COUNT SEED   -> JSON lines {"id": i, "text": "<number as written>", "bits": "<16 hex digits>"}
                                            for doubles (and integers beyond 64 bits: their nearest double)
  json_reference.py integers COUNT SEED  -> JSON lines {"text": "<integer>"} for integers at the 64-bit edges
  json_reference.py check                -> reads lines "<bits hex> <json number text>" on stdin and prints
                                            "ok" or the first mismatch: Python parses the text to the same double
  json_reference.py documents COUNT SEED -> random JSON documents, one per line (escapes, unicode, nesting,
                                            duplicate-free keys, NFC and NFD keys side by side)
  json_reference.py equal                -> reads pairs of lines (original, canonical) on stdin; prints "ok" or
                                            the first pair whose parsed values differ
"""
import json
import math
import random
import struct
import sys
import unicodedata


def bits(x):
    return struct.pack(">d", x).hex()


def random_double(rng):
    kind = rng.randrange(12)
    if kind == 0:  # any bit pattern
        while True:
            x = struct.unpack(">d", rng.getrandbits(64).to_bytes(8, "big"))[0]
            if math.isfinite(x):
                return x
    if kind == 1:  # subnormals
        return struct.unpack(">d", rng.getrandbits(52).to_bytes(8, "big"))[0] * rng.choice([1, -1])
    if kind == 2:  # near 2^53
        return float(2 ** 53 + rng.randint(-4, 4)) * rng.choice([1, -1]) + rng.choice([0.0, 0.5, 1.0])
    if kind == 3:  # near 2^63
        return float(2 ** 63) * (1 + rng.randint(-8, 8) * 2 ** -52) * rng.choice([1, -1])
    if kind == 4:  # near 1e308 and the largest double
        return rng.choice([1e308, 1.7976931348623157e308, 8.98846567431158e307]) * (1 - rng.random() * 1e-3) * rng.choice([1, -1])
    if kind == 5:
        return rng.choice([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 0.1, 0.2, 0.30000000000000004, 1e16, 1e22, 1e23])
    if kind == 6:  # decimal-looking
        return round(rng.uniform(-1e6, 1e6), rng.randint(0, 8))
    if kind == 7:  # integral doubles
        return float(rng.randint(-2 ** 60, 2 ** 60))
    return rng.uniform(-1, 1) * 10 ** rng.randint(-320, 308)


def spell(x, rng):
    """The number as a JSON text: Python's shortest repr, or a long or unusual spelling."""
    r = repr(x)
    choice = rng.randrange(6)
    if choice == 0:
        text = "%.25e" % x  # long mantissa
    elif choice == 1:
        text = "%.17g" % x
    elif choice == 2 and abs(x) < 1e21 and abs(x) > 1e-7:
        text = ("%.30f" % x).rstrip("0")
        if text.endswith("."):
            text += "0"
    elif choice == 3:
        m, e = ("%.16e" % x).split("e")
        text = m + "E" + e  # capital E, explicit sign
    else:
        text = r
    if text in ("inf", "-inf", "nan"):
        text = r
    return text


def numbers(count, seed):
    rng = random.Random(seed)
    for i in range(count):
        if rng.randrange(20) == 0:
            # an integer beyond 64 bits: stored as its nearest double
            n = rng.choice([1, -1]) * rng.randint(2 ** 64, 10 ** rng.randint(20, 60))
            text = str(n)
            value = float(n)
        else:
            x = random_double(rng)
            text = spell(x, rng)
            value = json.loads(text)
            if not isinstance(value, float) or not math.isfinite(value):
                text = repr(x)  # a long spelling of a value at the edge rounded past it
                value = json.loads(text)
        assert isinstance(value, float) and math.isfinite(value)
        print(json.dumps({"id": i, "text": text, "bits": bits(value)}))


def integers(count, seed):
    rng = random.Random(seed)
    edges = [0, 1, -1, 2 ** 53, 2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 63 - 1, -(2 ** 63), 2 ** 63, 2 ** 64 - 1]
    for e in edges:
        print(json.dumps({"text": str(e)}))
    for _ in range(count):
        base = rng.choice(edges)
        n = base + rng.randint(-1000, 1000)
        print(json.dumps({"text": str(n if -(2 ** 63) <= n <= 2 ** 64 - 1 else base)}))


def check():
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        expected, text = line.split(" ", 1)
        value = json.loads(text)
        if not isinstance(value, float) or bits(value) != expected:
            print("mismatch: %s parsed as %r, expected bits %s" % (text, value, expected))
            return
    print("ok")


def random_string(rng):
    pieces = []
    for _ in range(rng.randint(0, 8)):
        kind = rng.randrange(8)
        if kind == 0:
            pieces.append(chr(rng.randint(0, 0x1F)))  # control characters
        elif kind == 1:
            pieces.append(rng.choice(['"', "\\", "/", "\u2028", "\u00e9", "e\u0301", "\U0001F600", "\ufeff"]))
        elif kind == 2:
            pieces.append(chr(rng.randint(0x80, 0xD7FF)))
        elif kind == 3:
            pieces.append(chr(rng.randint(0x10000, 0x10FFFF)))
        else:
            pieces.append("".join(rng.choice("abcxyz _-.") for _ in range(rng.randint(1, 6))))
    return "".join(pieces)


def random_value(rng, depth):
    kind = rng.randrange(9 if depth < 6 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.randint(-2 ** 63, 2 ** 64 - 1) if rng.randrange(2) else rng.randint(-1000, 1000)
    if kind == 3:
        return random_double(rng)
    if kind in (4, 5):
        return random_string(rng)
    if kind in (6, 7):
        obj = {}
        for _ in range(rng.randint(0, 5)):
            key = random_string(rng)
            obj[key] = random_value(rng, depth + 1)
            if rng.randrange(4) == 0:  # one key in both normalisation forms
                obj[unicodedata.normalize("NFC", key + "\u00e9")] = random_value(rng, depth + 1)
                obj[unicodedata.normalize("NFD", key + "\u00e9")] = random_value(rng, depth + 1)
        return obj
    return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]


def documents(count, seed):
    rng = random.Random(seed)
    for i in range(count):
        doc = random_value(rng, 0)
        print(json.dumps(doc, ensure_ascii=rng.choice([True, False]), indent=rng.choice([None, None, 1])).replace("\n", " "))


def same(a, b):
    """Equality that tells -0.0 from 0.0 and ints from floats."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return bits(a) == bits(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def equal():
    lines = sys.stdin.read().split("\n")
    for i in range(0, len(lines) - 1, 2):
        original, canonical = json.loads(lines[i]), json.loads(lines[i + 1])
        if not same(original, canonical):
            print("mismatch at document %d: %s != %s" % (i // 2, lines[i], lines[i + 1]))
            return
    print("ok")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "numbers":
        numbers(int(sys.argv[2]), int(sys.argv[3]))
    elif command == "integers":
        integers(int(sys.argv[2]), int(sys.argv[3]))
    elif command == "check":
        check()
    elif command == "documents":
        documents(int(sys.argv[2]), int(sys.argv[3]))
    elif command == "equal":
        equal()
