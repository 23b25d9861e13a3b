/*
 * model_check.c — see model_check.h.
 *
 * The reference implementation below is deliberately naive: dense C x V
 * tables in long double, every formula written out as in the comment at the
 * top of src/nb_scorer.c and in README "Formulas", with none of the
 * scorer's algebraic rearrangements.  For alpha = 0 it computes the limit
 * of the smoothed posterior directly: every factor of the likelihood is
 * linear in alpha, p + q*alpha, and tends to p if p > 0, else behaves as
 * q * alpha (one zero factor); the classes with the fewest zero factors
 * share the probability.
 */
#include "model_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_alloc.h"
#include "nb_hash.h"
#include "nb_mutual_info.h"
#include "nb_trainer.h"

/* Dense reference only up to this many (class, token) cells. */
#define REF_MAX_CELLS 4096

void
nbt_fix_checksum(unsigned char *buf, size_t size)
{
	uint64_t	h = nb_format_checksum(buf, size);

	for (int i = 0; i < 8; i++)
		buf[24 + i] = (unsigned char) (h >> (8 * i));
}

uint64_t
nbt_rand(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- */
/* reference implementation                                          */

/* v is a multiple of 2^-6 in (0, 2^24]: sums of such values are exact. */
static bool
nice_value(double v)
{
	double		scaled = v * 64.0;

	return v > 0 && v <= 16777216.0 && scaled == floor(scaled);
}

bool
nbt_model_is_nice(const NbView *v)
{
	if (v->n_tokens > 0 && (uint64_t) v->n_classes * v->n_tokens > REF_MAX_CELLS)
		return false;
	if (v->n_classes > REF_MAX_CELLS)
		return false;
	for (uint32_t c = 0; c < v->n_classes; c++)
		if (!nice_value(nb_read_f64(v->class_docs, c)))
			return false;
	for (uint64_t e = 0; e < v->n_entries; e++)
		if (!nice_value(nb_read_f64(v->entry_count, e)) ||
			!nice_value(nb_read_f64(v->entry_docs, e)))
			return false;
	return true;
}

typedef struct Dense
{
	uint32_t	C;
	uint32_t	V;
	long double *N;				/* N[c * V + j] */
	long double *d;				/* d[c * V + j] */
	long double *D;				/* D[c] */
	long double *Tc;			/* T_c */
	long double *F;				/* F_j */
	long double T;
	long double Dsum;
	bool	   *present;		/* scratch: token j is in the document */
} Dense;

static void
dense_build(Dense *m, const NbView *v)
{
	uint64_t	e = 0;
	size_t		cells = (size_t) v->n_classes * v->n_tokens;

	m->C = v->n_classes;
	m->V = v->n_tokens;
	m->N = calloc(cells + 1, sizeof(long double));
	m->d = calloc(cells + 1, sizeof(long double));
	m->D = calloc(m->C, sizeof(long double));
	m->Tc = calloc(m->C, sizeof(long double));
	m->F = calloc((size_t) m->V + 1, sizeof(long double));
	m->present = calloc((size_t) m->V + 1, sizeof(bool));
	if (!m->N || !m->d || !m->D || !m->Tc || !m->F || !m->present)
		abort();
	m->T = 0;
	m->Dsum = 0;
	for (uint32_t c = 0; c < m->C; c++)
	{
		m->D[c] = nb_read_f64(v->class_docs, c);
		m->Dsum += m->D[c];
	}
	for (uint32_t j = 0; j < m->V; j++)
	{
		uint32_t	n = nb_read_u32(v->token_entries, j);

		for (uint32_t i = 0; i < n; i++, e++)
		{
			uint32_t	c = nb_read_u32(v->entry_class, e);
			long double cnt = nb_read_f64(v->entry_count, e);

			m->N[(size_t) c * m->V + j] = cnt;
			m->d[(size_t) c * m->V + j] = nb_read_f64(v->entry_docs, e);
			m->Tc[c] += cnt;
			m->F[j] += cnt;
			m->T += cnt;
		}
	}
}

static void
dense_free(Dense *m)
{
	free(m->N);
	free(m->d);
	free(m->D);
	free(m->Tc);
	free(m->F);
	free(m->present);
}

/* log of the factor p + q*alpha as (f, z); false if undefined */
typedef struct RefFactor
{
	long double f;
	long double z;
} RefFactor;

static bool
ref_factor(long double p, long double q, double alpha, RefFactor *out)
{
	if (alpha > 0)
	{
		long double v = p + q * alpha;

		if (!(v > 0))
			return false;
		out->f = logl(v);
		out->z = 0;
		return true;
	}
	if (p > 0)
	{
		out->f = logl(p);
		out->z = 0;
		return true;
	}
	if (p == 0 && q > 0)
	{
		out->f = logl(q);
		out->z = 1;
		return true;
	}
	return false;
}

/*
 * The log likelihood of a document per class, without the prior, as pairs
 * (lf, lz) = log c + z log alpha.  False if the formulas are undefined.
 */
static bool
ref_likelihood(Dense *m, NbKind kind, double alpha, const NbDocToken *doc, uint32_t n,
			   long double *lf, long double *lz)
{
	RefFactor	a,
				b;

	memset(m->present, 0, m->V + 1);
	for (uint32_t i = 0; i < n; i++)
		m->present[doc[i].token] = true;
	for (uint32_t c = 0; c < m->C; c++)
	{
		lf[c] = 0;
		lz[c] = 0;
		switch (kind)
		{
			case NB_MULTINOMIAL:
				/* sum_j x_j log((N_jc + a) / (T_c + aV)) */
				for (uint32_t i = 0; i < n; i++)
				{
					uint32_t	j = doc[i].token;

					if (!ref_factor(m->N[(size_t) c * m->V + j], 1, alpha, &a) ||
						!ref_factor(m->Tc[c], m->V, alpha, &b))
						return false;
					lf[c] += doc[i].count * (a.f - b.f);
					lz[c] += doc[i].count * (a.z - b.z);
				}
				break;
			case NB_BERNOULLI:
				{
					/* sum_{j in V} log(present ? t_jc : 1 - t_jc), t_jc = (d_jc + a) / (D_c + 2a) */
					for (uint32_t j = 0; j < m->V; j++)
					{
						long double djc = m->d[(size_t) c * m->V + j];
						bool		present = m->present[j];

						/* d_jc > D_c: no probability (the trainer never writes that) */
						if (djc > m->D[c])
							return false;
						if (!ref_factor(present ? djc : m->D[c] - djc, 1, alpha, &a) ||
							!ref_factor(m->D[c], 2, alpha, &b))
							return false;
						lf[c] += a.f - b.f;
						lz[c] += a.z - b.z;
					}
				}
				break;
			case NB_COMPLEMENT:
				/* sum_j x_j log((T + aV - T_c) / (F_j + a - N_jc)) */
				for (uint32_t i = 0; i < n; i++)
				{
					uint32_t	j = doc[i].token;

					if (!ref_factor(m->T - m->Tc[c], m->V, alpha, &a) ||
						!ref_factor(m->F[j] - m->N[(size_t) c * m->V + j], 1, alpha, &b))
						return false;
					lf[c] += doc[i].count * (a.f - b.f);
					lz[c] += doc[i].count * (a.z - b.z);
				}
				break;
		}
	}
	return true;
}

/*
 * Add the prior and normalize: prob[c] = posterior, support[c] = the class
 * shares the probability (not excluded, fewest zero factors).  Returns the
 * most probable class.
 */
static int64_t
ref_combine(const Dense *m, const NbOptions *o, const long double *lf, const long double *lz,
			long double *prob, bool *support)
{
	uint32_t	C = m->C;
	long double *f = calloc(C, sizeof(long double));
	bool	   *excluded = calloc(C, sizeof(bool));
	long double zmin = INFINITY;
	long double fmax = -INFINITY;
	long double sum = 0;
	long double psum = 0;
	int64_t		best = -1;
	bool		use_prior = o->kind != NB_COMPLEMENT || C == 1;

	if (!f || !excluded)
		abort();
	if (o->prior_mode == NB_PRIOR_GIVEN)
		for (uint32_t c = 0; c < C; c++)
			psum += o->class_prior[c];
	for (uint32_t c = 0; c < C; c++)
	{
		f[c] = lf[c];
		if (!use_prior)
			continue;
		switch (o->prior_mode)
		{
			case NB_PRIOR_FIT:
				f[c] += logl(m->D[c] / m->Dsum);
				break;
			case NB_PRIOR_UNIFORM:
				f[c] -= logl((long double) C);
				break;
			case NB_PRIOR_GIVEN:
				if (o->class_prior[c] > 0)
					f[c] += logl(o->class_prior[c] / psum);
				else
					excluded[c] = true;
				break;
		}
	}
	for (uint32_t c = 0; c < C; c++)
		if (!excluded[c] && lz[c] < zmin)
			zmin = lz[c];
	for (uint32_t c = 0; c < C; c++)
	{
		support[c] = !excluded[c] && lz[c] == zmin;
		if (support[c] && f[c] > fmax)
		{
			fmax = f[c];
			best = c;
		}
	}
	for (uint32_t c = 0; c < C; c++)
		if (support[c])
			sum += expl(f[c] - fmax);
	for (uint32_t c = 0; c < C; c++)
		prob[c] = support[c] ? expl(f[c] - fmax) / sum : 0;
	free(f);
	free(excluded);
	return best;
}

static int64_t
ref_posterior(Dense *m, const NbOptions *o, const NbDocToken *doc, uint32_t n,
			  long double *prob, bool *support)
{
	long double *lf = calloc(m->C, sizeof(long double));
	long double *lz = calloc(m->C, sizeof(long double));
	int64_t		best = -1;

	if (!lf || !lz)
		abort();
	if (ref_likelihood(m, o->kind, o->alpha, doc, n, lf, lz))
		best = ref_combine(m, o, lf, lz, prob, support);
	free(lf);
	free(lz);
	return best;
}

int64_t
nbt_ref_posterior(const NbView *v, const NbOptions *o, const NbDocToken *doc,
				  uint32_t n, long double *prob)
{
	Dense		m;
	bool	   *support = calloc(v->n_classes, sizeof(bool));
	int64_t		best;

	if (!support)
		abort();
	dense_build(&m, v);
	best = ref_posterior(&m, o, doc, n, prob, support);
	dense_free(&m);
	free(support);
	return best;
}

static long double
xlogx_over(long double a, long double b)
{
	return a > 0 ? a * logl(a / b) : 0;
}

void
nbt_ref_mutual_info(const NbView *v, long double *mi)
{
	Dense		m;

	dense_build(&m, v);
	for (uint32_t j = 0; j < m.V; j++)
	{
		long double tj = 0;
		long double sum = 0;

		/* theta_j = sum_c pi_c theta_jc */
		for (uint32_t c = 0; c < m.C; c++)
			tj += (m.D[c] / m.Dsum) * (m.d[(size_t) c * m.V + j] / m.D[c]);
		for (uint32_t c = 0; c < m.C; c++)
		{
			long double pic = m.D[c] / m.Dsum;
			long double tjc = m.d[(size_t) c * m.V + j] / m.D[c];

			sum += pic * (xlogx_over(tjc, tj) + xlogx_over(1 - tjc, 1 - tj));
		}
		mi[j] = sum;
	}
	dense_free(&m);
}

int64_t
nbt_index_token(NbIndex *ix, const char *str, uint32_t len)
{
	NbTokenRef	ref;
	int64_t		scratch;
	NbDocToken	doc;

	ref.str = str;
	ref.len = len;
	ref.count = 1;
	if (nb_index_lookup(ix, &ref, 1, &scratch, &doc) == 0)
		return -1;
	if (doc.count != 1)
		return -2;
	return doc.token;
}

/*
 * Sort a document by token and merge duplicates (the test's own version:
 * the scorer needs distinct tokens in any order).
 */
static int
cmp_doc_token(const void *a, const void *b)
{
	uint32_t	x = ((const NbDocToken *) a)->token;
	uint32_t	y = ((const NbDocToken *) b)->token;

	return (x > y) - (x < y);
}

uint32_t
nbt_doc_normalize(NbDocToken *doc, uint32_t n)
{
	uint32_t	out = 0;

	if (n < 2)
		return n;
	qsort(doc, n, sizeof(NbDocToken), cmp_doc_token);
	for (uint32_t i = 1; i < n; i++)
	{
		if (doc[i].token == doc[out].token)
			doc[out].count += doc[i].count;
		else
			doc[++out] = doc[i];
	}
	return out + 1;
}

/* ---------------------------------------------------------------- */
/* checks                                                            */

#define FAILF(...) \
	do { snprintf(err, errlen, __VA_ARGS__); ok = false; goto done; } while (0)

typedef struct Doc
{
	NbDocToken *t;
	uint32_t	n;
	const char *name;
} Doc;

#define MAX_DOCS 8

static const char *const kind_name[] = {"multinomial", "bernoulli", "complement"};
static const char *const prior_name[] = {"fit", "uniform", "given"};

static bool
check_index(const NbView *v, NbIndex *ix, char *err, size_t errlen)
{
	bool		ok = true;
	const char *s = v->labels;

	if (ix->n_classes != v->n_classes || ix->n_tokens != v->n_tokens ||
		ix->n_entries != v->n_entries)
		FAILF("index sizes differ from the view");
	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		uint32_t	len = nb_read_u32(v->label_len, c);
		int64_t		got = nb_index_class(ix, s, len);

		if (got != c)
			FAILF("nb_index_class(label %u) = %lld", c, (long long) got);
		s += len;
	}
	s = v->tokens;
	for (uint32_t k = 0; k < v->n_tokens; k++)
	{
		uint32_t	len = nb_read_u32(v->token_len, k);
		int64_t		got = nbt_index_token(ix, s, len);

		if (got != k)
			FAILF("nb_index_token(token %u) = %lld", k, (long long) got);
		s += len;
	}
	if (ix->token_start[v->n_tokens] != v->n_entries)
		FAILF("index token_start[V] = %llu, expected %llu",
			  (unsigned long long) ix->token_start[v->n_tokens],
			  (unsigned long long) v->n_entries);
done:
	return ok;
}

