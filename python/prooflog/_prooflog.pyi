"""Type stubs of the prooflog extension module."""

from os import PathLike
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

__version__: str

#: A hyperedge (``{"table", "member_ids", "attributes"?, "edge_idx"?, "confidence"?,
#: "doc_id"?, "span"?, "event_ts"?}``) or a fact record (``{"predicate", "args",
#: "confidence"?, "provenance"?}``).
Evidence = Mapping[str, Any]

class ProoflogError(ValueError):
    """A prooflog error; ``code`` is the stable error code (``bad_input``,
    ``unknown_relation``, ``usage``, ``budget_exceeded``, ...)."""

    code: str

class Pack:
    """Rule packs compiled together, with their base evaluated once. Immutable; share
    it between threads."""

    @staticmethod
    def load(
        *dirs: Union[str, "PathLike[str]"], base: Optional[Sequence[Evidence]] = None
    ) -> "Pack":
        """Load rule pack directories (each with a ``pack.ron``) and evaluate their
        base: their own facts and ``base``."""
    @staticmethod
    def default(base: Optional[Sequence[Evidence]] = None) -> "Pack":
        """The embedded default pack (drone threat assessment)."""
    @property
    def names(self) -> List[str]:
        """The names of the packs."""
    def describe(self) -> List[Dict[str, Any]]:
        """Each pack's name, version, rules, tables, goals and samples."""
    def with_evidence(self, evidence: Sequence[Evidence]) -> "Pack":
        """A new pack whose base also holds ``evidence``; this one is unchanged."""
    def ask(
        self,
        goals: Union[str, Sequence[str]],
        evidence: Optional[Sequence[Evidence]] = None,
        answer: Optional[str] = None,
        mode: Optional[str] = None,
        question: Optional[str] = None,
    ) -> Dict[str, Any]:
        """The whole pipeline on one request: ``evidence`` as an overlay on the base,
        proofs or why-nots, the context block, an answer (``answer``, a model's text,
        or the extractive generator's) checked by the firewall in ``mode``
        (``strict``, ``standard``, ``audit``). Keys: ``question``, ``mode``,
        ``generator``, ``answer``, ``raw_answer``, ``goals``, ``context``,
        ``firewall``, ``claims``, ``overlay``, ``timings``."""
    def prove(
        self,
        goal: str,
        evidence: Optional[Sequence[Evidence]] = None,
        proof_id: str = "proof-1",
    ) -> Optional[Dict[str, Any]]:
        """The ProofTree of ``goal`` as a dict: for a ground goal its proof
        (``status`` is ``"unproved"`` when it does not hold); for a pattern the
        proof of its first match, or None."""
    def prove_all(
        self,
        goal: str,
        evidence: Optional[Sequence[Evidence]] = None,
        limit: int = 5,
        proof_id: str = "proof-1",
    ) -> List[Dict[str, Any]]:
        """The proofs of a pattern's matches, at most ``limit``."""

def check(
    answer: str,
    proofs: Optional[Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]] = None,
    verify_content: bool = True,
    allowed: Optional[Sequence[str]] = None,
    require_proof: bool = False,
    proved: Optional[bool] = None,
    explain: bool = False,
) -> Dict[str, Any]:
    """The hallucination firewall: keep the sentences that cite tags of ``proofs``
    (or ``allowed``) and, with ``verify_content``, say what the cited facts say.
    Keys: ``outcome``, ``abstained``, ``coverage``, ``supported_count``,
    ``stripped_count``, ``stripped``, ``answer`` (and ``sentences`` with
    ``explain``)."""

def gate(answer: str, passages: Sequence[str]) -> Dict[str, Any]:
    """The faithfulness gate: which claims of ``answer`` follow from one of
    ``passages``. Keys: ``answer``, ``claims``, ``refused``, ``all_claims_verified``,
    ``unsupported_claims_removed``, ..."""
