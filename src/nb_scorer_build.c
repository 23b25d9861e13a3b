/*
 * nb_scorer_build.c — a scorer made from a model: the event models'
 * smoothed terms, per class and per entry (scoring is nb_scorer.c).
 *
 * The event models' formulas and their notation are in src/README.md
 * (Formulas); a, b1, b0 are the pseudo-counts of the options' estimator
 * (nb_options_pseudo: alpha and beta for the posterior mean, one less for
 * the mode).
 *
 * Every sum over the vocabulary is split into a per-class constant and a
 * correction for the (token, class) entries of the document's tokens.
 * These are per bag feature: with several bags (jsonb arrays under
 * different keys) V, T_c, D_c (rows with the bag) are the bag's own.
 *
 * A feature missing from the document (or from every training row of a
 * class, for the counts) contributes nothing but its smoothed estimate.
 */
#include "nb_scorer_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_dcm.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_port.h"

/* A logarithm as a pair (f, z) meaning f + z log(eps), see nb_scorer.h. */
typedef struct LogFactor
{
	double		f;
	double		z;
} LogFactor;

/*
 * log(c + s) for a count c >= 0 and the sum s >= 0 of the pseudo-counts
 * added to it, of which nzero are 0.  A pseudo-count of 0 is taken as the
 * limit eps -> 0+ (the same eps for all): when c + s > 0 that is an
 * ordinary logarithm, else log nzero + log eps (one zero factor, scaled by
 * nzero: e.g. a class without tokens has multinomial denominator
 * T_c + alpha V = alpha V when alpha = 0).  Negative c can only come from
 * rounding and counts as 0.
 */
static inline LogFactor
smoothed_sum(double c, double s, double nzero)
{
	LogFactor	r = {0, 1};
	double		v;

	if (c < 0)
		c = 0;
	v = c + s;
	if (v > 0)
	{
		r.f = log(v);
		r.z = 0;
	}
	else if (nzero > 0)
		r.f = log(nzero);
	/* else an empty vocabulary: never multiplied by a count > 0 */
	return r;
}

/* log(c + k alpha): k pseudo-counts alpha (k >= 0). */
static inline LogFactor
smoothed(double c, double k, double alpha)
{
	return alpha > 0 ? smoothed_sum(c, k * alpha, 0) : smoothed_sum(c, 0, k);
}

/*
 * smoothed_sum's log(c + s) for the whole counts below LOG_MEMO_SIZE, once
 * per build instead of once per entry: most (token, class) counts are a
 * few units, and the logarithm was most of the cost of preparing a model.
 * The same expression, so the same values to the bit.  Only for s > 0,
 * where every c >= 0 has an ordinary logarithm.
 */
#define LOG_MEMO_SIZE 128

typedef struct LogMemo
{
	double		s;
	double		f[LOG_MEMO_SIZE];
} LogMemo;

static void
log_memo_init(LogMemo *memo, double s)
{
	memo->s = s;
	if (s > 0)
		for (uint32_t k = 0; k < LOG_MEMO_SIZE; k++)
			memo->f[k] = log((double) k + s);
}

/* smoothed_sum(c, memo->s, nzero) */
static inline LogFactor
memo_smoothed_sum(const LogMemo *memo, double c, double nzero)
{
	if (memo->s > 0 && c >= 0 && c < LOG_MEMO_SIZE && c == (double) (uint32_t) c)
	{
		LogFactor	r = {memo->f[(uint32_t) c], 0};

		return r;
	}
	return smoothed_sum(c, memo->s, nzero);
}

/* smoothed(c, 1, alpha) from a memo of s = alpha */
static inline LogFactor
memo_smoothed(const LogMemo *memo, double c, double alpha)
{
	return alpha > 0 ? memo_smoothed_sum(memo, c, 0) : smoothed_sum(c, 0, 1);
}

/*
 * Where the term of entry e (of item k) goes: its class's place in the
 * item's row, or the entry.  The rows are made first and filled in place,
 * so that the entries are never held beside them.
 */
static inline double *
entry_term(NbScorer *sc, uint32_t k, uint64_t e)
{
	if (sc->rows != NULL)
		return (double *) nb_row_terms(sc->rows, sc->row_size, sc->index->item_place[k]) +
			nb_index_entry_class(sc->index, e);
	return &sc->entry[e].f;
}

/*
 * Entry e's zero factors (e of item k).  Most scorers have none (only a
 * pseudo-count of 0 makes them): entry_z or row_z is made at the first
 * entry with some, so that a scorer without any never holds 8 bytes per
 * entry of zeros, and scoring skips z.
 */
