"""Reads a KVDocs database from Python: plyvel for LevelDB, fdb.tuple for the keys.

KVDocs stores keys in the FoundationDB tuple encoding, so any language with a tuple
package reads them. Usage:

    python3 Examples/python/read_kvdocs.py PATH [--json]

prints each entry as `key-tuple => value`, or with --json one object per line:
{"key": [...], "value_hex": "..."} where the key's elements are JSON values
(bytes as {"bytes": hex}, UUIDs as {"uuid": str}, floats as numbers).
Keys that are not tuple encodings are shown as hex. A value in the binary form documents
and covering index entries are stored in (store format 4: its first byte is 0xF5) is
decoded, by `decode_document` below, and shown as its JSON (with --json, as "value").
"""
import json
import struct
import sys
import uuid

import plyvel
from fdb import tuple as fdbt


def to_json(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, fdbt.SingleFloat):
        return {"float": value.value}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, uuid.UUID):
        return {"uuid": str(value)}
    if isinstance(value, tuple):
        return [to_json(v) for v in value]
    return repr(value)


MARKER = 0xF5


class Damaged(ValueError):
    pass


def decode_document(data):
    """The JSON value (dict, list, str, int, float, bool, None) of bytes in KVDocs'
    binary form: a marker byte 0xF5, then a value, each value a tag byte and its payload:
    0 null, 1 false, 2 true; 3/4/5/6 an integer in 1/2/4/8 bytes (little-endian, two's
    complement); 7 an unsigned 64-bit integer; 8 a double (its 8-byte bit pattern); 9 a
    string (LEB128 byte length, UTF-8); 10 an array (LEB128 count and body length, then
    the elements); 11/12/13 an object (LEB128 count and body length, then one offset of
    1/2/4 bytes per member, then the members: LEB128 key length, UTF-8 key, value), its
    keys in code-point order. Raises Damaged for bytes that do not hold one such value."""
    if not data or data[0] != MARKER:
        raise Damaged("no binary form marker")
    value, end = _value(data, 1, 0)
    if end != len(data):
        raise Damaged(f"{len(data) - end} bytes after the value")
    return value


def _varint(data, i):
    result, shift = 0, 0
    while True:
        if i >= len(data):
            raise Damaged(f"ends in a length at byte {i}")
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _take(data, i, n):
    if n < 0 or i + n > len(data):
        raise Damaged(f"a length beyond the end at byte {i}")
    return data[i:i + n], i + n


def _value(data, i, depth):
    if depth > 256:
        raise Damaged("nested too deep")
    tag, i = data[i] if i < len(data) else None, i + 1
    if tag is None:
        raise Damaged("ends in the middle of a value")
    if tag <= 2:
        return (None, False, True)[tag], i
    if 3 <= tag <= 6:
        width = (1, 2, 4, 8)[tag - 3]
        raw, i = _take(data, i, width)
        return int.from_bytes(raw, "little", signed=True), i
    if tag == 7:
        raw, i = _take(data, i, 8)
        return int.from_bytes(raw, "little", signed=False), i
    if tag == 8:
        raw, i = _take(data, i, 8)
        return struct.unpack("<d", raw)[0], i
    if tag == 9:
        n, i = _varint(data, i)
        raw, i = _take(data, i, n)
        return raw.decode("utf-8"), i
    if tag == 10:
        count, i = _varint(data, i)
        length, i = _varint(data, i)
        end = i + length
        items = []
        for _ in range(count):
            item, i = _value(data, i, depth + 1)
            items.append(item)
        if i != end:
            raise Damaged("an array whose length does not match")
        return items, i
    if 11 <= tag <= 13:
        width = (1, 2, 4)[tag - 11]
        count, i = _varint(data, i)
        length, i = _varint(data, i)
        end = i + length
        i += count * width  # the offsets: for lookups; a whole read walks the members
        members = {}
        for _ in range(count):
            n, i = _varint(data, i)
            raw, i = _take(data, i, n)
            members[raw.decode("utf-8")], i = _value(data, i, depth + 1)
        if i != end:
            raise Damaged("an object whose length does not match")
        return members, i
    raise Damaged(f"unknown tag {tag}")


def main():
    path = sys.argv[1]
    as_json = "--json" in sys.argv[2:]
    db = plyvel.DB(path, create_if_missing=False)
    try:
        for key, value in db:
            try:
                decoded = fdbt.unpack(key)
            except Exception:
                decoded = None
            document = None
            if value[:1] == bytes([MARKER]):
                try:
                    document = decode_document(value)
                except (Damaged, UnicodeDecodeError):
                    document = None
            if as_json:
                entry = {"key": to_json(decoded) if decoded is not None else {"hex": key.hex()}}
                if document is not None:
                    entry["value"] = document
                entry["value_hex"] = value.hex()
                print(json.dumps(entry, ensure_ascii=False))
            else:
                shown = repr(decoded) if decoded is not None else "0x" + key.hex()
                print(f"{shown} => {json.dumps(document, ensure_ascii=False) if document is not None else repr(value)}")
    finally:
        db.close()


if __name__ == "__main__":
    main()
