// Captures real tensor-core and TMA behaviour on an NVIDIA Hopper GPU (sm_90), for the
// model's tests: block fused multiply-adds through `mma.sync` for every input format the
// `nvidia` mode models (FP16, BF16, TF32, FP8 E4M3/E5M2 and the mixed FP8 pairs, into FP32
// and FP16 accumulators), and TMA box loads (`cp.async.bulk.tensor`) of tensor maps built
// by `cuTensorMapEncodeTiled` (swizzles, shared-memory offsets, out-of-bounds fill, element
// strides, ranks 1..5), with the descriptor refusals of the driver.
//
// Build and run (on a machine with a Hopper GPU and the CUDA toolkit):
//   nvcc -O2 -std=c++17 -arch=sm_90a -o capture scripts/gpu/capture.cu -ldl
//   scripts/gpu/capture.sh OUTDIR GPUNAME
// It writes OUTDIR/GPUNAME/FORMAT/{a,b,c,d}_*.txt in the layout of
// data/tensor-core-measurements (see its README) and OUTDIR/GPUNAME/tma_loads.txt
// (format described in docs/memory.md, "Checked against a GPU"). Inputs come from a
// fixed-seed generator, so a rerun on another GPU produces the same inputs.

#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

#define CHECK(x)                                                                         \
    do {                                                                                 \
        cudaError_t err_ = (x);                                                          \
        if (err_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                   \
                    cudaGetErrorString(err_));                                           \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

// ---------------------------------------------------------------------------------------
// Input formats: field widths, bias and specials, and an exact decoder to an FP32 word.
// ---------------------------------------------------------------------------------------

struct Fmt {
    const char* name;  // directory / file name part
    int ebits, mbits, bias;
    bool ieee_specials;  // all-ones exponent is inf/NaN (false: E4M3, NaN only at S.1111.111)
    bool is_tf32;        // stored as an FP32 word with the low 13 bits zero
};

static const Fmt FP16F = {"fp16", 5, 10, 15, true, false};
static const Fmt BF16F = {"bf16", 8, 7, 127, true, false};
static const Fmt TF32F = {"tf32", 8, 10, 127, true, true};
static const Fmt E4M3F = {"E4M3", 4, 3, 7, false, false};
static const Fmt E5M2F = {"E5M2", 5, 2, 15, true, false};

static uint32_t f2u(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

// The FP32 word of the value of `bits` in format f (every value of these formats is exact in
// FP32). NaN becomes 0x7FC00000.
static uint32_t to_fp32_word(const Fmt& f, uint32_t bits) {
    if (f.is_tf32) return bits;
    uint32_t sign = (bits >> (f.ebits + f.mbits)) & 1;
    uint32_t e = (bits >> f.mbits) & ((1u << f.ebits) - 1);
    uint32_t m = bits & ((1u << f.mbits) - 1);
    uint32_t emax = (1u << f.ebits) - 1;
    if (f.ieee_specials && e == emax) {
        if (m) return 0x7FC00000u;
        return (sign << 31) | 0x7F800000u;
    }
    if (!f.ieee_specials && e == emax && m == (1u << f.mbits) - 1) return 0x7FC00000u;
    double v;
    if (e == 0)
        v = std::ldexp((double)m, 1 - f.bias - f.mbits);
    else
        v = std::ldexp((double)((1u << f.mbits) | m), (int)e - f.bias - f.mbits);
    float x = (float)v;
    if (sign) x = -x;
    return f2u(x);
}

// ---------------------------------------------------------------------------------------
// A fixed-seed generator (splitmix64) and the sample regimes.
// ---------------------------------------------------------------------------------------

struct Rng {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }
    int range(int lo, int hi) { return lo + (int)below((uint32_t)(hi - lo + 1)); }
};

static uint32_t max_exp_field(const Fmt& f) {
    return (1u << f.ebits) - (f.ieee_specials ? 2 : 1);
}

// A finite value of f with its exponent field in [elo, ehi] (clamped), random sign and
// fraction.
static uint32_t draw(const Fmt& f, Rng& r, int elo, int ehi) {
    int emax = (int)max_exp_field(f);
    if (elo < 0) elo = 0;
    if (ehi > emax) ehi = emax;
    if (elo > ehi) elo = ehi;
    for (;;) {
        uint32_t e = (uint32_t)r.range(elo, ehi);
        uint32_t m = r.below(1u << f.mbits);
        uint32_t s = r.below(2);
        uint32_t bits = (s << (f.ebits + f.mbits)) | (e << f.mbits) | m;
        if (!f.ieee_specials && e == (1u << f.ebits) - 1 && m == (1u << f.mbits) - 1) continue;
        if (f.is_tf32) return bits << 13;
        return bits;
    }
}

static uint32_t nan_of(const Fmt& f) {
    if (f.is_tf32) return 0x7FC00000u;
    if (!f.ieee_specials) return 0x7F;
    uint32_t emax = (1u << f.ebits) - 1;
    return (emax << f.mbits) | (1u << (f.mbits - 1));
}
static uint32_t inf_of(const Fmt& f, uint32_t sign) {
    if (f.is_tf32) return (sign << 31) | 0x7F800000u;
    uint32_t emax = (1u << f.ebits) - 1;
    return (sign << (f.ebits + f.mbits)) | (emax << f.mbits);
}
static uint32_t sign_flip(const Fmt& f, uint32_t bits) {
    return bits ^ (f.is_tf32 ? 0x80000000u : (1u << (f.ebits + f.mbits)));
}
static int unbiased(const Fmt& f, uint32_t bits) {
    if (f.is_tf32) return (int)((bits >> 23) & 0xFF) - 127;
    int e = (int)((bits >> f.mbits) & ((1u << f.ebits) - 1));
    return (e == 0 ? 1 : e) - f.bias;
}

struct Sample {
    std::vector<uint32_t> a, b;  // format bits
    uint32_t c;                  // FP32 word
};

static Sample make_sample(const Fmt& fa, const Fmt& fb, int K, Rng& r) {
    Sample s;
    s.a.assign(K, 0);
    s.b.assign(K, 0);
    uint32_t regime = r.below(16);
    auto wide = [&](const Fmt& f) { return draw(f, r, 0, (int)max_exp_field(f)); };
    auto near = [&](const Fmt& f, int spread) {
        return draw(f, r, f.bias - spread, f.bias + spread);
    };
    for (int k = 0; k < K; ++k) {
        switch (regime) {
            case 0: case 1: case 2: case 3:
                s.a[k] = wide(fa);
                s.b[k] = wide(fb);
                if (r.below(8) == 0) s.a[k] = 0;
                break;
            case 4: case 5: case 6:
                s.a[k] = near(fa, 4);
                s.b[k] = near(fb, 4);
                if (r.below(10) == 0) s.b[k] = 0;
                break;
            case 7: case 8:
                if (k < K / 2) {
                    s.a[k] = near(fa, 3);
                    s.b[k] = near(fb, 3);
                } else {
                    s.a[k] = sign_flip(fa, s.a[k - K / 2]);
                    s.b[k] = s.b[k - K / 2];
                    if (r.below(4) == 0) s.a[k] ^= (fa.is_tf32 ? (1u << 13) : 1u);
                }
                break;
            case 9: case 10:
                s.a[k] = draw(fa, r, 0, 2);
                s.b[k] = (r.below(2) ? draw(fb, r, 0, 2) : near(fb, 6));
                break;
            case 11: case 12: {
                int ea = (int)max_exp_field(fa), eb = (int)max_exp_field(fb);
                s.a[k] = draw(fa, r, ea - 2, ea);
                s.b[k] = draw(fb, r, eb - 2, eb);
                break;
            }
            case 13:
                if (r.below(2)) {
                    s.a[k] = draw(fa, r, (int)max_exp_field(fa) - 3, (int)max_exp_field(fa));
                } else {
                    s.a[k] = draw(fa, r, 0, 3);
                }
                s.b[k] = near(fb, 2);
                break;
            case 14:
                s.a[k] = k == 0 ? near(fa, 2) : draw(fa, r, 0, fa.bias - 2);
                s.b[k] = near(fb, 2);
                break;
            default:
                s.a[k] = near(fa, 5);
                s.b[k] = near(fb, 5);
                break;
        }
    }
    if (regime == 15) {
        // Specials: an infinity (where the format has one) or a NaN at a random place.
        uint32_t which = r.below(4);
        int k = (int)r.below((uint32_t)K);
        if (which == 0) s.a[k] = nan_of(fa);
        if (which == 1) s.b[k] = fb.ieee_specials ? inf_of(fb, r.below(2)) : nan_of(fb);
        if (which == 2 && fa.ieee_specials) {
            s.a[k] = inf_of(fa, 0);
            int k2 = (k + 1) % K;
            s.a[k2] = inf_of(fa, 1);
            s.b[k2] = s.b[k];
        }
    }
    // C: zero, or an FP32 value whose exponent lies near the largest product's.
    int pmax = -300;
    for (int k = 0; k < K; ++k) {
        int e = unbiased(fa, s.a[k]) + unbiased(fb, s.b[k]);
        if (e > pmax) pmax = e;
    }
    uint32_t csel = r.below(8);
    if (csel == 0) {
        s.c = r.below(2) << 31;
    } else if (regime == 15 && csel == 1) {
        s.c = r.below(2) ? 0x7FC00000u : ((r.below(2) << 31) | 0x7F800000u);
    } else {
        int e = pmax + r.range(-30, 30);
        if (csel == 2) e = pmax + r.range(-2, 2);
        if (e < -149) e = -149;
        if (e > 127) e = 127;
        uint32_t field = e < -126 ? 0 : (uint32_t)(e + 127);
        uint32_t mant = (uint32_t)(r.next() & 0x7FFFFF);
        s.c = (r.below(2) << 31) | (field << 23) | mant;
    }
    return s;
}

// ---------------------------------------------------------------------------------------
// The mma kernels: one warp computes 8 independent samples, sample i in row i of A, column
// i of B and C[i][i]; rows 8..15 of A and the off-diagonal C are zero. Fragment layouts are
// the PTX ISA's for each shape (groupID = lane / 4, threadID_in_group = lane % 4).
// ---------------------------------------------------------------------------------------

enum Kind {
    F16_K16_F32, F16_K16_F16, F16_K8_F32, F16_K8_F16, BF16_K16_F32, TF32_K4_F32,
    TF32_K8_F32, E4E4_F32, E4E4_F16, E5E5_F32, E5E5_F16, E4E5_F32, E4E5_F16,
    E5E4_F32, E5E4_F16
};

struct Ctx {
    const uint32_t *a, *b, *c;
    int K, ns, base;
    __device__ uint32_t A(int row, int k) const {
        return (row < 8 && base + row < ns) ? a[(base + row) * K + k] : 0u;
    }
    __device__ uint32_t B(int k, int n) const {
        return (base + n < ns) ? b[(base + n) * K + k] : 0u;
    }
    __device__ uint32_t C(int row, int n) const {
        return (row == n && row < 8 && base + row < ns) ? c[base + row] : 0u;
    }
};

__device__ inline uint32_t pack16(uint32_t lo, uint32_t hi) { return (lo & 0xFFFF) | (hi << 16); }
__device__ inline uint32_t pack8(uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) {
    return (b0 & 0xFF) | ((b1 & 0xFF) << 8) | ((b2 & 0xFF) << 16) | ((b3 & 0xFF) << 24);
}

template <int KIND>
__global__ void mma_kernel(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d,
                           int K, int ns) {
    Ctx x{a, b, c, K, ns, (int)blockIdx.x * 8};
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    // The accumulator element i (0..3) of this lane sits at (row g + 8*(i>>1), col 2t + (i&1)).
    uint32_t cf[4], df[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; ++i) cf[i] = x.C(g + 8 * (i >> 1), 2 * t + (i & 1));
    constexpr bool f16acc = KIND == F16_K16_F16 || KIND == F16_K8_F16 || KIND == E4E4_F16 ||
                            KIND == E5E5_F16 || KIND == E4E5_F16 || KIND == E5E4_F16;
    uint32_t ch0 = pack16(cf[0], cf[1]), ch1 = pack16(cf[2], cf[3]), dh0 = 0, dh1 = 0;
    if constexpr (KIND == F16_K16_F32 || KIND == F16_K16_F16 || KIND == BF16_K16_F32) {
        uint32_t ra[4], rb[2];
        for (int j = 0; j < 4; ++j) {
            int row = g + 8 * (j & 1), col = 2 * t + 8 * (j >> 1);
            ra[j] = pack16(x.A(row, col), x.A(row, col + 1));
        }
        for (int j = 0; j < 2; ++j) {
            int k = 2 * t + 8 * j;
            rb[j] = pack16(x.B(k, g), x.B(k + 1, g));
        }
        if constexpr (KIND == F16_K16_F32) {
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                "{%8,%9}, {%10,%11,%12,%13};\n"
                : "=r"(df[0]), "=r"(df[1]), "=r"(df[2]), "=r"(df[3])
                : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                  "r"(cf[0]), "r"(cf[1]), "r"(cf[2]), "r"(cf[3]));
        } else if constexpr (KIND == BF16_K16_F32) {
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                "{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                : "=r"(df[0]), "=r"(df[1]), "=r"(df[2]), "=r"(df[3])
                : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                  "r"(cf[0]), "r"(cf[1]), "r"(cf[2]), "r"(cf[3]));
        } else {
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, "
                "{%6,%7}, {%8,%9};\n"
                : "=r"(dh0), "=r"(dh1)
                : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                  "r"(ch0), "r"(ch1));
        }
    } else if constexpr (KIND == F16_K8_F32 || KIND == F16_K8_F16) {
        uint32_t ra[2], rb;
        for (int j = 0; j < 2; ++j) {
            int row = g + 8 * j, col = 2 * t;
            ra[j] = pack16(x.A(row, col), x.A(row, col + 1));
        }
        rb = pack16(x.B(2 * t, g), x.B(2 * t + 1, g));
        if constexpr (KIND == F16_K8_F32) {
            asm volatile(
                "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                "{%7,%8,%9,%10};\n"
                : "=r"(df[0]), "=r"(df[1]), "=r"(df[2]), "=r"(df[3])
                : "r"(ra[0]), "r"(ra[1]), "r"(rb), "r"(cf[0]), "r"(cf[1]), "r"(cf[2]),
                  "r"(cf[3]));
        } else {
            asm volatile(
                "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, "
                "{%5,%6};\n"
                : "=r"(dh0), "=r"(dh1)
                : "r"(ra[0]), "r"(ra[1]), "r"(rb), "r"(ch0), "r"(ch1));
        }
    } else if constexpr (KIND == TF32_K4_F32) {
        uint32_t a0 = x.A(g, t), a1 = x.A(g + 8, t), b0 = x.B(t, g);
        asm volatile(
            "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
            "{%7,%8,%9,%10};\n"
            : "=r"(df[0]), "=r"(df[1]), "=r"(df[2]), "=r"(df[3])
            : "r"(a0), "r"(a1), "r"(b0), "r"(cf[0]), "r"(cf[1]), "r"(cf[2]), "r"(cf[3]));
    } else if constexpr (KIND == TF32_K8_F32) {
        uint32_t a0 = x.A(g, t), a1 = x.A(g + 8, t), a2 = x.A(g, t + 4), a3 = x.A(g + 8, t + 4);
        uint32_t b0 = x.B(t, g), b1 = x.B(t + 4, g);
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%10,%11,%12,%13};\n"
            : "=r"(df[0]), "=r"(df[1]), "=r"(df[2]), "=r"(df[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(cf[0]), "r"(cf[1]),
              "r"(cf[2]), "r"(cf[3]));
    } else {
        // FP8 m16n8k32: A register j holds row g + 8*(j&1), columns 4t + 16*(j>>1) + 0..3;
        // B register j holds rows (k) 4t + 16j + 0..3 of column g.
        uint32_t ra[4], rb[2];
        for (int j = 0; j < 4; ++j) {
            int row = g + 8 * (j & 1), col = 4 * t + 16 * (j >> 1);
            ra[j] = pack8(x.A(row, col), x.A(row, col + 1), x.A(row, col + 2), x.A(row, col + 3));
        }
        for (int j = 0; j < 2; ++j) {
            int k = 4 * t + 16 * j;
            rb[j] = pack8(x.B(k, g), x.B(k + 1, g), x.B(k + 2, g), x.B(k + 3, g));
        }
#define FP8_F32(TA, TB)                                                                       \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." TA "." TB                          \
                 ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"          \
                 : "=r"(df[0]), "=r"(df[1]), "=r"(df[2]), "=r"(df[3])                        \
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),   \
                   "r"(cf[0]), "r"(cf[1]), "r"(cf[2]), "r"(cf[3]))
#define FP8_F16(TA, TB)                                                                       \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16." TA "." TB                          \
                 ".f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};\n"                          \
                 : "=r"(dh0), "=r"(dh1)                                                      \
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),   \
                   "r"(ch0), "r"(ch1))
        if constexpr (KIND == E4E4_F32) FP8_F32("e4m3", "e4m3");
        if constexpr (KIND == E4E4_F16) FP8_F16("e4m3", "e4m3");
        if constexpr (KIND == E5E5_F32) FP8_F32("e5m2", "e5m2");
        if constexpr (KIND == E5E5_F16) FP8_F16("e5m2", "e5m2");
        if constexpr (KIND == E4E5_F32) FP8_F32("e4m3", "e5m2");
        if constexpr (KIND == E4E5_F16) FP8_F16("e4m3", "e5m2");
        if constexpr (KIND == E5E4_F32) FP8_F32("e5m2", "e4m3");
        if constexpr (KIND == E5E4_F16) FP8_F16("e5m2", "e4m3");
    }
    if constexpr (f16acc) {
        df[0] = dh0 & 0xFFFF;
        df[1] = dh0 >> 16;
        df[2] = dh1 & 0xFFFF;
        df[3] = dh1 >> 16;
    }
    for (int i = 0; i < 4; ++i) {
        int row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
        if (row == col && row < 8 && x.base + row < ns) d[x.base + row] = df[i];
    }
}