static inline void
set_entry_z(NbScorer *sc, uint32_t k, uint64_t e, double z)
{
	const NbIndex *ix = sc->index;

	if (z == 0)
		return;
	if (sc->rows != NULL)
	{
		if (sc->row_z == NULL)
			sc->row_z = nb_alloc_zero(sizeof(double) * ((uint64_t) ix->n_tokens * ix->n_classes + 1));
		sc->row_z[(uint64_t) ix->item_place[k] * ix->n_classes + nb_index_entry_class(ix, e)] = z;
		return;
	}
	if (sc->entry_z == NULL)
		sc->entry_z = nb_alloc_zero(sizeof(double) * (ix->n_entries + 1));
	sc->entry_z[e] = z;
}

/*
 * The Bernoulli estimate t = (d + b1) / (D_c + b1 + b0) of Murphy eq. 3.67,
 * with the pseudo-counts b1 = pc->present and b0 = pc->absent of the
 * estimator (posterior mean or mode).  Its denominator:
 */
static LogFactor
log_bernoulli_den(double Dc, const NbPseudoCounts *pc)
{
	return smoothed_sum(Dc, pc->present + pc->absent, (pc->present == 0) + (pc->absent == 0));
}

/* log t, with den = log_bernoulli_den(D_c) and a memo of s = b1 or NULL */
static LogFactor
log_present(double d, LogFactor den, const NbPseudoCounts *pc, const LogMemo *memo)
{
	LogFactor	num = memo != NULL ? memo_smoothed_sum(memo, d, pc->present == 0) :
		smoothed_sum(d, pc->present, pc->present == 0);
	LogFactor	r = {num.f - den.f, num.z - den.z};

	return r;
}

/*
 * log(1 - t), with den = log_bernoulli_den(D_c).  Summed over the whole
 * vocabulary, so it must be accurate in absolute terms when t is small:
 * log1p(-t) there, instead of the difference of two large logarithms.
 */
static LogFactor
log_absent(double d, double Dc, LogFactor den, const NbPseudoCounts *pc)
{
	double		c = Dc - d;
	double		t = (d + pc->present) / (Dc + (pc->present + pc->absent));
	LogFactor	num;
	LogFactor	r;

	/* the numerator's logarithm is ordinary (smoothed_sum's test): not needed */
	if ((c < 0 ? 0 : c) + pc->absent > 0 && den.z == 0 && t < 0.5)
	{
		r.f = log1p(-t);
		r.z = 0;
		return r;
	}
	num = smoothed_sum(c, pc->absent, pc->absent == 0);
	r.f = num.f - den.f;
	r.z = num.z - den.z;
	return r;
}

/*
 * A label's prior (uniform or given) shared among its mixture components
 * as their documents are: log(D_c / D_k) added to component c of label k.
 */
static void
share_label_prior(NbScorer *sc, const NbIndex *ix)
{
	for (uint32_t k = 0; k < ix->n_labels; k++)
	{
		double		docs = 0;

		for (uint32_t c = ix->label_first[k]; c < ix->label_first[k + 1]; c++)
			docs += ix->class_docs[c];
		for (uint32_t c = ix->label_first[k]; c < ix->label_first[k + 1]; c++)
			sc->prior_f[c] += log(ix->class_docs[c]) - log(docs);
	}
}

/*
 * Log prior per class into prior_f; marks classes whose prior is exactly 0.
 * Uniform and given priors are the labels' (nb_index.h), shared among a
 * label's mixture components.
 * The fitted prior is (D_c + a) / (D + C a) with a the class_alpha
 * pseudo-count (Murphy eq. 3.68; its mode under map, Freda's MAP slide).
 */
static void
set_prior(NbScorer *sc, const NbIndex *ix, const NbOptions *o, double a)
{
	uint32_t	C = ix->n_classes;
	uint32_t	K = ix->n_labels;
	double		sum = 0;

	for (uint32_t c = 0; c < C; c++)
	{
		nb_interrupt_at(c);
		switch (o->prior_mode)
		{
			case NB_PRIOR_FIT:
				sc->prior_f[c] = log(ix->class_docs[c] + a) - log(ix->total_docs + C * a);
				break;
			case NB_PRIOR_UNIFORM:
				sc->prior_f[c] = -log((double) K);
				break;
			case NB_PRIOR_GIVEN:
				break;
		}
	}
	if (o->prior_mode == NB_PRIOR_GIVEN)
	{
		for (uint32_t k = 0; k < K; k++)
			sum += o->class_prior[k];
		for (uint32_t c = 0; c < C; c++)
		{
			uint32_t	k = nb_index_label(ix, c);

			if (o->class_prior[k] > 0)
				sc->prior_f[c] = log(o->class_prior[k]) - log(sum);
			else
				sc->excluded[c] = true;
		}
	}
	if (ix->label_first != NULL && o->prior_mode != NB_PRIOR_FIT)
		share_label_prior(sc, ix);
}

