#!/usr/bin/env python3
"""Runs the rows of the H200 FP8 sets (data/tensor-core-measurements/H200/{E4M3,E4M3xE5M2,
E5M2xE4M3}) through cuBLAS's FP8 GEMM (`torch._scaled_mm`, scales 1, no C), the native Hopper
FP8 path (wgmma), and writes the diagonal of D (sample i = row i of A times row i of B) per
set, accumulation mode and output type: a header line, then the FP32 words of the results in
hex. Needs PyTorch with CUDA on a Hopper GPU. Usage: cublas_fp8.py OUT."""
import glob
import sys

import numpy as np
import torch


def load(path):
    rows = [[int(t, 16) for t in line.split()] for line in open(path)]
    return np.array(rows, dtype=np.uint32).view(np.float32)


def main():
    out = open(sys.argv[1], "w")
    print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), file=out)
    one = torch.tensor(1.0, device="cuda")
    for name, fa, fb in [("E4M3", torch.float8_e4m3fn, torch.float8_e4m3fn),
                         ("E4M3xE5M2", torch.float8_e4m3fn, torch.float8_e5m2),
                         ("E5M2xE4M3", torch.float8_e5m2, torch.float8_e4m3fn)]:
        base = f"data/tensor-core-measurements/H200/{name}/"
        a = torch.tensor(load(glob.glob(base + "a_*")[0])).to(fa).cuda()
        bt = torch.tensor(load(glob.glob(base + "b_*")[0])).to(fb).cuda()
        for fast in (False, True):
            for od in (torch.float32, torch.float16, torch.bfloat16):
                d = torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one, out_dtype=od,
                                     use_fast_accum=fast)
                diag = d.diagonal().float().cpu().numpy().view(np.uint32)
                out.write(f"{name} fast={fast} out={str(od).split('.')[1]}\n")
                out.write(" ".join(f"{x:08x}" for x in diag) + "\n")
    out.close()


main()