/*
 * Build the documents to score: empty, every token (in reverse order: the
 * scorer takes distinct tokens in any order), random bags, one heavy token.
 */
static bool
make_docs(const NbView *v, uint64_t seed, Doc *docs, int *ndocs, char *err, size_t errlen)
{
	bool		ok = true;
	uint32_t	V = v->n_tokens;
	uint64_t	rng = seed;
	int			nd = 0;

	(void) err;
	(void) errlen;
	docs[nd].t = malloc(sizeof(NbDocToken));
	docs[nd].n = 0;
	docs[nd++].name = "empty";
	if (V > 0)
	{
		uint32_t	all = V < 512 ? V : 512;

		docs[nd].t = malloc(sizeof(NbDocToken) * all);
		for (uint32_t i = 0; i < all; i++)
		{
			docs[nd].t[i].token = all - 1 - i;
			docs[nd].t[i].count = 1;
		}
		docs[nd].n = all;
		docs[nd++].name = "all";

		for (int r = 0; r < 4; r++)
		{
			uint32_t	m = (uint32_t) (r < 2 ? 1 + nbt_rand(&rng) % 12 : 17 + nbt_rand(&rng) % 40);
			NbDocToken *t = malloc(sizeof(NbDocToken) * m);

			for (uint32_t i = 0; i < m; i++)
			{
				t[i].token = (uint32_t) (nbt_rand(&rng) % (V < 8 ? V : (r % 2 ? V : 8)));
				t[i].count = 1 + (double) (nbt_rand(&rng) % 3);
			}
			docs[nd].t = t;
			docs[nd].n = nbt_doc_normalize(t, m);
			docs[nd++].name = "random";
		}
		/* one token repeated a million times */
		docs[nd].t = malloc(sizeof(NbDocToken));
		docs[nd].t[0].token = (uint32_t) (nbt_rand(&rng) % V);
		docs[nd].t[0].count = 1e6;
		docs[nd].n = 1;
		docs[nd++].name = "heavy";
	}
	*ndocs = nd;
	return ok;
}