static inline void
set_factor(double *f, double *z, uint64_t i, LogFactor v)
{
	f[i] = v.f;
	z[i] = v.z;
}

/*
 * The part of item k's term that every class shares (nb_scorer_item_shared):
 * multinomial and categorical log alpha, the numerator of a class without
 * the item; complement -log(F_j + a), the denominator of a class without it.
 * memo, if not NULL, is of s = a.
 */
static LogFactor
item_shared(const NbIndex *ix, NbKind kind, uint32_t j, uint32_t k, double a, const LogMemo *memo)
{
	LogFactor	zero = {0, 0};

	if (ix->feature_type[j] == NB_FEATURE_CATEGORICAL || kind == NB_MULTINOMIAL)
		return smoothed(0, 1, a);
	if (kind == NB_COMPLEMENT)
	{
		double		total = nb_index_token_total(ix, k);
		LogFactor	none = memo != NULL ? memo_smoothed(memo, total, a) : smoothed(total, 1, a);
		LogFactor	r = {-none.f, -none.z};

		return r;
	}
	return zero;
}

/* Multinomial terms, also those of a categorical feature (K_j values). */
static void
build_multinomial(NbScorer *sc, const NbIndex *ix, uint32_t j, uint32_t first_item, double a)
{
	uint32_t	C = ix->n_classes;
	double		V = (double) ix->feature_items[j];
	LogFactor	la = item_shared(ix, NB_MULTINOMIAL, j, first_item, a, NULL);
	LogMemo		memo;

	log_memo_init(&memo, a);
	for (uint32_t c = 0; c < C; c++)
	{
		LogFactor	d = smoothed(ix->feature_tokens[(uint64_t) j * C + c], V, a);
		LogFactor	occ = {-d.f, -d.z};

		set_factor(sc->occ_f, sc->occ_z, (uint64_t) j * C + c, occ);
	}
	for (uint32_t k = first_item; k < first_item + ix->feature_items[j]; k++)
		for (uint64_t e = ix->token_start[k]; e < ix->token_start[k + 1]; e++)
		{
			LogFactor	num = memo_smoothed(&memo, nb_index_entry_count(ix, e), a);

			nb_interrupt_at(e);
			*entry_term(sc, k, e) = num.f - la.f;
			set_entry_z(sc, k, e, num.z - la.z);
		}
}

static void
build_bernoulli(NbScorer *sc, const NbIndex *ix, uint32_t j, uint32_t first_item,
				const NbPseudoCounts *pc)
{
	uint32_t	C = ix->n_classes;
	uint64_t	jc = (uint64_t) j * C;
	double		V = (double) ix->feature_items[j];
	/* entries per class, for the absent-token sum over the vocabulary */
	double	   *nnz = nb_alloc_zero(sizeof(double) * C);
	double	   *comp = nb_alloc_zero(sizeof(double) * C);
	LogFactor  *den = nb_alloc(sizeof(LogFactor) * C);
	LogMemo		memo;

	log_memo_init(&memo, pc->present);
	/* a token without entry: log t0 - log(1 - t0), t0 = a / (D_c + 2a) */
	for (uint32_t c = 0; c < C; c++)
	{
		LogFactor	present0,
					absent0;

		den[c] = log_bernoulli_den(nb_index_present(ix, jc + c), pc);
		present0 = log_present(0, den[c], pc, &memo);
		absent0 = log_absent(0, nb_index_present(ix, jc + c), den[c], pc);
		sc->dist_f[jc + c] = present0.f - absent0.f;
		sc->dist_z[jc + c] = present0.z - absent0.z;
	}
	for (uint32_t k = first_item; k < first_item + ix->feature_items[j]; k++)
		for (uint64_t e = ix->token_start[k]; e < ix->token_start[k + 1]; e++)
		{
			uint32_t	c = nb_index_entry_class(ix, e);
			double		Dc = nb_index_present(ix, jc + c);
			LogFactor	absent = log_absent(nb_index_entry_docs(ix, e), Dc, den[c], pc);
			LogFactor	present = log_present(nb_index_entry_docs(ix, e), den[c], pc, &memo);

			nb_interrupt_at(e);
			nnz[c] += 1;
			nb_add_compensated(&sc->base_f[jc + c], &comp[c], absent.f);
			sc->base_z[jc + c] += absent.z;
			*entry_term(sc, k, e) = (present.f - absent.f) - sc->dist_f[jc + c];
			set_entry_z(sc, k, e, (present.z - absent.z) - sc->dist_z[jc + c]);
		}
	for (uint32_t c = 0; c < C; c++)
	{
		LogFactor	absent0 = log_absent(0, nb_index_present(ix, jc + c), den[c], pc);

		nb_add_compensated(&sc->base_f[jc + c], &comp[c], (V - nnz[c]) * absent0.f);
		sc->base_f[jc + c] += comp[c];
		sc->base_z[jc + c] += (V - nnz[c]) * absent0.z;
	}
	nb_free(nnz);
	nb_free(comp);
	nb_free(den);
}