typedef void (*MmaFn)(const uint32_t*, const uint32_t*, const uint32_t*, uint32_t*, int, int);

// Runs `ns` samples through kernel `fn`; c holds FP32 words, or FP16 bits when `f16acc`.
static std::vector<uint32_t> run_mma(MmaFn fn, int K, const std::vector<uint32_t>& a,
                                     const std::vector<uint32_t>& b,
                                     const std::vector<uint32_t>& c) {
    int ns = (int)c.size();
    uint32_t *da, *db, *dc, *dd;
    CHECK(cudaMalloc(&da, a.size() * 4));
    CHECK(cudaMalloc(&db, b.size() * 4));
    CHECK(cudaMalloc(&dc, c.size() * 4));
    CHECK(cudaMalloc(&dd, c.size() * 4));
    CHECK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dd, 0xEE, c.size() * 4));
    fn<<<(ns + 7) / 8, 32>>>(da, db, dc, dd, K, ns);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<uint32_t> d(ns);
    CHECK(cudaMemcpy(d.data(), dd, ns * 4, cudaMemcpyDeviceToHost));
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dd);
    return d;
}

// Round an FP32 value to FP16 bits, to nearest even (host arithmetic on the bit fields).
static uint32_t fp32_to_fp16_rne(uint32_t w) {
    uint32_t sign = (w >> 16) & 0x8000;
    uint32_t e = (w >> 23) & 0xFF, m = w & 0x7FFFFF;
    if (e == 0xFF) return sign | 0x7C00 | (m ? 0x200 : 0);
    int ue = (int)e - 127;
    if (ue > 15) return sign | 0x7C00;
    uint64_t sig = e ? (m | 0x800000) : m;  // value = sig * 2^(ue - 23) (e != 0)
    int shift;                               // bits to drop to reach FP16's 10-bit fraction
    uint32_t hexp;
    if (e == 0) return sign;  // FP32 subnormals are far below FP16's range
    if (ue >= -14) {
        shift = 13;
        hexp = (uint32_t)(ue + 15);
    } else {
        shift = 13 + (-14 - ue);
        hexp = 0;
        if (shift > 40) return sign;
    }
    uint64_t kept = sig >> shift, rem = sig & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (kept & 1))) kept++;
    uint32_t mant;
    if (hexp == 0) {
        // subnormal result: kept is the 10-bit fraction, a carry into bit 10 makes it normal.
        return sign | (uint32_t)kept;
    }
    mant = (uint32_t)kept;  // includes the hidden bit at 1 << 10
    if (mant >> 11) {       // the rounding carried into a new binade
        mant >>= 1;
        hexp++;
    }
    if (hexp >= 31) return sign | 0x7C00;
    return sign | (hexp << 10) | (mant & 0x3FF);
}

