"""prooflog in a retrieval loop, with the Python standard library only.

A toy retriever scores stored records against the question by word overlap; the
retrieved records go to prooflog as the request's evidence; a stand-in "model" writes
an answer (here: the extractive answer plus one sentence it made up); prooflog's
firewall keeps only what the proofs support. When nothing is proved, the loop widens
the retrieval and asks again, as an agent would.

Run from the repository root after `pip install ./python`:

    python python/examples/retrieval_loop.py
"""

import re
from collections import Counter

import prooflog

# The document store: radar and registry records, as a retrieval index would hold
# them (text for the retriever, a hyperedge for prooflog).
DOCUMENTS = [
    ("fleet registry: drone 9 flies with group 42",
     {"table": "DRONES", "member_ids": [42, 9], "doc_id": "fleet-registry", "span": [0, 44]}),
    ("fleet registry: drone 7 flies with group 42",
     {"table": "DRONES", "member_ids": [42, 7], "doc_id": "fleet-registry", "span": [45, 89]}),
    ("weather report: light rain over the harbor",
     {"table": "WEATHER", "member_ids": [], "doc_id": "weather", "span": [0, 42]}),
    ("radar log: drone 9 sighted over the airport perimeter",
     {"table": "SIGHTINGS", "member_ids": [9], "attributes": {"zone": "airport"},
      "confidence": 0.85, "doc_id": "radar-log-7", "span": [120, 176]}),
    ("operator log: drone 7 cleared for the harbor survey",
     {"table": "CLEARANCES", "member_ids": [7], "doc_id": "operator-log", "span": [0, 51]}),
]


def words(text):
    return Counter(re.findall(r"[a-z0-9]+", text.lower()))


def retrieve(question, k):
    """The k records whose text shares the most words with the question."""
    q = words(question)
    scored = sorted(
        DOCUMENTS,
        key=lambda doc: -sum(min(n, words(doc[0])[w]) for w, n in q.items()),
    )
    # Only the tables the pack maps are evidence; the rest is context for people.
    mapped = {"DRONES", "SIGHTINGS", "CLEARANCES"}
    return [record for _, record in scored[:k] if record["table"] in mapped]


def model(context, extractive):
    """A stand-in for an LLM: the cited answer plus one sentence it made up."""
    return extractive + " Drone 9 is armed and heading for the terminal [HEDGE-1]."


def answer(pack, question, goal):
    for k in (2, 4, len(DOCUMENTS)):
        evidence = retrieve(question, k)
        draft = pack.ask(goal, evidence=evidence, question=question)
        if draft["goals"][0]["proved"]:
            written = model(draft["context"], draft["answer"])
            checked = pack.ask(goal, evidence=evidence, question=question,
                               answer=written, mode="strict")
            return k, checked
        print(f"  top-{k} retrieval proves nothing; widening")
    return k, draft


def main():
    pack = prooflog.Pack.default()
    question = "Which zones does drone group 42 threaten, given the radar log?"
    print(f"question: {question}")
    k, result = answer(pack, question, "threatens(42, zone)")
    print(f"retrieved {k} records; proved: {result['goals'][0]['proved']}")
    for claim in result["claims"]:
        mark = "kept" if claim["kept"] else "STRIPPED"
        print(f"  {mark:8} {claim['text']}")
    print(f"answer: {result['answer']}")
    assert result["goals"][0]["proved"]
    assert "armed" not in result["answer"]


if __name__ == "__main__":
    main()
