#!/usr/bin/env python3
"""Assembles data/mcq/generated/trajectories.jsonl by hand from real questions and
paragraphs of /work/shared/qa/ (HotpotQA and MuSiQue training samples, see README.md).

The trajectories (queries, planner and reader texts, which records each search returned and
which the reader saw, em of each read) are written by hand below; only the questions, gold
answers, supporting titles and paragraph texts come from the datasets. Corpus ids are the
paragraph titles (HotpotQA's own key; the MuSiQue titles used here are unique).

    python3 data/mcq/generated/build_trajectories.py /work/shared/qa > data/mcq/generated/trajectories.jsonl
"""
import json
import sys

qa = sys.argv[1]
hp = {q["_id"]: q for q in json.load(open(f"{qa}/hotpotqa_train.json"))}
mu = {q["id"]: q for q in json.load(open(f"{qa}/musique_train.json"))}

docs = {}
for q in hp.values():
    for t, s in q["context"]:
        docs.setdefault(t, "".join(s))
for q in mu.values():
    for p in q["paragraphs"]:
        docs.setdefault(p["title"], p["paragraph_text"])


def rec(title, score):
    return {"id": title, "url": "https://en.wikipedia.org/wiki/" + title.replace(" ", "_"),
            "title": title, "text": docs[title], "score": score, "masked": False}


def recs(*titles):
    return [rec(t, round(20.0 - 1.5 * i, 2)) for i, t in enumerate(titles)]


MASKED = {"id": "hotpotqa-mirror-1", "url": "https://hotpotqa.github.io/explorer.html",
          "title": "", "text": "", "masked": True}
# Invented (not from the datasets): a low-credibility page for the reliability items.
FORUM = {"id": "bookchatter-77", "url": "https://bookchatter.example/threads/two-dollar-radio",
         "title": "Two Dollar Radio rumours (forum thread)",
         "text": "Someone on here said Two Dollar Radio moved to Portland, Oregon last year, not sure if that's true.",
         "score": 9.1, "masked": False}


def question(dataset, qid):
    if dataset == "hotpotqa":
        q = hp[qid]
        sup = sorted({t for t, _ in q["supporting_facts"]})
        return q["question"], [q["answer"]], sup
    q = mu[qid]
    sup = [p["title"] for p in q["paragraphs"] if p["is_supporting"]]
    return q["question"], [q["answer"]] + q["answer_aliases"], sup


def step(i, thought, query, results, failure=None):
    text = thought + ("\nQuery: " + query if query else "")
    msgs = [{"role": "system", "content": "You plan web searches for a question."},
            {"role": "user", "content": "(planner prompt of step %d)" % i}]
    return {"step": i, "planner_messages": msgs, "planner_text": text, "query": query,
            "failure": failure, "results": results}


def read(sel, r, answer, em):
    return {"selector": sel, "read": r, "reader_messages": [{"role": "user", "content": "(reader prompt)"}],
            "reader_text": "The evidence points to the answer.\nAnswer: " + answer, "answer": answer,
            "em": em, "f1": em}


def traj(dataset, qid, arm, t, steps, packets, reads):
    qtext, answers, sup = question(dataset, qid)
    return {"run": "fixture", "question_id": qid, "dataset": dataset, "question": qtext,
            "answers": answers, "supporting": sup, "arm": arm, "trajectory": t,
            "model": "scripted-planner", "steps": steps, "packets": packets, "reads": reads}


LELAND = "5a8718c25542991e771816c7"
GRACE = "5ab3c131554299233954ff9c"
BUBYE = "2hop__205146_62031"

