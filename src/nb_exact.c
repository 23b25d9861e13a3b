/*
 * nb_exact.c — exact sums of doubles, see nb_exact.h.
 */
#include "nb_exact.h"

#include <math.h>
#include <string.h>

#include "nb_hash.h"
#include "nb_port.h"

#define LIMB_MASK ((UINT64_C(1) << NB_EXACT_LIMB_BITS) - 1)
#define LIMB_BASE (INT64_C(1) << NB_EXACT_LIMB_BITS)

/* Carries are propagated before a limb could pass 2^62 in magnitude. */
#define MAX_PENDING (UINT32_C(1) << 30)

/* The bit of 2^0 in the fixed-point integer: the least subnormal is bit 0. */
#define UNIT_BIT 1074

void
nb_exact_init(NbExactSum *s)
{
	memset(s, 0, sizeof(*s));
}

/*
 * Propagate the carries: every limb but the top one into [0, 2^32), the
 * top one signed.  The same sum then has the same limbs.
 */
static void
normalize(NbExactSum *s)
{
	for (int i = 0; i < NB_EXACT_LIMBS - 1; i++)
	{
		uint64_t	low = (uint64_t) s->limb[i] & LIMB_MASK;
		int64_t		carry = (s->limb[i] - (int64_t) low) / LIMB_BASE;

		s->limb[i] = (int64_t) low;
		s->limb[i + 1] += carry;
	}
	s->pending = 0;
}

void
nb_exact_add(NbExactSum *s, double x)
{
	uint64_t	bits;
	uint64_t	field;
	uint64_t	u;
	int			shift;
	int			k;
	int			r;
	uint64_t	a;
	uint64_t	b;
	int64_t		sign;

	if (x == 0)
		return;
	if (!isfinite(x))
	{
		s->special += x;
		return;
	}
	if (s->pending >= MAX_PENDING)
		normalize(s);
	s->pending++;

	/*
	 * x = u 2^shift units of 2^-1074, read off its bits: a normal number's
	 * significand has its hidden bit, and its exponent field e weighs
	 * 2^(e - 1075); a subnormal's weighs 2^-1074.
	 */
	memcpy(&bits, &x, sizeof(bits));
	field = (bits >> 52) & 0x7FF;
	u = bits & ((UINT64_C(1) << 52) - 1);
	if (field != 0)
	{
		u |= UINT64_C(1) << 52;
		shift = (int) field - 1;
	}
	else
		shift = 0;
	sign = (bits >> 63) ? -1 : 1;
	k = shift / NB_EXACT_LIMB_BITS;
	r = shift % NB_EXACT_LIMB_BITS;

	/* u 2^r over three limbs: its low 32 bits and its high 21, each shifted */
	a = (u & LIMB_MASK) << r;
	b = (u >> NB_EXACT_LIMB_BITS) << r;
	s->limb[k] += sign * (int64_t) (a & LIMB_MASK);
	s->limb[k + 1] += sign * (int64_t) ((a >> NB_EXACT_LIMB_BITS) + (b & LIMB_MASK));
	s->limb[k + 2] += sign * (int64_t) (b >> NB_EXACT_LIMB_BITS);
}

void
nb_exact_merge(NbExactSum *dst, const NbExactSum *src)
{
	NbExactSum	tmp = *src;

	normalize(&tmp);
	if (dst->pending >= MAX_PENDING - 1)
		normalize(dst);
	/* a normalized limb is below 2^32: one more term's worth */
	for (int i = 0; i < NB_EXACT_LIMBS; i++)
		dst->limb[i] += tmp.limb[i];
	dst->pending++;
	dst->special += src->special;
}

double
nb_exact_value(const NbExactSum *s)
{
	NbExactSum	t = *s;
	bool		negative;
	int			top;
	int			lz;
	int			top_bit;
	uint64_t	hi;
	uint64_t	third;
	uint64_t	window;
	uint64_t	mant;
	bool		sticky;
	double		v;

	if (s->special != 0)
		return s->special;
	normalize(&t);
	negative = t.limb[NB_EXACT_LIMBS - 1] < 0;
	if (negative)
	{
		for (int i = 0; i < NB_EXACT_LIMBS; i++)
			t.limb[i] = -t.limb[i];
		normalize(&t);
	}
	for (top = NB_EXACT_LIMBS - 1; top >= 0 && t.limb[top] == 0; top--)
		;
	if (top < 0)
		return 0.0;
	if (t.limb[top] > (int64_t) LIMB_MASK)
		return negative ? -INFINITY : INFINITY;

	hi = (uint64_t) t.limb[top] << NB_EXACT_LIMB_BITS |
		(top >= 1 ? (uint64_t) t.limb[top - 1] : 0);
	third = top >= 2 ? (uint64_t) t.limb[top - 2] : 0;
	lz = nb_clz64(hi);
	/* the 64 bits from the top one, and whether any bit below them is set */
	window = lz == 0 ? hi : hi << lz | third >> (NB_EXACT_LIMB_BITS - lz);
	sticky = (third & ((UINT64_C(1) << (NB_EXACT_LIMB_BITS - lz)) - 1)) != 0;
	for (int i = top - 3; i >= 0 && !sticky; i--)
		sticky = t.limb[i] != 0;
	top_bit = NB_EXACT_LIMB_BITS * top + NB_EXACT_LIMB_BITS - 1 - lz;

	if (top_bit < 52 + 1)
	{
		/* below 2^-1021: at most 53 bits above 2^-1074, exact as they are */
		uint64_t	units = (uint64_t) t.limb[0] | (top >= 1 ? (uint64_t) t.limb[1] << NB_EXACT_LIMB_BITS : 0);

		v = ldexp((double) units, -UNIT_BIT);
		return negative ? -v : v;
	}

	/* 53 bits, rounded to nearest, ties to even, on the bits below them */
	mant = window >> 11;
	if ((window >> 10) & 1)
	{
		if (sticky || (window & 0x3FF) != 0 || (mant & 1))
			mant++;
		if (mant == UINT64_C(1) << 53)
		{
			mant >>= 1;
			top_bit++;
		}
	}
	v = ldexp((double) mant, top_bit - 52 - UNIT_BIT);
	return negative ? -v : v;
}

void
nb_exact_write(const NbExactSum *s, unsigned char *out)
{
	NbExactSum	t = *s;
	uint64_t	special;

	normalize(&t);
	for (int i = 0; i < NB_EXACT_LIMBS; i++)
		nb_write_le64(out + i * 8, (uint64_t) t.limb[i]);
	memcpy(&special, &s->special, sizeof(special));
	nb_write_le64(out + NB_EXACT_LIMBS * 8, special);
}

bool
nb_exact_read(NbExactSum *s, const unsigned char *in)
{
	uint64_t	special = nb_read_le64(in + NB_EXACT_LIMBS * 8);

	nb_exact_init(s);
	for (int i = 0; i < NB_EXACT_LIMBS; i++)
	{
		uint64_t	v = nb_read_le64(in + i * 8);

		s->limb[i] = (int64_t) v;
		/*
		 * canonical: every limb but the top one in [0, 2^32); the top one
		 * signed, of 32 bits too, which leaves every sum of such sums its
		 * headroom (and -limb defined)
		 */
		if (i < NB_EXACT_LIMBS - 1 && v > LIMB_MASK)
			return false;
		if (i == NB_EXACT_LIMBS - 1 && (s->limb[i] < -(int64_t) LIMB_MASK || s->limb[i] > (int64_t) LIMB_MASK))
			return false;
	}
	memcpy(&s->special, &special, sizeof(special));
	return true;
}
