#!/usr/bin/env python3
"""Compare two JSON documents exactly (floats bit-equal, as json.loads reads them), after
removing what is allowed to differ between two runs of the same analysis: the run envelope's
platform fields and timings. Used by scripts/gpu-check.sh for CPU/GPU parity.

usage: scripts/json-diff.py [--drop /JSON/POINTER ...] [--drop-key KEY ...] [--max N] A.json B.json

--drop P      remove the value at JSON pointer P (RFC 6901: /run/backend) from both documents
--drop-key K  remove every object member named K, at any depth (timings such as `seconds`)
--max N       list at most N differing paths (default 10)

Exit 0 when the rest is identical ("identical" is printed); exit 1 and print the first
differing paths, each with both values, otherwise; exit 2 on an unreadable file or bad usage.
"""
import json
import sys


def unescape(token):
    return token.replace("~1", "/").replace("~0", "~")


def drop_pointer(doc, pointer):
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r} (it starts with '/')")
    *parents, last = [unescape(t) for t in pointer[1:].split("/")]
    node = doc
    for t in parents:
        if isinstance(node, dict) and t in node:
            node = node[t]
        elif isinstance(node, list) and t.isdigit() and int(t) < len(node):
            node = node[int(t)]
        else:
            return
    if isinstance(node, dict):
        node.pop(last, None)


def drop_key(node, key):
    if isinstance(node, dict):
        node.pop(key, None)
        for v in node.values():
            drop_key(v, key)
    elif isinstance(node, list):
        for v in node:
            drop_key(v, key)


def differences(a, b, path=""):
    """Yields (path, value in a, value in b) for every leaf that differs, in document order."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            p = f"{path}/{k}"
            if k not in b:
                yield p, a[k], "(absent)"
            elif k not in a:
                yield p, "(absent)", b[k]
            else:
                yield from differences(a[k], b[k], p)
    elif isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{path}/{i}")
        if len(a) != len(b):
            yield f"{path} (length)", len(a), len(b)
    elif type(a) is not type(b) or a != b:
        yield path or "/", a, b


def main(argv):
    drops, keys, limit, files = [], [], 10, []
    it = iter(argv)
    for arg in it:
        if arg in ("--drop", "--drop-key", "--max"):
            value = next(it, None)
            if value is None:
                print(f"json-diff: {arg} needs a value", file=sys.stderr)
                return 2
            if arg == "--drop":
                drops.append(value)
            elif arg == "--drop-key":
                keys.append(value)
            else:
                limit = int(value)
        elif arg in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            files.append(arg)
    if len(files) != 2:
        print("json-diff: expected two JSON files (see --help)", file=sys.stderr)
        return 2
    docs = []
    for f in files:
        try:
            with open(f) as fh:
                docs.append(json.load(fh))
        except (OSError, ValueError) as e:
            print(f"json-diff: {f}: {e}", file=sys.stderr)
            return 2
    for doc in docs:
        for p in drops:
            drop_pointer(doc, p)
        for k in keys:
            drop_key(doc, k)
    diffs = list(differences(*docs))
    if not diffs:
        print(f"identical: {files[0]} and {files[1]} (without {', '.join(drops + keys) or 'nothing'})")
        return 0
    print(f"DIFFER: {len(diffs)} path(s) differ between {files[0]} and {files[1]}; the first {min(limit, len(diffs))}:")
    for p, x, y in diffs[:limit]:
        print(f"  {p}: {json.dumps(x)[:200]} != {json.dumps(y)[:200]}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