static void mkdirs(const std::string& p) {
    std::string cur;
    for (size_t i = 0; i < p.size(); ++i) {
        cur += p[i];
        if (p[i] == '/' || i + 1 == p.size()) mkdir(cur.c_str(), 0755);
    }
}

static void write_bin(FILE* f, uint32_t v, int bits) {
    for (int i = bits - 1; i >= 0; --i) fputc(((v >> i) & 1) ? '1' : '0', f);
    fputc('\n', f);
}

struct SetSpec {
    const char* dir;
    const Fmt* fa;
    const Fmt* fb;
    int K;
    MmaFn f32;  // kernel into FP32
    MmaFn f16;  // kernel into FP16, or null
    uint64_t seed;
};

// Small-integer self-check of a kernel's fragment layout: every sample's D must equal the
// exact integer sum (exact in every format and in FP16).
static bool self_check(const SetSpec& s, MmaFn fn, bool f16acc, FILE* log) {
    const int ns = 64;
    std::vector<uint32_t> a(ns * s.K), b(ns * s.K), c(ns);
    std::vector<long> want(ns);
    Rng r{0x5E1F + s.seed};
    auto enc = [&](const Fmt& f, int v) -> uint32_t {
        uint32_t w = f2u((float)v);
        if (f.is_tf32) return w;
        if (v == 0) return 0;
        uint32_t sign = v < 0;
        int mag = v < 0 ? -v : v;  // 1 or 2
        uint32_t e = (uint32_t)(f.bias + (mag == 2 ? 1 : 0));
        return (sign << (f.ebits + f.mbits)) | (e << f.mbits);
    };
    for (int i = 0; i < ns; ++i) {
        long sum = 0;
        for (int k = 0; k < s.K; ++k) {
            int va = r.range(-2, 2), vb = r.range(-2, 2);
            a[i * s.K + k] = enc(*s.fa, va);
            b[i * s.K + k] = enc(*s.fb, vb);
            sum += va * vb;
        }
        int vc = r.range(-3, 3);
        sum += vc;
        c[i] = f16acc ? fp32_to_fp16_rne(f2u((float)vc)) : f2u((float)vc);
        want[i] = sum;
    }
    std::vector<uint32_t> d = run_mma(fn, s.K, a, b, c);
    int bad = 0;
    for (int i = 0; i < ns; ++i) {
        uint32_t w = f16acc ? 0 : f2u((float)want[i]);
        if (f16acc) w = fp32_to_fp16_rne(f2u((float)want[i]));
        if (d[i] != w) {
            if (bad < 3)
                fprintf(log, "  self-check %s %s sample %d: got %08x want %08x\n", s.dir,
                        f16acc ? "fp16" : "fp32", i, d[i], w);
            bad++;
        }
    }
    fprintf(log, "self-check %s into %s: %s (%d/%d bad)\n", s.dir, f16acc ? "fp16" : "fp32",
            bad ? "FAIL" : "ok", bad, ns);
    return bad == 0;
}

