/*
 * nb_scorer.c — event models, smoothing and the posterior, see nb_scorer.h.
 *
 * Notation: V vocabulary size, N_jc weighted count of token j in class c,
 * d_jc weighted documents of class c containing j, T_c = sum_j N_jc,
 * D_c documents of class c, F_j = sum_c N_jc, T = sum_c T_c, x_j the
 * document's count of token j, n = sum_j x_j, k = distinct tokens.
 *
 *  multinomial  log p(x|c) = sum_j x_j log((N_jc + a) / (T_c + aV))
 *  bernoulli    log p(x|c) = sum_{j in V} log(1 - t_jc)
 *                            + sum_{j in x} log(t_jc / (1 - t_jc)),
 *               t_jc = (d_jc + a) / (D_c + 2a)
 *  complement   score_c    = sum_j x_j log((T + aV - T_c) / (F_j + a - N_jc))
 *               (Rennie et al. 2003 as scikit-learn's ComplementNB with
 *               norm=False: no class prior unless there is a single class)
 *
 * Every sum over the vocabulary is split into a per-class constant and a
 * correction for the (token, class) entries of the document's tokens.
 */
#include "nb_scorer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"

/* A logarithm as a pair (f, z) meaning f + z log(alpha), see nb_scorer.h. */
typedef struct LogFactor
{
	double		f;
	double		z;
} LogFactor;

/*
 * log(c + k alpha) for a count c >= 0 and k >= 0.  With alpha > 0 that is an
 * ordinary logarithm.  With alpha = 0 it is the limit alpha -> 0+: log c
 * when c > 0, else log k + log alpha (one zero factor, scaled by k: e.g. a
 * class without tokens has multinomial denominator T_c + alpha V = alpha V).
 * Negative c can only come from rounding and counts as 0.
 */
static inline LogFactor
smoothed(double c, double k, double alpha)
{
	LogFactor	r = {0, 1};
	double		v;

	if (c < 0)
		c = 0;
	v = alpha > 0 ? c + k * alpha : c;
	if (v > 0)
		r.f = log(v);
	else if (alpha == 0 && k > 0)
		r.f = log(k);
	else
		return r;				/* empty vocabulary: never multiplied by a count > 0 */
	r.z = (alpha == 0 && c == 0) ? 1 : 0;
	return r;
}

void
nb_index_build(NbIndex *ix, const NbView *v)
{
	const char *s;
	uint64_t	e = 0;

	memset(ix, 0, sizeof(*ix));
	ix->n_classes = v->n_classes;
	ix->n_tokens = v->n_tokens;
	ix->n_entries = v->n_entries;
	nb_strmap_init(&ix->labels, v->n_classes);
	nb_strmap_init(&ix->tokens, v->n_tokens);
	ix->token_start = nb_alloc(sizeof(uint64_t) * ((uint64_t) v->n_tokens + 1));
	ix->entry_class = nb_alloc(sizeof(uint32_t) * (v->n_entries + 1));
	ix->entry_count = nb_alloc(sizeof(double) * (v->n_entries + 1));
	ix->entry_docs = nb_alloc(sizeof(double) * (v->n_entries + 1));
	ix->class_docs = nb_alloc(sizeof(double) * v->n_classes);
	ix->class_tokens = nb_alloc_zero(sizeof(double) * v->n_classes);
	ix->token_total = nb_alloc_zero(sizeof(double) * ((uint64_t) v->n_tokens + 1));
	ix->lookup_mark = nb_alloc_zero(sizeof(uint64_t) * ((uint64_t) v->n_tokens + 1));
	ix->lookup_seq = 0;

	s = v->labels;
	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		uint32_t	len = nb_read_u32(v->label_len, c);

		/* labels are unique, so ids come out as 0, 1, 2, ... */
		nb_strmap_intern(&ix->labels, s, len, nb_hash_token(s, len));
		ix->class_docs[c] = nb_read_f64(v->class_docs, c);
		ix->total_docs += ix->class_docs[c];
		s += len;
	}
	s = v->tokens;
	for (uint32_t k = 0; k < v->n_tokens; k++)
	{
		uint32_t	len = nb_read_u32(v->token_len, k);
		uint32_t	n = nb_read_u32(v->token_entries, k);

		nb_strmap_intern(&ix->tokens, s, len, nb_hash_token(s, len));
		ix->token_start[k] = e;
		for (uint32_t i = 0; i < n; i++, e++)
		{
			uint32_t	c = nb_read_u32(v->entry_class, e);
			double		count = nb_read_f64(v->entry_count, e);

			ix->entry_class[e] = c;
			ix->entry_count[e] = count;
			ix->entry_docs[e] = nb_read_f64(v->entry_docs, e);
			ix->class_tokens[c] += count;
			ix->token_total[k] += count;
		}
		s += len;
	}
	ix->token_start[v->n_tokens] = e;
	for (uint32_t c = 0; c < v->n_classes; c++)
		ix->total_tokens += ix->class_tokens[c];
}

