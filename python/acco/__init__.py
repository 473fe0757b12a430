"""acco from Python: the machine's links and benchmarks.

The documents (probe, bench) are the ones `acco ... --json` prints, as dicts. Every error is an
acco.Error subclass named after its kind (NotFoundError, InvalidArgumentError, ...) whose str() is
the message the CLI prints. See docs/python.md.
"""

from __future__ import annotations

from . import _core
from ._core import (
    CannotWriteError,
    DeviceError,
    Error,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    UnavailableError,
    UnsupportedError,
    UsageError,
    bench,
    probe,
)

__all__ = [
    "CannotWriteError",
    "DeviceError",
    "Error",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "UnavailableError",
    "UnsupportedError",
    "UsageError",
    "bench",
    "probe",
]
