#!/usr/bin/env python3
"""A scripted stand-in for a chat-completions server, to make the demo MCQ results
data/demo/mcq-bare.jsonl and data/demo/mcq-informative.jsonl with `stats mcq run`.

NOT a model: every reply is a deterministic function of (prompt kind, item, run). The reply
gives the item's gold letters with a probability that depends on the task and is 0.2 higher
with the informative prompt, else the gold set with one letter dropped or one wrong letter
added (the empty answer becomes one wrong letter); one reply in 40 has no answer line (a
parse failure). The scores made from these files show how the tool reports, not how any
model scores. The item is found by its query text in the prompt, the run by the request's
seed (`stats mcq run --seed 100` sends 100 + run).

Usage (repository root): python3 data/demo/mcq_server.py PORT   (see data/README.md)
"""
import hashlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ITEMS = [json.loads(l) for l in open("data/mcq/sample.jsonl", encoding="utf-8") if l.strip()]
SKILL = {"planning": 0.45, "evidence_extraction": 0.6, "grounded_reasoning": 0.35, "noise_robustness": 0.5}


def uniform(*key):
    """A number in [0, 1) from the SHA-256 of the key."""
    h = hashlib.sha256("|".join(map(str, key)).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def answer(item, kind, run):
    labels = [o["label"] for o in item["options"]]
    gold = list(item["answer"])
    if uniform("fail", kind, item["id"], run) < 1 / 40:
        return "I cannot decide between the options."
    p = SKILL[item["task"]] + (0.2 if kind == "informative" else 0.0)
    if uniform("right", kind, item["id"], run) < p:
        chosen = gold
    else:
        wrong = [l for l in labels if l not in gold]
        u = uniform("how", kind, item["id"], run)
        if len(gold) > 1 and (u < 0.5 or not wrong):
            drop = gold[int(u * 2 * len(gold)) % len(gold)]
            chosen = [l for l in gold if l != drop]
        else:
            chosen = sorted(gold + [wrong[int(u * len(wrong)) % len(wrong)]])
    return "Checking each option against the context.\nAnswer: " + (", ".join(chosen) or "none")


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = "\n".join(m["content"] for m in body["messages"] if isinstance(m.get("content"), str))
        kind = "informative" if "# Common" in prompt else "bare"
        item = next(i for i in ITEMS if i["query"] in prompt)
        text = answer(item, kind, body.get("seed", 100) - 100)
        reply = json.dumps({
            "id": "chatcmpl-demo", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4,
                      "total_tokens": len(prompt) // 4 + len(text) // 4},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