static void capture_set(const std::string& out, const std::string& gpu, const SetSpec& s,
                        int ns, FILE* log) {
    std::string dir = out + "/" + gpu + "/" + s.dir + "/";
    mkdirs(dir);
    Rng r{s.seed};
    std::vector<uint32_t> a(ns * s.K), b(ns * s.K), c(ns), c16(ns);
    for (int i = 0; i < ns; ++i) {
        Sample smp = make_sample(*s.fa, *s.fb, s.K, r);
        for (int k = 0; k < s.K; ++k) {
            a[i * s.K + k] = smp.a[k];
            b[i * s.K + k] = smp.b[k];
        }
        c[i] = smp.c;
        c16[i] = fp32_to_fp16_rne(smp.c);
    }
    bool ok32 = self_check(s, s.f32, false, log);
    std::vector<uint32_t> d32 = run_mma(s.f32, s.K, a, b, c);
    std::vector<uint32_t> d16;
    bool ok16 = true;
    if (s.f16) {
        ok16 = self_check(s, s.f16, true, log);
        d16 = run_mma(s.f16, s.K, a, b, c16);
    }
    auto fname = [&](const char* p, const char* fmt) {
        return dir + p + "_" + gpu + "_" + fmt + ".txt";
    };
    FILE* fa = fopen(fname("a", s.fa->name).c_str(), "w");
    FILE* fb = fopen(fname("b", s.fb->name).c_str(), "w");
    FILE* fc = fopen(fname("c", "fp32").c_str(), "w");
    FILE* fd = ok32 ? fopen(fname("d", "fp32").c_str(), "w") : nullptr;
    FILE* fh = (s.f16 && ok16) ? fopen(fname("d", "fp16").c_str(), "w") : nullptr;
    for (int i = 0; i < ns; ++i) {
        for (int k = 0; k < s.K; ++k) {
            fprintf(fa, k ? " %08x" : "%08x", to_fp32_word(*s.fa, a[i * s.K + k]));
            fprintf(fb, k ? " %08x" : "%08x", to_fp32_word(*s.fb, b[i * s.K + k]));
        }
        fputc('\n', fa);
        fputc('\n', fb);
        write_bin(fc, c[i], 32);
        if (fd) write_bin(fd, d32[i], 32);
        if (fh) write_bin(fh, d16[i], 16);
    }
    fclose(fa);
    fclose(fb);
    fclose(fc);
    if (fd) fclose(fd);
    if (fh) fclose(fh);
    fprintf(log, "set %s: %d samples, K = %d\n", s.dir, ns, s.K);
}

// ---------------------------------------------------------------------------------------
// TMA box loads.
// ---------------------------------------------------------------------------------------

typedef CUresult (*EncodeTiledFn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                  const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                  const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static const int SMEM_BUF = 24576;

__global__ void tma_kernel(const __grid_constant__ CUtensorMap map, int rank, int c0, int c1,
                           int c2, int c3, int c4, uint32_t off, uint32_t tx, uint8_t* out,
                           uint32_t dump, uint32_t* status) {
    extern __shared__ __align__(1024) uint8_t raw[];
    __shared__ __align__(8) uint64_t mbar;
    uint32_t raw_addr = (uint32_t)__cvta_generic_to_shared(raw);
    uint32_t aligned = (raw_addr + 1023) & ~1023u;
    uint8_t* buf = raw + (aligned - raw_addr);
    for (int i = threadIdx.x; i < SMEM_BUF; i += blockDim.x) buf[i] = 0xA5;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t mb = (uint32_t)__cvta_generic_to_shared(&mbar);
        uint32_t dst = aligned + off;
        uint64_t desc = reinterpret_cast<uint64_t>(&map);
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(mb));
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(mb),
                     "r"(tx)
                     : "memory");
        switch (rank) {
            case 1:
                asm volatile(
                    "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::"
                    "bytes [%0], [%1, {%2}], [%3];\n" ::"r"(dst),
                    "l"(desc), "r"(c0), "r"(mb)
                    : "memory");
                break;
            case 2:
                asm volatile(
                    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::"
                    "bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
                    "l"(desc), "r"(c0), "r"(c1), "r"(mb)
                    : "memory");
                break;
            case 3:
                asm volatile(
                    "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::"
                    "bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
                    "l"(desc), "r"(c0), "r"(c1), "r"(c2), "r"(mb)
                    : "memory");
                break;
            case 4:
                asm volatile(
                    "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::"
                    "bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                    "l"(desc), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(mb)
                    : "memory");
                break;
            default:
                asm volatile(
                    "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::"
                    "bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(dst),
                    "l"(desc), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(mb)
                    : "memory");
                break;
        }
        uint32_t done = 0;
        for (long it = 0; it < 2000000 && !done; ++it) {
            asm volatile(
                "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                " selp.u32 %0, 1, 0, p;\n}\n"
                : "=r"(done)
                : "r"(mb)
                : "memory");
        }
        status[0] = done;
        status[2] = aligned;
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < dump; i += blockDim.x) out[i] = buf[off + i];
    uint32_t outside = 0;
    for (uint32_t i = threadIdx.x; i < (uint32_t)SMEM_BUF; i += blockDim.x)
        if ((i < off || i >= off + dump) && buf[i] != 0xA5) outside++;
    atomicAdd(&status[1], outside);
}

