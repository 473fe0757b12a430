"""acco inside PyTorch training: a prefetcher that moves the next batch through the transfer
engine while this one is used, a DistributedDataParallel communication hook and a Horovod-style
optimizer on acco's MPI collectives with tensor fusion, and pinned tensors from acco's staging.

Import it as `import acco.torch`; it needs PyTorch (Debian's python3-torch: CPU, for
/usr/bin/python3). See docs/python.md.
"""

import os
import queue
import threading
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import torch as _torch
import torch.distributed as _dist

import acco as _acco

__all__ = [
    "AllreduceState",
    "DistributedOptimizer",
    "Prefetcher",
    "allreduce_hook",
    "broadcast_parameters",
    "fusion_threshold",
    "local_rank",
    "pinned_empty",
    "place",
    "rank",
    "size",
]

rank = _acco.rank
size = _acco.size
local_rank = _acco.local_rank

# Horovod's default fusion threshold (HOROVOD_FUSION_THRESHOLD): 64 MiB.
_HOROVOD_FUSION_THRESHOLD = 64 << 20


def _numpy_dtype(dtype: _torch.dtype) -> Any:
    return _torch.empty((), dtype=dtype).numpy().dtype


def _acco_device(device: _torch.device) -> Any:
    """The acco Device behind a torch device: the GPU of that index, or for the CPU an emulated
    host device with no link limit (the host's memory is the CPU tensors' memory)."""
    if device.type == "cuda":
        return _acco.devices("cuda")[device.index or 0]
    if device.type == "cpu":
        return _acco.devices("host", 1, "unlimited")[0]
    raise _acco.InvalidArgumentError(
        f"device: '{device}' is neither the CPU nor a CUDA device"
    )


def pinned_empty(
    shape: Union[int, Sequence[int]],
    dtype: _torch.dtype = _torch.float32,
    device: Optional[Any] = None,
) -> _torch.Tensor:
    """A new, uninitialised CPU tensor in acco's pinned staging memory (acco.pinned_empty): the
    tensor shares the numpy array's memory, which it keeps alive."""
    array = _acco.pinned_empty(shape, _numpy_dtype(dtype), device)
    return _torch.from_numpy(array)


class _End:
    """The producer's last item: the loader ran out, or raised `error`."""

    def __init__(self, error: Optional[BaseException] = None) -> None:
        self.error = error


