#!/usr/bin/env python3
"""Writes a KempnerForge-layout checkpoint (torch.distributed.checkpoint + train_state.pt) with python3-torch 1.13.

Usage:
  kempnerforge_checkpoint.py KFORGE_STEP_DIR OUT_STEP_DIR torch113|torch2-sharded [--by-index]

The tensors are those of a kforge checkpoint (read with read_formats.read_safetensors, kforge's names being
KempnerForge's FQNs), laid out as KempnerForge's CheckpointManager.save does: DCP state {"model": model state dict,
"optimizer": get_optimizer_state_dict (state keyed by parameter FQN: exp_avg, exp_avg_sq, and step as a float32
tensor as torch >= 2.0 AdamW keeps it; param_groups)}, flattened as torch 2.x's DefaultSavePlanner flattens it
("model.<fqn>", "optimizer.state.<fqn>.exp_avg", "optimizer.param_groups.0.lr", with the key -> path mapping as
planner_data); train_state.pt = torch.save({step, tokens_seen, rng {python, numpy, torch_cpu}, scheduler (a real
LambdaLR's state_dict after `step` steps), dataloader (StatefulDataLoader's state: epoch, batches_yielded,
sampler)}) and metadata.json.

torch113:        the DCP files are written by torch 1.13's own FileSystemWriter (save_state_dict, no_dist=True):
                 one rank, __0_0.distcp, classes under torch.distributed._shard.
torch2-sharded:  two ranks as FSDP2 shards them (every tensor of one or more dimensions split along dim 0 by
                 torch.chunk, the rest on rank 0), written from the format's definition: each item torch.save'd at
                 its offset of __<rank>_0.distcp, and .metadata pickled with torch >= 2.4's classes
                 (torch.distributed.checkpoint.metadata: Metadata with storage_meta and version, TensorProperties,
                 _MEM_FORMAT_ENCODING; filesystem._StorageInfo), their definitions copied from PyTorch's source.
--by-index:      the optimizer state keyed by parameter index, as optimizer.state_dict() wrote it before
                 KempnerForge's PR #115.
--pp2:           two pipeline stages as KempnerForge writes them, OUT_STEP_DIR/pp0 (the embedding and layers.0)
                 and pp1 (the rest), each a DCP directory of its stage's tensors (global FQNs) and its own
                 optimizer param_groups; train_state.pt and metadata.json in OUT_STEP_DIR.
"""
import dataclasses
import enum
import io
import json
import os
import pickle
import random
import sys
import tomllib
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_formats import read_safetensors  # noqa: E402


def kforge_tensors(step_dir):
    tensors = {}
    for name in sorted(os.listdir(step_dir)):
        if name.endswith(".safetensors"):
            for key, _, shape, array in read_safetensors(os.path.join(step_dir, name))[1]:
                tensors[key] = torch.from_numpy(np.array(array).reshape(shape))
    return tensors


def flat_state(tensors, by_index, lr):
    model = {k[len("model/"):]: t for k, t in tensors.items() if k.startswith("model/")}
    names = list(model)
    flat, paths = {}, {}

    def put(path, value):
        key = ".".join(str(p) for p in path)
        flat[key], paths[key] = value, tuple(path)

    for fqn, t in model.items():
        put(("model", fqn), t)
    for i, fqn in enumerate(names):
        slot_key = i if by_index else fqn
        put(("optimizer", "state", slot_key, "exp_avg"), tensors[f"optimizer/{fqn}.exp_avg"])
        put(("optimizer", "state", slot_key, "exp_avg_sq"), tensors[f"optimizer/{fqn}.exp_avg_sq"])
        put(("optimizer", "state", slot_key, "step"), tensors[f"optimizer/{fqn}.step"].to(torch.float32).reshape(()))
    group = {"lr": lr, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.1, "amsgrad": False,
             "foreach": None, "maximize": False, "capturable": False, "differentiable": False, "fused": None,
             "params": list(range(len(names))) if by_index else names}
    for k, v in group.items():
        put(("optimizer", "param_groups", 0, k), v)
    return flat, paths