static void
build_complement(NbScorer *sc, const NbIndex *ix, uint32_t j, uint32_t first_item, double a)
{
	uint32_t	C = ix->n_classes;
	double		V = (double) ix->feature_items[j];
	uint64_t	work = 0;
	LogMemo		memo;

	log_memo_init(&memo, a);
	for (uint32_t c = 0; c < C; c++)
	{
		uint64_t	i = (uint64_t) j * C + c;

		set_factor(sc->occ_f, sc->occ_z, i,
				   smoothed(ix->feature_total[j] - ix->feature_tokens[i], V, a));
	}
	for (uint32_t k = first_item; k < first_item + ix->feature_items[j]; k++)
	{
		LogFactor	shared = item_shared(ix, NB_COMPLEMENT, j, k, a, &memo);
		double		total = nb_index_token_total(ix, k);

		nb_interrupt_count(&work, 1 + (ix->token_start[k + 1] - ix->token_start[k]));
		for (uint64_t e = ix->token_start[k]; e < ix->token_start[k + 1]; e++)
		{
			LogFactor	comp = memo_smoothed(&memo, total - nb_index_entry_count(ix, e), a);

			*entry_term(sc, k, e) = -comp.f - shared.f;
			set_entry_z(sc, k, e, -comp.z - shared.z);
		}
	}
}

/*
 * Rennie et al.'s weight normalization (scikit-learn's ComplementNB with
 * norm=True) of the complement weights build_complement made, for a > 0:
 * w_kc = L_c - log(F_k + a - N_kc), L_c = log(T + aV - T_c), becomes
 * w_kc / S_c with S_c = sum over the vocabulary of w_kc (> 0 unless V = 1,
 * where every weight is 0 and stays so).  Kept as the per-class constant
 * L_c / S_c, the entries divided by S_c, and the product
 * -log(F_k + a) / S_c (norm_u, norm_scale), which no longer cancels.
 */
static void
normalize_complement(NbScorer *sc, const NbIndex *ix, uint32_t j, uint32_t first_item, double a)
{
	uint32_t	C = ix->n_classes;
	uint64_t	jc = (uint64_t) j * C;
	double		V = (double) ix->feature_items[j];
	double	   *sum = nb_alloc_zero(sizeof(double) * C);
	double	   *comp = nb_alloc_zero(sizeof(double) * C);
	double		u_sum = 0;
	double		u_comp = 0;

	for (uint32_t k = first_item; k < first_item + ix->feature_items[j]; k++)
	{
		nb_interrupt_at(k);
		sc->norm_u[k] = log(nb_index_token_total(ix, k) + a);
		nb_add_compensated(&u_sum, &u_comp, sc->norm_u[k]);
	}
	for (uint32_t k = first_item; k < first_item + ix->feature_items[j]; k++)
		for (uint64_t e = ix->token_start[k]; e < ix->token_start[k + 1]; e++)
		{
			uint32_t	c = nb_index_entry_class(ix, e);

			nb_interrupt_at(e);
			nb_add_compensated(&sum[c], &comp[c], *entry_term(sc, k, e));
		}
	for (uint32_t c = 0; c < C; c++)
	{
		/* S_c = V L_c - sum_k log(F_k + a) + the entries of c */
		double		norm = V * sc->occ_f[jc + c] - (u_sum + u_comp) + (sum[c] + comp[c]);

		sum[c] = norm > 0 ? 1 / norm : 0;
		sc->occ_f[jc + c] *= sum[c];
		sc->norm_scale[jc + c] = -sum[c];
	}
	for (uint32_t k = first_item; k < first_item + ix->feature_items[j]; k++)
		for (uint64_t e = ix->token_start[k]; e < ix->token_start[k + 1]; e++)
		{
			nb_interrupt_at(e);
			*entry_term(sc, k, e) *= sum[nb_index_entry_class(ix, e)];
		}
	nb_free(sum);
	nb_free(comp);
}