struct TmaCase {
    const char* dtype;  // the model's name
    CUtensorMapDataType cu;
    int es;
    int rank;
    uint64_t gdim[5];
    uint64_t gstride[4];  // bytes, dimensions 1..rank-1
    uint32_t box[5];
    uint32_t estride[5];
    int swz;   // 0 none, 1 32B, 2 64B, 3 128B
    int fill;  // 0 zero, 1 nan
    int coords[5];
    uint32_t off;
    uint32_t gaddr_off;  // bytes added to the tensor's global address (0 normally)
    int tx_full_inner;   // expect the whole box[0] per row (not ceil(box[0] / estride[0]))
};

static const char* SWZ[] = {"none", "32B", "64B", "128B"};

// The global image: byte o is (o * 2654435761 mod 2^32) >> 13, low 8 bits.
static uint8_t gbyte(uint32_t o) { return (uint8_t)((o * 2654435761u) >> 13); }

struct DType {
    const char* name;
    CUtensorMapDataType cu;
    int es;
};
static const DType DT_U8 = {"u8", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1};
static const DType DT_U16 = {"u16", CU_TENSOR_MAP_DATA_TYPE_UINT16, 2};
static const DType DT_U32 = {"u32", CU_TENSOR_MAP_DATA_TYPE_UINT32, 4};
static const DType DT_F16 = {"fp16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2};
static const DType DT_BF16 = {"bf16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2};
static const DType DT_F32 = {"fp32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4};

static TmaCase mk(const DType& t, int rank, std::vector<uint64_t> gdim,
                  std::vector<uint64_t> gstride, std::vector<uint32_t> box,
                  std::vector<int> coords, int swz = 0, int fill = 0, uint32_t off = 0,
                  std::vector<uint32_t> estride = {}) {
    TmaCase c{};
    c.dtype = t.name;
    c.cu = t.cu;
    c.es = t.es;
    c.rank = rank;
    for (int i = 0; i < 5; ++i) {
        c.gdim[i] = i < (int)gdim.size() ? gdim[i] : 1;
        c.box[i] = i < (int)box.size() ? box[i] : 1;
        c.estride[i] = i < (int)estride.size() ? estride[i] : 1;
        c.coords[i] = i < (int)coords.size() ? coords[i] : 0;
    }
    // Packed strides (rounded up to 16 bytes) where none are given.
    uint64_t st = (uint64_t)t.es * c.gdim[0];
    for (int i = 0; i < 4; ++i) {
        if (i < (int)gstride.size()) {
            c.gstride[i] = gstride[i];
        } else {
            c.gstride[i] = (st + 15) / 16 * 16;
        }
        st = c.gstride[i] * c.gdim[i + 1];
    }
    c.swz = swz;
    c.fill = fill;
    c.off = off;
    return c;
}

// The TMA cases. The inner start coordinate of every load that is meant to run is a multiple
// of 16 bytes: an H200 traps (illegal instruction) on any other, which family H records.
static std::vector<TmaCase> tma_cases() {
    std::vector<TmaCase> v;
    const DType* rot[3] = {&DT_U8, &DT_F16, &DT_F32};
    int idx = 0;
    // A: every swizzle, inner extents up to its span, destinations at several 128-byte rows.
    for (int swz = 0; swz < 4; ++swz) {
        int span = swz == 0 ? 256 : (16 << swz);
        for (int inner = 16; inner <= (swz == 0 ? 256 : span); inner *= 2) {
            std::vector<uint32_t> offs = swz == 0 ? std::vector<uint32_t>{0, 256}
                                                  : std::vector<uint32_t>{0, 128, 384, 640, 896};
            for (uint32_t off : offs) {
                const DType& t = *rot[idx % 3];
                int u = 16 / t.es;
                uint32_t box0 = inner / t.es;
                if (box0 > 256) box0 = 256;
                uint32_t rows = (idx % 2) ? 8 : 13;
                uint64_t g0 = box0 * 2 + 3;
                uint64_t gs = (g0 * t.es + 15) / 16 * 16 + 32;
                v.push_back(
                    mk(t, 2, {g0, 40}, {gs}, {box0, rows}, {(idx % 3) * u, 5}, swz, 0, off));
                idx++;
            }
        }
    }
    // B: out of bounds, zero and NaN fill: in front, past the end within a 16-byte chunk,
    // wholly outside on the left, wholly outside below.
    struct DF {
        const DType* t;
        int fill;
    } dfs[] = {{&DT_F16, 0}, {&DT_F16, 1}, {&DT_BF16, 1}, {&DT_F32, 1},
               {&DT_F32, 0}, {&DT_U16, 0}, {&DT_U8, 0}};
    int j = 0;
    for (auto& df : dfs) {
        const DType& t = *df.t;
        int u = 16 / t.es;
        uint32_t box0 = 32 / t.es;
        uint64_t g0 = box0 + u / 2 + 1, g1 = 11;
        int cs[4][2] = {{-u, -2}, {u, (int)g1 - 3}, {-(int)box0 - u, 0}, {0, (int)g1 + 2}};
        for (auto& cc : cs) {
            v.push_back(mk(t, 2, {g0, g1}, {}, {box0, 6}, {cc[0], cc[1]}, (j % 2) ? 3 : 0,
                           df.fill, (j % 3) * 128));
            j++;
        }
    }
    v.push_back(mk(DT_F16, 3, {9, 5, 4}, {}, {8, 4, 3}, {8, 3, 2}, 2, 1, 256));
    v.push_back(mk(DT_F32, 3, {9, 5, 4}, {}, {4, 4, 3}, {8, -1, -2}, 0, 1, 0));
    v.push_back(mk(DT_BF16, 3, {21, 5, 4}, {}, {16, 4, 3}, {8, 2, -1}, 3, 1, 384));
    // C: element (traversal) strides on the outer dimensions.
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {8, 2}, 0, 0, 0, {1, 2}));
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {8, 2}, 0, 0, 0, {1, 3}));
    v.push_back(mk(DT_U8, 2, {70, 30}, {}, {64, 7}, {16, 1}, 3, 0, 128, {1, 2}));
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {32, 27}, 0, 1, 0, {1, 3}));
    v.push_back(mk(DT_F32, 3, {12, 9, 7}, {}, {8, 5, 4}, {4, 1, 2}, 2, 1, 128, {1, 2, 3}));
    // D: ranks 1, 3, 4 and 5, padded strides, swizzles.
    v.push_back(mk(DT_U8, 1, {200}, {}, {64}, {16}));
    v.push_back(mk(DT_F32, 1, {50}, {}, {16}, {-4}, 0, 1));
    v.push_back(mk(DT_F32, 1, {50}, {}, {16}, {40}, 0, 0, 128));
    v.push_back(mk(DT_F16, 3, {24, 6, 5}, {64, 448}, {16, 4, 3}, {8, 1, 1}, 1, 0, 128));
    v.push_back(mk(DT_U16, 4, {10, 3, 4, 3}, {32, 112, 480}, {8, 3, 2, 2}, {8, 0, 1, 1}, 3,
                   0, 256));
    v.push_back(mk(DT_U8, 5, {20, 3, 2, 3, 2}, {32, 112, 240, 736}, {16, 2, 2, 2, 2},
                   {16, 1, 0, 1, 0}, 2, 0, 512));
    v.push_back(mk(DT_BF16, 5, {16, 2, 2, 2, 2}, {}, {16, 2, 2, 2, 2}, {0, 0, 0, 0, 0}, 3, 0,
                   0));
    v.push_back(mk(DT_U32, 4, {8, 4, 3, 2}, {}, {4, 4, 3, 2}, {4, -1, 1, 1}, 1, 0, 384));
    // E: large boxes.
    v.push_back(mk(DT_F16, 2, {100, 80}, {}, {64, 64}, {8, 7}, 3, 0, 0));
    v.push_back(mk(DT_U8, 2, {300, 40}, {}, {128, 32}, {16, 2}, 3, 0, 640));
    v.push_back(mk(DT_U8, 2, {300, 40}, {}, {256, 16}, {48, 2}, 0, 0, 0));
    // F: descriptors the driver should refuse (the load is not attempted when it does).
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {4, 8}, {0, 0}));                  // 8-byte inner
    v.push_back(mk(DT_U8, 2, {400, 3}, {}, {272, 2}, {0, 0}));                 // box > 256
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {32, 8}, {0, 0}, 1));              // 64 B > 32B
    v.push_back(mk(DT_F16, 2, {80, 30}, {}, {64, 8}, {0, 0}, 2));              // 128 B > 64B
    v.push_back(mk(DT_U8, 2, {40, 30}, {24}, {16, 8}, {0, 0}));                // stride 24
    v.push_back(mk(DT_U16, 2, {40, 30}, {}, {8, 8}, {0, 0}, 0, 1));            // NaN, integer
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {0, 0}, 0, 0, 0, {1, 9})); // estride 9
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {0, 0}, 3, 0, 0));        // 32 B, 128B ok
    {
        TmaCase c = mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {0, 0});
        c.gaddr_off = 8;  // global address not a multiple of 16
        v.push_back(c);
    }
    v.push_back(mk(DT_F32, 2, {40, 30}, {}, {16, 8}, {0, 0}, 3, 0, 0));        // 64 B in 128B
    v.push_back(mk(DT_F32, 2, {64, 30}, {}, {64, 4}, {0, 0}, 3, 0, 0));        // 256 B > 128B
    // H: inner start coordinates that are not a multiple of 16 bytes (expected to trap).
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {1, 0}));
    v.push_back(mk(DT_U8, 2, {40, 30}, {}, {16, 8}, {8, 0}));
    v.push_back(mk(DT_F32, 2, {40, 30}, {}, {8, 8}, {-1, 0}));
    // G: element strides on dimension 0 last, with the transaction count of the whole inner
    // extent (the first capture's count, ceil(box / stride), never completed).
    {
        TmaCase c = mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {8, 2}, 0, 0, 0, {2, 1});
        c.tx_full_inner = 1;
        v.push_back(c);
        c = mk(DT_U8, 2, {70, 30}, {}, {32, 4}, {0, 0}, 0, 0, 0, {3, 1});
        c.tx_full_inner = 1;
        v.push_back(c);
        c = mk(DT_F32, 2, {40, 30}, {}, {8, 8}, {4, 1}, 2, 0, 384, {2, 2});
        c.tx_full_inner = 1;
        v.push_back(c);
        v.push_back(mk(DT_F32, 2, {40, 30}, {}, {8, 8}, {4, 1}, 2, 0, 384, {2, 2}));
    }
    return v;
}