void
nb_index_free(NbIndex *ix)
{
	nb_strmap_free(&ix->labels);
	nb_strmap_free(&ix->tokens);
	nb_free(ix->token_start);
	nb_free(ix->entry_class);
	nb_free(ix->entry_count);
	nb_free(ix->entry_docs);
	nb_free(ix->class_docs);
	nb_free(ix->class_tokens);
	nb_free(ix->token_total);
	nb_free(ix->lookup_mark);
}

uint32_t
nb_index_lookup(NbIndex *ix, const NbTokenRef *tokens, uint32_t n,
				int64_t *scratch, NbDocToken *doc)
{
	uint32_t	used = 0;
	uint64_t	seq;

	/* a new sequence number invalidates every mark; rarely, start over */
	if (++ix->lookup_seq == 0)
	{
		memset(ix->lookup_mark, 0, sizeof(uint64_t) * ix->n_tokens);
		ix->lookup_seq = 1;
	}
	seq = ix->lookup_seq;

	/*
	 * Three passes with software prefetching a fixed distance ahead, so that
	 * cache misses overlap without flooding the CPU's outstanding-miss slots.
	 */
	for (uint32_t i = 0; i < n; i++)
		scratch[i] = (int64_t) nb_hash_token(tokens[i].str, tokens[i].len);
	for (uint32_t i = 0; i < n && i < NB_PREFETCH_DISTANCE; i++)
		nb_strmap_prefetch(&ix->tokens, (uint64_t) scratch[i]);
	for (uint32_t i = 0; i < n; i++)
	{
		int64_t		k;

		if (i + NB_PREFETCH_DISTANCE < n)
			nb_strmap_prefetch(&ix->tokens, (uint64_t) scratch[i + NB_PREFETCH_DISTANCE]);
		k = nb_strmap_find(&ix->tokens, tokens[i].str, tokens[i].len, (uint64_t) scratch[i]);
		scratch[i] = k;
	}
	for (uint32_t i = 0; i < n && i < NB_PREFETCH_DISTANCE; i++)
		if (scratch[i] >= 0)
		{
			__builtin_prefetch(&ix->lookup_mark[scratch[i]]);
			__builtin_prefetch(&ix->token_start[scratch[i]]);
		}
	for (uint32_t i = 0; i < n; i++)
	{
		int64_t		k = scratch[i];
		uint64_t	mark;

		if (i + NB_PREFETCH_DISTANCE < n && scratch[i + NB_PREFETCH_DISTANCE] >= 0)
		{
			int64_t		ahead = scratch[i + NB_PREFETCH_DISTANCE];

			__builtin_prefetch(&ix->lookup_mark[ahead]);
			__builtin_prefetch(&ix->token_start[ahead]);
		}
		if (k < 0)
			continue;
		mark = ix->lookup_mark[k];
		if (mark >> 32 == seq)
			doc[(uint32_t) mark].count += tokens[i].count;
		else
		{
			ix->lookup_mark[k] = seq << 32 | used;
			doc[used].token = (uint32_t) k;
			doc[used].count = tokens[i].count;
			used++;
		}
	}
	return used;
}

int64_t
nb_index_class(const NbIndex *ix, const char *str, uint32_t len)
{
	return nb_strmap_find(&ix->labels, str, len, nb_hash_token(str, len));
}

/*
 * Neumaier's compensated summation: add term to *sum, keeping the rounding
 * error in *comp (the true sum is *sum + *comp).  Log-likelihoods are sums
 * of many terms, larger than their total, and plain summation would lose
 * digits against scikit-learn.
 */
static inline void
add_compensated(double *sum, double *comp, double term)
{
	double		total = *sum + term;

	*comp += fabs(*sum) >= fabs(term) ? (*sum - total) + term : (term - total) + *sum;
	*sum = total;
}

/* Most scorers have no zero factors in their entries; scoring then skips z. */
static bool
any_nonzero(const double *v, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (v[i] != 0)
			return true;
	return false;
}

/* Bernoulli log t for t = (d + a) / (D_c + 2a). */
static LogFactor
log_present(double d, double Dc, double a)
{
	LogFactor	num = smoothed(d, 1, a);
	LogFactor	den = smoothed(Dc, 2, a);
	LogFactor	r = {num.f - den.f, num.z - den.z};

	return r;
}

/*
 * Bernoulli log(1 - t) for t = (d + a) / (D_c + 2a).  Summed over the whole
 * vocabulary, so it must be accurate in absolute terms when t is small:
 * log1p(-t) there, instead of the difference of two large logarithms.
 */
