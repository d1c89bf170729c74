// Float32 kernels of KVVector's scans, for x86-64 processors with AVX2 and FMA, chosen at
// run time (the library is built for baseline x86-64: the Swift SIMD kernels, SSE2, are
// used where these are not available, and on every other architecture).
#ifndef KV_VECTOR_KERNELS_H
#define KV_VECTOR_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this processor runs the AVX2 and FMA kernels below, else 0 (then they must not
/// be called).
int kv_vector_avx2_available(void);

/// Σ a[i]·b[i] over n float32 values; `b` need not be aligned. REQUIRES:
/// kv_vector_avx2_available().
float kv_vector_dot_avx2(const float *a, const void *b, long n);

/// Σ (a[i] − b[i])² over n float32 values; `b` need not be aligned. REQUIRES:
/// kv_vector_avx2_available().
float kv_vector_l2sq_avx2(const float *a, const void *b, long n);

/// 1 when this processor also converts half-precision values (F16C), else 0.
int kv_vector_f16c_available(void);

/// Σ a[i]·b[i] over n values, `b` IEEE 754 binary16 (little-endian, unaligned). REQUIRES:
/// kv_vector_f16c_available().
float kv_vector_dot_f16_avx2(const float *a, const void *b, long n);

/// Σ a[i]·b[i] over n values, `b` signed 8-bit integers. REQUIRES: kv_vector_avx2_available().
float kv_vector_dot_i8_avx2(const float *a, const void *b, long n);

#ifdef __cplusplus
}
#endif

#endif