struct TmaRun {
    std::string err;  // empty when the load ran
    uint32_t wait = 0, outside = 0, abs_mod = 0;
    std::vector<uint8_t> bytes;
};

// The device state of the TMA cases; rebuilt after a case leaves the context broken.
struct TmaDev {
    uint8_t *g = nullptr, *dout = nullptr;
    uint32_t* dstat = nullptr;
    size_t gbytes = 1 << 20;
    void setup(const std::vector<uint8_t>& host) {
        CHECK(cudaMalloc(&g, gbytes + 256));
        CHECK(cudaMemcpy(g, host.data(), gbytes, cudaMemcpyHostToDevice));
        CHECK(cudaMalloc(&dout, SMEM_BUF));
        CHECK(cudaMalloc(&dstat, 16));
        CHECK(cudaFuncSetAttribute(tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   SMEM_BUF + 1024));
    }
};

static CUresult encode_case(EncodeTiledFn encode, const TmaCase& c, uint8_t* g,
                            CUtensorMap* map) {
    cuuint64_t gd[5], gs[4];
    cuuint32_t bd[5], es[5];
    for (int i = 0; i < 5; ++i) {
        gd[i] = c.gdim[i];
        bd[i] = c.box[i];
        es[i] = c.estride[i];
    }
    for (int i = 0; i < 4; ++i) gs[i] = c.gstride[i];
    return encode(map, c.cu, (cuuint32_t)c.rank, g + c.gaddr_off, gd, gs, bd, es,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)c.swz,
                  CU_TENSOR_MAP_L2_PROMOTION_NONE,
                  c.fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                         : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

static uint64_t box_bytes_of(const TmaCase& c) {
    uint64_t b = (uint64_t)c.es;
    for (int i = 0; i < c.rank; ++i)
        b *= (i == 0 && c.tx_full_inner) ? c.box[0] : (c.box[i] + c.estride[i] - 1) / c.estride[i];
    return b;
}

// Runs one load. A failed launch leaves this process's context unusable, so each case runs
// in a process of its own (`tma_one`, driven by scripts/gpu/capture.sh).
static TmaRun run_case(EncodeTiledFn encode, const TmaCase& c, TmaDev& dev) {
    TmaRun out;
    CUtensorMap map;
    CUresult r = encode_case(encode, c, dev.g, &map);
    if (r != CUDA_SUCCESS) {
        out.err = "encode " + std::to_string((int)r);
        return out;
    }
    uint64_t bb = box_bytes_of(c);
    uint32_t dump = (uint32_t)((c.off + bb + 127) / 128 * 128 - c.off);
    if (c.off + dump > (uint32_t)SMEM_BUF) dump = SMEM_BUF - c.off;
    CHECK(cudaMemset(dev.dstat, 0, 16));
    tma_kernel<<<1, 128, SMEM_BUF + 1024>>>(map, c.rank, c.coords[0], c.coords[1], c.coords[2],
                                           c.coords[3], c.coords[4], c.off, (uint32_t)bb,
                                           dev.dout, dump, dev.dstat);
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
        out.err = cudaGetErrorString(e);
        return out;
    }
    out.bytes.resize(dump);
    uint32_t st[4];
    CHECK(cudaMemcpy(out.bytes.data(), dev.dout, dump, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(st, dev.dstat, 16, cudaMemcpyDeviceToHost));
    out.wait = st[0];
    out.outside = st[1];
    out.abs_mod = (st[2] + c.off) % 1024;
    return out;
}

// Prints the header of tma_loads.txt.
static void tma_header() {
    printf("# TMA box loads on a real GPU: one case a line. global byte o holds "
           "((o * 2654435761) mod 2^32) >> 13 (low 8 bits); shared memory was filled with 0xa5 "
           "first; bytes = shared memory from smem to the end of the box's last 128-byte row; "
           "outside = bytes changed elsewhere in a %d-byte window; encode = the driver's "
           "CUresult; error = what a failed launch reported; a line with variant= is a failed "
           "case rerun at shared offset 0 (smem0) or at coordinates 0 (coords0).\n",
           SMEM_BUF);
}

// Prints the map and load fields of case `idx` (the start of its line).
static void print_case(int idx, const TmaCase& c) {
    printf("case=%d dtype=%s rank=%d gdim=", idx, c.dtype, c.rank);
    for (int i = 0; i < c.rank; ++i) printf(i ? ",%llu" : "%llu", (unsigned long long)c.gdim[i]);
    printf(" gstride=");
    for (int i = 0; i + 1 < c.rank; ++i)
        printf(i ? ",%llu" : "%llu", (unsigned long long)c.gstride[i]);
    if (c.rank == 1) printf("-");
    printf(" box=");
    for (int i = 0; i < c.rank; ++i) printf(i ? ",%u" : "%u", c.box[i]);
    printf(" estride=");
    for (int i = 0; i < c.rank; ++i) printf(i ? ",%u" : "%u", c.estride[i]);
    printf(" swizzle=%s fill=%s coords=", SWZ[c.swz], c.fill ? "nan" : "zero");
    for (int i = 0; i < c.rank; ++i) printf(i ? ",%d" : "%d", c.coords[i]);
    printf(" smem=%u gaddr=%u", c.off, c.gaddr_off);
    if (c.tx_full_inner) printf(" tx_full_inner=1");
}

// Runs case `idx` of tma_cases() (variant "orig", "smem0" or "coords0") and prints its line.
static int tma_one(int idx, const std::string& variant) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW);
    EncodeTiledFn encode = lib ? (EncodeTiledFn)dlsym(lib, "cuTensorMapEncodeTiled") : nullptr;
    if (!encode) {
        fprintf(stderr, "tma: no cuTensorMapEncodeTiled\n");
        return 1;
    }
    std::vector<TmaCase> cases = tma_cases();
    if (idx < 0 || idx >= (int)cases.size()) return 1;
    TmaCase c = cases[idx];
    if (variant == "smem0") c.off = 0;
    if (variant == "coords0")
        for (int i = 0; i < 5; ++i) c.coords[i] = 0;
    TmaDev dev;
    std::vector<uint8_t> host(dev.gbytes);
    for (size_t o = 0; o < dev.gbytes; ++o) host[o] = gbyte((uint32_t)o);
    dev.setup(host);
    if (variant != "orig") printf("variant=%s ", variant.c_str());
    print_case(idx, c);
    CUtensorMap probe;
    CUresult r = encode_case(encode, c, dev.g, &probe);
    printf(" encode=%d", (int)r);
    if (r != CUDA_SUCCESS) {
        printf("\n");
        return 0;
    }
    TmaRun run = run_case(encode, c, dev);
    printf(" tx=%llu", (unsigned long long)box_bytes_of(c));
    if (!run.err.empty()) {
        printf(" error=\"%s\"\n", run.err.c_str());
        return 0;
    }
    printf(" wait=%u outside=%u smem_abs_mod1024=%u bytes=", run.wait, run.outside, run.abs_mod);
    for (uint8_t byte : run.bytes) printf("%02x", byte);
    printf("\n");
    return 0;
}