out = [
    traj("hotpotqa", LELAND, "adaptive", 0, [
        step(0, "Thought: I need the film shot in or around Leland, North Carolina in 1986, then its director.",
             "Leland North Carolina film 1986",
             recs("Leland, North Carolina", "1986 North Carolina Tar Heels football team", "Maximum Overdrive",
                  "Chloë Leland", "Terry Sanford")),
        step(1, "Thought: The Leland page says Maximum Overdrive was filmed there in 1986. Now I need who directed it.",
             "Maximum Overdrive director",
             recs("Maximum Overdrive", "Chloë Leland", "Bill Myers (musician)", "Myrtle Beach metropolitan area")),
    ], {"rrf": recs("Maximum Overdrive", "Leland, North Carolina", "Chloë Leland"),
        "rr": recs("Leland, North Carolina", "Chloë Leland", "Maximum Overdrive")},
        [read("rrf", 0, "Stephen King", 1.0), read("rrf", 1, "Stephen King", 1.0), read("rr", 0, "Stephen King", 1.0)]),
    traj("hotpotqa", LELAND, "open", 0, [
        step(0, "Thought: Let me look for film directors from North Carolina.", "film directors from North Carolina",
             recs("Chloë Leland", "Bill Myers (musician)", "Terry Sanford", "Chuck Rowland", "Myrtle Beach metropolitan area")),
        step(1, "I think I have enough to answer.", None, [], failure="no query line in the planner output"),
    ], {"rrf": recs("Chloë Leland", "Terry Sanford", "Chuck Rowland"),
        "rr": recs("Chloë Leland", "Bill Myers (musician)", "Terry Sanford")},
        [read("rrf", 0, "Chloë Leland", 0.0), read("rr", 0, "Chloë Leland", 0.0)]),
    traj("hotpotqa", GRACE, "adaptive", 0, [
        step(0, "Thought: First find who published Grace Krilanovich's first novel.", "Grace Krilanovich first novel publisher",
             recs("Grace Krilanovich", "Two Dollar Radio")),
        step(1, "Thought: The novel was published by Two Dollar Radio. Where is it based?", "Two Dollar Radio publishing house based",
             recs("Two Dollar Radio", "Independent Publishing House NOWA", "Onufri Publishing House")),
        step(2, "Thought: Confirm it was founded in 2005 and is based in Columbus, Ohio.", "Two Dollar Radio founded 2005 Columbus Ohio",
             recs("Two Dollar Radio") + [MASKED] + recs("Concordia Publishing House", "Gyldendal", "Silesian National Publishing House")),
    ], {"rrf": recs("Grace Krilanovich", "Two Dollar Radio", "Concordia Publishing House") + [FORUM]},
        [read("rrf", 0, "Columbus, Ohio", 1.0)]),
    traj("hotpotqa", GRACE, "adaptive", 1, [
        step(0, "Thought: Find the publisher founded in 2005 and where it is based.", "Two Dollar Radio founded 2005 Columbus Ohio",
             recs("Two Dollar Radio") + [MASKED] + recs("Concordia Publishing House", "Gyldendal", "Silesian National Publishing House")),
    ], {"rrf": [FORUM] + recs("Two Dollar Radio", "Grace Krilanovich", "Concordia Publishing House")},
        [read("rrf", 0, "Columbus, Ohio", 1.0), read("rrf", 1, "Portland, Oregon", 0.0)]),
    traj("musique", BUBYE, "adaptive", 0, [
        step(0, "Thought: First find the country of the Bubye River.", "Bubye River country",
             recs("Bubye River", "Kizir River", "Cheakamus River", "Tinnelva", "Río de la Miel")),
        step(1, "Thought: The Bubye River is in Zimbabwe. Which waterfall is in Zimbabwe?", "waterfall in Zimbabwe",
             recs("Victoria Falls", "Kalandula Falls", "Tenaru Falls", "Devon Falls", "Tully Falls", "Itiquira Falls")),
    ], {"rrf": recs("Victoria Falls", "Kalandula Falls", "Bubye River"),
        "rr": recs("Victoria Falls", "Kalandula Falls", "Tenaru Falls")},
        [read("rrf", 0, "Victoria Falls", 1.0), read("rr", 0, "Kalandula Falls", 0.0)]),
]
for t in out:
    print(json.dumps(t, ensure_ascii=False))
