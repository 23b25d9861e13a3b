/*
 * nb_subtract.c — the model of a's rows without b's, see nb_subtract.h.
 *
 * First the small parts: b's labels and feature names are mapped into a's
 * (each must be there), the class documents and every feature's statistics
 * are subtracted in a's order, and what reaches zero is dropped.  Then the items of each feature, a's and b's side by
 * side: a stretch a has alone is copied whole (nb_copy_run) and its entries
 * checked against the rows their class and feature keep; an item of both
 * gets its entries subtracted class by class.  The result is an NbPlan,
 * written by nb_plan_write like a merge's.
 */
#include "nb_subtract.h"

#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_feature_type.h"
#include "nb_interrupt.h"
#include "nb_moments.h"
#include "nb_merge.h"
#include "nb_runs.h"

/* The work of one subtraction: a's classes and features, and what remains of them. */
typedef struct Sub
{
	const NbView *a;
	const NbView *b;
	NbSubtractError *err;
	NbSubtractError mismatch;	/* the first count past its bound, reported last */
	NbPlan	   *p;
	/* a's labels, names and what remains of their statistics, in a's order */
	NbPlan		rem;
	uint32_t   *b_class;		/* [b classes]: a's class */
	uint32_t   *a_class_b;		/* [a classes]: b's class, or NB_NONE */
	uint32_t   *class_out;		/* [a classes]: output class, or NB_NONE */
	uint32_t   *out_class;		/* [output classes]: a's class */
	uint32_t   *a_feature_b;	/* [a features]: b's feature, or NB_NONE */
	uint32_t   *feature_out;	/* [a features]: output feature, or NB_NONE */
} Sub;

/* ---------------------------------------------------------------- */
/* errors                                                             */

static bool
refuse(Sub *s, NbSubtractStatus status)
{
	s->err->status = status;
	return false;
}

static void
about_feature(Sub *s, uint32_t f)
{
	s->err->feature = s->rem.name[f];
	s->err->feature_len = s->rem.name_len[f];
	s->err->type_a = nb_view_feature_type(s->a, f);
}

/*
 * A count of a's feature f in a's class c (NB_NONE: not concerned) went
 * negative, or passed its bound.  The latter is a consequence (of rows of b
 * that a lacks, or has fewer of) more often than the cause, so it is noted,
 * the subtraction goes on, and it is reported only if nothing else is
 * found: true then.
 */
static bool
refuse_count(Sub *s, NbSubtractStatus status, NbSubtractCount count, uint32_t f, uint32_t c,
			 double minuend, double subtrahend)
{
	if (f != NB_NONE)
		about_feature(s, f);
	if (c != NB_NONE)
	{
		s->err->label = s->rem.label[c];
		s->err->label_len = s->rem.label_len[c];
	}
	s->err->count = count;
	s->err->minuend = minuend;
	s->err->subtrahend = subtrahend;
	if (status != NB_SUBTRACT_MISMATCH)
		return refuse(s, status);
	s->err->status = status;
	if (s->mismatch.status == NB_SUBTRACT_OK)
		s->mismatch = *s->err;
	memset(s->err, 0, sizeof(*s->err));
	return true;
}

/* ---------------------------------------------------------------- */
/* counts                                                             */

/*
 * *r = x - y for counts: 0 within the tolerance of x; false if clearly
 * negative.  x == y gives +0, which the format requires of zeros.
 */
static bool
sub_count(double x, double y, double *r)
{
	double		d = x - y;

	if (fabs(d) <= NB_SUBTRACT_TOLERANCE * x)
		d = 0;
	else if (d < 0)
		return false;
	*r = d;
	return true;
}

/*
 * A remaining count *v may not pass its bound (itself a remaining count
 * whose minuend was scale): set to the bound if it passes by no more than
 * the tolerance of scale; false if it passes it by more, or if the bound is
 * 0 (the count would have to vanish, which only its own subtraction does).
 */
static bool
within(double *v, double bound, double scale)
{
	if (*v <= bound)
		return true;
	if (bound == 0 || *v - bound > NB_SUBTRACT_TOLERANCE * scale)
		return false;
	*v = bound;
	return true;
}

