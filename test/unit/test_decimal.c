/*
 * test_decimal.c — unit tests of decimal-to-double rounding
 * (src/nb_decimal.c), every result compared bit for bit with strtod's on
 * the same decimal.
 *
 *   ./test_decimal       run every test
 *   ./test_decimal WORD  run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb_decimal.h"
#include "unit.h"

static void
test_decimal_to_double(void)
{
	/*
	 * Against strtod on the same decimal, bit for bit: random significands
	 * of 1 to 19 digits (shortest round-trip forms of doubles have up to
	 * 17) with exponents -40..25, in and out of the fast paths, and the
	 * decimal forms of random doubles in [0, 1].
	 */
	char		text[48];

	for (int i = 0; i < 2000000; i++)
	{
		int			ndig = 1 + (int) (unit_random() % 19);
		uint64_t	digits = unit_random() % 10;
		int32_t		exp10 = -40 + (int32_t) (unit_random() % 66);
		double		want,
					got;

		for (int d = 1; d < ndig; d++)
			digits = digits * 10 + unit_random() % 10;
		if (i % 2 == 1)
		{
			/* a double's shortest form: 17 significant digits round-trip */
			double		x = (double) (unit_random() >> 11) / 9007199254740992.0 * pow(10, -(int) (unit_random() % 30));

			snprintf(text, sizeof(text), "%.17e", x);
			digits = 0;
			exp10 = atoi(strchr(text, 'e') + 1) - 16;
			for (const char *c = text; *c != 'e'; c++)
				if (*c >= '0' && *c <= '9')
					digits = digits * 10 + (uint64_t) (*c - '0');
		}
		snprintf(text, sizeof(text), "%llue%d", (unsigned long long) digits, (int) exp10);
		want = strtod(text, NULL);
		got = nb_decimal_to_double(digits, exp10);
		CHECK(memcmp(&want, &got, sizeof(double)) == 0, "%s: %.17g, strtod %.17g", text, got, want);
	}
	/*
	 * The hardest roundings: decimals within a unit of their last digit of
	 * the midpoint between two neighbouring doubles in (1e-320, 1) (the
	 * probabilities of a text classifier go that low), the midpoint's
	 * first 18 or 19 digits and one more in the last.  And exact products
	 * of powers of 5, which 5^-k multiplies back to integers.
	 */
	for (int i = 0; i < 1000000; i++)
	{
		double		x = (double) ((unit_random() >> 11) | 1) / 9007199254740992.0 * pow(10, -(int) (unit_random() % 320));
		double		next = nextafter(x, 2.0);
		long double mid = ((long double) x + (long double) next) / 2;
		int			ndig = 18 + (int) (unit_random() % 2);
		uint64_t	digits = 0;
		int32_t		exp10;
		double		want,
					got;

		snprintf(text, sizeof(text), "%.*Le", ndig - 1, mid);
		exp10 = atoi(strchr(text, 'e') + 1) - (ndig - 1);
		for (const char *c = text; *c != 'e'; c++)
			if (*c >= '0' && *c <= '9')
				digits = digits * 10 + (uint64_t) (*c - '0');
		digits += unit_random() % 3;
		digits -= digits > 0 ? 1 : 0;
		snprintf(text, sizeof(text), "%llue%d", (unsigned long long) digits, (int) exp10);
		want = strtod(text, NULL);
		got = nb_decimal_to_double(digits, exp10);
		CHECK(memcmp(&want, &got, sizeof(double)) == 0, "%s: %.17g, strtod %.17g", text, got, want);
	}
	for (int k = 1; k <= 27; k++)
		for (uint64_t m = 1; m < 2000; m++)
		{
			uint64_t	p = 1;
			uint64_t	digits;
			double		want,
						got;

			for (int j = 0; j < k; j++)
				p *= 5;
			if (__builtin_mul_overflow(p, m * (UINT64_C(1) << (m % 40)), &digits))
				continue;
			snprintf(text, sizeof(text), "%llue%d", (unsigned long long) digits, -k);
			want = strtod(text, NULL);
			got = nb_decimal_to_double(digits, -k);
			CHECK(memcmp(&want, &got, sizeof(double)) == 0, "%s: %.17g, strtod %.17g", text, got, want);
		}
	/* 2^53 + 1, exactly halfway between two doubles: ties to even, 2^53 */
	CHECK(nb_decimal_to_double(9007199254740993ULL, 0) == 9007199254740992.0, "halfway");
	CHECK(nb_decimal_to_double(9007199254740995ULL, 0) == 9007199254740996.0, "halfway up");
	CHECK(nb_decimal_to_double(0, -5) == 0.0, "zero");
}

static void
test_strip_zeros(void)
{
	/* every base-10000 digit but 0: the digit without its trailing zeros, and their count */
	static const uint32_t pow10[4] = {1, 10, 100, 1000};

	for (uint32_t d = 1; d <= 9999; d++)
	{
		int			zeros = -1;
		uint32_t	rest = nb_decimal_strip_zeros(d, &zeros);

		CHECK_OR_DONE(zeros >= 0 && zeros <= 3 && rest * pow10[zeros] == d && rest % 10 != 0,
					  "%u: %u and %d zeros", d, rest, zeros);
	}
done:
	;
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("decimal: to double as strtod, bit for bit", test_decimal_to_double);
	run("decimal: a base-10000 digit without its trailing zeros", test_strip_zeros);
	return unit_done();
}
