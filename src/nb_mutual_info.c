/*
 * nb_mutual_info.c — Murphy eq. 3.75–3.76 over the sparse counts.
 *
 *   I_j = sum_c pi_c [ t_jc log(t_jc / t_j) + (1 - t_jc) log((1 - t_jc) / (1 - t_j)) ]
 *
 * with t_j = sum_c pi_c t_jc = d_j / D.  A class where the token never
 * occurs has t_jc = 0 and contributes pi_c log(1 / (1 - t_j)); those classes
 * are handled together so the cost is proportional to the token's entries.
 */
#include "nb_mutual_info.h"

#include <math.h>
#include <stdlib.h>

#include "nb_alloc.h"

/*
 * a log(a / b), with 0 log 0 = 0; b <= 0 only through rounding and then
 * a ~ 0.  As a difference of logarithms: a / b overflows when b is tiny.
 */
static double
xlogx_over(double a, double b)
{
	if (a <= 0 || b <= 0)
		return 0;
	return a * (log(a) - log(b));
}

void
nb_mutual_info(const NbView *v, double *mi)
{
	double	   *docs = nb_alloc(sizeof(double) * v->n_classes);
	double		D = 0;
	uint64_t	e0 = 0;

	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		docs[c] = nb_read_f64(v->class_docs, c);
		D += docs[c];
	}
	for (uint32_t k = 0; k < v->n_tokens; k++)
	{
		uint32_t	n = nb_read_u32(v->token_entries, k);
		double		dj = 0;
		double		covered = 0;	/* documents of the classes with an entry */
		double		tj;
		double		sum = 0;

		for (uint32_t i = 0; i < n; i++)
		{
			dj += nb_read_f64(v->entry_docs, e0 + i);
			covered += docs[nb_read_u32(v->entry_class, e0 + i)];
		}
		tj = fmin(dj / D, 1.0);
		for (uint32_t i = 0; i < n; i++)
		{
			double		Dc = docs[nb_read_u32(v->entry_class, e0 + i)];
			double		tjc = fmin(nb_read_f64(v->entry_docs, e0 + i) / Dc, 1.0);
			double		pic = Dc / D;

			sum += pic * (xlogx_over(tjc, tj) + xlogx_over(1 - tjc, 1 - tj));
		}
		if (D - covered > 0 && tj < 1)
			sum -= (D - covered) / D * log1p(-tj);
		/* exact value is >= 0; clamp rounding noise so ties order by name */
		mi[k] = sum > 0 ? sum : 0;
		e0 += n;
	}
	nb_free(docs);
}

typedef struct Ranked
{
	double		mi;
	uint32_t	k;
} Ranked;

static int
cmp_ranked(const void *a, const void *b)
{
	const Ranked *x = a;
	const Ranked *y = b;

	if (x->mi != y->mi)
		return x->mi > y->mi ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

void
nb_rank_by_mutual_info(const double *mi, uint32_t n, uint32_t *order)
{
	Ranked	   *r = nb_alloc(sizeof(Ranked) * (n ? n : 1));

	for (uint32_t k = 0; k < n; k++)
	{
		r[k].mi = mi[k];
		r[k].k = k;
	}
	qsort(r, n, sizeof(Ranked), cmp_ranked);
	for (uint32_t k = 0; k < n; k++)
		order[k] = r[k].k;
	nb_free(r);
}
