#include "kv_vector_kernels.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

int kv_vector_avx2_available(void) {
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
    }
    return known;
}

__attribute__((target("avx2,fma"))) static float horizontal_sum(__m256 v) {
    __m128 low = _mm256_castps256_ps128(v);
    __m128 high = _mm256_extractf128_ps(v, 1);
    __m128 s = _mm_add_ps(low, high);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) float kv_vector_dot_avx2(const float *a, const void *b_, long n) {
    const unsigned char *b = (const unsigned char *)b_;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    long i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps((const float *)(b + 4 * i)), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps((const float *)(b + 4 * i + 32)), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps((const float *)(b + 4 * i + 64)), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps((const float *)(b + 4 * i + 96)), s3);
    }
    for (; i + 8 <= n; i += 8) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps((const float *)(b + 4 * i)), s0);
    }
    float sum = horizontal_sum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) {
        float y;
        memcpy(&y, b + 4 * i, 4);
        sum += a[i] * y;
    }
    return sum;
}

__attribute__((target("avx2,fma"))) float kv_vector_l2sq_avx2(const float *a, const void *b_, long n) {
    const unsigned char *b = (const unsigned char *)b_;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    long i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps((const float *)(b + 4 * i)));
        __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps((const float *)(b + 4 * i + 32)));
        __m256 d2 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps((const float *)(b + 4 * i + 64)));
        __m256 d3 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps((const float *)(b + 4 * i + 96)));
        s0 = _mm256_fmadd_ps(d0, d0, s0);
        s1 = _mm256_fmadd_ps(d1, d1, s1);
        s2 = _mm256_fmadd_ps(d2, d2, s2);
        s3 = _mm256_fmadd_ps(d3, d3, s3);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps((const float *)(b + 4 * i)));
        s0 = _mm256_fmadd_ps(d, d, s0);
    }
    float sum = horizontal_sum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) {
        float y;
        memcpy(&y, b + 4 * i, 4);
        float d = a[i] - y;
        sum += d * d;
    }
    return sum;
}

int kv_vector_f16c_available(void) {
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = kv_vector_avx2_available() && __builtin_cpu_supports("f16c") ? 1 : 0;
    }
    return known;
}

__attribute__((target("avx2,fma,f16c"))) float kv_vector_dot_f16_avx2(const float *a, const void *b_, long n) {
    const unsigned char *b = (const unsigned char *)b_;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    long i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 x0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + 2 * i)));
        __m256 x1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + 2 * i + 16)));
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), x0, s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), x1, s1);
    }
    for (; i + 8 <= n; i += 8) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + 2 * i))), s0);
    }
    float sum = horizontal_sum(_mm256_add_ps(s0, s1));
    for (; i < n; i++) {
        unsigned short h;
        memcpy(&h, b + 2 * i, 2);
        sum += a[i] * _cvtsh_ss(h);
    }
    return sum;
}

__attribute__((target("avx2,fma"))) float kv_vector_dot_i8_avx2(const float *a, const void *b_, long n) {
    const signed char *b = (const signed char *)b_;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    long i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i bytes = _mm_loadu_si128((const __m128i *)(b + i));
        __m256 x0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
        __m256 x1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8)));
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), x0, s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), x1, s1);
    }
    float sum = horizontal_sum(_mm256_add_ps(s0, s1));
    for (; i < n; i++) sum += a[i] * (float)b[i];
    return sum;
}

#else

int kv_vector_avx2_available(void) { return 0; }

int kv_vector_f16c_available(void) { return 0; }

float kv_vector_dot_f16_avx2(const float *a, const void *b, long n) {
    (void)a;
    (void)b;
    (void)n;
    return 0;
}

float kv_vector_dot_i8_avx2(const float *a, const void *b, long n) {
    (void)a;
    (void)b;
    (void)n;
    return 0;
}

float kv_vector_dot_avx2(const float *a, const void *b, long n) {
    (void)a;
    (void)b;
    (void)n;
    return 0;
}

float kv_vector_l2sq_avx2(const float *a, const void *b, long n) {
    (void)a;
    (void)b;
    (void)n;
    return 0;
}

#endif
