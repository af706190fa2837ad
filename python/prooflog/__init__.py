"""prooflog: a Datalog reasoning engine that explains itself.

Rule packs compile into semi-naive evaluation that records how every fact was
derived; proofs carry citation tags (HEDGE-n, RULE-n, STEP-n); the answer checkers
keep only what the proofs support.

    import prooflog

    pack = prooflog.Pack.default()
    result = pack.ask("threatens(42, zone)", evidence=[
        {"table": "DRONES", "member_ids": [42, 9]},
        {"table": "DRONES", "member_ids": [42, 7]},
        {"table": "SIGHTINGS", "member_ids": [9], "attributes": {"zone": "airport"}},
    ])
    print(result["answer"])  # Group 42 threatens zone airport [STEP-1]. ...

Evaluation runs with the GIL released, so threads can share one Pack.
"""

from ._prooflog import Pack, ProoflogError, __version__, check, gate

__all__ = ["Pack", "ProoflogError", "check", "gate", "__version__"]