/*
 * DCM terms of bag j (nb_dcm.h), with a the pseudo document count: per
 * class, the EDCM fit of s from the documents per token d_jc and the
 * length histogram; beta = d_jc / Z for a token the class saw, beta0 =
 * a / Z for the others, s their sum over the bag's vocabulary.  A class
 * without a document of positive length has beta = a for every token.
 */
static void
build_dcm(NbScorer *sc, const NbIndex *ix, uint32_t j, uint32_t first_item, double a)
{
	uint32_t	C = ix->n_classes;
	uint64_t	jc = (uint64_t) j * C;
	double		V = (double) ix->feature_items[j];
	double	   *D = nb_alloc_zero(sizeof(double) * C);
	double	   *seen = nb_alloc_zero(sizeof(double) * C);
	uint64_t	work = 0;

	for (uint32_t k = first_item; k < first_item + ix->feature_items[j]; k++)
		for (uint64_t e = ix->token_start[k]; e < ix->token_start[k + 1]; e++)
		{
			uint32_t	c = nb_index_entry_class(ix, e);

			nb_interrupt_at(e);
			D[c] += nb_index_entry_docs(ix, e);
			seen[c] += 1;
			*entry_term(sc, k, e) = log(nb_index_entry_docs(ix, e)) - log(a);
		}
	for (uint32_t c = 0; c < C; c++)
	{
		uint64_t	from = ix->length_start[jc + c];
		uint64_t	n = ix->length_start[jc + c + 1] - from;
		NbDcmFit	fit = nb_dcm_fit(D[c], ix->length_value + from, ix->length_weight + from, n);

		/* a fit's every step is a digamma and a trigamma per length: some units each */
		nb_interrupt_count(&work, NB_DCM_STEP_UNITS * (uint64_t) (fit.iterations + 1) * (n + 1));
		if (fit.z > 0)
		{
			sc->dist_f[jc + c] = log(a) - log(fit.z);
			sc->dcm_s[jc + c] = (D[c] + a * (V - seen[c])) / fit.z;
		}
		else
		{
			sc->dist_f[jc + c] = log(a);
			sc->dcm_s[jc + c] = a * V;
		}
	}
	nb_free(D);
	nb_free(seen);
}

static void
build_boolean(NbScorer *sc, const NbIndex *ix, uint32_t j, const NbPseudoCounts *pc)
{
	for (uint32_t c = 0; c < ix->n_classes; c++)
	{
		uint64_t	i = (uint64_t) j * ix->n_classes + c;
		LogFactor	den = log_bernoulli_den(nb_index_present(ix, i), pc);

		set_factor(sc->occ_f, sc->occ_z, i, log_present(nb_index_stat_a(ix, i), den, pc, NULL));
		set_factor(sc->dist_f, sc->dist_z, i, log_absent(nb_index_stat_a(ix, i), nb_index_present(ix, i), den, pc));
	}
}

/*
 * The variance floor: var_smoothing times the largest variance (over the
 * rows that have it, each counted once whatever its weight, as in
 * scikit-learn) of any Gaussian feature.
 */
static double
variance_floor(const NbIndex *ix, double var_smoothing)
{
	double		largest = 0;

	for (uint32_t j = 0; j < ix->n_features; j++)
		if (ix->feature_type[j] == NB_FEATURE_GAUSSIAN && ix->feature_rows[j] > 0)
		{
			double		v = ix->feature_m2[j] / ix->feature_rows[j];

			if (v > largest)
				largest = v;
		}
	return var_smoothing * largest;
}

/*
 * Per class mean and variance.  A class without a value of the feature
 * uses the statistics of all classes together; if all variances are 0
 * (every Gaussian feature constant) the value is scored with variance 1,
 * which makes the feature the same for every class.
 */
