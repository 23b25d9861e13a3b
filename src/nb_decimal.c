/*
 * nb_decimal.c — decimal numbers (digits times a power of ten) to the
 * nearest double, exactly as strtod rounds them, without their text: the
 * numbers of jsonb values (probabilities, feature values, counts) come as
 * numeric's base-10000 digits.
 */
#include "nb_decimal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "nb_port.h"

/*
 * A decimal digits * 10^exp10 to the nearest double, by the first of these
 * that can decide:
 * - for 10^-k with 1 <= k <= NB_POW5_MAX_K, the digits times 5^-k in 128-bit
 *   integers (nb_decimal_by_pow5 in nb_decimal.h, inline: faster than a
 *   division, and for 17 digits);
 * - Clinger's fast path: a significand of at most 2^53 and 10^k for k <= 22
 *   are exact doubles, so their quotient or product is rounded once,
 *   correctly;
 * - strtod.
 */

/* 10^k, exact doubles up to k = 22 */
static const double exact_powers[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
	1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

#define POW5_WORDS 13			/* 5^330 < 2^767 < 2^(64 * 13) */

uint64_t	nb_inverse_pow5[NB_POW5_MAX_K + 1];
int			nb_pow5_bits[NB_POW5_MAX_K + 1];

/* a >= b, for numbers of n 64-bit words, the least significant first */
static bool
words_at_least(const uint64_t *a, const uint64_t *b, int n)
{
	for (int w = n - 1; w >= 0; w--)
		if (a[w] != b[w])
			return a[w] > b[w];
	return true;
}

/*
 * nb_inverse_pow5[k] exactly, by binary long division of 2^(63 + z) by 5^k
 * in multi-word integers.
 */
void
nb_decimal_make_pow5(int k)
{
	uint64_t	p[POW5_WORDS] = {1};
	uint64_t	r[POW5_WORDS] = {0};
	uint64_t	q = 0;
	int			words = 1;
	int			z;

	/* p = 5^k */
	for (int j = 0; j < k; j++)
	{
		uint64_t	carry = 0;

		for (int w = 0; w < words; w++)
			carry = nb_mul_add128(p[w], 5, carry, &p[w]);
		if (carry != 0)
			p[words++] = carry;
	}
	z = 64 * (words - 1) + 64 - nb_clz64(p[words - 1]);
	/* r = 2^(z - 1) < 5^k; then 64 quotient bits, each doubling r */
	r[(z - 1) / 64] = UINT64_C(1) << ((z - 1) % 64);
	for (int bit = 0; bit < 64; bit++)
	{
		/* a bit doubled out of the top word: r is past 5^k */
		bool		ge = r[words - 1] >> 63 != 0;

		for (int w = words - 1; w > 0; w--)
			r[w] = r[w] << 1 | r[w - 1] >> 63;
		r[0] <<= 1;
		if (ge || words_at_least(r, p, words))
		{
			uint64_t	borrow = 0;

			/* modulo 2^(64 * words): the result is below 5^k */
			for (int w = 0; w < words; w++)
			{
				uint64_t	d = r[w] - p[w] - borrow;

				borrow = r[w] < p[w] || r[w] - p[w] < borrow;
				r[w] = d;
			}
			q = q << 1 | 1;
		}
		else
			q <<= 1;
	}
	nb_pow5_bits[k] = z;
	nb_inverse_pow5[k] = q;
}

double
nb_decimal_to_double_other(uint64_t digits, int32_t exp10)
{
	char		text[48];

	if (digits <= (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22)
		return exp10 < 0 ? (double) digits / exact_powers[-exp10] :
			(double) digits * exact_powers[exp10];
	snprintf(text, sizeof(text), "%llue%d", (unsigned long long) digits, (int) exp10);
	return strtod(text, NULL);
}
