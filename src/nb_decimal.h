/*
 * nb_decimal.h — decimal numbers to the nearest double (pure C).
 */
#ifndef NB_DECIMAL_H
#define NB_DECIMAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nb_port.h"

/* The paths of nb_decimal_to_double but the first (nb_decimal.c). */
double		nb_decimal_to_double_other(uint64_t digits, int32_t exp10);

/*
 * Below 10^-330 a double is subnormal (or zero) for any 64-bit digits, which
 * nb_decimal_by_pow5 leaves to the other paths.  Probabilities of a text
 * classifier go down to there: a third of them below 10^-20 in a model of
 * short documents of 15 classes.
 */
#define NB_POW5_MAX_K 330

/*
 * 5^-k as 64-bit fixed point: nb_inverse_pow5[k] is 2^(63 + z) / 5^k
 * rounded down, z = nb_pow5_bits[k] the bit length of 5^k, so that 2^63 <=
 * nb_inverse_pow5[k] < 2^64 (0: not made yet, nb_decimal_make_pow5).
 */
extern uint64_t nb_inverse_pow5[NB_POW5_MAX_K + 1];
extern int	nb_pow5_bits[NB_POW5_MAX_K + 1];
void		nb_decimal_make_pow5(int k);

/*
 * digits * 10^-k for 1 <= k <= NB_POW5_MAX_K and digits > 0, correctly
 * rounded, or false when the product below cannot tell which way to round.
 * With W the digits shifted to fill 64 bits and m = nb_inverse_pow5[k], the
 * exact value is T * 2^-(63 + z + shift + k) for a real T = W * (m + f),
 * 0 <= f < 1, so P = W * m <= T < P + W < P + 2^64: T and P differ by less
 * than one in the low 64 bits of P, and the high 64 bits h decide.  The
 * double takes T's top 53 bits (h's, from its leading one at bit 62 or 63
 * down), rounded by the bits under them: r, the 10 or 11 bits of h below
 * the significand, then the low bits.  With half the value of r that is
 * exactly halfway, r > half rounds up and r < half - 1 rounds down
 * whatever the low bits and T's excess over P are; r = half - 1 or half
 * (about two values in a thousand) are left to the caller.
 */
static inline bool
nb_decimal_by_pow5(uint64_t digits, int k, double *result)
{
	int			shift = nb_clz64(digits);
	uint64_t	low;
	uint64_t	high = nb_mul_add128(digits << shift, nb_inverse_pow5[k], 0, &low);
	int			top = (int) (high >> 63);
	int			below = 10 + top;	/* bits of high under the significand */
	uint64_t	rest = high & ((UINT64_C(1) << below) - 1);
	uint64_t	half = UINT64_C(1) << (below - 1);
	uint64_t	significand;
	int			exponent = 11 + top - nb_pow5_bits[k] - shift - k;	/* of significand's last bit */
	int			biased;
	uint64_t	bits;

	/* rest is half - 1 or half (unsigned: anything below wraps to a large number) */
	if (rest - (half - 1) <= 1)
		return false;
	significand = (high >> below) + (rest > half);
	if (significand == (UINT64_C(1) << 53))
	{
		significand >>= 1;
		exponent++;
	}
	biased = exponent + 52 + 1023;
	if (biased <= 0 || biased >= 2047)
		return false;
	bits = (uint64_t) biased << 52 | (significand & ((UINT64_C(1) << 52) - 1));
	memcpy(result, &bits, sizeof(bits));
	return true;
}

/*
 * A base-10000 digit 1..9999 without its trailing decimal zeros, and how
 * many there were (*zeros, 0 to 3): without a loop, whose trip count is
 * random from one number to the next.  2^32 / 10^z rounded up times the
 * digit, shifted down by 32, is the quotient for a digit under 2^22.
 */
static inline uint32_t
nb_decimal_strip_zeros(uint32_t digit, int *zeros)
{
	static const uint64_t inverse[4] = {UINT64_C(1) << 32, 429496730, 42949673, 4294968};
	int			z = (digit % 10 == 0) + (digit % 100 == 0) + (digit % 1000 == 0);

	*zeros = z;
	return (uint32_t) ((digit * inverse[z]) >> 32);
}

/*
 * The double nearest to digits * 10^exp10 (ties to even), as strtod gives
 * it, faster than strtod on the number's text.  Out of double's range: as
 * strtod, infinity or zero (or a subnormal).  Inline: a jsonb object's
 * probabilities are converted by the million.
 */
static inline double
nb_decimal_to_double(uint64_t digits, int32_t exp10)
{
	/* first: a multiplication is faster than the other paths' division */
	if (digits > 0 && exp10 < 0 && exp10 >= -NB_POW5_MAX_K)
	{
		double		result;

		if (nb_inverse_pow5[-exp10] == 0)
			nb_decimal_make_pow5(-exp10);
		if (nb_decimal_by_pow5(digits, -exp10, &result))
			return result;
	}
	return nb_decimal_to_double_other(digits, exp10);
}

#endif
