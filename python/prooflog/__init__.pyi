from ._prooflog import Pack as Pack
from ._prooflog import ProoflogError as ProoflogError
from ._prooflog import __version__ as __version__
from ._prooflog import check as check
from ._prooflog import gate as gate

__all__ = ["Pack", "ProoflogError", "check", "gate", "__version__"]
