"""Reads a KVDocs database from Python: plyvel for LevelDB, fdb.tuple for the keys.

KVDocs stores keys in the FoundationDB tuple encoding, so any language with a tuple
package reads them. Usage:

    python3 Examples/python/read_kvdocs.py PATH [--json]

prints each entry as `key-tuple => value`, or with --json one object per line:
{"key": [...], "value_hex": "..."} where the key's elements are JSON values
(bytes as {"bytes": hex}, UUIDs as {"uuid": str}, floats as numbers).
Keys that are not tuple encodings are shown as hex.
"""
import json
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
            if as_json:
                print(json.dumps({"key": to_json(decoded) if decoded is not None else {"hex": key.hex()},
                                  "value_hex": value.hex()}, ensure_ascii=False))
            else:
                shown = repr(decoded) if decoded is not None else "0x" + key.hex()
                print(f"{shown} => {value!r}")
    finally:
        db.close()


if __name__ == "__main__":
    main()
