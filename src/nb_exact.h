/*
 * nb_exact.h — exact sums of doubles, independent of the order of their
 * terms.
 *
 * A sum of doubles added one by one is rounded at every step, so the same
 * terms in another order (another plan, another worker count, rows that
 * arrive differently after a dump and restore) can give another last bit.
 * An NbExactSum keeps the sum as a fixed-point integer wide enough for
 * every finite double (bits from 2^-1074, the least subnormal, up past
 * 2^1024): each term is added exactly, two sums merge exactly, and the
 * value is rounded once, to nearest with ties to even.  So any order and
 * any grouping of the same terms gives the same bits, and the value is the
 * true sum correctly rounded, which no order of plain additions
 * guarantees.
 *
 * The integer is held in NB_EXACT_LIMBS signed 64-bit limbs of 32 bits each
 * (limb i weighs 2^(32 i - 1074)); a term adds to three adjacent limbs, and
 * the carries are propagated only every 2^30 terms (and before reading or
 * writing the sum out), which a limb's spare 31 bits allow.  A term that is
 * not finite (an overflowed product) is kept apart and makes the value
 * that infinity or NaN.
 *
 * Pure C: no PostgreSQL.
 */
#ifndef NB_EXACT_H
#define NB_EXACT_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NB_EXACT_LIMB_BITS 32
/* bits 0 .. 2^1024's position (2098) plus 64 of headroom */
#define NB_EXACT_LIMBS 68

typedef struct NbExactSum
{
	int64_t		limb[NB_EXACT_LIMBS];
	uint32_t	pending;		/* terms added since the carries were last propagated */
	double		special;		/* 0, or the sum of the terms that were not finite */
} NbExactSum;

/* Bytes of the serialized form: every limb, then the special sum. */
#define NB_EXACT_SERIAL_SIZE ((NB_EXACT_LIMBS + 1) * 8)

void		nb_exact_init(NbExactSum *s);

/* s += x, exactly. */
void		nb_exact_add(NbExactSum *s, double x);

/* dst += src, exactly. */
void		nb_exact_merge(NbExactSum *dst, const NbExactSum *src);

/* The sum rounded to the nearest double (ties to even); +-inf past the range. */
double		nb_exact_value(const NbExactSum *s);

/*
 * The canonical form (carries propagated: the same sum always has the same
 * limbs) as NB_EXACT_SERIAL_SIZE bytes, little-endian, and back.  Reading
 * returns false for bytes no canonical sum has.
 */
void		nb_exact_write(const NbExactSum *s, unsigned char *out);
bool		nb_exact_read(NbExactSum *s, const unsigned char *in);

/*
 * Neumaier's compensated summation, where one order of the terms is fixed
 * and an exact sum costs too much: add term to *sum, keeping the rounding
 * error in *comp (the true sum is *sum + *comp).  Log-likelihoods are sums
 * of many terms, larger than their total, and plain summation would lose
 * digits against scikit-learn.
 */
static inline void
nb_add_compensated(double *sum, double *comp, double term)
{
	double		total = *sum + term;

	*comp += fabs(*sum) >= fabs(term) ? (*sum - total) + term : (term - total) + *sum;
	*sum = total;
}

#endif
