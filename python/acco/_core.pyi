# Type stub of acco._core, the compiled half of the package (python/src/*.cpp). The package
# `acco` re-exports every public name; docs/python.md is the reference.
from typing import Any, Dict, Optional, Sequence, Union

Document = Dict[str, Any]

class Error(Exception):
    code: str

class InvalidArgumentError(Error, ValueError): ...
class NotFoundError(Error, LookupError): ...
class UnavailableError(Error): ...
class UnsupportedError(Error, NotImplementedError): ...
class DeviceError(Error): ...
class InternalError(Error): ...
class UsageError(Error, ValueError): ...
class CannotWriteError(Error): ...

def probe(
    sysroot: Optional[str] = None,
    snapshot: Optional[str] = None,
    nvml: str = "auto",
    pci_ids: Optional[str] = None,
) -> Document: ...
def bench(
    cases: Optional[Sequence[str]] = None,
    quick: bool = True,
    backend: str = "auto",
    devices: int = 1,
    link: str = "pcie4x16",
    bytes: Optional[str] = None,
    reps: Optional[int] = None,
    sysroot: Optional[str] = None,
    profile: Union[None, bool, str] = None,
) -> Document: ...
