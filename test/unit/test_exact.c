/*
 * test_exact.c — unit tests of exact sums (src/nb_exact.c): the value is
 * the true sum rounded once, whatever the order and grouping of the terms.
 *
 *   ./test_exact       run every test
 *   ./test_exact WORD  run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb_exact.h"
#include "unit.h"

static bool
same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof(double)) == 0;
}

static int64_t
random_mantissa(int bits)
{
	int64_t		m = (int64_t) (unit_random() >> (64 - bits));

	return unit_random() % 2 ? -m : m;
}

static void
test_exact_against_integers(void)
{
	/*
	 * Terms m_i 2^E with |m_i| < 2^50, at most 2^12 of them: their sum is
	 * an integer below 2^62 times 2^E, which int64 holds exactly, and C
	 * converts it to the nearest double, ties to even: the reference.  E
	 * from the least subnormal to near the top of the range.
	 */
	static const int exps[] = {-1074, -1060, -1030, -1022, -600, -60, -30, 0, 17, 300, 900, 960};

	for (size_t k = 0; k < sizeof(exps) / sizeof(exps[0]); k++)
		for (int round = 0; round < 400; round++)
		{
			int			n = 1 + (int) (unit_random() % 4096);
			int			bits = 1 + (int) (unit_random() % 50);
			int64_t		sum = 0;
			NbExactSum	s;
			double		want;
			double		got;

			nb_exact_init(&s);
			for (int i = 0; i < n; i++)
			{
				int64_t		m = random_mantissa(bits);

				sum += m;
				nb_exact_add(&s, ldexp((double) m, exps[k]));
			}
			want = ldexp((double) sum, exps[k]);
			got = nb_exact_value(&s);
			CHECK_OR_DONE(same_bits(got, want), "2^%d, %d terms of %d bits: %.17g, expected %.17g",
						  exps[k], n, bits, got, want);
		}
done:
	;
}

static void
test_exact_rounding(void)
{
	NbExactSum	s;
	double		tie = ldexp(1, -53);

	/* 1 + 2^-53 is a tie: to even, 1; a term below it decides upwards */
	nb_exact_init(&s);
	nb_exact_add(&s, 1);
	nb_exact_add(&s, tie);
	CHECK(nb_exact_value(&s) == 1.0, "1 + 2^-53 = %.17g", nb_exact_value(&s));
	nb_exact_add(&s, ldexp(1, -1074));
	CHECK(nb_exact_value(&s) == 1.0 + ldexp(1, -52), "1 + 2^-53 + 2^-1074 = %.17g", nb_exact_value(&s));
	/* (1 + 2^-52) + 2^-53 is a tie: to even, 1 + 2^-51 */
	nb_exact_init(&s);
	nb_exact_add(&s, 1 + ldexp(1, -52));
	nb_exact_add(&s, tie);
	CHECK(nb_exact_value(&s) == 1 + ldexp(1, -51), "(1 + 2^-52) + 2^-53 = %.17g", nb_exact_value(&s));
	/* what plain addition loses: 1e300 + 1 - 1e300 */
	nb_exact_init(&s);
	nb_exact_add(&s, 1e300);
	nb_exact_add(&s, 1);
	nb_exact_add(&s, -1e300);
	CHECK(nb_exact_value(&s) == 1.0, "1e300 + 1 - 1e300 = %.17g", nb_exact_value(&s));
	/* negative sums, zero, the extremes */
	nb_exact_init(&s);
	CHECK(same_bits(nb_exact_value(&s), 0.0), "empty sum");
	nb_exact_add(&s, -0.1);
	nb_exact_add(&s, -0.2);
	CHECK(nb_exact_value(&s) == -0.30000000000000004, "-0.1 - 0.2 = %.17g", nb_exact_value(&s));
	/* the doubles nearest 0.1, 0.2 and 0.3 + 4e-17 differ by exactly 2^-55 */
	nb_exact_add(&s, 0.30000000000000004);
	CHECK(nb_exact_value(&s) == ldexp(1, -55), "cancellation: %.17g", nb_exact_value(&s));
	nb_exact_init(&s);
	nb_exact_add(&s, 1.7976931348623157e308);
	nb_exact_add(&s, 1.7976931348623157e308);
	CHECK(nb_exact_value(&s) == INFINITY, "past the range: %.17g", nb_exact_value(&s));
	nb_exact_add(&s, -1.7976931348623157e308);
	CHECK(nb_exact_value(&s) == 1.7976931348623157e308, "back in range: %.17g", nb_exact_value(&s));
	nb_exact_init(&s);
	nb_exact_add(&s, ldexp(1, -1074));
	nb_exact_add(&s, ldexp(3, -1074));
	CHECK(nb_exact_value(&s) == ldexp(1, -1072), "subnormals: %.17g", nb_exact_value(&s));
	/* a term that is not finite makes the value that */
	nb_exact_add(&s, INFINITY);
	CHECK(nb_exact_value(&s) == INFINITY, "infinity: %.17g", nb_exact_value(&s));
	nb_exact_add(&s, -INFINITY);
	CHECK(isnan(nb_exact_value(&s)), "inf - inf: %.17g", nb_exact_value(&s));
}

/* Terms of every magnitude and sign, as log losses and weights make them. */
static double
random_term(void)
{
	double		x = (double) (unit_random() >> 11) / 9007199254740992.0;

	x = ldexp(x, (int) (unit_random() % 120) - 60);
	return unit_random() % 4 == 0 ? -x : x;
}

static void
test_exact_order_independent(void)
{
	enum
	{
		N = 20000
	};
	double	   *terms = malloc(sizeof(double) * N);
	NbExactSum	forward;
	double		want;

	nb_exact_init(&forward);
	for (int i = 0; i < N; i++)
	{
		terms[i] = random_term();
		nb_exact_add(&forward, terms[i]);
	}
	want = nb_exact_value(&forward);
	for (int round = 0; round < 20; round++)
	{
		NbExactSum	parts[4];
		NbExactSum	all;
		unsigned char buf[NB_EXACT_SERIAL_SIZE];

		/* shuffled, in four parts merged in another order, one through its serial form */
		for (int i = N - 1; i > 0; i--)
		{
			int			j = (int) (unit_random() % (uint64_t) (i + 1));
			double		t = terms[i];

			terms[i] = terms[j];
			terms[j] = t;
		}
		for (int p = 0; p < 4; p++)
			nb_exact_init(&parts[p]);
		for (int i = 0; i < N; i++)
			nb_exact_add(&parts[unit_random() % 4], terms[i]);
		nb_exact_write(&parts[2], buf);
		CHECK_OR_DONE(nb_exact_read(&parts[2], buf), "a written sum reads back");
		nb_exact_init(&all);
		for (int p = 3; p >= 0; p--)
			nb_exact_merge(&all, &parts[p]);
		CHECK_OR_DONE(same_bits(nb_exact_value(&all), want), "round %d: %.17g, in order %.17g",
					  round, nb_exact_value(&all), want);
	}
	/* a byte no canonical sum has */
	{
		unsigned char buf[NB_EXACT_SERIAL_SIZE];
		NbExactSum	s;

		nb_exact_write(&forward, buf);
		buf[4] = 1;
		CHECK(!nb_exact_read(&s, buf), "a limb past 32 bits is refused");
	}
done:
	free(terms);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("exact: sums of integer multiples of a power of 2, against int64", test_exact_against_integers);
	run("exact: rounding once, ties to even, cancellation, the range's ends", test_exact_rounding);
	run("exact: the same bits in every order and grouping, through the serial form", test_exact_order_independent);
	return unit_done();
}