class Prefetcher:
    """Wraps an iterable of batches (tensors, or dicts/lists/tuples of them) and moves batch k+1
    to `device` through acco's transfer engine while batch k is used, `depth` batches ahead.

    On a GPU the engine stages pageable tensors in its own pinned memory (no pin_memory copy of
    the loader's). On the CPU the tensors already are where the step needs them: they pass
    through uncopied, and what the Prefetcher adds is the loading itself (the loader's work,
    collation included) on its thread, `depth` batches ahead of the step. What is not a tensor
    passes through as it is. An exception in the loader is raised in the training loop
    at the batch where it happened; len() is the loader's; leaving the loop early (break) stops
    the thread, and no thread outlives the iteration.
    """

    def __init__(
        self,
        loader: Iterable[Any],
        device: Union[None, str, _torch.device] = None,
        depth: int = 2,
        engine: Optional[Any] = None,
    ) -> None:
        if not isinstance(depth, int) or depth < 1 or depth > 64:
            raise _acco.InvalidArgumentError(f"depth: {depth!r} is not between 1 and 64")
        self._loader = loader
        self._device = _torch.device(device) if device is not None else _torch.device("cpu")
        self._engine = engine
        if engine is None and self._device.type != "cpu":
            self._engine = _acco.Engine(_acco_device(self._device))
        elif engine is None:
            _acco_device(self._device)  # an unknown device type is refused here
        self._depth = depth

    @property
    def device(self) -> _torch.device:
        return self._device

    def __len__(self) -> int:
        return len(self._loader)  # type: ignore[arg-type]

    def _target(self, src: _torch.Tensor) -> _torch.Tensor:
        return _torch.empty(src.shape, dtype=src.dtype, device=self._device)

    def _move(self, obj: Any, copies: List[Tuple[Any, Any]]) -> Any:
        if isinstance(obj, _torch.Tensor):
            if obj.device == self._device:
                return obj
            if obj.device.type != "cpu":
                return obj.to(self._device)
            src = obj.detach().contiguous()
            dst = self._target(src)
            if src.numel() > 0:
                copies.append((dst, src.numpy()))
            return dst
        if isinstance(obj, dict):
            return type(obj)((k, self._move(v, copies)) for k, v in obj.items())
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
            return type(obj)(*(self._move(v, copies) for v in obj))
        if isinstance(obj, (list, tuple)):
            return type(obj)(self._move(v, copies) for v in obj)
        return obj

    def _moved(self, batch: Any) -> Any:
        copies: List[Tuple[Any, Any]] = []
        moved = self._move(batch, copies)
        if copies:
            with self._engine.batch() as b:  # submitted and waited at the end of the block
                for dst, src in copies:
                    b.add(dst, src)
        return moved

    def _produce(self, ready: "queue.Queue[Any]", stop: threading.Event) -> None:
        def put(item: Any) -> bool:
            while not stop.is_set():
                try:
                    ready.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            for batch in self._loader:
                if stop.is_set() or not put(self._moved(batch)):
                    return
            put(_End())
        except BaseException as error:  # noqa: BLE001 - handed to the training loop
            put(_End(error))

    def __iter__(self) -> Iterator[Any]:
        ready: "queue.Queue[Any]" = queue.Queue(maxsize=self._depth)
        stop = threading.Event()
        thread = threading.Thread(
            target=self._produce, args=(ready, stop), name="acco-prefetch", daemon=True
        )
        thread.start()
        try:
            while True:
                item = ready.get()
                if isinstance(item, _End):
                    if item.error is not None:
                        raise item.error
                    return
                yield item
        finally:
            stop.set()
            while thread.is_alive():
                try:  # unblock a producer waiting for room
                    ready.get_nowait()
                except queue.Empty:
                    pass
                thread.join(timeout=0.05)


def fusion_threshold(communicator: Optional[Any] = None) -> Tuple[int, str]:
    """The fusion threshold in bytes and where it came from: HOROVOD_FUSION_THRESHOLD when set,
    else the one `acco bench --collective allreduce --save-fusion` saved in this machine's tune
    profile for the job's link class ("intra-node" when every rank is on this node, else
    "inter-node"; the tune-dir setting's ACCO_TUNE_DIR applies), else Horovod's 64 MiB."""
    value = os.environ.get("HOROVOD_FUSION_THRESHOLD")
    if value is not None:
        try:
            return max(int(value), 4), "HOROVOD_FUSION_THRESHOLD"
        except ValueError:
            raise _acco.InvalidArgumentError(
                f"HOROVOD_FUSION_THRESHOLD: '{value}' is not a number of bytes"
            ) from None
    comm = communicator if communicator is not None else _acco.communicator()
    link_class = "intra-node" if comm.local_size == comm.size else "inter-node"
    tuned = _acco._core._tuned_fusion(link_class, os.environ.get("ACCO_TUNE_DIR", ""))
    if tuned is not None:
        return int(tuned["threshold_bytes"]), f"tune profile {tuned['path']} ({link_class})"
    return _HOROVOD_FUSION_THRESHOLD, "Horovod's default"