# --- torch >= 2.4's metadata classes, as PyTorch's torch/distributed/checkpoint/{metadata,filesystem}.py define them.
def torch2_classes():
    meta = types.ModuleType("torch.distributed.checkpoint.metadata")
    fsm = types.ModuleType("torch.distributed.checkpoint.filesystem")
    sys.modules[meta.__name__], sys.modules[fsm.__name__] = meta, fsm

    class _MEM_FORMAT_ENCODING(enum.Enum):
        TORCH_CONTIGUOUS_FORMAT = 0
        TORCH_CHANNELS_LAST = 1
        TORCH_PRESERVE_FORMAT = 2

    @dataclasses.dataclass
    class ChunkStorageMetadata:
        offsets: torch.Size
        sizes: torch.Size

    @dataclasses.dataclass
    class TensorProperties:
        dtype: torch.dtype
        layout: torch.layout = torch.strided
        requires_grad: bool = False
        memory_format: torch.memory_format = torch.contiguous_format
        pin_memory: bool = False

        def __getstate__(self):
            return (self.dtype, self.layout, self.requires_grad, _MEM_FORMAT_ENCODING.TORCH_CONTIGUOUS_FORMAT,
                    self.pin_memory)

    @dataclasses.dataclass
    class TensorStorageMetadata:
        properties: TensorProperties
        size: torch.Size
        chunks: list

    @dataclasses.dataclass
    class BytesStorageMetadata:
        pass

    @dataclasses.dataclass
    class StorageMeta:
        checkpoint_id: str = None
        save_id: str = None
        load_id: str = None
        modules: list = dataclasses.field(default_factory=list)

    @dataclasses.dataclass
    class Metadata:
        state_dict_metadata: dict
        planner_data: object = None
        storage_data: object = None
        storage_meta: StorageMeta = None
        version: str = None

    @dataclasses.dataclass(frozen=True)
    class MetadataIndex:
        fqn: str
        offset: torch.Size = None
        index: int = dataclasses.field(hash=False, compare=False, default=None)

    @dataclasses.dataclass
    class _StorageInfo:
        relative_path: str
        offset: int
        length: int
        transform_descriptors: list = None

        def __getstate__(self):
            return {k: v for k, v in self.__dict__.items() if v is not None}

    for cls in (_MEM_FORMAT_ENCODING, ChunkStorageMetadata, TensorProperties, TensorStorageMetadata,
                BytesStorageMetadata, StorageMeta, Metadata, MetadataIndex):
        cls.__module__, cls.__qualname__ = meta.__name__, cls.__name__
        setattr(meta, cls.__name__, cls)
    _StorageInfo.__module__, _StorageInfo.__qualname__ = fsm.__name__, "_StorageInfo"
    fsm._StorageInfo = _StorageInfo
    return meta, fsm