static LogFactor
log_absent(double d, double Dc, double a)
{
	LogFactor	num = smoothed(Dc - d, 1, a);
	LogFactor	den = smoothed(Dc, 2, a);
	LogFactor	r = {num.f - den.f, num.z - den.z};
	double		t = (d + a) / (Dc + 2 * a);

	if (num.z == 0 && den.z == 0 && t < 0.5)
		r.f = log1p(-t);
	return r;
}

/* Log prior per class into base_f; marks classes whose prior is exactly 0. */
static void
set_prior(NbScorer *sc, const NbIndex *ix, const NbOptions *o)
{
	uint32_t	C = ix->n_classes;
	double		sum = 0;

	for (uint32_t c = 0; c < C; c++)
	{
		switch (o->prior_mode)
		{
			case NB_PRIOR_FIT:
				sc->base_f[c] = log(ix->class_docs[c]) - log(ix->total_docs);
				break;
			case NB_PRIOR_UNIFORM:
				sc->base_f[c] = -log((double) C);
				break;
			case NB_PRIOR_GIVEN:
				sum += o->class_prior[c];
				break;
		}
	}
	if (o->prior_mode == NB_PRIOR_GIVEN)
		for (uint32_t c = 0; c < C; c++)
		{
			if (o->class_prior[c] > 0)
				sc->base_f[c] = log(o->class_prior[c]) - log(sum);
			else
				sc->excluded[c] = true;
		}
}

void
nb_scorer_build(NbScorer *sc, const NbIndex *ix, const NbOptions *o)
{
	uint32_t	C = ix->n_classes;
	uint64_t	E = ix->n_entries;
	double		a = o->alpha;
	double		V = (double) ix->n_tokens;
	LogFactor	la = smoothed(0, 1, a);

	memset(sc, 0, sizeof(*sc));
	sc->index = ix;
	sc->kind = o->kind;
	sc->excluded = nb_alloc_zero(sizeof(bool) * C);
	sc->base_f = nb_alloc_zero(sizeof(double) * C);
	sc->base_z = nb_alloc_zero(sizeof(double) * C);
	sc->occ_f = nb_alloc_zero(sizeof(double) * C);
	sc->occ_z = nb_alloc_zero(sizeof(double) * C);
	sc->dist_f = nb_alloc_zero(sizeof(double) * C);
	sc->dist_z = nb_alloc_zero(sizeof(double) * C);
	sc->entry_f = nb_alloc(sizeof(double) * (E + 1));
	sc->entry_z = nb_alloc(sizeof(double) * (E + 1));
	sc->f = nb_alloc(sizeof(double) * C);
	sc->fc = nb_alloc(sizeof(double) * C);
	sc->z = nb_alloc(sizeof(double) * C);

	if (o->kind != NB_COMPLEMENT || C == 1)
		set_prior(sc, ix, o);

	switch (o->kind)
	{
		case NB_MULTINOMIAL:
			for (uint32_t c = 0; c < C; c++)
			{
				LogFactor	d = smoothed(ix->class_tokens[c], V, a);

				sc->occ_f[c] = -d.f;
				sc->occ_z[c] = -d.z;
			}
			for (uint64_t e = 0; e < E; e++)
			{
				LogFactor	num = smoothed(ix->entry_count[e], 1, a);

				sc->entry_f[e] = num.f - la.f;
				sc->entry_z[e] = num.z - la.z;
			}
			break;

		case NB_BERNOULLI:
			{
				/* entries per class, for the absent-token sum over the vocabulary */
				double	   *nnz = nb_alloc_zero(sizeof(double) * C);
				double	   *comp = nb_alloc_zero(sizeof(double) * C);

				/* a token without entry: log t0 - log(1 - t0), t0 = a / (D_c + 2a) */
				for (uint32_t c = 0; c < C; c++)
				{
					LogFactor	present0 = log_present(0, ix->class_docs[c], a);
					LogFactor	absent0 = log_absent(0, ix->class_docs[c], a);

					sc->dist_f[c] = present0.f - absent0.f;
					sc->dist_z[c] = present0.z - absent0.z;
				}
				for (uint64_t e = 0; e < E; e++)
				{
					uint32_t	c = ix->entry_class[e];
					double		Dc = ix->class_docs[c];
					LogFactor	absent = log_absent(ix->entry_docs[e], Dc, a);
					LogFactor	present = log_present(ix->entry_docs[e], Dc, a);

					nnz[c] += 1;
					add_compensated(&sc->base_f[c], &comp[c], absent.f);
					sc->base_z[c] += absent.z;
					sc->entry_f[e] = (present.f - absent.f) - sc->dist_f[c];
					sc->entry_z[e] = (present.z - absent.z) - sc->dist_z[c];
				}
				for (uint32_t c = 0; c < C; c++)
				{
					LogFactor	absent0 = log_absent(0, ix->class_docs[c], a);

					add_compensated(&sc->base_f[c], &comp[c], (V - nnz[c]) * absent0.f);
					sc->base_f[c] += comp[c];
					sc->base_z[c] += (V - nnz[c]) * absent0.z;
				}
				nb_free(nnz);
				nb_free(comp);
			}
			break;

		case NB_COMPLEMENT:
			for (uint32_t c = 0; c < C; c++)
			{
				LogFactor	zc = smoothed(ix->total_tokens - ix->class_tokens[c], V, a);

				sc->occ_f[c] = zc.f;
				sc->occ_z[c] = zc.z;
			}
			for (uint32_t k = 0; k < ix->n_tokens; k++)
			{
				LogFactor	none = smoothed(ix->token_total[k], 1, a);

				for (uint64_t e = ix->token_start[k]; e < ix->token_start[k + 1]; e++)
				{
					LogFactor	comp = smoothed(ix->token_total[k] - ix->entry_count[e], 1, a);

					sc->entry_f[e] = none.f - comp.f;
					sc->entry_z[e] = none.z - comp.z;
				}
			}
			break;
	}
	sc->any_entry_z = any_nonzero(sc->entry_z, E);
}

