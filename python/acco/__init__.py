"""acco from Python: the machine's links, benchmarks, the transfer engine and the task runtime.

The documents (probe, bench) are the ones `acco ... --json` prints, as dicts. Every error is an
acco.Error subclass named after its kind (NotFoundError, InvalidArgumentError, ...) whose str() is
the message the CLI prints. See docs/python.md.
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Sequence, Union

from . import _core
from ._core import (
    Batch,
    CannotWriteError,
    Device,
    DeviceBuffer,
    DeviceError,
    Engine,
    Error,
    InternalError,
    InvalidArgumentError,
    Monitor,
    NotFoundError,
    Runtime,
    TaskContext,
    Transfer,
    UnavailableError,
    UnsupportedError,
    UsageError,
    analyze,
    bench,
    probe,
)

__all__ = [
    "Batch",
    "CannotWriteError",
    "Device",
    "DeviceBuffer",
    "DeviceError",
    "Engine",
    "Error",
    "InternalError",
    "InvalidArgumentError",
    "Monitor",
    "NotFoundError",
    "Runtime",
    "TaskContext",
    "Transfer",
    "UnavailableError",
    "UnsupportedError",
    "UsageError",
    "analyze",
    "bench",
    "devices",
    "pinned_empty",
    "probe",
]


@functools.lru_cache(maxsize=None)
def _devices(backend: str, host_devices: int, link: str) -> tuple:
    return tuple(_core._open_devices(backend, host_devices, link))


def devices(backend: str = "auto", host_devices: int = 1, link: str = "pcie4x16") -> list:
    """The devices acco moves data to: every usable GPU with backend "auto" (or "cuda"), else
    `host_devices` emulated host devices behind an emulated `link` ("pcie4x16", "25GB/s,2us").

    The backend is opened once per set of arguments and kept for the process, so the same call
    returns the same devices. UnavailableError for backend="cuda" without a usable GPU,
    InvalidArgumentError for an unknown backend or link.
    """
    return list(_devices(backend, host_devices, link))


def pinned_empty(
    shape: Union[int, Sequence[int]],
    dtype: Any = "float32",
    device: Optional[Device] = None,
) -> Any:
    """A new, uninitialised numpy array in pinned host memory of `device` (the first of
    devices() by default): aligned, on the device's NUMA node, page-locked once, so the Engine
    moves it by DMA without staging. The array owns that memory (through its base, a capsule):
    it stays valid after the Engine and the Device are gone, and is freed with the array.
    """
    import numpy

    if isinstance(shape, int):
        shape = (shape,)
    if device is None:
        device = devices()[0]
    return _core._pinned_empty(list(shape), numpy.dtype(dtype), device)


def _engine_pinned_empty(
    self: Engine, shape: Union[int, Sequence[int]], dtype: Any = "float32"
) -> Any:
    """pinned_empty(shape, dtype) on this engine's device."""
    return pinned_empty(shape, dtype, self.device)


Engine.pinned_empty = _engine_pinned_empty