def saved_bytes(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def write_torch2_sharded(flat, paths, out):
    meta, fsm = torch2_classes()
    files = {0: bytearray(), 1: bytearray()}
    items, storage = {}, {}

    def store(rank, fqn, offset, blob):
        storage[meta.MetadataIndex(fqn, offset, None)] = fsm._StorageInfo(f"__{rank}_0.distcp", len(files[rank]),
                                                                          len(blob))
        files[rank] += blob

    for key, value in flat.items():
        if not isinstance(value, torch.Tensor):
            items[key] = meta.BytesStorageMetadata()
            store(0, key, None, saved_bytes(value))
            continue
        pieces = torch.chunk(value, 2, dim=0) if value.dim() > 0 else (value,)
        chunks, start = [], 0
        for rank, piece in enumerate(pieces):
            offsets = torch.Size([start] + [0] * (value.dim() - 1)) if value.dim() > 0 else torch.Size([])
            chunks.append(meta.ChunkStorageMetadata(offsets, piece.shape))
            store(rank, key, offsets, saved_bytes(piece.clone()))
            start += piece.shape[0] if value.dim() > 0 else 0
        items[key] = meta.TensorStorageMetadata(meta.TensorProperties(value.dtype), value.shape, chunks)
    for rank, blob in files.items():
        with open(os.path.join(out, f"__{rank}_0.distcp"), "wb") as f:
            f.write(blob)
    metadata = meta.Metadata(items, paths, storage, meta.StorageMeta(out, "save-id", None), "1.0.0")
    with open(os.path.join(out, ".metadata"), "wb") as f:
        pickle.dump(metadata, f)


def import_torch113_writer():
    # torch 1.13's sharded_tensor metadata has a dataclass default (TensorProperties()) that Python 3.11 refuses as
    # unhashable; give such defaults object's hash while torch.distributed._shard is imported (nothing hashes them).
    original = dataclasses._get_field

    def get_field(cls, name, *rest):
        default = cls.__dict__.get(name)
        default = default.default if isinstance(default, dataclasses.Field) else default
        if dataclasses.is_dataclass(default) and type(default).__hash__ is None:
            type(default).__hash__ = object.__hash__
        return original(cls, name, *rest)

    dataclasses._get_field = get_field
    try:
        from torch.distributed._shard.checkpoint import FileSystemWriter, save_state_dict
    finally:
        dataclasses._get_field = original
    return FileSystemWriter, save_state_dict


def write_torch113(flat, paths, out):
    FileSystemWriter, save_state_dict = import_torch113_writer()
    save_state_dict(flat, FileSystemWriter(out), no_dist=True)
    with open(os.path.join(out, ".metadata"), "rb") as f:
        metadata = pickle.load(f)
    metadata.planner_data = paths  # as torch 2.x's flattening planner records it
    with open(os.path.join(out, ".metadata"), "wb") as f:
        pickle.dump(metadata, f)


def lambda_lr_state(lr, steps):
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([param], lr=lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    for _ in range(steps):
        optimizer.step()
        scheduler.step()
    return scheduler.state_dict()


def main():
    if len(sys.argv) < 4 or sys.argv[3] not in ("torch113", "torch2-sharded"):
        raise SystemExit(__doc__)
    source, out, layout = sys.argv[1:4]
    by_index = "--by-index" in sys.argv[4:]
    os.makedirs(out, exist_ok=True)
    train_state = json.load(open(os.path.join(source, "train_state.json")))
    with open(os.path.join(source, "config.toml"), "rb") as f:
        config = tomllib.load(f)
    lr, seed = config["optimizer"]["lr"], config["train"].get("data_seed", config["train"]["seed"])
    tensors = kforge_tensors(source)
    flat, paths = flat_state(tensors, by_index, lr)
    write = write_torch113 if layout == "torch113" else write_torch2_sharded
    if "--pp2" in sys.argv[4:]:
        first = lambda key: "token_embedding" in key or ".layers.0." in key
        for stage in (0, 1):
            keys = [k for k in flat if k.startswith("optimizer.param_groups") or first(k) == (stage == 0)]
            os.makedirs(os.path.join(out, f"pp{stage}"), exist_ok=True)
            write({k: flat[k] for k in keys}, {k: paths[k] for k in keys}, os.path.join(out, f"pp{stage}"))
    else:
        write(flat, paths, out)
    step, position = train_state["step"], train_state["data"][0]
    random.seed(step)
    np.random.seed(step)
    torch.save({"step": step, "tokens_seen": train_state["tokens_seen"],
                "rng": {"python": random.getstate(), "numpy": np.random.get_state(),
                        "torch_cpu": tensors["rng/torch_cpu"].clone()},
                "scheduler": lambda_lr_state(lr, step),
                "dataloader": {"epoch": position["epoch"], "batches_yielded": position["batches_yielded"],
                               "sampler": {"epoch": position["epoch"], "seed": seed, "num_replicas": 1, "rank": 0}}},
               os.path.join(out, "train_state.pt"))
    with open(os.path.join(out, "metadata.json"), "w") as f:
        json.dump({"step": step, "tokens_seen": train_state["tokens_seen"]}, f, indent=2)


if __name__ == "__main__":
    main()