// ---------------------------------------------------------------------------------------
// TMA box stores: shared memory holds byte i = (i * 7 + 3) mod 256 (offset from the
// 1024-byte-aligned buffer), global memory 0xee; one `cp.async.bulk.tensor` store of the
// box at `off`, then the tensor's bytes are read back.
// ---------------------------------------------------------------------------------------

__global__ void tma_store_kernel(const __grid_constant__ CUtensorMap map, int rank, int c0,
                                 int c1, int c2, int c3, int c4, uint32_t off) {
    extern __shared__ __align__(1024) uint8_t raw[];
    uint32_t raw_addr = (uint32_t)__cvta_generic_to_shared(raw);
    uint32_t aligned = (raw_addr + 1023) & ~1023u;
    uint8_t* buf = raw + (aligned - raw_addr);
    for (int i = threadIdx.x; i < SMEM_BUF; i += blockDim.x) buf[i] = (uint8_t)(i * 7 + 3);
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t src = aligned + off;
        uint64_t desc = reinterpret_cast<uint64_t>(&map);
        switch (rank) {
            case 1:
                asm volatile(
                    "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], "
                    "[%2];\n" ::"l"(desc),
                    "r"(c0), "r"(src)
                    : "memory");
                break;
            case 2:
                asm volatile(
                    "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], "
                    "[%3];\n" ::"l"(desc),
                    "r"(c0), "r"(c1), "r"(src)
                    : "memory");
                break;
            case 3:
                asm volatile(
                    "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, "
                    "%3}], [%4];\n" ::"l"(desc),
                    "r"(c0), "r"(c1), "r"(c2), "r"(src)
                    : "memory");
                break;
            case 4:
                asm volatile(
                    "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, "
                    "%3, %4}], [%5];\n" ::"l"(desc),
                    "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
                    : "memory");
                break;
            default:
                asm volatile(
                    "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%1, %2, "
                    "%3, %4, %5}], [%6];\n" ::"l"(desc),
                    "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(src)
                    : "memory");
                break;
        }
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
    }
    __syncthreads();
}

static std::vector<TmaCase> tma_store_cases() {
    std::vector<TmaCase> v;
    v.push_back(mk(DT_F16, 2, {40, 12}, {}, {16, 8}, {8, 2}));
    v.push_back(mk(DT_F16, 2, {40, 12}, {}, {16, 8}, {8, 2}, 0, 0, 256));
    v.push_back(mk(DT_F16, 2, {40, 12}, {}, {16, 8}, {8, 2}, 3, 0, 384));   // 32 B rows, 128B
    v.push_back(mk(DT_F16, 2, {40, 12}, {}, {16, 8}, {8, 2}, 1, 0, 128));   // 32 B rows, 32B
    v.push_back(mk(DT_U8, 2, {70, 12}, {}, {16, 8}, {16, 1}, 2, 0, 640));   // 16 B rows, 64B
    v.push_back(mk(DT_F32, 2, {40, 12}, {}, {16, 8}, {8, 2}, 2, 0, 0));     // 64 B rows, 64B
    v.push_back(mk(DT_U8, 2, {300, 12}, {}, {128, 6}, {32, 3}, 3, 0, 896)); // 128 B rows, 128B
    v.push_back(mk(DT_F16, 2, {21, 11}, {}, {16, 6}, {-8, -2}));            // in front
    v.push_back(mk(DT_F16, 2, {21, 11}, {}, {16, 6}, {8, 8}, 3, 0, 128));   // past the end
    v.push_back(mk(DT_F32, 3, {9, 5, 4}, {}, {8, 4, 3}, {4, -1, 2}, 2, 0, 256));
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {8, 2}, 0, 0, 0, {1, 2}));
    v.push_back(mk(DT_F16, 2, {40, 30}, {}, {16, 8}, {8, 2}, 0, 0, 0, {2, 1}));
    v.push_back(mk(DT_U8, 2, {70, 30}, {}, {32, 4}, {16, 1}, 0, 0, 0, {3, 2}));
    v.push_back(mk(DT_F16, 2, {40, 12}, {}, {16, 8}, {1, 2}));              // off a boundary
    return v;
}

