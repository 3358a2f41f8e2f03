"""Reads TensorBoard event files as TensorBoard does, independently of kforge: TFRecord framing with
the masked CRC-32C checked here, Event protobufs decoded by python3-protobuf with message classes built
from the public TensorFlow field numbers declared below.

  read_tensorboard.py DIR

Reads every events.out.tfevents.* file of DIR in name order (TensorBoard's order) and prints one JSON
object: "files", "scalars" and "texts" as TensorBoard shows them (after its purge rule: a
session_log START at step s drops what was read earlier of steps >= s), "raw_scalars" (every scalar
record as stored) and "session_starts". A scalar is [tag, step, value]; a text is [tag, step, text].
Exits 1 with "FILE: fault" on stderr at the first fault: a bad CRC, a torn record, an Event whose bytes
hold a field the format does not have, a file not starting with file_version "brain.Event:2".
"""
import json
import math
import os
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


class Fault(Exception):
    pass


def _field(message, name, number, ftype, type_name=None, repeated=False, oneof=None):
    f = message.field.add(name=name, number=number, type=ftype,
                          label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
    if type_name:
        f.type_name = type_name
    if oneof is not None:
        f.oneof_index = oneof
    return f


def build_messages():
    """Event, Summary, Summary.Value, SummaryMetadata, SessionLog, TensorProto, TensorShapeProto
    (tensorflow/core/util/event.proto, core/framework/summary.proto, tensor.proto, tensor_shape.proto)."""
    fdp = descriptor_pb2.FileDescriptorProto(name="tb_oracle.proto", package="tb_oracle", syntax="proto3")

    dtype = fdp.enum_type.add(name="DataType")
    for name, number in (("DT_INVALID", 0), ("DT_FLOAT", 1), ("DT_STRING", 7)):
        dtype.value.add(name=name, number=number)

    shape = fdp.message_type.add(name="TensorShapeProto")
    dim = shape.nested_type.add(name="Dim")
    _field(dim, "size", 1, F.TYPE_INT64)
    _field(dim, "name", 2, F.TYPE_STRING)
    _field(shape, "dim", 2, F.TYPE_MESSAGE, ".tb_oracle.TensorShapeProto.Dim", repeated=True)
    _field(shape, "unknown_rank", 3, F.TYPE_BOOL)

    tensor = fdp.message_type.add(name="TensorProto")
    _field(tensor, "dtype", 1, F.TYPE_ENUM, ".tb_oracle.DataType")
    _field(tensor, "tensor_shape", 2, F.TYPE_MESSAGE, ".tb_oracle.TensorShapeProto")
    _field(tensor, "version_number", 3, F.TYPE_INT32)
    _field(tensor, "tensor_content", 4, F.TYPE_BYTES)
    _field(tensor, "float_val", 5, F.TYPE_FLOAT, repeated=True)
    _field(tensor, "string_val", 8, F.TYPE_BYTES, repeated=True)

    meta = fdp.message_type.add(name="SummaryMetadata")
    plugin = meta.nested_type.add(name="PluginData")
    _field(plugin, "plugin_name", 1, F.TYPE_STRING)
    _field(plugin, "content", 2, F.TYPE_BYTES)
    _field(meta, "plugin_data", 1, F.TYPE_MESSAGE, ".tb_oracle.SummaryMetadata.PluginData")
    _field(meta, "display_name", 2, F.TYPE_STRING)
    _field(meta, "summary_description", 3, F.TYPE_STRING)

    summary = fdp.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    _field(value, "tag", 1, F.TYPE_STRING)
    _field(value, "simple_value", 2, F.TYPE_FLOAT, oneof=0)
    _field(value, "tensor", 8, F.TYPE_MESSAGE, ".tb_oracle.TensorProto", oneof=0)
    _field(value, "node_name", 7, F.TYPE_STRING)
    _field(value, "metadata", 9, F.TYPE_MESSAGE, ".tb_oracle.SummaryMetadata")
    _field(summary, "value", 1, F.TYPE_MESSAGE, ".tb_oracle.Summary.Value", repeated=True)

    session = fdp.message_type.add(name="SessionLog")
    status = session.enum_type.add(name="SessionStatus")
    for name, number in (("STATUS_UNSPECIFIED", 0), ("START", 1), ("STOP", 2), ("CHECKPOINT", 3)):
        status.value.add(name=name, number=number)
    _field(session, "status", 1, F.TYPE_ENUM, ".tb_oracle.SessionLog.SessionStatus")
    _field(session, "checkpoint_path", 2, F.TYPE_STRING)
    _field(session, "msg", 3, F.TYPE_STRING)

    event = fdp.message_type.add(name="Event")
    event.oneof_decl.add(name="what")
    _field(event, "wall_time", 1, F.TYPE_DOUBLE)
    _field(event, "step", 2, F.TYPE_INT64)
    _field(event, "file_version", 3, F.TYPE_STRING, oneof=0)
    _field(event, "summary", 5, F.TYPE_MESSAGE, ".tb_oracle.Summary", oneof=0)
    _field(event, "session_log", 7, F.TYPE_MESSAGE, ".tb_oracle.SessionLog", oneof=0)

    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName("tb_oracle.Event")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(blob):
    pos = 0
    while pos < len(blob):
        if len(blob) - pos < 16:
            raise Fault(f"torn record at byte {pos}: {len(blob) - pos} bytes left")
        header = blob[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", blob[pos + 8:pos + 12])
        if length_crc != masked_crc(header):
            raise Fault(f"record at byte {pos}: length CRC {length_crc:#x} != {masked_crc(header):#x}")
        if pos + 16 + length > len(blob):
            raise Fault(f"record at byte {pos}: {length} bytes run past the end")
        data = blob[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack("<I", blob[pos + 12 + length:pos + 16 + length])
        if data_crc != masked_crc(data):
            raise Fault(f"record at byte {pos}: data CRC {data_crc:#x} != {masked_crc(data):#x}")
        yield data
        pos += 16 + length


def number(v):
    return None if math.isnan(v) else v


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    Event = build_messages()
    files = sorted(f for f in os.listdir(directory) if f.startswith("events.out.tfevents."))
    shown_scalars, shown_texts, raw, starts = [], [], [], []
    for name in files:
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as f:
                blob = f.read()
            for i, data in enumerate(records(blob)):
                event = Event()
                event.ParseFromString(data)
                # Every byte is a field of the declared format: re-encoding gives the same bytes.
                if event.SerializeToString(deterministic=True) != data:
                    raise Fault(f"record {i}: holds fields the Event format does not declare, or is not canonical")
                kind = event.WhichOneof("what")
                if i == 0 and event.file_version != "brain.Event:2":
                    raise Fault(f"record 0 is not file_version 'brain.Event:2' but {kind}")
                if kind == "session_log" and event.session_log.status == 1:  # START: TensorBoard's purge
                    starts.append(event.step)
                    shown_scalars = [s for s in shown_scalars if s[1] < event.step]
                    shown_texts = [t for t in shown_texts if t[1] < event.step]
                elif kind == "summary":
                    for v in event.summary.value:
                        which = v.WhichOneof("value")
                        if which == "simple_value":
                            raw.append([v.tag, event.step, number(v.simple_value)])
                            shown_scalars.append([v.tag, event.step, number(v.simple_value)])
                        elif which == "tensor":
                            if v.metadata.plugin_data.plugin_name != "text" or v.tensor.dtype != 7:
                                raise Fault(f"record {i}: tag {v.tag!r}: a tensor that is not a text summary")
                            if len(v.tensor.tensor_shape.dim) != 0 or len(v.tensor.string_val) != 1:
                                raise Fault(f"record {i}: tag {v.tag!r}: text is not one scalar string")
                            shown_texts.append([v.tag, event.step, v.tensor.string_val[0].decode("utf-8")])
                        else:
                            raise Fault(f"record {i}: tag {v.tag!r} has no value")
        except Fault as e:
            print(f"{path}: {e}", file=sys.stderr)
            sys.exit(1)
    json.dump({"files": files, "scalars": shown_scalars, "texts": shown_texts, "raw_scalars": raw,
               "session_starts": starts}, sys.stdout)


if __name__ == "__main__":
    main()