class AllreduceState:
    """The state of allreduce_hook: the communicator, the fusion of the buckets (threshold in
    bytes: `threshold_bytes`, else fusion_threshold(): HOROVOD_FUSION_THRESHOLD, the tune
    profile's, or Horovod's 64 MiB; `threshold_source` says which) and the thread that runs the
    collectives and completes DDP's futures. close() stops the thread."""

    def __init__(
        self, communicator: Optional[Any] = None, threshold_bytes: Optional[int] = None
    ) -> None:
        self.communicator = communicator if communicator is not None else _acco.communicator()
        if threshold_bytes:
            self.threshold_bytes, self.threshold_source = threshold_bytes, "threshold_bytes"
        else:
            self.threshold_bytes, self.threshold_source = fusion_threshold(self.communicator)
        self._fused = self.communicator.fused(self.threshold_bytes)
        self._work: "queue.Queue[Optional[Tuple[_torch.Tensor, Any, bool]]]" = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="acco-allreduce", daemon=True)
        self._thread.start()
        self.buckets = 0

    def submit(self, tensor: _torch.Tensor, future: Any, last: bool) -> None:
        self.buckets += 1
        self._work.put((tensor, future, last))

    def stats(self) -> dict:
        return self._fused.stats()

    def _run(self) -> None:
        waiting: List[Tuple[_torch.Tensor, Any]] = []
        ranks = self.communicator.size
        while True:
            item = self._work.get()
            if item is None:
                return
            tensor, future, last = item
            try:
                self._fused.add(tensor.numpy())
                waiting.append((tensor, future))
                if last:
                    self._fused.flush()
                    for t, f in waiting:
                        if ranks > 1:
                            t.div_(ranks)
                        f.set_result(t)
                    waiting = []
            except BaseException as error:  # noqa: BLE001 - DDP raises it from wait()
                for _, f in waiting + [(tensor, future)]:
                    if not f.done():
                        f.set_exception(error)
                waiting = []

    def close(self) -> None:
        if self._thread.is_alive():
            self._work.put(None)
            self._thread.join()


def allreduce_hook(
    state: AllreduceState, bucket: _dist.GradBucket
) -> _torch.futures.Future[_torch.Tensor]:
    """A DistributedDataParallel communication hook: averages each gradient bucket over the
    ranks through acco's MPI collectives, fusing the buckets of one step (Horovod's tensor
    fusion; the last bucket of a step flushes). Register it with
    `model.register_comm_hook(acco.torch.AllreduceState(), acco.torch.allreduce_hook)`.
    Buckets must be CPU float32 tensors."""
    tensor = bucket.buffer()
    if tensor.device.type != "cpu" or tensor.dtype != _torch.float32:
        raise _acco.UnsupportedError(
            f"allreduce_hook: a {tensor.dtype} bucket on {tensor.device}; acco's collectives "
            "take CPU float32 buckets"
        )
    future: "_torch.futures.Future[_torch.Tensor]" = _torch.futures.Future()
    state.submit(tensor, future, bucket.is_last())
    return future


def broadcast_parameters(
    params: Union[dict, Iterable[Tuple[str, _torch.Tensor]]],
    root_rank: int = 0,
    communicator: Optional[Any] = None,
) -> None:
    """Copies rank `root_rank`'s parameters into every rank's, in place (Horovod's
    broadcast_parameters): `params` is a state_dict() or named_parameters(), broadcast in the
    order of their names so every rank pairs the same tensors."""
    comm = communicator if communicator is not None else _acco.communicator()
    items = sorted(params.items() if isinstance(params, dict) else params, key=lambda kv: kv[0])
    for name, tensor in items:
        if tensor.device.type != "cpu" or not tensor.is_contiguous():
            raise _acco.UnsupportedError(
                f"broadcast_parameters: '{name}' is not a contiguous CPU tensor"
            )
        with _torch.no_grad():
            comm.broadcast(tensor.detach().numpy(), root_rank)


