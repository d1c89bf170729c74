"""SQLite as the reference for KVDocs' document queries (finds and counts).

Reads one JSON object on standard input:
  {"docs": [{"id": INT, ...}, ...],
   "index": ["a", "c.d", "t[]"],          # the fields of KVDocs' index, declared here too
   "queries": [{"conditions": [[FIELD, OP, OPERAND], ...],
                "order": [FIELD, DESCENDING] or null,
                "limit": N or null, "offset": N}, ...]}
and prints {"finds": [[id, ...], ...], "counts": [N, ...], "plans": [TEXT, ...]}.

Each document is a row of `doc(id INTEGER PRIMARY KEY, body TEXT)`; a field is read with
json_extract and json_type, a `[]` field through json_each (over arrays only). The query
semantics stated in KVDocs' Query documentation are written here in SQL, from the
documentation, not from KVDocs' code:
- a condition holds when some value at the path satisfies it; a missing field never does;
- `=` and `in` match equal values of the same kind (numbers numerically); the range
  operators and `prefix` only values of the operand's type;
- the order is by the field's value in the cross-type order missing < null < booleans <
  numbers < strings, ties by id in the same direction; without an order, by id.

The index is declared as a SQLite index on the same fields' expressions (a single-valued
field's type rank and value), so SQLite's own plan is printed beside the answers.
OPS: = != < <= > >= between (OPERAND is [LO, HI]) prefix in (OPERAND is a list).
"""
import json
import sqlite3
import sys


def path_of(field):
    """The JSON path of a field without `[]`, and whether it had `[]`."""
    multi = field.endswith("[]")
    name = field[:-2] if multi else field
    return "$." + ".".join('"%s"' % part for part in name.split(".")), multi


def kind(value):
    """The json_type names of a JSON operand's kind."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("true", "false")
    if isinstance(value, (int, float)):
        return ("integer", "real")
    if isinstance(value, str):
        return ("text",)
    raise ValueError("unsupported operand %r" % (value,))


def literal(value, params):
    params.append(value)
    return "?"


def satisfies(t, v, op, operand, params):
    """SQL for: the value v of json_type t satisfies `op operand`."""
    def typed(x):
        return "%s IN (%s)" % (t, ", ".join("'%s'" % k for k in kind(x)))

    def equal(x):
        if x is None:
            return "%s = 'null'" % t
        if isinstance(x, bool):
            return "%s = '%s'" % (t, "true" if x else "false")
        return "(%s AND %s = %s)" % (typed(x), v, literal(x, params))

    if op == "=":
        return equal(operand)
    if op == "!=":
        return "(%s IS NOT NULL AND NOT %s)" % (t, equal(operand))
    if op == "in":
        return "(" + " OR ".join([equal(x) for x in operand] or ["0"]) + ")"
    if op == "prefix":
        return "(%s = 'text' AND substr(CAST(%s AS BLOB), 1, %d) = CAST(%s AS BLOB))" % (
            t, v, len(operand.encode("utf-8")), literal(operand, params))
    if op == "between":
        lo, hi = operand
        return "(%s AND %s AND %s >= %s AND %s <= %s)" % (
            typed(lo), typed(hi), v, literal(lo, params), v, literal(hi, params))
    sql_op = {"<": "<", "<=": "<=", ">": ">", ">=": ">="}[op]
    return "(%s AND %s %s %s)" % (typed(operand), v, sql_op, literal(operand, params))


def condition(field, op, operand, params):
    path, multi = path_of(field)
    if not multi:
        t = "json_type(body, '%s')" % path
        v = "json_extract(body, '%s')" % path
        return satisfies(t, v, op, operand, params)
    inner = satisfies("e.type", "e.value", op, operand, params)
    return "(json_type(body, '%s') = 'array' AND EXISTS (SELECT 1 FROM json_each(body, '%s') AS e WHERE %s))" % (
        path, path, inner)


def rank(field):
    path, _ = path_of(field)
    t = "json_type(body, '%s')" % path
    return ("CASE WHEN %s IS NULL THEN 0 WHEN %s = 'null' THEN 1 WHEN %s IN ('true', 'false') THEN 2 "
            "WHEN %s IN ('integer', 'real') THEN 3 WHEN %s = 'text' THEN 4 ELSE 5 END") % (t, t, t, t, t)


def value(field):
    path, _ = path_of(field)
    return "json_extract(body, '%s')" % path


def main():
    spec = json.load(sys.stdin)
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE doc(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    db.executemany("INSERT INTO doc VALUES (?, ?)",
                   [(d["id"], json.dumps(d, ensure_ascii=False)) for d in spec["docs"]])
    columns = []
    for field in spec.get("index", []):
        if field.endswith("[]"):
            break  # SQLite indexes no array elements: the index stops before them
        columns += [rank(field), value(field)]
    if columns:
        db.execute("CREATE INDEX i ON doc(%s)" % ", ".join(columns))
    db.execute("ANALYZE")
    finds, counts, plans = [], [], []
    for query in spec["queries"]:
        params = []
        where = " AND ".join(condition(f, op, x, params) for f, op, x in query["conditions"]) or "1"
        order = query.get("order")
        if order:
            field, descending = order
            direction = " DESC" if descending else ""
            order_by = "%s%s, %s%s, id%s" % (rank(field), direction, value(field), direction, direction)
        else:
            order_by = "id"
        limit = query.get("limit")
        sql = "SELECT id FROM doc WHERE %s ORDER BY %s LIMIT %d OFFSET %d" % (
            where, order_by, -1 if limit is None else limit, query.get("offset", 0))
        finds.append([row[0] for row in db.execute(sql, params)])
        plans.append(" | ".join(row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql, params)))
        counts.append(db.execute("SELECT count(*) FROM doc WHERE %s" % where, params).fetchone()[0])
    json.dump({"finds": finds, "counts": counts, "plans": plans}, sys.stdout)


if __name__ == "__main__":
    main()