/* Do (n, mean, m2) merged with (nb, meanb, m2b), a first or b first, give exactly (n, mean, m2)? */
static bool
merges_back(bool a_first, double na, double ma, double qa, double nb, double meanb,
			double m2b, double n, double mean, double m2, bool mean_only)
{
	double		rn = a_first ? na : nb;
	double		rmean = a_first ? ma : meanb;
	double		rm2 = a_first ? qa : m2b;

	if (a_first)
		nb_moments_add(&rn, &rmean, &rm2, nb, meanb, m2b);
	else
		nb_moments_add(&rn, &rmean, &rm2, na, ma, qa);
	return rn == n && rmean == mean && (mean_only || rm2 == m2);
}

/* The k-th candidate around x: x, then one unit in the last place up, down, two up... */
static double
around(double x, int k)
{
	double		toward = k % 2 == 1 ? INFINITY : -INFINITY;

	for (int i = 0; i < (k + 1) / 2; i++)
		x = nextafter(x, toward);
	return x;
}

#define NB_UNMERGE_ULPS 8		/* candidates tried: 4 units in the last place either way */

/*
 * The inverse of nb_moments_add: the mean and sum of squared deviations
 * of the na = n - nb (> 0) values that, merged with (nb, meanb, m2b), made
 * (n, *mean, *m2).  From the update's algebra (with d = meanb - mean):
 * mean_a = mean - d nb / na and m2_a = m2 - m2b - d^2 n nb / na.  Rounding
 * makes those a few units in the last place off, so when the counts add up
 * exactly, the doubles near them that merge back to exactly (n, mean, m2),
 * a first or b first, are taken: a mean that gives the merged mean, then
 * the sum of squares that the update's own terms for that mean give back
 * (m2 = m2_a + (m2b + d^2 (na nb / n)) a first; m2b + (m2_a + d^2 (nb na
 * / n)) b first).  A sum of squares within the tolerance of m2 is 0, as a
 * count would be.  False if the result is not finite.
 */
static bool
unmerge_moments(double n, double *mean, double *m2, double na, double nb,
				double meanb, double m2b)
{
	double		d = meanb - *mean;
	double		ma = *mean - d * (nb / na);
	double		qa = *m2 - m2b - d * d * (n / na * nb);

	if (!isfinite(ma) || !isfinite(qa))
		return false;
	for (int order = 0; order < 2 && na + nb == n; order++)
	{
		bool		a_first = order == 0;

		for (int km = 0; km <= NB_UNMERGE_ULPS; km++)
		{
			double		m = around(ma, km);
			double		dm = meanb - m;
			double		q0;

			if (!merges_back(a_first, na, m, 0, nb, meanb, m2b, n, *mean, *m2, true))
				continue;
			q0 = a_first ? *m2 - (m2b + dm * dm * (na * nb / n)) :
				(*m2 - m2b) - dm * dm * (nb * na / n);
			if (q0 <= NB_SUBTRACT_TOLERANCE * *m2)
				q0 = 0;
			for (int kq = 0; kq <= NB_UNMERGE_ULPS; kq++)
			{
				double		q = around(q0, kq);

				if (q >= 0 && merges_back(a_first, na, m, q, nb, meanb, m2b, n, *mean, *m2, false))
				{
					*mean = m;
					*m2 = q == 0 ? 0 : q;
					return true;
				}
			}
		}
	}
	*mean = ma;
	*m2 = qa > NB_SUBTRACT_TOLERANCE * *m2 ? qa : 0;
	return true;
}

/* ---------------------------------------------------------------- */
/* classes and features                                               */

/*
 * Map b's strings into a's (both sorted walks); a's go to str / len.  False,
 * with *missing b's first string that a lacks, if any.
 */
static bool
map_strings(NbStringIter a, NbStringIter b,
			const char **str, uint32_t *len, uint32_t *b_map, uint32_t *missing)
{
	uint32_t	na = 0;
	uint32_t	i = 0;
	const char *bs;
	uint32_t	blen;

	while (nb_string_next(&a, &str[na], &len[na]))
		na++;
	for (uint32_t j = 0; nb_string_next(&b, &bs, &blen); j++)
	{
		while (i < na && nb_strcmp(str[i], len[i], bs, blen) < 0)
			i++;
		if (i == na || nb_strcmp(str[i], len[i], bs, blen) != 0)
		{
			*missing = j;
			return false;
		}
		b_map[j] = i;
	}
	return true;
}

