/*
 * nb_class_sums.c — class weights summed in double-double (nb_class_sums.h).
 */
#include "nb_class_sums.h"

#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_vocab.h"

/* One class's sum: hi + lo, and the sum of its terms' magnitudes. */
typedef struct ClassSum
{
	double		hi;
	double		lo;
	double		magnitude;
} ClassSum;

struct NbClassSums
{
	NbVocab		labels;
	ClassSum   *sums;			/* by the label's id in labels */
	uint32_t	cap;
};

NbClassSums *
nb_class_sums_create(void)
{
	NbClassSums *s = nb_alloc(sizeof(NbClassSums));

	nb_vocab_init(&s->labels);
	s->cap = 16;
	s->sums = nb_alloc(sizeof(ClassSum) * s->cap);
	return s;
}

/* The sum of class label, a new one at 0. */
static ClassSum *
class_sum(NbClassSums *s, const char *label, uint32_t len)
{
	uint32_t	known = s->labels.count;
	uint32_t	id = nb_vocab_intern(&s->labels, label, len, nb_hash_token(label, len));

	if (id >= s->cap)
	{
		s->cap *= 2;
		s->sums = nb_realloc(s->sums, sizeof(ClassSum) * (size_t) s->cap);
	}
	if (id >= known)
		memset(&s->sums[id], 0, sizeof(ClassSum));
	return &s->sums[id];
}

/* sum += x, keeping in lo what hi's addition rounds away (Knuth's two-sum). */
static void
two_sum_add(ClassSum *sum, double x)
{
	double		t = sum->hi + x;
	double		bv = t - sum->hi;
	double		err = (sum->hi - (t - bv)) + (x - bv);

	sum->hi = t;
	sum->lo += err;
	sum->magnitude += fabs(x);
}

void
nb_class_sums_add(NbClassSums *s, const NbView *v, double sign)
{
	NbStringIter it = nb_view_labels(v);
	const char *label;
	uint32_t	len;

	for (uint32_t c = 0; nb_string_next(&it, &label, &len); c++)
	{
		nb_interrupt_at(c);
		two_sum_add(class_sum(s, label, len), sign * nb_view_class_docs(v, c));
	}
}

/* Do a class's sum and its weight w in the result agree? */
static bool
agrees(const ClassSum *sum, double w, double rel)
{
	double		total = sum->hi + sum->lo;
	double		diff = fabs(total - w);

	return diff <= rel * fmax(fabs(total), fabs(w)) || diff <= 1e-20 * sum->magnitude;
}

bool
nb_class_sums_match(const NbClassSums *s, const NbView *result, double rel)
{
	bool	   *seen = nb_alloc_zero((size_t) s->labels.count + 1);
	bool		ok = true;

	if (result != NULL)
	{
		NbStringIter it = nb_view_labels(result);
		const char *label;
		uint32_t	len;

		for (uint32_t c = 0; ok && nb_string_next(&it, &label, &len); c++)
		{
			int64_t		id = nb_vocab_find(&s->labels, label, len, nb_hash_token(label, len));

			nb_interrupt_at(c);
			ok = id >= 0 && agrees(&s->sums[id], nb_view_class_docs(result, c), rel);
			if (id >= 0)
				seen[id] = true;
		}
	}
	for (uint32_t id = 0; ok && id < s->labels.count; id++)
		ok = seen[id] || agrees(&s->sums[id], 0, rel);
	nb_free(seen);
	return ok;
}

void
nb_class_sums_destroy(NbClassSums *s)
{
	nb_vocab_free(&s->labels);
	nb_free(s->sums);
	nb_free(s);
}