static void
build_gaussian(NbScorer *sc, const NbIndex *ix, uint32_t j, double floor)
{
	uint32_t	C = ix->n_classes;
	uint64_t	jc = (uint64_t) j * C;
	double		n = 0;
	double		mean = 0;
	double		m2 = 0;

	for (uint32_t c = 0; c < C; c++)
	{
		double		w = nb_index_present(ix, jc + c);
		double		delta = nb_index_stat_a(ix, jc + c) - mean;

		if (w == 0)
			continue;
		mean += delta * (w / (n + w));
		m2 += nb_index_stat_b(ix, jc + c) + delta * delta * (n * w / (n + w));
		n += w;
	}
	sc->usable[j] = n > 0;
	for (uint32_t c = 0; c < C; c++)
	{
		double		w = nb_index_present(ix, jc + c);
		double		var;

		if (w > 0)
		{
			sc->mean[jc + c] = nb_index_stat_a(ix, jc + c);
			var = nb_index_stat_b(ix, jc + c) / w + floor;
		}
		else
		{
			sc->mean[jc + c] = mean;
			var = (n > 0 ? m2 / n : 0) + floor;
		}
		if (!(var > 0))
			var = 1;
		else if (!isfinite(var))
			var = DBL_MAX;
		sc->var[jc + c] = var;
		sc->base_f[jc + c] = -0.5 * log(2 * NB_PI * var);
	}
}

/*
 * The rows (see rows in nb_scorer.h), their terms 0 (a class without an
 * entry) until the entries' terms are written in place (entry_term).
 */
static void
make_rows(NbScorer *sc, const NbIndex *ix)
{
	size_t		size = nb_row_size(ix->n_classes);

	sc->row_size = (uint32_t) size;
	sc->rows_block = nb_alloc_zero(size * ((uint64_t) ix->n_tokens + 1));
	sc->rows = (char *) (((uintptr_t) sc->rows_block + size - 1) & ~(uintptr_t) (size - 1));
	/* item by item: the values in order, the rows (at random) each on its own */
	for (uint32_t k = 0; k < ix->n_tokens; k++)
	{
		NbRowKey   *key = (NbRowKey *) nb_row_key(sc->rows, size, ix->item_place[k]);
		uint32_t	len;
		const char *str = nb_index_item(ix, k, &len);

		nb_interrupt_at(k);
		key->head = nb_row_head(str, len);
		key->len = len;
		key->item = k;
	}
}

/* The options' calibration, its sigmoids copied (the options' are the caller's). */
static void
set_calibration(NbScorer *sc, const NbOptions *o, uint32_t C)
{
	sc->calibration = o->calibration;
	sc->cal_scratch = NULL;
	if (o->calibration.sigmoid != NULL)
	{
		double	   *ab = nb_alloc(sizeof(double) * 2 * C);

		nb_copy(ab, o->calibration.sigmoid, sizeof(double) * 2 * C);
		sc->calibration.sigmoid = ab;
		sc->cal_scratch = nb_alloc(sizeof(double) * C);
	}
}

/*
 * The tables per (feature, class) the scorers of a model need: base_f for
 * every feature; base_z and the terms per occurrence and per distinct item
 * (occ, dist) for the count terms of bag and categorical features and the
 * terms of boolean ones; mean and var for Gaussian ones.  A model of one
 * kind of feature leaves the others' tables out (NULL): a Gaussian model of
 * many features and classes would hold 40 bytes per pair of zeros.
 */
static void
tables_needed(const NbIndex *ix, bool *counts, bool *gaussian)
{
	*counts = false;
	*gaussian = false;
	for (uint32_t j = 0; j < ix->n_features; j++)
	{
		if (ix->feature_type[j] == NB_FEATURE_GAUSSIAN)
			*gaussian = true;
		else
			*counts = true;
	}
}

uint32_t
nb_scorer_tables_per_pair(const NbIndex *ix)
{
	bool		counts;
	bool		gaussian;

	tables_needed(ix, &counts, &gaussian);
	return 1 + (counts ? 5 : 0) + (gaussian ? 2 : 0);
}

NbModelTraits
nb_scorer_model_traits(const NbIndex *ix)
{
	NbModelTraits traits = {true, false, ix->has_lengths, ix->label_first != NULL};

	for (uint32_t j = 0; j < ix->n_features; j++)
	{
		if (ix->feature_type[j] == NB_FEATURE_BAG)
			traits.has_bag = true;
		else
			traits.only_bags = false;
	}
	return traits;
}

static double *
table_if(bool needed, uint64_t n)
{
	return needed ? nb_alloc_zero(sizeof(double) * n) : NULL;
}

/* The scratch of one document's scoring (NbScorer.f .. term_z). */
static void
alloc_scratch(NbScorer *sc, uint32_t C)
{
	sc->f = nb_alloc(sizeof(double) * C);
	sc->fc = nb_alloc(sizeof(double) * C);
	sc->term = nb_alloc(sizeof(double) * C);
	sc->term_z = nb_alloc(sizeof(double) * C);
	sc->z = nb_alloc(sizeof(double) * C);
}

