#!/usr/bin/env python3
"""Check that every value of an old JSON document is still in the new one (issue #36: the
schema may change, no value may be lost).

usage: scripts/json-values.py OLD.json NEW.json [--move OLD.PATH=NEW.PATH ...]

A leaf of OLD at path P must be in NEW at P, or at Q+rest when a --move P'=Q with P' a prefix
of P is given ('*' in OLD.PATH matches any key or index). Default moves: top-level backend/adapter/replicates/seed/confidence -> run.*, also inside results.*.result (--by sections).
Paths are dotted; list indices are numbers (results.0.result.seed). Exit 1 and list every
lost value otherwise. Values must be equal (floats bit-equal via json.loads). A null in the old `run` envelope may be
filled in the new one."""
import json, sys

def leaves(x, p=()):
    if isinstance(x, dict):
        if not x: yield p, {}
        for k, v in x.items(): yield from leaves(v, p + (k,))
    elif isinstance(x, list):
        if not x: yield p, []
        for i, v in enumerate(x): yield from leaves(v, p + (str(i),))
    else:
        yield p, x

def get(x, p):
    for k in p:
        if isinstance(x, dict) and k in x: x = x[k]
        elif isinstance(x, list) and k.isdigit() and int(k) < len(x): x = x[int(k)]
        else: return KeyError
    return x

def main(argv):
    old, new = json.load(open(argv[0])), json.load(open(argv[1]))
    moves = []
    for k in ("backend", "adapter", "replicates", "seed", "confidence"):
        for pre in ((), ("results", "*", "result"), ("results", "*", "result", "results", "*", "result")):
            moves.append((pre + (k,), ("run", k)))
    args = argv[2:]
    while args:
        if args[0] == "--move":
            a, b = args[1].split("="); args = args[2:]
            moves.append((tuple(a.split(".")) if a else (), tuple(b.split(".")) if b else ()))
        else:
            sys.exit(f"unknown argument {args[0]}")
    lost = []
    for p, v in leaves(old):
        # The envelope's nulls are placeholders a later change may fill (an engine's facts).
        if p[:1] == ("run",) and v is None:
            continue
        match = lambda a: len(p) >= len(a) and all(x == "*" or x == y for x, y in zip(a, p))
        cands = [p] + [q + p[len(a):] for a, q in moves if match(a)]
        if not any(get(new, c) == v and get(new, c) is not KeyError for c in cands):
            lost.append((".".join(p), v))
    for p, v in lost: print(f"lost: {p} = {json.dumps(v)[:80]}")
    return 1 if lost else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