// Runs store case `idx` and prints its line: the map as for the loads, then `tensor=` the
// tensor's bytes (from its address to the end of its extent) after the store.
static int tma_store_one(int idx) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW);
    EncodeTiledFn encode = lib ? (EncodeTiledFn)dlsym(lib, "cuTensorMapEncodeTiled") : nullptr;
    if (!encode) return 1;
    std::vector<TmaCase> cases = tma_store_cases();
    if (idx < 0 || idx >= (int)cases.size()) return 1;
    TmaCase c = cases[idx];
    uint64_t extent = (uint64_t)c.es * c.gdim[0];
    for (int i = 1; i < c.rank; ++i) extent = c.gstride[i - 1] * c.gdim[i];
    uint8_t* g;
    CHECK(cudaMalloc(&g, (1 << 20)));
    CHECK(cudaMemset(g, 0xEE, (1 << 20)));
    CHECK(cudaFuncSetAttribute(tma_store_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               SMEM_BUF + 1024));
    print_case(idx, c);
    CUtensorMap map;
    CUresult r = encode_case(encode, c, g, &map);
    printf(" encode=%d", (int)r);
    if (r != CUDA_SUCCESS) {
        printf("\n");
        return 0;
    }
    tma_store_kernel<<<1, 128, SMEM_BUF + 1024>>>(map, c.rank, c.coords[0], c.coords[1],
                                                 c.coords[2], c.coords[3], c.coords[4], c.off);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf(" error=\"%s\"\n", cudaGetErrorString(e));
        return 0;
    }
    std::vector<uint8_t> bytes(extent);
    CHECK(cudaMemcpy(bytes.data(), g, extent, cudaMemcpyDeviceToHost));
    printf(" tensor=");
    for (uint8_t b : bytes) printf("%02x", b);
    printf("\n");
    return 0;
}

// `capture probe KIND IN OUT`: runs the rows of file IN through one instruction and writes
// D per row to OUT. A row of IN is K format bit patterns of a, K of b and C (an FP32 word, or
// FP16 bits for an FP16 accumulator), all hex; D is written in hex. KIND names the instruction:
// f16.k16.f32, f16.k16.f16, f16.k8.f32, f16.k8.f16, bf16.k16.f32, tf32.k4.f32, tf32.k8.f32,
// e4m3.e4m3.f32, e4m3.e4m3.f16, e5m2.e5m2.f32, e5m2.e5m2.f16, e4m3.e5m2.f32, e4m3.e5m2.f16,
// e5m2.e4m3.f32, e5m2.e4m3.f16.
static int probe(const std::string& kind, const char* in, const char* out) {
    struct K {
        const char* name;
        MmaFn fn;
        int k;
    } kinds[] = {
        {"f16.k16.f32", mma_kernel<F16_K16_F32>, 16}, {"f16.k16.f16", mma_kernel<F16_K16_F16>, 16},
        {"f16.k8.f32", mma_kernel<F16_K8_F32>, 8},    {"f16.k8.f16", mma_kernel<F16_K8_F16>, 8},
        {"bf16.k16.f32", mma_kernel<BF16_K16_F32>, 16}, {"tf32.k4.f32", mma_kernel<TF32_K4_F32>, 4},
        {"tf32.k8.f32", mma_kernel<TF32_K8_F32>, 8},  {"e4m3.e4m3.f32", mma_kernel<E4E4_F32>, 32},
        {"e4m3.e4m3.f16", mma_kernel<E4E4_F16>, 32},  {"e5m2.e5m2.f32", mma_kernel<E5E5_F32>, 32},
        {"e5m2.e5m2.f16", mma_kernel<E5E5_F16>, 32},  {"e4m3.e5m2.f32", mma_kernel<E4E5_F32>, 32},
        {"e4m3.e5m2.f16", mma_kernel<E4E5_F16>, 32},  {"e5m2.e4m3.f32", mma_kernel<E5E4_F32>, 32},
        {"e5m2.e4m3.f16", mma_kernel<E5E4_F16>, 32},
    };
    const K* kd = nullptr;
    for (const K& x : kinds)
        if (kind == x.name) kd = &x;
    if (!kd) {
        fprintf(stderr, "probe: unknown kind %s\n", kind.c_str());
        return 2;
    }
    FILE* f = fopen(in, "r");
    if (!f) {
        fprintf(stderr, "probe: cannot read %s\n", in);
        return 2;
    }
    std::vector<uint32_t> a, b, c;
    for (;;) {
        unsigned v;
        int i = 0;
        for (; i < 2 * kd->k + 1; ++i) {
            if (fscanf(f, "%x", &v) != 1) break;
            if (i < kd->k)
                a.push_back(v);
            else if (i < 2 * kd->k)
                b.push_back(v);
            else
                c.push_back(v);
        }
        if (i == 0) break;
        if (i != 2 * kd->k + 1) {
            fprintf(stderr, "probe: a short row in %s\n", in);
            return 2;
        }
    }
    fclose(f);
    std::vector<uint32_t> d = run_mma(kd->fn, kd->k, a, b, c);
    FILE* o = fopen(out, "w");
    for (uint32_t x : d) fprintf(o, "%08x\n", x);
    fclose(o);
    printf("probe %s: %zu rows\n", kind.c_str(), d.size());
    return 0;
}

int main(int argc, char** argv) {
    // `capture tma-header`, `capture tma-count` and `capture tma-one IDX VARIANT` serve the
    // TMA cases, one process a case (scripts/gpu/capture.sh).
    std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "tma-header") {
        tma_header();
        return 0;
    }
    if (cmd == "tma-count") {
        printf("%zu\n", tma_cases().size());
        return 0;
    }
    if (cmd == "tma-one" && argc > 3) return tma_one(atoi(argv[2]), argv[3]);
    if (cmd == "probe" && argc > 4) return probe(argv[2], argv[3], argv[4]);
    if (cmd == "tma-store-count") {
        printf("%zu\n", tma_store_cases().size());
        return 0;
    }
    if (cmd == "tma-store-one" && argc > 2) return tma_store_one(atoi(argv[2]));
    std::string out = argc > 1 ? argv[1] : "capture-out";
    std::string gpu = argc > 2 ? argv[2] : "H200";
    int ns = argc > 3 ? atoi(argv[3]) : 4096;
    mkdirs(out + "/" + gpu);
    FILE* log = stdout;
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    fprintf(log, "device: %s, sm_%d%d, driver %d, runtime %d\n", p.name, p.major, p.minor, drv,
            rt);
    SetSpec sets[] = {
        {"fp16", &FP16F, &FP16F, 16, mma_kernel<F16_K16_F32>, mma_kernel<F16_K16_F16>, 101},
        {"fp16_k8", &FP16F, &FP16F, 8, mma_kernel<F16_K8_F32>, mma_kernel<F16_K8_F16>, 102},
        {"bf16", &BF16F, &BF16F, 16, mma_kernel<BF16_K16_F32>, nullptr, 103},
        {"tf32", &TF32F, &TF32F, 4, mma_kernel<TF32_K4_F32>, nullptr, 104},
        {"tf32_k8", &TF32F, &TF32F, 8, mma_kernel<TF32_K8_F32>, nullptr, 105},
        {"E4M3", &E4M3F, &E4M3F, 32, mma_kernel<E4E4_F32>, mma_kernel<E4E4_F16>, 106},
        {"E5M2", &E5M2F, &E5M2F, 32, mma_kernel<E5E5_F32>, mma_kernel<E5E5_F16>, 107},
        {"E4M3xE5M2", &E4M3F, &E5M2F, 32, mma_kernel<E4E5_F32>, mma_kernel<E4E5_F16>, 108},
        {"E5M2xE4M3", &E5M2F, &E4M3F, 32, mma_kernel<E5E4_F32>, mma_kernel<E5E4_F16>, 109},
    };
    for (const SetSpec& s : sets) capture_set(out, gpu, s, ns, log);
    fprintf(log, "done\n");
    return 0;
}
