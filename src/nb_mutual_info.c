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
#include "nb_interrupt.h"

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

/* Murphy 3.76 for the tokens of bag j, items [first, first + n), into rows. */
static uint64_t
bag_rows(const NbView *v, uint32_t j, uint32_t first, uint64_t *e0, NbMiRow *rows)
{
	double	   *docs = nb_alloc(sizeof(double) * v->n_classes);
	double		D = 0;
	uint32_t	n_items = nb_view_feature_items(v, j);
	uint64_t	work = 0;

	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		docs[c] = nb_view_present(v, j, c);
		D += docs[c];
	}
	for (uint32_t k = first; k < first + n_items; k++)
	{
		uint32_t	n = nb_read_u32(v->token_entries, k);
		double		dj = 0;
		double		covered = 0;	/* documents of the classes with an entry */
		double		tj;
		double		sum = 0;

		nb_interrupt_count(&work, 1 + (uint64_t) n);
		for (uint32_t i = 0; i < n; i++)
		{
			dj += nb_read_f64(v->entry_docs, *e0 + i);
			covered += docs[nb_read_u32(v->entry_class, *e0 + i)];
		}
		tj = fmin(dj / D, 1.0);
		for (uint32_t i = 0; i < n; i++)
		{
			double		Dc = docs[nb_read_u32(v->entry_class, *e0 + i)];
			double		tjc = fmin(nb_read_f64(v->entry_docs, *e0 + i) / Dc, 1.0);
			double		pic = Dc / D;

			sum += pic * (xlogx_over(tjc, tj) + xlogx_over(1 - tjc, 1 - tj));
		}
		if (D - covered > 0 && tj < 1)
			sum -= (D - covered) / D * log1p(-tj);
		rows[k - first].feature = j;
		rows[k - first].item = k;
		rows[k - first].whole_feature = false;
		/* exact value is >= 0; clamp rounding noise so ties order by name */
		rows[k - first].mi = sum > 0 ? sum : 0;
		*e0 += n;
	}
	nb_free(docs);
	return n_items;
}

/*
 * Plug-in mutual information of a table of weighted counts n[v][c] (values
 * by classes, row-major): sum n_vc/N log(n_vc N / (n_v n_c)).
 */
static double
table_mutual_info(const double *n, uint32_t values, uint32_t classes)
{
	double	   *col = nb_alloc_zero(sizeof(double) * classes);
	double		N = 0;
	double		sum = 0;
	uint64_t	work = 0;

	for (uint32_t x = 0; x < values; x++)
	{
		nb_interrupt_count(&work, classes);
		for (uint32_t c = 0; c < classes; c++)
			col[c] += n[(uint64_t) x * classes + c];
	}
	for (uint32_t c = 0; c < classes; c++)
		N += col[c];
	for (uint32_t x = 0; x < values && N > 0; x++)
	{
		double		row = 0;

		nb_interrupt_count(&work, classes);
		for (uint32_t c = 0; c < classes; c++)
			row += n[(uint64_t) x * classes + c];
		for (uint32_t c = 0; c < classes; c++)
		{
			double		nvc = n[(uint64_t) x * classes + c];

			if (nvc > 0)
				sum += nvc / N * ((log(nvc) - log(row)) + (log(N) - log(col[c])));
		}
	}
	nb_free(col);
	return sum > 0 ? sum : 0;
}

/* The value-by-class count table of categorical feature j (items [first, ...)). */
static double
categorical_mi(const NbView *v, uint32_t j, uint32_t first, uint64_t *e0)
{
	uint32_t	C = v->n_classes;
	uint32_t	K = nb_view_feature_items(v, j);
	double	   *n = nb_alloc_zero(sizeof(double) * ((uint64_t) K * C + 1));
	double		mi;
	uint64_t	work = 0;

	for (uint32_t k = 0; k < K; k++)
	{
		uint32_t	entries = nb_read_u32(v->token_entries, first + k);

		nb_interrupt_count(&work, 1 + (uint64_t) entries);
		for (uint32_t i = 0; i < entries; i++, (*e0)++)
			n[(uint64_t) k * C + nb_read_u32(v->entry_class, *e0)] =
				nb_read_f64(v->entry_count, *e0);
	}
	mi = table_mutual_info(n, K, C);
	nb_free(n);
	return mi;
}

static double
boolean_mi(const NbView *v, uint32_t j)
{
	uint32_t	C = v->n_classes;
	double	   *n = nb_alloc(sizeof(double) * 2 * C);
	double		mi;

	for (uint32_t c = 0; c < C; c++)
	{
		n[c] = nb_view_a(v, j, c);
		n[C + c] = fmax(nb_view_present(v, j, c) - n[c], 0);
	}
	mi = table_mutual_info(n, 2, C);
	nb_free(n);
	return mi;
}

static int
cmp_rows(const void *a, const void *b)
{
	const NbMiRow *x = a;
	const NbMiRow *y = b;
	bool		xnan = isnan(x->mi);
	bool		ynan = isnan(y->mi);

	if (xnan != ynan)
		return xnan ? 1 : -1;
	if (!xnan && x->mi != y->mi)
		return x->mi > y->mi ? -1 : 1;
	if (x->feature != y->feature)
		return x->feature < y->feature ? -1 : 1;
	return (x->item > y->item) - (x->item < y->item);
}

uint64_t
nb_mutual_info(const NbView *v, NbMiRow *rows)
{
	uint64_t	n = 0;
	uint64_t	e0 = 0;
	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;

	while (nb_feature_next(&it, &f))
	{
		NbFeatureType type = f.type;
		uint32_t	j = f.index;
		uint32_t	first = f.first_item;
		NbMiRow    *r = &rows[n];

		if (type == NB_FEATURE_BAG)
			n += bag_rows(v, j, first, &e0, r);
		else
		{
			r->feature = j;
			r->item = first;
			r->whole_feature = true;
			if (type == NB_FEATURE_CATEGORICAL)
				r->mi = categorical_mi(v, j, first, &e0);
			else if (type == NB_FEATURE_BOOLEAN)
				r->mi = boolean_mi(v, j);
			else
				r->mi = NAN;
			n++;
		}
	}
	nb_sort(rows, n, sizeof(NbMiRow), cmp_rows);
	return n;
}
