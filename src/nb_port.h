/*
 * nb_port.h — the one place the pure model code (nb_*.c) reaches past plain
 * C: compiler builtins and attributes, 128-bit integers and the byte
 * order.  Each has a plain C fallback, for
 * compilers without the feature and, with NB_PORTABLE defined, for any
 * compiler: the unit tests are built both ways (test/unit, make check), so
 * that every fallback is compiled and run, not only on the machines that
 * need it.  A fallback gives the same results, bit for bit.
 */
#ifndef NB_PORT_H
#define NB_PORT_H

#include <stdint.h>

/* GCC's extensions (clang has them too), unless NB_PORTABLE turns them off */
#if defined(__GNUC__) && !defined(NB_PORTABLE)
#define NB_GNU_C
#endif

/* 128-bit integers, for nb_mul_add128 (__extension__: not a warning under -pedantic) */
#if defined(NB_GNU_C) && defined(__SIZEOF_INT128__)
#define NB_HAVE_INT128
__extension__ typedef unsigned __int128 nb_uint128;
#endif

#if defined(NB_GNU_C) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NB_LITTLE_ENDIAN
#elif defined(NB_GNU_C) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NB_BIG_ENDIAN
#endif

/*
 * For the functions of the hot loops (hashing and probing tokens): the
 * compiler's size heuristics stop inlining them once a file calls them in
 * several places, which costs a call per token.
 */
#ifdef NB_GNU_C
#define NB_HOT_INLINE static inline __attribute__((always_inline))
#else
#define NB_HOT_INLINE static inline
#endif

/*
 * For a function whose loops over columns are to be vectorized in the
 * server's -O2 build: GCC vectorizes no loop at -O2 before GCC 12, and
 * from 12 only the loops its very cheap cost model accepts.  Clang has no
 * optimize attribute (it warns and ignores it).
 */
#if defined(NB_GNU_C) && !defined(__clang__)
#define NB_VECTORIZE __attribute__((optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")))
#else
#define NB_VECTORIZE
#endif

/*
 * Start loading the cache line at p, for a random access a few steps
 * ahead (an address past the end of an array is fine: nothing is read).
 */
#ifdef NB_GNU_C
#define nb_prefetch(p) __builtin_prefetch(p)
#else
#define nb_prefetch(p) ((void) (p))
#endif

/* π as glibc's M_PI has it (M_PI is POSIX's, not C's) */
#define NB_PI 3.14159265358979323846

/*
 * The leading zero bits of x, which is not 0.  A macro where it is the
 * builtin: an inline function, however small, changes the code GCC 12
 * makes of nb_metrics_result.c at -O2.
 */
#ifdef NB_GNU_C
#define nb_clz64(x) __builtin_clzll(x)
#else
static inline int
nb_clz64(uint64_t x)
{
	int			n = 0;

	for (int half = 32; half > 0; half /= 2)
		if (x >> (64 - half) == 0)
		{
			n += half;
			x <<= half;
		}
	return n;
}
#endif

/* The trailing zero bits of x, which is not 0. */
#ifdef NB_GNU_C
#define nb_ctz64(x) __builtin_ctzll(x)
#else
static inline int
nb_ctz64(uint64_t x)
{
	int			n = 0;

	while ((x & 1) == 0)
	{
		x >>= 1;
		n++;
	}
	return n;
}
#endif

/*
 * a * b + c, which fits in 128 bits: its high 64 bits, the low ones in
 * *low.
 */
static inline uint64_t
nb_mul_add128(uint64_t a, uint64_t b, uint64_t c, uint64_t *low)
{
#ifdef NB_HAVE_INT128
	nb_uint128	p = (nb_uint128) a * b + c;

	*low = (uint64_t) p;
	return (uint64_t) (p >> 64);
#else
	/* by 32-bit halves; mid, the sum at bits 32..95, is below 2^34 */
	uint64_t	a0 = (uint32_t) a,
				a1 = a >> 32,
				b0 = (uint32_t) b,
				b1 = b >> 32;
	uint64_t	p00 = a0 * b0,
				p01 = a0 * b1,
				p10 = a1 * b0;
	uint64_t	mid = (p00 >> 32) + (uint32_t) p01 + (uint32_t) p10;
	uint64_t	high = a1 * b1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);

	*low = (mid << 32 | (uint32_t) p00) + c;
	return high + (*low < c);
#endif
}

/*
 * The byte order.  The format's numbers are little-endian (nb_format.h),
 * and some keys compare as big-endian numbers (nb_runs.h).  nb_le32(v) is
 * v with its bytes reordered between the machine's order and little-endian,
 * nb_be64(v) between the machine's and big-endian: nothing or a byte swap,
 * its own inverse, so it serves reads and writes.  Without a known order
 * they read v's bytes one by one, which is right for any.
 */
#if defined(NB_LITTLE_ENDIAN)
#define nb_le16(v) ((uint16_t) (v))
#define nb_le32(v) ((uint32_t) (v))
#define nb_le64(v) ((uint64_t) (v))
#define nb_be64(v) __builtin_bswap64(v)
#elif defined(NB_BIG_ENDIAN)
#define nb_le16(v) __builtin_bswap16(v)
#define nb_le32(v) __builtin_bswap32(v)
#define nb_le64(v) __builtin_bswap64(v)
#define nb_be64(v) ((uint64_t) (v))
#else
/* the n bytes at p as a little-endian (big_endian: big-endian) number */
static inline uint64_t
nb_bytes_number(const void *p, int n, int big_endian)
{
	const unsigned char *b = p;
	uint64_t	v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | b[big_endian ? i : n - 1 - i];
	return v;
}

#define nb_le16(v) ((uint16_t) nb_bytes_number(&(uint16_t) {(v)}, 2, 0))
#define nb_le32(v) ((uint32_t) nb_bytes_number(&(uint32_t) {(v)}, 4, 0))
#define nb_le64(v) nb_bytes_number(&(uint64_t) {(v)}, 8, 0)
#define nb_be64(v) nb_bytes_number(&(uint64_t) {(v)}, 8, 1)
#endif

#endif