static bool
subtract_classes(Sub *s)
{
	const NbView *a = s->a;
	const NbView *b = s->b;
	uint32_t	missing = 0;

	if (!map_strings(nb_view_labels(a), nb_view_labels(b), s->rem.label, s->rem.label_len, s->b_class,
					 &missing))
	{
		s->err->label = nb_string_nth(nb_view_labels(b), missing, &s->err->label_len);
		return refuse(s, NB_SUBTRACT_NO_CLASS);
	}
	for (uint32_t c = 0; c < a->n_classes; c++)
	{
		s->rem.class_docs[c] = nb_view_class_docs(a, c);
		s->a_class_b[c] = NB_NONE;
	}
	for (uint32_t j = 0; j < b->n_classes; j++)
	{
		uint32_t	c = s->b_class[j];
		double		x = s->rem.class_docs[c];
		double		y = nb_view_class_docs(b, j);

		nb_interrupt_at(j);
		s->a_class_b[c] = j;
		if (!sub_count(x, y, &s->rem.class_docs[c]))
			return refuse_count(s, NB_SUBTRACT_NEGATIVE, NB_COUNT_DOCUMENTS, NB_NONE, c, x, y);
	}
	return true;
}

/* Feature f of a in class c: what remains of its statistics after b's (j: b's feature). */
static bool
subtract_stats(Sub *s, uint32_t f, uint32_t j, uint32_t c)
{
	const NbView *a = s->a;
	const NbView *b = s->b;
	NbFeatureType type = nb_view_feature_type(a, f);
	NbFeatureStats stats = nb_feature_type(type)->stats;
	uint32_t	cb = s->a_class_b[c];
	size_t		k = (size_t) f * a->n_classes + c;
	double		pa = nb_view_present(a, f, c);
	double		pb = 0;
	double		ab = 0;
	double		bb = 0;

	s->rem.fa[k] = nb_view_a(a, f, c);
	s->rem.fb[k] = nb_view_b(a, f, c);
	if (j != NB_NONE && cb != NB_NONE)
	{
		pb = nb_view_present(b, j, cb);
		ab = nb_view_a(b, j, cb);
		bb = nb_view_b(b, j, cb);
	}
	if (!sub_count(pa, pb, &s->rem.present[k]))
		return refuse_count(s, NB_SUBTRACT_NEGATIVE, NB_COUNT_ROWS, f, c, pa, pb);
	if (stats == NB_STATS_TRUE_ROWS && !sub_count(nb_view_a(a, f, c), ab, &s->rem.fa[k]))
		return refuse_count(s, NB_SUBTRACT_NEGATIVE, NB_COUNT_TRUE, f, c, nb_view_a(a, f, c), ab);
	if (!within(&s->rem.present[k], s->rem.class_docs[c], nb_view_class_docs(a, c)))
		return refuse_count(s, NB_SUBTRACT_MISMATCH, NB_COUNT_ROWS, f, c, pa, pb);
	if (stats == NB_STATS_TRUE_ROWS && !within(&s->rem.fa[k], s->rem.present[k], pa))
		return refuse_count(s, NB_SUBTRACT_MISMATCH, NB_COUNT_TRUE, f, c, nb_view_a(a, f, c), ab);
	if (s->rem.present[k] == 0)
	{
		s->rem.fa[k] = 0;
		s->rem.fb[k] = 0;
	}
	else if (stats == NB_STATS_MOMENTS && pb > 0 &&
			 !unmerge_moments(pa, &s->rem.fa[k], &s->rem.fb[k], s->rem.present[k], pb, ab, bb))
		return refuse_count(s, NB_SUBTRACT_MISMATCH, NB_COUNT_ROWS, f, c, pa, pb);
	return true;
}