/* nb_scorer_build, with the item rows of the index's choice or none. */
static void
build(NbScorer *sc, const NbIndex *ix, const NbOptions *o, bool rows)
{
	uint32_t	C = ix->n_classes;
	uint32_t	F = ix->n_features;
	uint64_t	FC = (uint64_t) F * C + 1;
	uint64_t	E = ix->n_entries;
	NbPseudoCounts pc = nb_options_pseudo(o);
	double		a = pc.alpha;
	double		floor = variance_floor(ix, o->var_smoothing);
	uint32_t	first_item = 0;
	uint64_t	work = 0;
	bool		counts;
	bool		gaussian;

	memset(sc, 0, sizeof(*sc));
	sc->index = ix;
	sc->kind = o->kind;
	sc->alpha = a;
	tables_needed(ix, &counts, &gaussian);
	sc->excluded = nb_alloc_zero(sizeof(bool) * C);
	sc->prior_f = nb_alloc_zero(sizeof(double) * C);
	sc->base_f = nb_alloc_zero(sizeof(double) * FC);
	sc->base_z = table_if(counts, FC);
	sc->occ_f = table_if(counts, FC);
	sc->occ_z = table_if(counts, FC);
	sc->dist_f = table_if(counts, FC);
	sc->dist_z = table_if(counts, FC);
	sc->mean = table_if(gaussian, FC);
	sc->var = table_if(gaussian, FC);
	sc->per_occurrence = nb_alloc_zero(sizeof(bool) * (F + 1));
	sc->usable = nb_alloc_zero(sizeof(bool) * (F + 1));
	if (rows)
		make_rows(sc, ix);
	else
	{
		sc->entry = nb_alloc_zero(sizeof(NbScoredEntry) * (E + 1));
		for (uint64_t e = 0; e < E; e++)
		{
			nb_interrupt_at(e);
			sc->entry[e].cls = nb_index_entry_class(ix, e);
		}
	}
	alloc_scratch(sc, C);
	if (o->kind == NB_DCM)
		sc->dcm_s = nb_alloc_zero(sizeof(double) * FC);
	if (o->norm)
	{
		sc->norm_u = nb_alloc_zero(sizeof(double) * ((uint64_t) ix->n_tokens + 1));
		sc->norm_scale = nb_alloc_zero(sizeof(double) * FC);
		sc->norm_g = nb_alloc(sizeof(double) * (F + 1));
	}

	/* complement naive Bayes has no prior (options allow it with bags only) */
	if (o->kind != NB_COMPLEMENT || C == 1)
		set_prior(sc, ix, o, pc.class_alpha);
	set_calibration(sc, o, ix->n_labels);

	for (uint32_t j = 0; j < F; j++)
	{
		nb_interrupt_count(&work, 1 + (uint64_t) C);
		sc->usable[j] = true;
		sc->per_occurrence[j] = true;
		switch (ix->feature_type[j])
		{
			case NB_FEATURE_BAG:
				if (o->kind == NB_MULTINOMIAL)
					build_multinomial(sc, ix, j, first_item, a);
				else if (o->kind == NB_BERNOULLI)
				{
					sc->per_occurrence[j] = false;
					build_bernoulli(sc, ix, j, first_item, &pc);
				}
				else if (o->kind == NB_DCM)
				{
					sc->per_occurrence[j] = false;
					build_dcm(sc, ix, j, first_item, pc.docs);
				}
				else
				{
					build_complement(sc, ix, j, first_item, a);
					if (o->norm)
						normalize_complement(sc, ix, j, first_item, a);
				}
				break;
			case NB_FEATURE_CATEGORICAL:
				build_multinomial(sc, ix, j, first_item, a);
				break;
			case NB_FEATURE_BOOLEAN:
				build_boolean(sc, ix, j, &pc);
				break;
			case NB_FEATURE_GAUSSIAN:
				build_gaussian(sc, ix, j, floor);
				break;
		}
		first_item += ix->feature_items[j];
	}
	sc->any_entry_z = sc->entry_z != NULL || sc->row_z != NULL;
	for (uint32_t j = 0; j < F; j++)
		if (!sc->per_occurrence[j])
			sc->any_per_document = true;
}

void
nb_scorer_build(NbScorer *sc, const NbIndex *ix, const NbOptions *o)
{
	build(sc, ix, o, ix->item_rows);
}