/* Token k of the view by binary search (tokens are sorted), or -1. */
static int64_t
view_token(const NbView *v, const uint64_t *off, const char *str, uint32_t len)
{
	int64_t		lo = 0,
				hi = (int64_t) v->n_tokens - 1;

	while (lo <= hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		int			c = nb_strcmp(v->tokens + off[mid], (uint32_t) (off[mid + 1] - off[mid]), str, len);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * A document looked up by strings, as the server builds them: known tokens,
 * near misses and slices of the raw value (mostly unknown, some longer than
 * the strings the string map keeps inline).  nb_index_lookup must return
 * the distinct known ones in order of first occurrence with summed counts.
 */
static bool
make_lookup_doc(const unsigned char *bytes, size_t size, const NbView *v, NbIndex *ix,
				uint64_t seed, Doc *doc, char *err, size_t errlen)
{
	enum
	{
		MAXREF = 96
	};
	bool		ok = true;
	uint32_t	V = v->n_tokens;
	uint64_t   *off = malloc(sizeof(uint64_t) * ((size_t) V + 1));
	NbTokenRef	refs[MAXREF];
	char		near[MAXREF][24];
	int64_t		want[MAXREF];
	int64_t		scratch[MAXREF];
	NbDocToken	expect[MAXREF];
	uint32_t	n = 0,
				got,
				m = 0;
	uint64_t	rng = seed ^ 0x5bd1e995;

	doc->t = malloc(sizeof(NbDocToken) * MAXREF);
	doc->n = 0;
	doc->name = "lookup";
	off[0] = 0;
	for (uint32_t k = 0; k < V; k++)
		off[k + 1] = off[k] + nb_read_u32(v->token_len, k);
	for (int i = 0; i < 32 && V > 0; i++)
	{
		uint32_t	k = (uint32_t) (nbt_rand(&rng) % V);
		uint32_t	len = (uint32_t) (off[k + 1] - off[k]);

		refs[n].str = v->tokens + off[k];
		refs[n].len = len;
		refs[n].count = 1 + (double) (nbt_rand(&rng) % 3);
		n++;
		if (len < sizeof(near[0]))
		{
			/* the same with one byte more or less */
			memcpy(near[n], v->tokens + off[k], len);
			near[n][len] = (char) nbt_rand(&rng);
			refs[n].str = near[n];
			refs[n].len = nbt_rand(&rng) % 2 ? len + 1 : (len ? len - 1 : 0);
			refs[n].count = 1;
			n++;
		}
	}
	while (n < MAXREF && size > 0)
	{
		size_t		a = (size_t) (nbt_rand(&rng) % size);
		size_t		b = (size_t) (nbt_rand(&rng) % 48);

		refs[n].str = (const char *) bytes + a;
		refs[n].len = (uint32_t) (b < size - a ? b : size - a);
		refs[n].count = 1;
		n++;
	}
	for (uint32_t i = 0; i < n; i++)
		want[i] = view_token(v, off, refs[i].str, refs[i].len);
	/* expected: distinct known tokens, first-occurrence order, counts summed */
	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	j;

		if (want[i] < 0)
			continue;
		for (j = 0; j < m && expect[j].token != want[i]; j++)
			;
		if (j == m)
		{
			expect[m].token = (uint32_t) want[i];
			expect[m++].count = 0;
		}
		expect[j].count += refs[i].count;
	}
	/* twice: a second lookup must not see the marks of the first */
	for (int round = 0; round < 2; round++)
	{
		got = nb_index_lookup(ix, refs, n, scratch, doc->t);
		if (got != m)
			FAILF("nb_index_lookup found %u distinct tokens, %u are known (round %d)", got, m, round);
		for (uint32_t j = 0; j < m; j++)
			if (doc->t[j].token != expect[j].token || doc->t[j].count != expect[j].count)
				FAILF("nb_index_lookup: entry %u is (%u, %g), expected (%u, %g) (round %d)", j,
					  doc->t[j].token, doc->t[j].count, expect[j].token, expect[j].count, round);
	}
	doc->n = got;
done:
	free(off);
	return ok;
}

static bool
index_overflowed(const NbIndex *ix)
{
	if (!isfinite(ix->total_docs) || !isfinite(ix->total_tokens))
		return true;
	for (uint32_t c = 0; c < ix->n_classes; c++)
		if (!isfinite(ix->class_tokens[c]))
			return true;
	for (uint32_t k = 0; k < ix->n_tokens; k++)
		if (!isfinite(ix->token_total[k]))
			return true;
	return false;
}

/* The checks of one scored document; ref/support are the reference or NULL. */
static bool
check_posterior(const NbScorer *sc, const NbOptions *o, const double *prior, uint32_t C,
				const Doc *doc, int64_t best, const double *lp,
				const long double *ref, const bool *support, int64_t rbest,
				bool overflowed, char *err, size_t errlen)
{
	bool		ok = true;
	double		sum = 0;
	bool		excluded_any = o->prior_mode == NB_PRIOR_GIVEN && (o->kind != NB_COMPLEMENT || C == 1);
	double		tol = 1e-9;

	/*
	 * Scores grow with the document's total count (|f| up to about
	 * count * 750), and their rounding error with them.
	 */
	for (uint32_t i = 0; i < doc->n; i++)
		tol += 1e-13 * doc->t[i].count;

#define CTX "%s alpha=%g prior=%s doc=%s: "
#define CTXARGS kind_name[o->kind], o->alpha, prior_name[o->prior_mode], doc->name
	if (best < 0 || best >= C)
		FAILF(CTX "nb_scorer_score returned %lld (C=%u)%s", CTXARGS, (long long) best, C,
			  overflowed ? " (a model total overflows to infinity)" : "");
	for (uint32_t c = 0; c < C; c++)
	{
		if (isnan(lp[c]) || lp[c] == INFINITY)
			FAILF(CTX "log posterior of class %u is %g%s", CTXARGS, c, lp[c],
				  overflowed ? " (a model total overflows to infinity)" : "");
		if (lp[c] > 1e-9)
			FAILF(CTX "log posterior of class %u is %.17g > 0", CTXARGS, c, lp[c]);
		if (excluded_any && prior[c] == 0 && lp[c] != -INFINITY)
			FAILF(CTX "class %u has prior 0 but log posterior %g", CTXARGS, c, lp[c]);

		/*
		 * best is the argmax of the reported log posteriors, exact ties to
		 * the lowest index: what a user sees as equal posteriors ties.
		 */
		if (lp[c] != -INFINITY &&
			(c < best ? lp[c] >= lp[best] : lp[c] > lp[best]))
			FAILF(CTX "class %u (log posterior %.17g) beats the returned best %lld (%.17g)",
				  CTXARGS, c, lp[c], (long long) best, lp[best]);
		if (lp[c] > lp[best] + 1e-12 * (1 + fabs(lp[best])))
			FAILF(CTX "class %u has a higher log posterior than the returned best %lld",
				  CTXARGS, c, (long long) best);
		if (lp[c] != -INFINITY)
			sum += exp(lp[c]);
	}
	if (!(fabs(sum - 1) <= tol))
		FAILF(CTX "posteriors sum to %.17g", CTXARGS, sum);

	if (ref != NULL)
	{
		for (uint32_t c = 0; c < C; c++)
		{
			double		p = lp[c] == -INFINITY ? 0 : exp(lp[c]);

			if (support[c] != (lp[c] != -INFINITY))
				FAILF(CTX "class %u: reference says %s, scorer gives log posterior %g",
					  CTXARGS, c, support[c] ? "possible" : "probability 0 (more zero factors)",
					  lp[c]);
			if (fabsl(p - ref[c]) > 1e-7 + tol)
				FAILF(CTX "class %u: posterior %.12g, reference %.12Lg", CTXARGS, c, p, ref[c]);
		}
		if (best != rbest && fabsl(ref[best] - ref[rbest]) > 1e-12)
			FAILF(CTX "best class %lld, reference %lld", CTXARGS, (long long) best, (long long) rbest);
	}
done:
	return ok;
}

static bool
check_scoring(const NbView *v, const NbIndex *ix, const Doc *docs, int ndocs, int flags,
			  NbtStats *stats, char *err, size_t errlen)
{
	static const double alphas[] = {0, 1, 0.5};
	uint32_t	C = v->n_classes;
	bool		ok = true;
	bool		nice = !(flags & NBT_NO_REFERENCE) && nbt_model_is_nice(v);
	bool		overflowed = index_overflowed(ix);
	double	   *prior = malloc(sizeof(double) * C);
	double	   *lp = malloc(sizeof(double) * C);
	long double *ref = malloc(sizeof(long double) * C);
	long double *lf = malloc(sizeof(long double) * C);
	long double *lz = malloc(sizeof(long double) * C);
	bool	   *support = malloc(sizeof(bool) * C);
	Dense		m;
	NbScorer	sc[3];
	NbOptions	o[3];
	int			built = 0;

	if (nice)
		dense_build(&m, v);
	for (uint32_t c = 0; c < C; c++)
		prior[c] = (c == 0 && C > 1) ? 0 : 1 + c % 3;

	for (int kind = 0; kind < 3; kind++)
		for (int ai = 0; ai < (nice ? 3 : 2); ai++)
		{
			/* one scorer per prior mode; the reference likelihood is shared */
			for (built = 0; built < 3; built++)
			{
				o[built].kind = (NbKind) kind;
				o[built].alpha = alphas[ai];
				o[built].prior_mode = (NbPriorMode) built;
				o[built].class_prior = prior;
				nb_scorer_build(&sc[built], ix, &o[built]);
			}
			for (int d = 0; d < ndocs; d++)
			{
				bool		ref_ok = nice &&
					ref_likelihood(&m, (NbKind) kind, alphas[ai], docs[d].t, docs[d].n, lf, lz);

				for (int pm = 0; pm < 3; pm++)
				{
					int64_t		best = nb_scorer_score(&sc[pm], docs[d].t, docs[d].n, lp);
					int64_t		rbest = -1;

					stats->scored++;
					if ((flags & NBT_TOLERATE_KNOWN) && overflowed)
					{
						bool		bad = best < 0;

						for (uint32_t c = 0; c < C; c++)
							bad |= isnan(lp[c]) || lp[c] == INFINITY;
						if (bad)
						{
							/* known bug: a total over the model overflows to infinity */
							stats->known_tolerated++;
							continue;
						}
					}
					if (ref_ok)
					{
						rbest = ref_combine(&m, &o[pm], lf, lz, ref, support);
						stats->ref_compared++;
					}
					if (!check_posterior(&sc[pm], &o[pm], prior, C, &docs[d], best, lp,
										 ref_ok ? ref : NULL, support, rbest, overflowed,
										 err, errlen))
					{
						ok = false;
						goto done;
					}
				}
			}
			for (int i = 0; i < 3; i++)
				nb_scorer_free(&sc[i]);
			built = 0;
		}
done:
	for (int i = 0; i < built; i++)
		nb_scorer_free(&sc[i]);
	if (nice)
		dense_free(&m);
	free(prior);
	free(lp);
	free(ref);
	free(lf);
	free(lz);
	free(support);
	return ok;
}

static bool
check_mutual_info(const NbView *v, int flags, NbtStats *stats, char *err, size_t errlen)
{
	uint32_t	V = v->n_tokens;
	bool		ok = true;
	double	   *mi = malloc(sizeof(double) * (V ? V : 1));
	uint32_t   *order = malloc(sizeof(uint32_t) * (V ? V : 1));
	bool	   *seen = calloc(V ? V : 1, sizeof(bool));
	long double *ref = NULL;
	bool		defined = true;

	nb_mutual_info(v, mi);
	for (uint32_t k = 0; k < V; k++)
	{
		if (mi[k] == INFINITY && (flags & NBT_TOLERATE_KNOWN))
		{
			/* known bug: log(a / b) overflows when theta_j is subnormal */
			stats->known_tolerated++;
			continue;
		}
		if (!isfinite(mi[k]) || mi[k] < 0)
			FAILF("mutual information of token %u is %g", k, mi[k]);
	}
	nb_rank_by_mutual_info(mi, V, order);
	for (uint32_t i = 0; i < V; i++)
	{
		if (order[i] >= V || seen[order[i]])
			FAILF("nb_rank_by_mutual_info: not a permutation at %u", i);
		seen[order[i]] = true;
		if (i > 0 && (mi[order[i - 1]] < mi[order[i]] ||
					  (mi[order[i - 1]] == mi[order[i]] && order[i - 1] > order[i])))
			FAILF("nb_rank_by_mutual_info: wrong order at %u", i);
	}
	if (!(flags & NBT_NO_REFERENCE) && nbt_model_is_nice(v))
	{
		/* defined when every theta_jc = d_jc / D_c <= 1 */
		uint64_t	e = 0;

		for (uint32_t k = 0; k < V; k++)
		{
			uint32_t	n = nb_read_u32(v->token_entries, k);

			for (uint32_t i = 0; i < n; i++, e++)
				if (nb_read_f64(v->entry_docs, e) >
					nb_read_f64(v->class_docs, nb_read_u32(v->entry_class, e)))
					defined = false;
		}
		if (defined)
		{
			ref = malloc(sizeof(long double) * (V ? V : 1));
			nbt_ref_mutual_info(v, ref);
			stats->mi_compared++;
			for (uint32_t k = 0; k < V; k++)
				if (fabsl(mi[k] - ref[k]) > 1e-9 * (1 + fabsl(ref[k])))
					FAILF("mutual information of token %u is %.17g, reference %.17Lg", k, mi[k], ref[k]);
		}
	}
done:
	free(mi);
	free(order);
	free(seen);
	free(ref);
	return ok;
}

/* Merge into trainers: once (round trip must be byte-identical) and twice. */
static bool
check_merge(const unsigned char *bytes, size_t size, const NbView *v,
			char *err, size_t errlen)
{
	bool		ok = true;
	NbTrainer  *t = nb_trainer_create();
	NbTrainer  *t2 = NULL;
	unsigned char *out = NULL;
	unsigned char *out2 = NULL;
	size_t		n;

	nb_trainer_merge_view(t, v);
	if (t->overflow || !nb_trainer_sums_finite(t))
		FAILF("merging one valid model into an empty trainer reports an overflow");
	n = nb_trainer_flat_size(t, SIZE_MAX);
	if (n != size)
		FAILF("round trip: nb_trainer_flat_size = %zu, value is %zu bytes", n, size);
	if (nb_trainer_flat_size(t, size - 1) != 0)
		FAILF("nb_trainer_flat_size ignores max_size");
	out = malloc(n);
	nb_trainer_write(t, out, n);
	if (memcmp(out, bytes, size) != 0)
	{
		size_t		i = 0;

		while (out[i] == bytes[i])
			i++;
		FAILF("round trip: re-serialized model differs at byte %zu", i);
	}

	/* the model merged with itself: every number doubles */
	t2 = nb_trainer_create();
	nb_trainer_merge_view(t2, v);
	nb_trainer_merge_view(t2, v);
	n = nb_trainer_flat_size(t2, SIZE_MAX);
	if (n != size)
		FAILF("self-merge: size %zu, expected %zu", n, size);
	out2 = malloc(n);
	nb_trainer_write(t2, out2, n);
	/* the trainer and the validator must agree on what is too large */
	{
		NbView		v2;
		NbFormatError fe;
		bool		finite = !t2->overflow && nb_trainer_sums_finite(t2);
		bool		valid = nb_view_open(&v2, out2, n, &fe);

		if (finite && !valid)
			FAILF("self-merge: nb_trainer_sums_finite is true but the value is invalid: %s", fe.message);
		if (!finite && valid)
			FAILF("self-merge: nb_trainer_sums_finite is false but nb_view_open accepts the value");
		if (!finite)
			goto done;
		for (uint32_t c = 0; c < v->n_classes; c++)
			if (nb_read_f64(v2.class_docs, c) != 2 * nb_read_f64(v->class_docs, c))
				FAILF("self-merge: class %u documents not doubled", c);
		for (uint64_t e = 0; e < v->n_entries; e++)
			if (nb_read_f64(v2.entry_count, e) != 2 * nb_read_f64(v->entry_count, e) ||
				nb_read_f64(v2.entry_docs, e) != 2 * nb_read_f64(v->entry_docs, e) ||
				nb_read_u32(v2.entry_class, e) != nb_read_u32(v->entry_class, e))
				FAILF("self-merge: entry %llu not doubled", (unsigned long long) e);
	}
done:
	nb_trainer_destroy(t);
	if (t2)
		nb_trainer_destroy(t2);
	free(out);
	free(out2);
	return ok;
}

bool
nbt_check_model(const unsigned char *bytes, size_t size, const NbView *view,
				uint64_t seed, int flags, NbtStats *stats, char *err, size_t errlen)
{
	long		live = nb_test_live_blocks();
	bool		ok = true;
	NbIndex		ix;
	Doc			docs[MAX_DOCS];
	int			ndocs = 0;
	uint64_t	peek;

	err[0] = '\0';
	if (!nb_peek_checksum(bytes, size, &peek) || peek != view->checksum)
	{
		snprintf(err, errlen, "nb_peek_checksum disagrees with nb_view_open");
		return false;
	}
	nb_index_build(&ix, view);
	ok = check_index(view, &ix, err, errlen) &&
		make_docs(view, seed, docs, &ndocs, err, errlen);
	if (ok)
		ok = make_lookup_doc(bytes, size, view, &ix, seed, &docs[ndocs++], err, errlen) &&
		check_scoring(view, &ix, docs, ndocs, flags, stats, err, errlen);
	nb_index_free(&ix);
	for (int d = 0; d < ndocs; d++)
		free(docs[d].t);
	if (ok)
		ok = check_mutual_info(view, flags, stats, err, errlen) &&
			check_merge(bytes, size, view, err, errlen);
	if (ok && nb_test_live_blocks() != live)
	{
		snprintf(err, errlen, "%ld nb_alloc blocks leaked", nb_test_live_blocks() - live);
		ok = false;
	}
	return ok;
}