void
nb_scorer_free(NbScorer *sc)
{
	nb_free(sc->excluded);
	nb_free(sc->base_f);
	nb_free(sc->base_z);
	nb_free(sc->occ_f);
	nb_free(sc->occ_z);
	nb_free(sc->dist_f);
	nb_free(sc->dist_z);
	nb_free(sc->entry_f);
	nb_free(sc->entry_z);
	nb_free(sc->f);
	nb_free(sc->fc);
	nb_free(sc->z);
}

int64_t
nb_scorer_score(NbScorer *sc, const NbDocToken *doc, uint32_t n, double *log_post)
{
	const NbIndex *ix = sc->index;
	uint32_t	C = ix->n_classes;
	double		occurrences = 0;
	double		zmin = INFINITY;
	double		fmax = -INFINITY;
	double		sum = 0;
	double		lse;
	int64_t		best = -1;
	bool		per_occurrence = sc->kind != NB_BERNOULLI;

	for (uint32_t i = 0; i < n; i++)
	{
		uint64_t	e = ix->token_start[doc[i].token];

		__builtin_prefetch(&ix->entry_class[e]);
		__builtin_prefetch(&sc->entry_f[e]);
		occurrences += doc[i].count;
	}
	for (uint32_t c = 0; c < C; c++)
	{
		sc->f[c] = sc->base_f[c] + occurrences * sc->occ_f[c] + n * sc->dist_f[c];
		sc->fc[c] = 0;
		sc->z[c] = sc->base_z[c] + occurrences * sc->occ_z[c] + n * sc->dist_z[c];
	}

	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	k = doc[i].token;
		double		mult = per_occurrence ? doc[i].count : 1.0;
		uint64_t	end = ix->token_start[k + 1];

		for (uint64_t e = ix->token_start[k]; e < end; e++)
		{
			uint32_t	c = ix->entry_class[e];

			add_compensated(&sc->f[c], &sc->fc[c], mult * sc->entry_f[e]);
		}
		if (sc->any_entry_z)
			for (uint64_t e = ix->token_start[k]; e < end; e++)
				sc->z[ix->entry_class[e]] += mult * sc->entry_z[e];
	}
	for (uint32_t c = 0; c < C; c++)
		sc->f[c] += sc->fc[c];

	/* the classes with the fewest zero factors share the probability */
	for (uint32_t c = 0; c < C; c++)
		if (!sc->excluded[c] && sc->z[c] < zmin)
			zmin = sc->z[c];
	if (zmin == INFINITY)
		return -1;
	for (uint32_t c = 0; c < C; c++)
		if (!sc->excluded[c] && sc->z[c] == zmin && sc->f[c] > fmax)
			fmax = sc->f[c];
	for (uint32_t c = 0; c < C; c++)
		if (!sc->excluded[c] && sc->z[c] == zmin)
			sum += exp(sc->f[c] - fmax);
	lse = fmax + log(sum);

	/* the best class is chosen on what is reported, so equal posteriors tie */
	for (uint32_t c = 0; c < C; c++)
	{
		log_post[c] = (!sc->excluded[c] && sc->z[c] == zmin) ? sc->f[c] - lse : -INFINITY;
		if (log_post[c] != -INFINITY && (best < 0 || log_post[c] > log_post[best]))
			best = c;
	}
	return best;
}
