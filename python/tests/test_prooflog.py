"""The Python bindings end to end: packs, ask, prove, check, gate, errors, threads."""

import pathlib
import threading

import pytest

import prooflog

ROOT = pathlib.Path(__file__).resolve().parents[2]

GROUP_42 = [
    {"table": "DRONES", "member_ids": [42, 9]},
    {"table": "DRONES", "member_ids": [42, 7]},
]


def sighting(zone, doc="radar-log-7"):
    return {
        "table": "SIGHTINGS",
        "member_ids": [9],
        "attributes": {"zone": zone},
        "confidence": 0.85,
        "doc_id": doc,
        "span": [120, 176],
    }


@pytest.fixture(scope="module")
def pack():
    return prooflog.Pack.default(base=GROUP_42)


def test_ask_proves_with_the_requests_evidence(pack):
    result = pack.ask("threatens(42, zone)", evidence=[sighting("airport")])
    assert result["goals"][0]["proved"] is True
    assert result["answer"].startswith("Group 42 threatens zone airport [STEP-1].")
    assert "doc radar-log-7 chars 120-176" in result["context"]
    assert result["firewall"]["outcome"] == "supported"
    assert result["overlay"]["evidence"] == 1


def test_requests_do_not_share_evidence(pack):
    pack.ask("threatens(42, zone)", evidence=[sighting("airport")])
    result = pack.ask(["threatens(42, zone)"])
    assert result["goals"][0]["proved"] is False
    assert result["goals"][0]["why_not"] is not None


def test_a_models_answer_is_checked(pack):
    result = pack.ask(
        "threatens(42, zone)",
        evidence=[sighting("airport")],
        answer="Group 42 threatens zone airport [STEP-1]. Drone 9 is armed [HEDGE-999].",
        mode="strict",
    )
    assert result["generator"] == "fixed"
    assert result["answer"] == "Group 42 threatens zone airport [STEP-1]."
    assert [c["verdict"] for c in result["claims"]] == ["supported", "stripped"]


def test_prove_returns_the_proof_as_a_dict(pack):
    proof = pack.prove('threatens(42, "airport")', evidence=[sighting("airport")])
    assert proof["status"] == "proved"
    assert proof["goal"] == {"predicate": "threatens", "args": [42, "airport"], "root": "S1"}
    assert proof["nodes"][0]["id"] == "S1"
    assert "HEDGE-" in " ".join(n.get("hedge_tag") or "" for n in proof["nodes"])
    unproved = pack.prove('threatens(42, "harbor")')
    assert unproved["status"] == "unproved"
    assert pack.prove("threatens(42, zone)") is None
    both = pack.prove_all(
        "threatens(42, zone)", evidence=[sighting("airport"), sighting("harbor")]
    )
    assert sorted(p["goal"]["args"][1] for p in both) == ["airport", "harbor"]


def test_check_keeps_only_supported_sentences(pack):
    proof = pack.prove('threatens(42, "airport")', evidence=[sighting("airport")])
    result = prooflog.check(
        "Group 42 threatens zone airport [STEP-1]. It is raining [STEP-1].",
        [proof],
        verify_content=True,
        explain=True,
    )
    assert result["outcome"] == "stripped"
    assert result["answer"] == "Group 42 threatens zone airport [STEP-1]."
    assert len(result["sentences"]) == 2
    tags_only = prooflog.check("Drone 9 was sighted [HEDGE-1].", allowed=["HEDGE-1"])
    assert tags_only["outcome"] == "supported"


def test_gate_drops_unsupported_claims():
    result = prooflog.gate(
        "The drone entered the airport zone. It carried a bomb.",
        ["The drone entered the airport zone at noon."],
    )
    assert result["unsupported_claims_removed"] == 1
    assert result["refused"] is False


def test_packs_load_from_directories():
    org = prooflog.Pack.load(ROOT / "rules" / "org")
    assert org.names == ["org"]
    assert org.describe()[0]["name"] == "org"
    both = prooflog.Pack.load(str(ROOT / "rules" / "org"), str(ROOT / "rules" / "access"))
    assert both.names == ["org", "access"]


def test_with_evidence_extends_the_base_and_keeps_the_old_one(pack):
    bigger = pack.with_evidence([sighting("harbor")])
    assert bigger.ask("threatens(42, zone)")["goals"][0]["proved"] is True
    assert pack.ask("threatens(42, zone)")["goals"][0]["proved"] is False


def test_fact_records_are_evidence_too(pack):
    result = pack.ask(
        "threatens(42, zone)",
        evidence=[{"predicate": "sighting", "args": [9, "airport"], "confidence": 0.5}],
    )
    assert result["goals"][0]["proved"] is True


@pytest.mark.parametrize(
    "call, code",
    [
        (lambda p: p.ask("nope(1)"), "unknown_relation"),
        (lambda p: p.ask("threatens", mode="lenient"), "usage"),
        (lambda p: p.ask("threatens", evidence=[{"table": "NOPE", "member_ids": [1]}]), "bad_input"),
        (lambda p: p.ask("threatens", evidence=[{"predicate": "member", "args": [1]}]), "bad_input"),
        (lambda p: p.ask("threatens", evidence=[{"predicate": "member", "args": [1, 2], "confidence": 3}]), "bad_input"),
        (lambda p: p.ask("threatens", evidence="not a list"), "bad_input"),
        (lambda p: p.ask(42), "bad_input"),
        (lambda p: prooflog.check("x"), "bad_input"),
        (lambda p: prooflog.check("x", [{"a": 1}]), "bad_input"),
        (lambda p: prooflog.check("x", allowed=["not a tag"]), "bad_input"),
        (lambda p: prooflog.gate("x", []), "bad_input"),
        (lambda p: prooflog.Pack.load("/no/such/pack"), None),
    ],
)
def test_errors_carry_codes(pack, call, code):
    with pytest.raises(prooflog.ProoflogError) as info:
        call(pack)
    assert isinstance(info.value, ValueError)
    if code is not None:
        assert info.value.code == code


def test_threads_share_one_pack(pack):
    results = {}

    def ask(zone):
        out = pack.ask("threatens(42, zone)", evidence=[sighting(zone)])
        results[zone] = [p["goal"]["args"][1] for p in out["goals"][0]["proofs"]]

    threads = [threading.Thread(target=ask, args=(z,)) for z in ["airport", "harbor"] * 4]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"airport": ["airport"], "harbor": ["harbor"]}


def test_the_retrieval_loop_example_runs():
    import runpy

    runpy.run_path(str(ROOT / "python" / "examples" / "retrieval_loop.py"), run_name="__main__")
