#!/usr/bin/env python3
"""Runs one published tensor-core model (GNU Octave) on a set made by make_rows.py and writes
the model's D beside it as `d_NAME_fp32.txt` or `d_NAME_fp16.txt` (32 binary digits of the
FP32 word of D's value, as the published measurement files hold FP16 results). For FP16
output, C is first rounded to FP16 to nearest even, as `tcrtl verify measurements
--out-format fp16` reads it. A NaN D is written as 0x7FFFFFFF (FP32) or the FP32 word
0x7FFFE000 (FP16 0x7FFF), NVIDIA's canonical NaNs; a D past FP32's range (FP16's, for FP16
output) as the signed infinity.

usage: replay_set.py MODELS_DIR MODEL INFORMAT OUTFORMAT SET_DIR NAME FMT
"""
import math
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def words(path):
    with open(path) as f:
        return [[int(w, 16) for w in line.split()] for line in f if line.strip()]


def f32(w):
    return struct.unpack(">f", struct.pack(">I", w))[0]


def to_fp16_rne(v):
    try:
        return struct.unpack(">e", struct.pack(">e", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def f64_hex(v):
    return struct.pack(">d", v).hex()


def main():
    models, model, informat, outformat, set_dir, name, fmt = sys.argv[1:8]
    a = words(f"{set_dir}/a_{name}_{fmt}.txt")
    b = words(f"{set_dir}/b_{name}_{fmt}.txt")
    with open(f"{set_dir}/c_{name}_fp32.txt") as f:
        c = [int(line.strip(), 2) for line in f if line.strip()]
    fp16 = outformat == "fp16"
    with tempfile.TemporaryDirectory() as tmp:
        rows, out = f"{tmp}/rows.txt", f"{tmp}/d.txt"
        with open(rows, "w") as f:
            for ar, br, cw in zip(a, b, c):
                cv = f32(cw)
                if fp16:
                    cv = to_fp16_rne(cv)
                vals = [f32(w) for w in ar] + [f32(w) for w in br] + [cv]
                f.write(" ".join(f64_hex(v) for v in vals) + "\n")
        subprocess.run(
            ["octave-cli", "-q", f"{HERE}/eval_rows.m", models, model, informat,
             outformat, rows, out],
            check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            d = [struct.unpack(">d", bytes.fromhex(line.strip()))[0] for line in f]
    assert len(d) == len(c), (len(d), len(c))
    with open(f"{set_dir}/d_{name}_{outformat}.txt", "w") as f:
        for v in d:
            if v != v:
                w = 0x7FFFE000 if fp16 else 0x7FFFFFFF
            elif fp16 and abs(v) > 65504.0:
                w = 0xFF800000 if v < 0 else 0x7F800000
            elif abs(v) > 3.4028234663852886e38:
                # The models leave a value past FP32's range as it is; the tensor core (and
                # the models' own specials, decided before the blocks) give the infinity.
                w = 0xFF800000 if v < 0 else 0x7F800000
            else:
                w = struct.unpack(">I", struct.pack(">f", v))[0]
                assert f32(w) == v, v
            f.write(f"{w:032b}\n")


if __name__ == "__main__":
    main()