/* The overall moments of Gaussian feature f of a (j: b's feature). */
static bool
subtract_overall(Sub *s, uint32_t f, uint32_t j)
{
	double		x = nb_view_feature_rows(s->a, f);
	double		y = j == NB_NONE ? 0 : nb_view_feature_rows(s->b, j);

	s->rem.rows[f] = x;
	s->rem.mean[f] = nb_view_feature_mean(s->a, f);
	s->rem.m2[f] = nb_view_feature_m2(s->a, f);
	if (y == 0)
		return true;
	if (!sub_count(x, y, &s->rem.rows[f]))
		return refuse_count(s, NB_SUBTRACT_NEGATIVE, NB_COUNT_VALUES, f, NB_NONE, x, y);
	if (s->rem.rows[f] == 0)
	{
		s->rem.mean[f] = 0;
		s->rem.m2[f] = 0;
		return true;
	}
	if (!unmerge_moments(x, &s->rem.mean[f], &s->rem.m2[f], s->rem.rows[f], y,
						 nb_view_feature_mean(s->b, j), nb_view_feature_m2(s->b, j)))
		return refuse_count(s, NB_SUBTRACT_MISMATCH, NB_COUNT_VALUES, f, NB_NONE, x, y);
	return true;
}

static bool
subtract_features(Sub *s)
{
	const NbView *a = s->a;
	const NbView *b = s->b;
	uint32_t   *b_feature = nb_alloc(sizeof(uint32_t) * ((size_t) b->n_features + 1));
	uint32_t	missing = 0;
	uint64_t	work = 0;
	bool		ok;

	ok = map_strings(nb_view_feature_names(a), nb_view_feature_names(b),
					 s->rem.name, s->rem.name_len, b_feature, &missing);
	if (!ok)
	{
		s->err->feature = nb_string_nth(nb_view_feature_names(b), missing, &s->err->feature_len);
		nb_free(b_feature);
		return refuse(s, NB_SUBTRACT_NO_FEATURE);
	}
	for (uint32_t f = 0; f < a->n_features; f++)
		s->a_feature_b[f] = NB_NONE;
	for (uint32_t j = 0; j < b->n_features; j++)
	{
		uint32_t	f = b_feature[j];

		s->a_feature_b[f] = j;
		if (nb_view_feature_type(a, f) != nb_view_feature_type(b, j))
		{
			about_feature(s, f);
			s->err->type_b = nb_view_feature_type(b, j);
			nb_free(b_feature);
			return refuse(s, NB_SUBTRACT_TYPE);
		}
	}
	nb_free(b_feature);

	for (uint32_t f = 0; f < a->n_features; f++)
	{
		uint32_t	j = s->a_feature_b[f];

		nb_interrupt_count(&work, 1 + (uint64_t) a->n_classes);
		for (uint32_t c = 0; c < a->n_classes; c++)
			if (!subtract_stats(s, f, j, c))
				return false;
		if (nb_feature_type(nb_view_feature_type(a, f))->stats == NB_STATS_MOMENTS &&
			!subtract_overall(s, f, j))
			return false;
	}
	return true;
}

static bool
is_position(const Sub *s, uint32_t f)
{
	return s->a->vector_len != 0 &&
		nb_view_feature_type(s->a, f) == NB_FEATURE_GAUSSIAN &&
		nb_is_position_name(s->rem.name[f], s->rem.name_len[f], s->a->vector_len);
}

/*
 * Which classes and features remain, in output order.  A feature remains
 * while some class has rows with it or it has values.  The positions of
 * float8[] rows remain, present or not (the trainer makes them all for the
 * first such row), while a's float8[] rows do: always if b has none, else
 * while one of the positions has values left.
 */
static void
plan_remaining(Sub *s)
{
	const NbView *a = s->a;
	NbPlan	   *p = s->p;
	bool		vector_left = s->b->vector_len == 0;

	p->C = 0;
	for (uint32_t c = 0; c < a->n_classes; c++)
	{
		s->class_out[c] = NB_NONE;
		if (s->rem.class_docs[c] > 0)
		{
			s->out_class[p->C] = c;
			s->class_out[c] = p->C++;
		}
	}
	for (uint32_t f = 0; f < a->n_features && !vector_left; f++)
		if (is_position(s, f) && s->rem.rows[f] > 0)
			vector_left = true;
	p->vector_len = vector_left ? a->vector_len : 0;
	p->F = 0;
	for (uint32_t f = 0; f < a->n_features; f++)
	{
		bool		left = (is_position(s, f) && vector_left) || s->rem.rows[f] > 0;

		for (uint32_t c = 0; c < a->n_classes && !left; c++)
			left = s->rem.present[(size_t) f * a->n_classes + c] > 0;
		s->feature_out[f] = NB_NONE;
		if (left)
			s->feature_out[f] = p->F++;
	}
}

