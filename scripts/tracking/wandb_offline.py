"""Read back the offline W&B runs a memskill run logged live (`[tracking] wandb = true` with
WANDB_MODE=offline): every `<run>/wandb/offline-run-*/run-<id>.wandb` file, decoded record by
record (the files are LevelDB-log framed protobuf `Record`s; wandb 0.31 ships no reader of its
own). Prints one JSON object:

  {"runs": [{"id", "exit_code", "config_keys"}...],
   "scalars": {tag: [step, ...]}, "media": {tag: [step, ...]}}

where a tag's steps are the values of its group's step metric (`<group>/step`, which the
sidecar logs with every line), over all the offline runs in file order: what the run's
TensorBoard event files hold as tags and steps, for a comparison.

Usage: python scripts/tracking/wandb_offline.py RUN_DIR
"""
import glob
import json
import os
import struct
import sys

from wandb.proto import wandb_internal_pb2 as pb

BLOCK = 32768
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def records(path):
    """The records of a .wandb file: a 7-byte header (":W&B", magic, version), then 32 KiB
    blocks of chunks (crc32c, length, type, data), a record split over FIRST/MIDDLE/LAST."""
    data = open(path, "rb").read()
    if data[:4] != b":W&B":
        sys.exit(f"error: {path}: not a W&B transaction log")
    pos, buf = 7, b""
    while pos + 7 <= len(data):
        left = BLOCK - pos % BLOCK
        if left < 7:
            pos += left
            continue
        _crc, n, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if n == 0 and kind == 0:
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + n]
        pos += 7 + n
        if kind == FULL:
            yield chunk
        elif kind == FIRST:
            buf = chunk
        elif kind == MIDDLE:
            buf += chunk
        elif kind == LAST:
            yield buf + chunk
            buf = b""


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: wandb_offline.py RUN_DIR")
    files = sorted(glob.glob(os.path.join(sys.argv[1], "wandb", "offline-run-*", "run-*.wandb")))
    if not files:
        sys.exit(f"error: no offline W&B run under {sys.argv[1]}/wandb")
    runs, scalars, media = [], {}, {}
    for f in files:
        info = {"file": f, "id": None, "exit_code": None, "config_keys": 0}
        for raw in records(f):
            r = pb.Record()
            r.ParseFromString(raw)
            kind = r.WhichOneof("record_type")
            if kind == "run":
                info["id"] = r.run.run_id
                info["config_keys"] = sum(1 for u in r.run.config.update if u.key != "_wandb")
            elif kind == "exit":
                info["exit_code"] = r.exit.exit_code
            elif kind == "history":
                row = {}
                for item in r.history.item:
                    # a value under its key (wandb 0.31 writes nested_key = [key]); a media
                    # value's fields under [key, field]
                    path = [item.key] if item.key else list(item.nested_key)
                    value = json.loads(item.value_json)
                    if len(path) == 1:
                        row[path[0]] = value
                    else:
                        row.setdefault(path[0], {})[path[-1]] = value
                steps = {k[:-len("/step")]: v for k, v in row.items() if k.endswith("/step")}
                for k, v in row.items():
                    if k.startswith("_") or k.endswith("/step"):
                        continue
                    group = max((g for g in steps if k.startswith(g + "/")), key=len, default=None)
                    if group is None:
                        sys.exit(f"error: {f}: {k} was logged without its group's step")
                    (media if isinstance(v, dict) else scalars).setdefault(k, []).append(steps[group])
        runs.append(info)
    print(json.dumps({"runs": runs, "scalars": scalars, "media": media}, sort_keys=True))


if __name__ == "__main__":
    main()