class DistributedOptimizer:
    """Wraps a torch optimizer the Horovod way: step() first averages every gradient over the
    ranks (fused: one collective per threshold of bytes, in the order of `named_parameters`),
    then steps the wrapped optimizer. With backward_passes_per_step=k the gradients of k
    backward passes accumulate before the averaging step, as in Horovod. Everything else is the
    wrapped optimizer's."""

    def __init__(
        self,
        optimizer: _torch.optim.Optimizer,
        named_parameters: Optional[Iterable[Tuple[str, _torch.Tensor]]] = None,
        backward_passes_per_step: int = 1,
        communicator: Optional[Any] = None,
        threshold_bytes: Optional[int] = None,
    ) -> None:
        if backward_passes_per_step < 1:
            raise _acco.InvalidArgumentError(
                f"backward_passes_per_step: {backward_passes_per_step} is below 1"
            )
        self._optimizer = optimizer
        if named_parameters is None:
            named = [
                (f"param.{i}.{j}", p)
                for i, group in enumerate(optimizer.param_groups)
                for j, p in enumerate(group["params"])
            ]
        else:
            named = sorted(named_parameters, key=lambda kv: kv[0])
        self._parameters = [p for _, p in named if p.requires_grad]
        self._comm = communicator if communicator is not None else _acco.communicator()
        self.threshold_bytes = threshold_bytes or fusion_threshold(self._comm)[0]
        self._fused = self._comm.fused(self.threshold_bytes)
        self.backward_passes_per_step = backward_passes_per_step

    def synchronize(self) -> None:
        """Averages the gradients over the ranks now (step() does it first)."""
        ranks = self._comm.size
        grads = []
        for p in self._parameters:
            if p.grad is None:
                p.grad = _torch.zeros_like(p)
            if p.grad.dtype != _torch.float32 or p.grad.device.type != "cpu":
                raise _acco.UnsupportedError(
                    "DistributedOptimizer: acco's collectives take CPU float32 gradients"
                )
            grads.append(p.grad.data.contiguous())
            self._fused.add(grads[-1].numpy())
        self._fused.flush()
        for p, g in zip(self._parameters, grads):
            if ranks > 1:
                g.div_(ranks)
            if g.data_ptr() != p.grad.data_ptr():
                p.grad.data.copy_(g)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        self.synchronize()
        return self._optimizer.step(closure)

    def zero_grad(self, set_to_none: bool = False) -> None:
        self._optimizer.zero_grad(set_to_none=set_to_none)

    def stats(self) -> dict:
        return self._fused.stats()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._optimizer, name)


def place(
    stages: Union[dict, Sequence[Tuple[str, Any]]],
    devices: Optional[Sequence[Any]] = None,
    policy: str = "dmda",
) -> List[dict]:
    """Runs each stage on the device where acco's task runtime says it finishes first, and says
    why. `stages` maps a name to a callable taking the acco.Device it runs on, or to a dict
    {"fn": callable, "flops": float, "bytes": float} whose flops and bytes are the cost hint
    the runtime's performance models start from (as acco.Runtime.submit takes them); the
    stages are independent and may run at once. `devices` defaults to acco.devices().

    Returns one dict a stage, in order: "stage", "device" (the index), "device_name", "result"
    (what the callable returned) and "why" (the policy's explanation, acco.Runtime.explain).
    The first exception a stage raised is raised after every stage has run."""
    items = list(stages.items()) if isinstance(stages, dict) else list(stages)
    chosen = list(devices) if devices is not None else _acco.devices()
    runtime = _acco.Runtime(chosen, policy=policy)
    results: dict = {}
    tasks = []
    for name, stage in items:
        spec = stage if isinstance(stage, dict) else {"fn": stage}
        fn = spec["fn"]

        def run(ctx: Any, name: str = name, fn: Callable[[Any], Any] = fn) -> None:
            results[name] = (ctx.device, fn(chosen[ctx.device]))

        task = runtime.submit(
            run, flops=float(spec.get("flops", 0.0)), bytes=float(spec.get("bytes", 0.0)),
            name=str(name)
        )
        tasks.append((name, task))
    runtime.wait_all()
    placed = []
    for name, task in tasks:
        device, result = results[name]
        placed.append({"stage": name, "device": device, "device_name": chosen[device].name,
                       "result": result, "why": runtime.explain(task)})
    return placed