/* ---------------------------------------------------------------- */
/* items                                                              */

/*
 * An entry of feature f, a's class c, is left with docs documents: false
 * if its class has no documents left or its feature too few rows in that
 * class (beyond rounding: then *docs is set to those rows).
 */
static bool
entry_fits(Sub *s, uint32_t f, uint32_t c, double *docs)
{
	size_t		k = (size_t) f * s->a->n_classes + c;

	return s->class_out[c] != NB_NONE &&
		within(docs, s->rem.present[k], nb_view_present(s->a, f, c));
}

/* Refuse an entry of feature f's item (str, len) in a's class c. */
static bool
refuse_entry(Sub *s, uint32_t f, const char *str, uint32_t len, uint32_t c,
			 NbSubtractStatus status, NbSubtractCount count, double x, double y)
{
	s->err->item = str;
	s->err->item_len = len;
	return refuse_count(s, status, count, f, c, x, y);
}

/*
 * Copy the next r items of a, which b does not have, then check their
 * entries against what remains of their classes and feature (a mismatch
 * is noted, see refuse_count).
 */
static void
copy_checked(Sub *s, uint32_t f, NbCursor *cur, uint32_t r)
{
	const NbView *a = s->a;
	NbRunOut   *o = &s->p->out;
	NbCursor	from = *cur;
	uint64_t	e = o->e;		/* the output entry of a's entry from.entry */

	nb_copy_run(a, s->class_out, s->p->C, cur, r, o);
	for (uint32_t x = 0; x < r; x++)
	{
		uint32_t	ne = nb_view_token_entries(a, from.item);

		for (uint32_t y = 0; y < ne; y++)
		{
			uint32_t	c = nb_view_entry_class(a, from.entry + y);
			/* the run copied a's entries: its documents as a has them */
			double		docs = nb_view_entry_docs(a, from.entry + y);

			if (entry_fits(s, f, c, &docs))
				nb_write_f64(o->entry_docs, e + y, docs);
			else
				(void) refuse_entry(s, f, a->tokens + from.off,
									nb_view_token_len(a, from.item), c,
									NB_SUBTRACT_MISMATCH, NB_COUNT_ITEM_DOCUMENTS,
									nb_view_entry_docs(a, from.entry + y), 0);
		}
		e += ne;
		nb_cursor_advance(a, &from);
	}
}

/*
 * The current items of a and b, the same item of feature f: b's entries
 * subtracted from a's class by class; entries whose count or documents
 * reach zero disappear, and the item with its last entry.
 */
static bool
subtract_item(Sub *s, uint32_t f, NbCursor *ca, NbCursor *cb)
{
	const NbView *a = s->a;
	const NbView *b = s->b;
	NbRunOut   *o = &s->p->out;
	uint32_t	len = nb_view_token_len(a, ca->item);
	const char *str = a->tokens + ca->off;
	uint32_t	na = nb_view_token_entries(a, ca->item);
	uint32_t	nb = nb_view_token_entries(b, cb->item);
	uint32_t	y = 0;
	uint32_t	written = 0;

	for (uint32_t x = 0; x < na; x++)
	{
		uint64_t	ea = ca->entry + x;
		uint32_t	c = nb_view_entry_class(a, ea);
		double		count = nb_view_entry_count(a, ea);
		double		docs = nb_view_entry_docs(a, ea);

		/* b's classes, mapped to a's, are increasing too */
		if (y < nb && s->b_class[nb_view_entry_class(b, cb->entry + y)] < c)
			break;
		if (y < nb && s->b_class[nb_view_entry_class(b, cb->entry + y)] == c)
		{
			double		bc = nb_view_entry_count(b, cb->entry + y);
			double		bd = nb_view_entry_docs(b, cb->entry + y);

			if (!sub_count(count, bc, &count))
				return refuse_entry(s, f, str, len, c, NB_SUBTRACT_NEGATIVE,
									NB_COUNT_OCCURRENCES, nb_view_entry_count(a, ea), bc);
			if (!sub_count(docs, bd, &docs))
				return refuse_entry(s, f, str, len, c, NB_SUBTRACT_NEGATIVE,
									NB_COUNT_ITEM_DOCUMENTS, nb_view_entry_docs(a, ea), bd);
			y++;
			if (count == 0 || docs == 0)
				continue;
		}
		if (!entry_fits(s, f, c, &docs))
		{
			(void) refuse_entry(s, f, str, len, c, NB_SUBTRACT_MISMATCH,
								NB_COUNT_ITEM_DOCUMENTS, nb_view_entry_docs(a, ea), 0);
			continue;
		}
		nb_write_u32(o->entry_class, o->e + written, s->class_out[c]);
		nb_write_f64(o->entry_count, o->e + written, count);
		nb_write_f64(o->entry_docs, o->e + written, docs);
		written++;
	}
	if (y < nb)
	{
		/* an entry of b in a class in which a does not have the item */
		uint32_t	c = s->b_class[nb_view_entry_class(b, cb->entry + y)];

		return refuse_entry(s, f, str, len, c, NB_SUBTRACT_NO_ITEM, NB_COUNT_OCCURRENCES, 0,
							nb_view_entry_count(b, cb->entry + y));
	}
	if (written > 0)
	{
		nb_write_u32(o->token_len, o->k, len);
		nb_write_u32(o->token_entries, o->k, written);
		memcpy(o->tokens, str, len);
		o->tokens += len;
		o->k++;
		o->e += written;
	}
	nb_cursor_advance(a, ca);
	nb_cursor_advance(b, cb);
	nb_interrupt_count(&o->work, 1 + (uint64_t) na + nb);
	return true;
}