void
nb_scorer_build_entries(NbScorer *sc, const NbIndex *ix, const NbOptions *o)
{
	build(sc, ix, o, false);
}

void
nb_scorer_free(NbScorer *sc)
{
	nb_free(sc->excluded);
	nb_free(sc->prior_f);
	nb_free(sc->base_f);
	nb_free_if(sc->base_z);
	nb_free_if(sc->occ_f);
	nb_free_if(sc->occ_z);
	nb_free_if(sc->dist_f);
	nb_free_if(sc->dist_z);
	nb_free_if(sc->mean);
	nb_free_if(sc->var);
	nb_free(sc->per_occurrence);
	nb_free(sc->usable);
	nb_free_if(sc->rows_block);
	nb_free_if(sc->row_z);
	nb_free_if(sc->entry);
	nb_free_if(sc->entry_z);
	nb_free(sc->f);
	nb_free(sc->fc);
	nb_free(sc->term);
	nb_free(sc->term_z);
	nb_free(sc->z);
	nb_free_if(sc->norm_u);
	nb_free_if(sc->norm_scale);
	nb_free_if(sc->norm_g);
	nb_free_if(sc->dcm_s);
	nb_free_if((double *) sc->calibration.sigmoid);
	nb_free_if(sc->cal_scratch);
}

bool
nb_scorer_same_but_prior(const NbOptions *a, const NbOptions *b)
{
	return a->kind == b->kind && a->kind != NB_DCM && a->alpha == b->alpha &&
		a->var_smoothing == b->var_smoothing && a->estimator == b->estimator &&
		a->beta_given == b->beta_given &&
		(!a->beta_given || (a->beta[0] == b->beta[0] && a->beta[1] == b->beta[1])) &&
		a->norm == b->norm;
}

static void *
copy_of(const void *src, size_t size)
{
	void	   *dst;

	if (src == NULL)
		return NULL;
	dst = nb_alloc(size);
	nb_copy(dst, src, size);
	return dst;
}

void
nb_scorer_copy_with_prior(NbScorer *dst, const NbScorer *src, const NbOptions *o)
{
	const NbIndex *ix = src->index;
	uint32_t	C = ix->n_classes;
	uint32_t	F = ix->n_features;
	uint64_t	FC = (uint64_t) F * C + 1;

	*dst = *src;
	dst->excluded = nb_alloc_zero(sizeof(bool) * C);
	dst->prior_f = nb_alloc_zero(sizeof(double) * C);
	dst->base_f = copy_of(src->base_f, sizeof(double) * FC);
	dst->base_z = copy_of(src->base_z, sizeof(double) * FC);
	dst->occ_f = copy_of(src->occ_f, sizeof(double) * FC);
	dst->occ_z = copy_of(src->occ_z, sizeof(double) * FC);
	dst->dist_f = copy_of(src->dist_f, sizeof(double) * FC);
	dst->dist_z = copy_of(src->dist_z, sizeof(double) * FC);
	dst->mean = copy_of(src->mean, sizeof(double) * FC);
	dst->var = copy_of(src->var, sizeof(double) * FC);
	dst->per_occurrence = copy_of(src->per_occurrence, sizeof(bool) * (F + 1));
	dst->usable = copy_of(src->usable, sizeof(bool) * (F + 1));
	dst->entry = NULL;
	dst->entry_z = NULL;
	dst->rows = NULL;
	dst->rows_block = NULL;
	dst->row_z = NULL;
	dst->norm_u = copy_of(src->norm_u, sizeof(double) * ((uint64_t) ix->n_tokens + 1));
	dst->norm_scale = copy_of(src->norm_scale, sizeof(double) * FC);
	dst->norm_g = copy_of(src->norm_g, sizeof(double) * (F + 1));
	alloc_scratch(dst, C);
	/* as nb_scorer_build: complement naive Bayes has no prior */
	if (o->kind != NB_COMPLEMENT || C == 1)
		set_prior(dst, ix, o, nb_options_pseudo(o).class_alpha);
	set_calibration(dst, o, ix->n_labels);
}

void
nb_scorer_item_shared(const NbScorer *sc, uint32_t j, uint32_t k, double *f, double *z)
{
	LogFactor	r = item_shared(sc->index, sc->kind, j, k, sc->alpha, NULL);

	/* normalized complement weights keep it in the item terms (norm_u) */
	if (sc->norm_u != NULL)
		r.f = r.z = 0;
	*f = r.f;
	*z = r.z;
}
