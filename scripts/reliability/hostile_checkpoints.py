#!/usr/bin/env python3
"""Hostile `torch.save`-style checkpoints for the reliability probes (issue 46, case 1).

Each file is a zip `archive/data.pkl` + `archive/data/0` (four float32 values) whose pickle
is written opcode by opcode here (no torch, nothing executed): a dict
{"controller_state_dict": {"state_net.0.weight": <tensor>}} where the tensor is hostile.

    hostile_checkpoints.py OUT_DIR      # writes nested.pt overflow.pt huge.pt claimed.pt
"""
import struct
import sys
import zipfile
from pathlib import Path


def text(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def long8(v):
    return b"\x8a\x08" + struct.pack("<q", v)


def tup(vals):
    return b"(" + b"".join(long8(v) for v in vals) + b"t"


def tensor(shape, stride, offset=0, wrappers=0):
    out = b"ctorch._utils\n_rebuild_parameter\n(" * wrappers
    out += b"ctorch._utils\n_rebuild_tensor_v2\n("
    out += b"(" + text("storage") + b"ctorch\nFloatStorage\n" + text("0") + text("cpu") + long8(4) + b"tQ"
    out += long8(offset) + tup(shape) + tup(stride) + b"tR"
    out += b"tR" * wrappers
    return out


def checkpoint(t):
    return (b"\x80\x02}" + text("controller_state_dict") + b"}" + text("state_net.0.weight")
            + t + b"ss.")


CASES = {
    # 1M nested parameter wrappers (a recursive reader overflows its stack)
    "nested.pt": tensor([2, 2], [2, 1], wrappers=1_000_000),
    # a shape whose element count overflows 64 bits
    "overflow.pt": tensor([1 << 40, 1 << 40], [1, 1]),
    # a 2^40-element shape (4 TiB of f32 if allocated from the claim)
    "huge.pt": tensor([1 << 40], [1]),
    # 10^8 elements claimed over a 4-element storage (stride 0: every index in range)
    "claimed.pt": tensor([100_000_000], [0]),
}


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, t in CASES.items():
        with zipfile.ZipFile(out / name, "w", zipfile.ZIP_STORED) as z:
            z.writestr("archive/data.pkl", checkpoint(t))
            z.writestr("archive/data/0", struct.pack("<4f", 1, 2, 3, 4))
        print(out / name)


if __name__ == "__main__":
    main()