/* The items of every feature of a, b's taken out, into the plan's out. */
static bool
subtract_items(Sub *s)
{
	const NbView *a = s->a;
	const NbView *b = s->b;
	NbRunOut   *o = &s->p->out;
	NbCursor	ca = {0, 0, 0};
	NbCursor	cb = {0, 0, 0};

	nb_run_out_alloc(o, a->n_tokens, a->n_entries, a->size);
	for (uint32_t f = 0; f < a->n_features; f++)
	{
		uint32_t	j = s->a_feature_b[f];
		uint32_t	end_a = ca.item + nb_view_feature_items(a, f);
		uint32_t	end_b = cb.item + (j == NB_NONE ? 0 : nb_view_feature_items(b, j));
		uint64_t	before = o->k;

		while (ca.item < end_a && cb.item < end_b)
		{
			NbHead		ha;
			NbHead		hb;
			int			c;

			nb_head_set(&ha, a, 0, ca.item, ca.off);
			nb_head_set(&hb, b, 1, cb.item, cb.off);
			c = nb_head_cmp(&ha, &hb);
			if (c > 0)
				break;
			if (c < 0)
				copy_checked(s, f, &ca, nb_run_end(a, &ca, end_a, &hb) - ca.item);
			else if (!subtract_item(s, f, &ca, &cb))
				return false;
		}
		if (cb.item < end_b)
		{
			/* b's current item is not among a's */
			about_feature(s, f);
			s->err->item = b->tokens + cb.off;
			s->err->item_len = nb_view_token_len(b, cb.item);
			return refuse(s, NB_SUBTRACT_NO_ITEM);
		}
		if (ca.item < end_a)
			copy_checked(s, f, &ca, end_a - ca.item);
		if (s->feature_out[f] != NB_NONE)
			s->p->items[s->feature_out[f]] = (uint32_t) (o->k - before);
		else if (o->k != before)
		{
			/* items left of a feature without rows: entry_fits refuses that first */
			return refuse_count(s, NB_SUBTRACT_MISMATCH, NB_COUNT_ROWS, f, NB_NONE, 0, 0);
		}
	}
	s->p->V = o->k;
	s->p->E = o->e;
	s->p->token_bytes = (size_t) (o->tokens - o->tokens_start);
	return true;
}

/* ---------------------------------------------------------------- */
/* document lengths                                                   */

/*
 * The remaining document length histograms, if the result keeps them: it
 * has a bag, and neither a nor b has bags without lengths.  Walks a's and
 * b's runs of each (feature, class) side by side, in a's order, which is
 * the output's; a bin that reaches zero is dropped, one that remains must
 * belong to a remaining class and feature and fit in its rows.
 */
