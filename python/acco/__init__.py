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
    Communicator,
    Device,
    DeviceBuffer,
    DeviceError,
    Engine,
    Error,
    FusedAllReduce,
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
    doctor,
    probe,
)

__all__ = [
    "Batch",
    "CannotWriteError",
    "Communicator",
    "Device",
    "DeviceBuffer",
    "DeviceError",
    "Engine",
    "Error",
    "FusedAllReduce",
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
    "communicator",
    "devices",
    "doctor",
    "local_rank",
    "pinned_empty",
    "probe",
    "rank",
    "size",
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


@functools.lru_cache(maxsize=None)
def communicator() -> Communicator:
    """The communicator of this job, opened once per process: Open MPI when mpirun or srun
    started the process (MPI is initialised here), else this process alone (size 1)."""
    return Communicator()


def rank() -> int:
    """This process's rank in the job, from the launcher's environment (Open MPI, PMIx,
    Slurm); 0 without a launcher. Opens no communicator."""
    return int(_core._launch()["rank"])


def size() -> int:
    """The number of ranks in the job, from the launcher (the communicator's when the launcher
    does not say, as under PMIx alone); 1 without a launcher."""
    launch = _core._launch()
    return int(launch["size"]) if launch["size"] > 0 else communicator().size


def local_rank() -> int:
    """This process's rank among those on its node, from the launcher (the communicator's when
    the launcher does not say); 0 without a launcher."""
    launch = _core._launch()
    if launch["local_rank"] is not None:
        return int(launch["local_rank"])
    return 0 if not launch["launcher"] else communicator().local_rank