static bool
subtract_lengths(Sub *s)
{
	const NbView *a = s->a;
	const NbView *b = s->b;
	NbPlan	   *p = s->p;
	bool		bag = false;
	uint64_t   *b_start;
	uint64_t	ha = 0;
	uint64_t	work = 0;

	for (uint32_t f = 0; f < a->n_features; f++)
		if (s->feature_out[f] != NB_NONE && nb_view_feature_type(a, f) == NB_FEATURE_BAG)
			bag = true;
	if (!bag || !nb_view_has_lengths(a) || (!nb_view_has_lengths(b) && nb_view_has_bag(b)))
		return true;
	nb_plan_alloc_lengths(p, a->n_lengths);
	b_start = nb_length_starts(b);
	for (uint32_t f = 0; f < a->n_features; f++)
		for (uint32_t c = 0; c < a->n_classes; c++)
		{
			uint32_t	j = s->a_feature_b[f];
			uint32_t	cb = s->a_class_b[c];
			uint64_t	a_end = ha + nb_view_length_pairs(a, f, c);
			uint64_t	hb = 0;
			uint64_t	b_end = 0;
			size_t		k = (size_t) f * a->n_classes + c;
			uint64_t	first = p->H;

			nb_interrupt_count(&work, 1 + (a_end - ha));
			if (j != NB_NONE && cb != NB_NONE)
			{
				hb = b_start[(uint64_t) j * b->n_classes + cb];
				b_end = b_start[(uint64_t) j * b->n_classes + cb + 1];
			}
			while (ha < a_end || hb < b_end)
			{
				double		la = ha < a_end ? nb_view_length_value(a, ha) : INFINITY;
				double		lb = hb < b_end ? nb_view_length_value(b, hb) : INFINITY;
				double		wa = la <= lb ? nb_view_length_weight(a, ha) : 0;
				double		wb = lb <= la ? nb_view_length_weight(b, hb) : 0;
				double		length = la <= lb ? la : lb;
				double		r;

				ha += la <= lb;
				hb += lb <= la;
				if (!sub_count(wa, wb, &r))
				{
					s->err->length = length;
					if (!refuse_count(s, NB_SUBTRACT_NEGATIVE, NB_COUNT_LENGTH_ROWS, f, c, wa, wb))
						goto done;
					continue;
				}
				if (r == 0)
					continue;
				if (s->feature_out[f] == NB_NONE || s->class_out[c] == NB_NONE ||
					!within(&r, s->rem.present[k], nb_view_present(a, f, c)))
				{
					s->err->length = length;
					if (!refuse_count(s, NB_SUBTRACT_MISMATCH, NB_COUNT_LENGTH_ROWS, f, c, wa, wb))
						goto done;
					continue;
				}
				p->length_value[p->H] = length;
				p->length_weight[p->H] = r;
				p->H++;
			}
			if (s->feature_out[f] != NB_NONE && s->class_out[c] != NB_NONE)
				p->length_pairs[(size_t) s->feature_out[f] * p->C + s->class_out[c]] =
					(uint32_t) (p->H - first);
		}
	nb_free(b_start);
	return true;
done:
	nb_free(b_start);
	return false;
}

/* ---------------------------------------------------------------- */
/* the plan                                                           */

/* The remaining classes' and features' strings and statistics, in output order. */
static void
fill_plan(Sub *s)
{
	const NbView *a = s->a;
	NbPlan	   *p = s->p;

	p->label_bytes = 0;
	for (uint32_t k = 0; k < p->C; k++)
	{
		uint32_t	c = s->out_class[k];

		p->label[k] = s->rem.label[c];
		p->label_len[k] = s->rem.label_len[c];
		p->class_docs[k] = s->rem.class_docs[c];
		p->label_bytes += s->rem.label_len[c];
	}
	p->name_bytes = 0;
	for (uint32_t f = 0; f < a->n_features; f++)
	{
		uint32_t	g = s->feature_out[f];

		if (g == NB_NONE)
			continue;
		p->name[g] = s->rem.name[f];
		p->name_len[g] = s->rem.name_len[f];
		p->name_bytes += s->rem.name_len[f];
		p->type[g] = (uint32_t) nb_view_feature_type(a, f);
		p->rows[g] = s->rem.rows[f];
		p->mean[g] = s->rem.mean[f];
		p->m2[g] = s->rem.m2[f];
		for (uint32_t k = 0; k < p->C; k++)
		{
			size_t		from = (size_t) f * a->n_classes + s->out_class[k];
			size_t		to = (size_t) g * p->C + k;

			p->present[to] = s->rem.present[from];
			p->fa[to] = s->rem.fa[from];
			p->fb[to] = s->rem.fb[from];
		}
	}
	p->text_only = nb_plan_is_text_only(p);
	p->settings = s->a->settings;
	p->settings.null_labels -= s->b->settings.null_labels;
	/* what remains of rows that all had a NULL label is their count, at most with a tokenizer (nb_format.h) */
	if (p->C == 0)
	{
		p->settings.options = NULL;
		p->settings.options_len = 0;
		p->settings.jsonb_bag = false;
		p->settings.components = false;
	}
}

static void
sub_free(Sub *s)
{
	nb_plan_free(&s->rem);
	nb_free(s->b_class);
	nb_free(s->a_class_b);
	nb_free(s->class_out);
	nb_free(s->out_class);
	nb_free(s->a_feature_b);
	nb_free(s->feature_out);
}

NbPlan *
nb_subtract_plan(const NbView *a, const NbView *b, NbSubtractError *err)
{
	NbPlan	   *result;
	size_t		Ca = a->n_classes;
	size_t		Fa = a->n_features;
	Sub			s;
	bool		ok;

	memset(err, 0, sizeof(*err));
	err->inputs_a = nb_view_input_kinds(a);
	err->inputs_b = nb_view_input_kinds(b);
	/* a model of no class holds a count alone, no settings to agree on */
	if (a->n_classes > 0 && b->n_classes > 0)
		err->compat = nb_compat_check(err->inputs_a, &a->settings, err->inputs_b, &b->settings);
	if (err->compat != NB_COMPAT_OK)
	{
		err->status = NB_SUBTRACT_COMPAT;
		return NULL;
	}
	if (b->vector_len != 0 && b->vector_len != a->vector_len)
	{
		err->status = NB_SUBTRACT_VECTOR;
		err->vector_a = a->vector_len;
		err->vector_b = b->vector_len;
		return NULL;
	}
	if (b->settings.null_labels > a->settings.null_labels)
	{
		err->status = NB_SUBTRACT_NEGATIVE;
		err->count = NB_COUNT_NULL_LABELS;
		err->minuend = (double) a->settings.null_labels;
		err->subtrahend = (double) b->settings.null_labels;
		return NULL;
	}
	result = nb_alloc_zero(sizeof(NbPlan));
	memset(&s, 0, sizeof(s));
	s.a = a;
	s.b = b;
	s.err = err;
	s.p = result;
	s.rem.C = a->n_classes;
	s.rem.F = a->n_features;
	nb_plan_alloc_classes(&s.rem, Ca);
	nb_plan_alloc_features(&s.rem, Fa);
	nb_plan_alloc_stats(&s.rem);
	s.b_class = nb_alloc(sizeof(uint32_t) * ((size_t) b->n_classes + 1));
	s.a_class_b = nb_alloc(sizeof(uint32_t) * (Ca + 1));
	s.class_out = nb_alloc(sizeof(uint32_t) * (Ca + 1));
	s.out_class = nb_alloc(sizeof(uint32_t) * (Ca + 1));
	s.a_feature_b = nb_alloc(sizeof(uint32_t) * (Fa + 1));
	s.feature_out = nb_alloc(sizeof(uint32_t) * (Fa + 1));

	ok = subtract_classes(&s) && subtract_features(&s);
	if (ok)
	{
		plan_remaining(&s);
		nb_plan_alloc_classes(s.p, s.p->C);
		nb_plan_alloc_features(s.p, s.p->F);
		nb_plan_alloc_stats(s.p);
		ok = subtract_items(&s) && subtract_lengths(&s);
		if (ok && s.mismatch.status != NB_SUBTRACT_OK)
		{
			*err = s.mismatch;
			ok = false;
		}
		if (ok)
			fill_plan(&s);
		else
			nb_plan_free(s.p);
	}
	sub_free(&s);
	if (!ok)
	{
		nb_free(result);
		return NULL;
	}
	return result;
}
