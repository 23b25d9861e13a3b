/*
 * model_check.c — see model_check.h.
 *
 * The reference implementation below is deliberately naive: dense C x V
 * tables in long double, every formula written out per feature as in the
 * comment at the top of src/nb_scorer.c and in README "Formulas", with none
 * of the scorer's algebraic rearrangements.  For alpha = 0 it computes the limit
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
#include "nb_merge.h"
#include "nb_mutual_info.h"
#include "nb_subtract.h"
#include "nb_prune.h"
#include "nb_trainer.h"
#include "raw_model.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

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

static bool
nice_or_zero(double v)
{
	return v == 0 || nice_value(v);
}

/*
 * Well-conditioned: every count a nice value (sums exact), Gaussian
 * statistics of moderate size, and small enough for dense tables.
 */
bool
nbt_model_is_nice(const NbView *v)
{
	if (v->n_tokens > 0 && (uint64_t) v->n_classes * v->n_tokens > REF_MAX_CELLS)
		return false;
	if (v->n_classes > REF_MAX_CELLS || (uint64_t) v->n_classes * v->n_features > REF_MAX_CELLS)
		return false;
	for (uint32_t c = 0; c < v->n_classes; c++)
		if (!nice_value(nb_read_f64(v->class_docs, c)))
			return false;
	for (uint64_t e = 0; e < v->n_entries; e++)
		if (!nice_value(nb_read_f64(v->entry_count, e)) ||
			!nice_value(nb_read_f64(v->entry_docs, e)))
			return false;
	for (uint32_t j = 0; j < v->n_features; j++)
	{
		NbFeatureType type = nb_view_feature_type(v, j);

		for (uint32_t c = 0; c < v->n_classes; c++)
		{
			double		a = nb_view_a(v, j, c);
			double		b = nb_view_b(v, j, c);

			if (!nice_or_zero(nb_view_present(v, j, c)))
				return false;
			if (type == NB_FEATURE_BOOLEAN && !nice_or_zero(a))
				return false;
			if (type == NB_FEATURE_GAUSSIAN && (fabs(a) > 1048576.0 || b > 1099511627776.0 ||
												(b != 0 && b < 1e-6)))
				return false;
		}
		if (type == NB_FEATURE_GAUSSIAN && v->version != 1 &&
			nb_read_f64(v->feature_m2, j) > 1e30)
			return false;
	}
	return true;
}

typedef struct RefModel
{
	const NbView *v;
	uint32_t	C;
	uint32_t	V;
	uint32_t	F;
	long double *N;				/* N[c * V + k] */
	long double *d;				/* d[c * V + k] */
	long double *D;				/* class docs */
	long double Dsum;
	uint32_t   *first;			/* first item of feature j, [F + 1] */
	NbFeatureType *type;
	long double *present;		/* [j * C + c] */
	long double *A;
	long double *B;
	long double *Tc;			/* sum of the counts of j's items in c */
	long double *Tf;			/* sum of Tc over classes */
	long double *Fk;			/* item count over classes */
	long double *rows;
	long double *m2;
	uint64_t   *off;			/* item string offsets [V + 1] */
	long double *x;				/* scratch [V]: the document's count per item */
} RefModel;

static void *
xcalloc(size_t n, size_t size)
{
	void	   *p = calloc(n ? n : 1, size);

	if (p == NULL)
		abort();
	return p;
}

static void
ref_build(RefModel *m, const NbView *v)
{
	uint32_t	C = v->n_classes;
	uint32_t	V = v->n_tokens;
	uint32_t	F = v->n_features;
	uint64_t	e = 0;

	m->v = v;
	m->C = C;
	m->V = V;
	m->F = F;
	m->N = xcalloc((size_t) C * V + 1, sizeof(long double));
	m->d = xcalloc((size_t) C * V + 1, sizeof(long double));
	m->D = xcalloc(C, sizeof(long double));
	m->first = xcalloc((size_t) F + 1, sizeof(uint32_t));
	m->type = xcalloc((size_t) F + 1, sizeof(NbFeatureType));
	m->present = xcalloc((size_t) F * C + 1, sizeof(long double));
	m->A = xcalloc((size_t) F * C + 1, sizeof(long double));
	m->B = xcalloc((size_t) F * C + 1, sizeof(long double));
	m->Tc = xcalloc((size_t) F * C + 1, sizeof(long double));
	m->Tf = xcalloc((size_t) F + 1, sizeof(long double));
	m->Fk = xcalloc((size_t) V + 1, sizeof(long double));
	m->rows = xcalloc((size_t) F + 1, sizeof(long double));
	m->m2 = xcalloc((size_t) F + 1, sizeof(long double));
	m->off = xcalloc((size_t) V + 1, sizeof(uint64_t));
	m->x = xcalloc((size_t) V + 1, sizeof(long double));
	m->Dsum = 0;
	for (uint32_t c = 0; c < C; c++)
	{
		m->D[c] = nb_read_f64(v->class_docs, c);
		m->Dsum += m->D[c];
	}
	for (uint32_t k = 0; k < V; k++)
		m->off[k + 1] = m->off[k] + nb_read_u32(v->token_len, k);
	for (uint32_t j = 0, k = 0; j < F; j++)
	{
		m->first[j] = k;
		m->type[j] = nb_view_feature_type(v, j);
		for (uint32_t c = 0; c < C; c++)
		{
			m->present[(size_t) j * C + c] = nb_view_present(v, j, c);
			m->A[(size_t) j * C + c] = nb_view_a(v, j, c);
			m->B[(size_t) j * C + c] = nb_view_b(v, j, c);
		}
		if (v->version != 1)
		{
			m->rows[j] = nb_read_f64(v->feature_rows, j);
			m->m2[j] = nb_read_f64(v->feature_m2, j);
		}
		for (uint32_t end = k + nb_view_feature_items(v, j); k < end; k++)
		{
			uint32_t	n = nb_read_u32(v->token_entries, k);

			for (uint32_t i = 0; i < n; i++, e++)
			{
				uint32_t	c = nb_read_u32(v->entry_class, e);
				long double cnt = nb_read_f64(v->entry_count, e);

				m->N[(size_t) c * V + k] = cnt;
				m->d[(size_t) c * V + k] = nb_read_f64(v->entry_docs, e);
				m->Tc[(size_t) j * C + c] += cnt;
				m->Tf[j] += cnt;
				m->Fk[k] += cnt;
			}
		}
	}
	m->first[F] = V;
}

static void
ref_free(RefModel *m)
{
	free(m->N);
	free(m->d);
	free(m->D);
	free(m->first);
	free(m->type);
	free(m->present);
	free(m->A);
	free(m->B);
	free(m->Tc);
	free(m->Tf);
	free(m->Fk);
	free(m->rows);
	free(m->m2);
	free(m->off);
	free(m->x);
}

/* Item of feature j with this value, by binary search (items are sorted), or -1. */
static int64_t
ref_find_item(const RefModel *m, uint32_t j, const char *str, uint32_t len)
{
	int64_t		lo = m->first[j],
				hi = (int64_t) m->first[j + 1] - 1;

	while (lo <= hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		int			c = nb_strcmp(m->v->tokens + m->off[mid],
								  (uint32_t) (m->off[mid + 1] - m->off[mid]), str, len);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
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

/* Add log(num) - log(den), each p + q*alpha, times mult to (lf, lz). */
static bool
ref_add_ratio(long double *lf, long double *lz, long double mult, long double np, long double nq,
			  long double dp, long double dq, double alpha)
{
	RefFactor	a,
				b;

	if (!ref_factor(np, nq, alpha, &a) || !ref_factor(dp, dq, alpha, &b))
		return false;
	*lf += mult * (a.f - b.f);
	*lz += mult * (a.z - b.z);
	return true;
}

typedef enum
{
	REF_OK,
	REF_UNDEFINED,				/* the formulas give no probability */
	REF_ILL_CONDITIONED			/* terms too large to compare posteriors */
} RefStatus;

/*
 * The variance floor: var_smoothing times the largest variance m2 / rows of
 * any Gaussian feature (rows counted once whatever their weight).
 */
static long double
ref_variance_floor(const RefModel *m, double var_smoothing)
{
	long double largest = 0;

	for (uint32_t j = 0; j < m->F; j++)
		if (m->type[j] == NB_FEATURE_GAUSSIAN && m->rows[j] > 0 && m->m2[j] / m->rows[j] > largest)
			largest = m->m2[j] / m->rows[j];
	return var_smoothing * largest;
}

/*
 * The log likelihood of a document per class, without the prior, as pairs
 * (lf, lz) = log c + z log alpha.
 */
static RefStatus
ref_likelihood(RefModel *m, const NbOptions *o, const NbtDoc *doc, long double *lf, long double *lz)
{
	uint32_t	C = m->C;
	uint32_t	V = m->V;
	double		alpha = o->alpha;
	long double floor_var = ref_variance_floor(m, o->var_smoothing);

	for (uint32_t c = 0; c < C; c++)
		lf[c] = lz[c] = 0;
	for (uint32_t j = 0; j < m->F; j++)
	{
		uint32_t	K = m->first[j + 1] - m->first[j];
		long double unknown = 0;

		if (!doc->present[j])
			continue;
		for (uint32_t k = m->first[j]; k < m->first[j + 1]; k++)
			m->x[k] = 0;
		if (m->type[j] == NB_FEATURE_BAG || m->type[j] == NB_FEATURE_CATEGORICAL)
			for (uint32_t i = doc->first[j]; i < doc->first[j + 1]; i++)
			{
				int64_t		k = ref_find_item(m, j, doc->refs[i].str, doc->refs[i].len);

				if (k >= 0)
					m->x[k] += doc->refs[i].count;
				else
					unknown += doc->refs[i].count;
			}
		for (uint32_t c = 0; c < C; c++)
		{
			size_t		jc = (size_t) j * C + c;

			switch (m->type[j])
			{
				case NB_FEATURE_BAG:
					for (uint32_t k = m->first[j]; k < m->first[j + 1]; k++)
					{
						long double N = m->N[(size_t) c * V + k];
						long double djc = m->d[(size_t) c * V + k];
						long double Dc = m->present[jc];
						bool		ok = true;

						switch (o->kind)
						{
							case NB_MULTINOMIAL:
								/* x_k log((N_kc + a) / (T_c + aV)) */
								if (m->x[k] > 0)
									ok = ref_add_ratio(&lf[c], &lz[c], m->x[k], N, 1, m->Tc[jc], K, alpha);
								break;
							case NB_BERNOULLI:
								/* log t or log(1 - t), t = (d + a) / (D_c + 2a) */
								if (djc > Dc)
									return REF_UNDEFINED;
								ok = ref_add_ratio(&lf[c], &lz[c], 1, m->x[k] > 0 ? djc : Dc - djc, 1,
												   Dc, 2, alpha);
								break;
							case NB_COMPLEMENT:
								/* x_k log((T + aV - T_c) / (F_k + a - N_kc)) */
								if (m->x[k] > 0)
									ok = ref_add_ratio(&lf[c], &lz[c], m->x[k], m->Tf[j] - m->Tc[jc], K,
													   m->Fk[k] - N, 1, alpha);
								break;
							case NB_DCM:
								/* not here: test_dcm.c and test/parity/dcm.py check it */
								return REF_UNDEFINED;
						}
						if (!ok)
							return REF_UNDEFINED;
					}
					break;
				case NB_FEATURE_CATEGORICAL:
					/* log((N_jvc + a) / (N_jc + a K)); an unknown value has N_jvc = 0 */
					if (K == 0)
						break;	/* no value known: the same for every class */
					for (uint32_t k = m->first[j]; k < m->first[j + 1]; k++)
						if (m->x[k] > 0 &&
							!ref_add_ratio(&lf[c], &lz[c], m->x[k], m->N[(size_t) c * V + k], 1,
										   m->Tc[jc], K, alpha))
							return REF_UNDEFINED;
					if (unknown > 0 &&
						!ref_add_ratio(&lf[c], &lz[c], unknown, 0, 1, m->Tc[jc], K, alpha))
						return REF_UNDEFINED;
					break;
				case NB_FEATURE_BOOLEAN:
					/* t = (T_jc + a) / (M_jc + 2a) */
					if (!ref_add_ratio(&lf[c], &lz[c], 1,
									   doc->value[j] != 0 ? m->A[jc] : m->present[jc] - m->A[jc], 1,
									   m->present[jc], 2, alpha))
						return REF_UNDEFINED;
					break;
				case NB_FEATURE_GAUSSIAN:
					{
						long double n = 0,
									mean = 0,
									m2 = 0,
									mc,
									var,
									t;
						bool		same = true;
						int64_t		first_c = -1;

						/* statistics of all classes together */
						for (uint32_t c2 = 0; c2 < C; c2++)
						{
							size_t		i = (size_t) j * C + c2;

							if (m->present[i] == 0)
								continue;
							if (first_c < 0)
								first_c = c2;
							else if (m->A[i] != m->A[(size_t) j * C + first_c])
								same = false;
							n += m->present[i];
							mean += m->present[i] * m->A[i];
						}
						if (n == 0)
							break;	/* no statistics: the feature is left out */
						mean = same ? m->A[(size_t) j * C + first_c] : mean / n;
						for (uint32_t c2 = 0; c2 < C; c2++)
						{
							size_t		i = (size_t) j * C + c2;

							if (m->present[i] > 0)
								m2 += m->B[i] + m->present[i] * (m->A[i] - mean) * (m->A[i] - mean);
						}
						if (m->present[jc] > 0)
						{
							mc = m->A[jc];
							var = m->B[jc] / m->present[jc] + floor_var;
						}
						else
						{
							mc = mean;
							var = m2 / n + floor_var;
						}
						if (!(var > 0))
							var = 1;
						t = -0.5L * logl(2 * (long double) M_PI * var) -
							(doc->value[j] - mc) * (doc->value[j] - mc) / (2 * var);
						if (!(fabsl(t) < 1e7L))
							return REF_ILL_CONDITIONED;
						lf[c] += t;
					}
					break;
			}
		}
	}
	return REF_OK;
}

/*
 * Add the prior and normalize: prob[c] = posterior, support[c] = the class
 * shares the probability (not excluded, fewest zero factors).  Returns the
 * most probable class.
 */
static int64_t
ref_combine(const RefModel *m, const NbOptions *o, const long double *lf, const long double *lz,
			long double *prob, bool *support)
{
	uint32_t	C = m->C;
	long double *f = xcalloc(C, sizeof(long double));
	bool	   *excluded = xcalloc(C, sizeof(bool));
	long double zmin = INFINITY;
	long double fmax = -INFINITY;
	long double sum = 0;
	long double psum = 0;
	int64_t		best = -1;
	bool		use_prior = o->kind != NB_COMPLEMENT || C == 1;

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

int64_t
nbt_ref_posterior(const NbView *v, const NbOptions *o, const NbtDoc *doc, long double *prob)
{
	RefModel	m;
	bool	   *support = xcalloc(v->n_classes, sizeof(bool));
	long double *lf = xcalloc(v->n_classes, sizeof(long double));
	long double *lz = xcalloc(v->n_classes, sizeof(long double));
	int64_t		best = -1;

	ref_build(&m, v);
	if (ref_likelihood(&m, o, doc, lf, lz) == REF_OK)
		best = ref_combine(&m, o, lf, lz, prob, support);
	ref_free(&m);
	free(support);
	free(lf);
	free(lz);
	return best;
}

static long double
xlogx_over(long double a, long double b)
{
	return a > 0 ? a * logl(a / b) : 0;
}

/* Plug-in mutual information of a values x classes table (row-major). */
static long double
ref_table_mi(const long double *n, uint32_t values, uint32_t C)
{
	long double N = 0,
				sum = 0;
	long double *col = xcalloc(C, sizeof(long double));

	for (uint32_t x = 0; x < values; x++)
		for (uint32_t c = 0; c < C; c++)
		{
			col[c] += n[(size_t) x * C + c];
			N += n[(size_t) x * C + c];
		}
	for (uint32_t x = 0; x < values; x++)
	{
		long double row = 0;

		for (uint32_t c = 0; c < C; c++)
			row += n[(size_t) x * C + c];
		for (uint32_t c = 0; c < C; c++)
		{
			long double nvc = n[(size_t) x * C + c];

			if (nvc > 0)
				sum += nvc / N * logl(nvc * N / (row * col[c]));
		}
	}
	free(col);
	return sum;
}

/*
 * Reference mutual information: per bag item (Murphy 3.76 with D_c the rows
 * of the class with the bag) into item_mi[k], per other feature into
 * feature_mi[j] (NAN for Gaussian).
 */
static void
ref_mutual_info(const RefModel *m, long double *item_mi, long double *feature_mi)
{
	uint32_t	C = m->C;

	for (uint32_t j = 0; j < m->F; j++)
	{
		size_t		jc = (size_t) j * C;

		feature_mi[j] = 0;
		if (m->type[j] == NB_FEATURE_BAG)
		{
			long double D = 0;

			for (uint32_t c = 0; c < C; c++)
				D += m->present[jc + c];
			for (uint32_t k = m->first[j]; k < m->first[j + 1]; k++)
			{
				long double tj = 0,
							sum = 0;

				/* theta_j = sum_c pi_c theta_jc */
				for (uint32_t c = 0; c < C; c++)
					if (m->present[jc + c] > 0)
						tj += (m->present[jc + c] / D) * (m->d[(size_t) c * m->V + k] / m->present[jc + c]);
				for (uint32_t c = 0; c < C; c++)
				{
					long double Dc = m->present[jc + c];
					long double tjc;

					if (Dc == 0)
						continue;
					tjc = m->d[(size_t) c * m->V + k] / Dc;
					sum += Dc / D * (xlogx_over(tjc, tj) + xlogx_over(1 - tjc, 1 - tj));
				}
				item_mi[k] = sum;
			}
		}
		else if (m->type[j] == NB_FEATURE_CATEGORICAL)
		{
			uint32_t	K = m->first[j + 1] - m->first[j];
			long double *n = xcalloc((size_t) K * C + 1, sizeof(long double));

			for (uint32_t k = 0; k < K; k++)
				for (uint32_t c = 0; c < C; c++)
					n[(size_t) k * C + c] = m->N[(size_t) c * m->V + m->first[j] + k];
			feature_mi[j] = ref_table_mi(n, K, C);
			free(n);
		}
		else if (m->type[j] == NB_FEATURE_BOOLEAN)
		{
			long double *n = xcalloc((size_t) 2 * C, sizeof(long double));

			for (uint32_t c = 0; c < C; c++)
			{
				n[c] = m->A[jc + c];
				n[C + c] = m->present[jc + c] - m->A[jc + c];
			}
			feature_mi[j] = ref_table_mi(n, 2, C);
			free(n);
		}
		else
			feature_mi[j] = NAN;
	}
}

/* ---------------------------------------------------------------- */
/* documents                                                         */

int64_t
nbt_index_item(NbIndex *ix, uint32_t feature, const char *str, uint32_t len)
{
	NbTokenRef	ref;
	NbDoc		doc;
	int64_t		r;

	ref.str = str;
	ref.len = len;
	ref.count = 1;
	nb_doc_init(&doc, ix);
	nb_doc_begin(&doc);
	nb_doc_add_tokens(ix, &doc, feature, &ref, 1);
	if (doc.n_tokens == 0)
		r = -1;
	else if (doc.n_tokens != 1 || doc.tokens[0].count != 1 || doc.tokens[0].feature != feature)
		r = -2;
	else
		r = doc.tokens[0].token;
	nb_doc_free(&doc);
	return r;
}

/* Add tokens as nbt_doc_fill does. */
static void
doc_add(NbIndex *ix, const NbScorer *sc, NbDoc *doc, uint32_t j, const NbTokenRef *refs, uint32_t n)
{
	if (sc != NULL)
		nb_scorer_add_tokens(sc, doc, j, refs, n);
	else
		nb_doc_add_tokens(ix, doc, j, refs, n);
}

void
nbt_doc_fill(NbIndex *ix, const NbScorer *sc, NbDoc *doc, const NbtDoc *d)
{
	nb_doc_begin(doc);
	for (uint32_t j = 0; j < d->n_features; j++)
	{
		uint32_t	n = d->first[j + 1] - d->first[j];

		if (!d->present[j])
			continue;
		switch (ix->feature_type[j])
		{
			case NB_FEATURE_BAG:
			case NB_FEATURE_CATEGORICAL:
				/* in two batches when long: duplicates merge across batches too */
				if (n > 3)
				{
					doc_add(ix, sc, doc, j, d->refs + d->first[j], n / 2);
					doc_add(ix, sc, doc, j, d->refs + d->first[j] + n / 2, n - n / 2);
				}
				else
					doc_add(ix, sc, doc, j, d->refs + d->first[j], n);
				break;
			default:
				nb_doc_add_value(doc, j, d->value[j]);
				break;
		}
	}
}

static void
tdoc_init(NbtDoc *d, uint32_t F, uint32_t max_refs, const char *name)
{
	d->name = name;
	d->n_features = F;
	d->present = xcalloc((size_t) F + 1, sizeof(bool));
	d->value = xcalloc((size_t) F + 1, sizeof(double));
	d->first = xcalloc((size_t) F + 2, sizeof(uint32_t));
	d->refs = xcalloc((size_t) max_refs + 1, sizeof(NbTokenRef));
	d->n_refs = 0;
}

static void
tdoc_free(NbtDoc *d)
{
	free(d->present);
	free(d->value);
	free(d->first);
	free(d->refs);
}

static void
tdoc_ref(NbtDoc *d, const char *str, uint32_t len, double count)
{
	d->refs[d->n_refs].str = str;
	d->refs[d->n_refs].len = len;
	d->refs[d->n_refs].count = count;
	d->n_refs++;
}

static const char *
item_str(const RefModel *m, uint32_t k, uint32_t *len)
{
	*len = (uint32_t) (m->off[k + 1] - m->off[k]);
	return m->v->tokens + m->off[k];
}

static const char *const unknown_values[] = {"\x01unknown", "zz\x7f", "", "a", "\xff\xff\xff"};

/* A Gaussian value: near a class mean, far away, or extreme. */
static double
gaussian_value(const RefModel *m, uint32_t j, uint64_t *rng)
{
	uint32_t	c = (uint32_t) (nbt_rand(rng) % m->C);
	long double mean = m->A[(size_t) j * m->C + c];
	long double w = m->present[(size_t) j * m->C + c];
	long double sd = w > 0 ? sqrtl(m->B[(size_t) j * m->C + c] / w) : 1;

	switch (nbt_rand(rng) % 8)
	{
		case 0:
			return 0;
		case 1:
			return (nbt_rand(rng) % 2 ? 1 : -1) * 1e300;
		case 2:
			return mean;
		case 3:
			return (double) (mean + 1000 * (sd + 1));
		default:
			return (double) (mean + ((double) (nbt_rand(rng) % 2001) / 1000.0 - 1) * 3 * (sd + 1e-3));
	}
}

/*
 * Documents: empty (prior only), every feature with every item, random ones
 * with missing features and unknown values, one heavy bag token.
 */
static int
make_docs(const RefModel *m, uint64_t seed, NbtDoc *docs)
{
	uint64_t	rng = seed;
	int			nd = 0;
	uint32_t	F = m->F;

	/* empty: every feature missing */
	tdoc_init(&docs[nd], F, 0, "empty");
	docs[nd].first[F] = 0;
	nd++;

	/* all: every feature present, every item once (up to 512 per bag) */
	tdoc_init(&docs[nd], F, m->V + F, "all");
	for (uint32_t j = 0; j < F; j++)
	{
		NbtDoc	   *d = &docs[nd];
		uint32_t	K = m->first[j + 1] - m->first[j];

		d->first[j] = d->n_refs;
		d->present[j] = true;
		if (m->type[j] == NB_FEATURE_BAG)
			for (uint32_t i = 0; i < K && i < 512; i++)
			{
				uint32_t	len;
				const char *s = item_str(m, m->first[j + 1] - 1 - i, &len);

				tdoc_ref(d, s, len, 1);
			}
		else if (m->type[j] == NB_FEATURE_CATEGORICAL)
		{
			uint32_t	len = 9;
			const char *s = K > 0 ? item_str(m, m->first[j], &len) : unknown_values[0];

			tdoc_ref(d, s, len, 1);
		}
		else if (m->type[j] == NB_FEATURE_BOOLEAN)
			d->value[j] = 1;
		else
			d->value[j] = m->A[(size_t) j * m->C];
	}
	docs[nd].first[F] = docs[nd].n_refs;
	nd++;

	for (int r = 0; r < 4; r++)
	{
		NbtDoc	   *d = &docs[nd];

		tdoc_init(d, F, 64 * F + 1, "random");
		for (uint32_t j = 0; j < F; j++)
		{
			uint32_t	K = m->first[j + 1] - m->first[j];

			d->first[j] = d->n_refs;
			d->present[j] = nbt_rand(&rng) % 4 != 0;
			if (!d->present[j])
				continue;
			if (m->type[j] == NB_FEATURE_BAG)
			{
				uint32_t	n = (uint32_t) (r < 2 ? nbt_rand(&rng) % 13 : 17 + nbt_rand(&rng) % 40);

				for (uint32_t i = 0; i < n; i++)
				{
					uint32_t	len;
					const char *s;

					if (K == 0 || nbt_rand(&rng) % 8 == 0)
					{
						s = unknown_values[nbt_rand(&rng) % 5];
						len = (uint32_t) strlen(s);
					}
					else
						s = item_str(m, m->first[j] + (uint32_t) (nbt_rand(&rng) % (K < 8 || r % 2 ? K : 8)), &len);
					tdoc_ref(d, s, len, 1 + (double) (nbt_rand(&rng) % 3));
				}
			}
			else if (m->type[j] == NB_FEATURE_CATEGORICAL)
			{
				uint32_t	len;
				const char *s;

				if (K == 0 || nbt_rand(&rng) % 4 == 0)
				{
					s = unknown_values[nbt_rand(&rng) % 5];
					len = (uint32_t) strlen(s);
				}
				else
					s = item_str(m, m->first[j] + (uint32_t) (nbt_rand(&rng) % K), &len);
				tdoc_ref(d, s, len, 1);
			}
			else if (m->type[j] == NB_FEATURE_BOOLEAN)
				d->value[j] = (double) (nbt_rand(&rng) % 2);
			else
				d->value[j] = gaussian_value(m, j, &rng);
		}
		d->first[F] = d->n_refs;
		nd++;
	}

	/* one bag token repeated a million times */
	for (uint32_t j = 0; j < F; j++)
		if (m->type[j] == NB_FEATURE_BAG && m->first[j + 1] > m->first[j])
		{
			NbtDoc	   *d = &docs[nd];
			uint32_t	len;
			const char *s = item_str(m, m->first[j] + (uint32_t) (nbt_rand(&rng) % (m->first[j + 1] - m->first[j])), &len);

			tdoc_init(d, F, 1, "heavy");
			for (uint32_t i = 0; i <= j; i++)
				d->first[i] = 0;
			d->present[j] = true;
			tdoc_ref(d, s, len, 1e6);
			for (uint32_t i = j + 1; i <= F; i++)
				d->first[i] = 1;
			nd++;
			break;
		}
	return nd;
}

/* ---------------------------------------------------------------- */
/* checks                                                            */

#define FAILF(...) \
	do { snprintf(err, errlen, __VA_ARGS__); ok = false; goto done; } while (0)

#define MAX_DOCS 8

static const char *const kind_name[] = {"multinomial", "bernoulli", "complement"};
static const char *const prior_name[] = {"fit", "uniform", "given"};

static bool
check_index(const NbView *v, const RefModel *m, NbIndex *ix, char *err, size_t errlen)
{
	bool		ok = true;
	const char *s = v->labels;
	int64_t		unnamed = -1;
	NbDoc		doc;
	NbTokenRef *refs = xcalloc(512, sizeof(NbTokenRef));
	bool		only_bags = true;

	nb_doc_init(&doc, ix);
	if (ix->n_classes != v->n_classes || ix->n_tokens != v->n_tokens ||
		ix->n_entries != v->n_entries || ix->n_features != v->n_features ||
		ix->vector_len != v->vector_len)
		FAILF("index sizes differ from the view");
	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		uint32_t	len = nb_read_u32(v->label_len, c);
		int64_t		got = nb_index_class(ix, s, len);

		if (got != c)
			FAILF("nb_index_class(label %u) = %lld", c, (long long) got);
		s += len;
	}
	s = v->feature_names;
	for (uint32_t j = 0; j < v->n_features; j++)
	{
		uint32_t	len = nb_view_feature_name_len(v, j);
		int64_t		got = nb_index_feature(ix, s, len);

		if (got != j)
			FAILF("nb_index_feature(feature %u) = %lld", j, (long long) got);
		if (ix->feature_type[j] != m->type[j] || ix->feature_items[j] != m->first[j + 1] - m->first[j])
			FAILF("index feature %u: type %d, %u items", j, (int) ix->feature_type[j], ix->feature_items[j]);
		if (m->type[j] == NB_FEATURE_BAG && len == 0)
			unnamed = j;
		if (m->type[j] != NB_FEATURE_BAG)
			only_bags = false;
		if (ix->feature_tokens == NULL &&
			(m->type[j] == NB_FEATURE_BAG || m->type[j] == NB_FEATURE_CATEGORICAL))
			FAILF("index without feature_tokens, feature %u has items", j);
		/* sums of doubles: equal to the exact sums up to rounding, in whatever order */
		for (uint32_t c = 0; c < v->n_classes && ix->feature_tokens != NULL; c++)
			if (fabsl(ix->feature_tokens[(size_t) j * v->n_classes + c] - m->Tc[(size_t) j * v->n_classes + c]) >
				1e-12L * fabsl(m->Tc[(size_t) j * v->n_classes + c]))
				FAILF("index feature_tokens of feature %u class %u", j, c);
		if (fabsl(ix->feature_total[j] - m->Tf[j]) > 1e-12L * fabsl(m->Tf[j]) && isfinite(ix->feature_total[j]))
			FAILF("index feature_total of feature %u: %.17g, expected %.17Lg", j, ix->feature_total[j], m->Tf[j]);
		s += len;
	}
	if (nb_index_feature(ix, "\x01no such feature", 16) != -1)
		FAILF("nb_index_feature found a missing feature");
	if (ix->unnamed_bag != unnamed)
		FAILF("index unnamed_bag = %lld, expected %lld", (long long) ix->unnamed_bag, (long long) unnamed);
	if (nb_scorer_model_traits(ix).only_bags != only_bags)
		FAILF("nb_scorer_model_traits' only_bags = %d", (int) !only_bags);
	for (uint32_t i = 0; i < v->vector_len; i++)
	{
		char		name[NB_POSITION_NAME_SIZE];
		uint32_t	len = nb_position_name(i, name);
		int64_t		j = nb_index_feature(ix, name, len);

		if (j < 0 || ix->position_feature[i] != (uint32_t) j || ix->feature_type[j] != NB_FEATURE_GAUSSIAN)
			FAILF("position %u: feature %u, expected %lld", i, ix->position_feature[i], (long long) j);
	}
	/* every item of a feature through nb_doc_add_tokens, in reverse order, as one batch */
	for (uint32_t j = 0; j < v->n_features; j++)
	{
		uint32_t	K = m->first[j + 1] - m->first[j];
		uint32_t	n = K < 512 ? K : 512;

		if (n == 0)
			continue;
		for (uint32_t i = 0; i < n; i++)
		{
			uint32_t	k = m->first[j] + n - 1 - i;

			refs[i].str = item_str(m, k, &refs[i].len);
			refs[i].count = 1;
		}
		nb_doc_begin(&doc);
		nb_doc_add_tokens(ix, &doc, j, refs, n);
		if (doc.n_tokens != n)
			FAILF("feature %u: %u of its %u items found", j, doc.n_tokens, n);
		for (uint32_t i = 0; i < n; i++)
			if (doc.tokens[i].token != m->first[j] + n - 1 - i || doc.tokens[i].feature != j ||
				doc.tokens[i].count != 1)
				FAILF("feature %u: item %u looked up as (%u, %u, %g)", j, i, doc.tokens[i].token,
					  doc.tokens[i].feature, doc.tokens[i].count);
		if (doc.n_present != 1 || !doc.present[j] || doc.distinct[j] != n ||
			doc.occurrences[j] != n)
			FAILF("feature %u: document counts %g occurrences, %g distinct", j,
				  doc.occurrences[j], doc.distinct[j]);
		/* the same values under another feature are not its items */
		for (uint32_t j2 = 0; j2 < v->n_features; j2++)
			if (j2 != j && (m->type[j2] == NB_FEATURE_BAG || m->type[j2] == NB_FEATURE_CATEGORICAL))
			{
				nb_doc_begin(&doc);
				nb_doc_add_tokens(ix, &doc, j2, refs, n);
				for (uint32_t i = 0; i < doc.n_tokens; i++)
					if (doc.tokens[i].token < m->first[j2] || doc.tokens[i].token >= m->first[j2 + 1])
						FAILF("an item of feature %u found as one of feature %u", j, j2);
				break;
			}
	}
	if (ix->token_start[v->n_tokens] != v->n_entries)
		FAILF("index token_start[V] = %llu, expected %llu",
			  (unsigned long long) ix->token_start[v->n_tokens],
			  (unsigned long long) v->n_entries);
done:
	nb_doc_free(&doc);
	free(refs);
	return ok;
}

/*
 * A bag looked up by strings, as the server builds them: known items, near
 * misses and slices of the raw value (mostly unknown, some longer than the
 * strings the string map keeps inline).  The NbDoc must hold the distinct
 * known ones in order of first occurrence with summed counts, also across
 * batches and after nb_doc_begin.
 */
static bool
check_lookup_doc(const unsigned char *bytes, size_t size, const RefModel *m, NbIndex *ix,
				 uint32_t j, uint64_t seed, NbtDoc *out, char *err, size_t errlen)
{
	enum
	{
		MAXREF = 96
	};
	bool		ok = true;
	uint32_t	K = m->first[j + 1] - m->first[j];
	static char near[MAXREF][24];
	int64_t		want[MAXREF];
	NbDocToken	expect[MAXREF];
	double		occurrences = 0;
	uint32_t	n = 0,
				mexp = 0;
	uint64_t	rng = seed ^ 0x5bd1e995;
	NbDoc		doc;
	NbtDoc	   *d = out;

	tdoc_init(d, m->F, MAXREF, "lookup");
	for (uint32_t i = 0; i <= j; i++)
		d->first[i] = 0;
	d->present[j] = true;
	nb_doc_init(&doc, ix);
	for (int i = 0; i < 32 && K > 0; i++)
	{
		uint32_t	len;
		const char *s = item_str(m, m->first[j] + (uint32_t) (nbt_rand(&rng) % K), &len);

		tdoc_ref(d, s, len, 1 + (double) (nbt_rand(&rng) % 3));
		if (len < sizeof(near[0]))
		{
			/* the same with one byte more or less (never a zero byte) */
			memcpy(near[d->n_refs], s, len);
			near[d->n_refs][len] = (char) (1 + nbt_rand(&rng) % 255);
			tdoc_ref(d, near[d->n_refs], nbt_rand(&rng) % 2 ? len + 1 : (len ? len - 1 : 0), 1);
		}
	}
	while (d->n_refs < MAXREF && size > 0)
	{
		size_t		a = (size_t) (nbt_rand(&rng) % size);
		size_t		b = (size_t) (nbt_rand(&rng) % 48);
		const char *s = (const char *) bytes + a;
		size_t		len = b < size - a ? b : size - a;
		const char *zero = memchr(s, '\0', len);

		/* no zero bytes: the server's text has none */
		tdoc_ref(d, s, (uint32_t) (zero ? (size_t) (zero - s) : len), 1);
	}
	n = d->n_refs;
	for (uint32_t i = j + 1; i <= m->F; i++)
		d->first[i] = n;
	for (uint32_t i = 0; i < n; i++)
		want[i] = ref_find_item(m, j, d->refs[i].str, d->refs[i].len);
	/* expected: distinct known items, first-occurrence order, counts summed */
	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	e;

		if (want[i] < 0)
			continue;
		occurrences += d->refs[i].count;
		for (e = 0; e < mexp && expect[e].token != want[i]; e++)
			;
		if (e == mexp)
		{
			expect[mexp].token = (uint32_t) want[i];
			expect[mexp++].count = 0;
		}
		expect[e].count += d->refs[i].count;
	}
	/* twice: a second document must not see the marks of the first */
	for (int round = 0; round < 2; round++)
	{
		nbt_doc_fill(ix, NULL, &doc, d);
		if (doc.n_tokens != mexp)
			FAILF("NbDoc has %u distinct items, %u are known (round %d)", doc.n_tokens, mexp, round);
		for (uint32_t e = 0; e < mexp; e++)
			if (doc.tokens[e].token != expect[e].token || doc.tokens[e].count != expect[e].count ||
				doc.tokens[e].feature != j)
				FAILF("NbDoc: item %u is (%u, %g), expected (%u, %g) (round %d)", e,
					  doc.tokens[e].token, doc.tokens[e].count, expect[e].token, expect[e].count, round);
		if (doc.distinct[j] != mexp || doc.occurrences[j] != occurrences)
			FAILF("NbDoc: %g distinct, %g occurrences, expected %u, %g (round %d)", doc.distinct[j],
				  doc.occurrences[j], mexp, occurrences, round);
	}
done:
	nb_doc_free(&doc);
	return ok;
}

static bool
index_overflowed(const NbIndex *ix)
{
	if (!isfinite(ix->total_docs))
		return true;
	for (uint64_t i = 0; i < (uint64_t) ix->n_features * ix->n_classes && ix->feature_tokens != NULL; i++)
		if (!isfinite(ix->feature_tokens[i]))
			return true;
	for (uint32_t j = 0; j < ix->n_features; j++)
		if (!isfinite(ix->feature_total[j]))
			return true;
	for (uint32_t k = 0; k < ix->n_tokens; k++)
		if (!isfinite(nb_index_token_total(ix, k)))
			return true;
	return false;
}

/* The checks of one scored document; ref/support are the reference or NULL. */
static bool
check_posterior(const NbOptions *o, const double *prior, uint32_t C,
				const NbtDoc *doc, int64_t best, const double *lp,
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
	for (uint32_t i = 0; i < doc->n_refs; i++)
		tol += 1e-13 * doc->refs[i].count;

#define CTX "%s alpha=%g var_smoothing=%g prior=%s doc=%s: "
#define CTXARGS kind_name[o->kind], o->alpha, o->var_smoothing, prior_name[o->prior_mode], doc->name
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
		if (best != rbest && fabsl(ref[best] - ref[rbest]) > 1e-9)
			FAILF(CTX "best class %lld, reference %lld", CTXARGS, (long long) best, (long long) rbest);
	}
done:
	return ok;
}

/* Count of item k in doc, repeats added up, or -1 if it is not there. */
static double
doc_item_count(const NbDoc *doc, uint32_t k, uint32_t *feature)
{
	double		count = -1;

	for (uint32_t i = 0; i < doc->n_tokens; i++)
		if (doc->tokens[i].token == k)
		{
			count = (count < 0 ? 0 : count) + doc->tokens[i].count;
			*feature = doc->tokens[i].feature;
		}
	return count;
}

/*
 * The document built through the scorer (nb_scorer_add_tokens, which looks
 * tokens up through its rows when it has them, and may keep repeats apart)
 * has the items of the one built through the index, and scores the same but
 * for rounding.
 */
static bool
same_through_scorer(NbIndex *ix, NbScorer *sc, const NbDoc *built, const NbtDoc *d,
					char *err, size_t errlen)
{
	uint32_t	C = ix->n_classes;
	double	   *want = xcalloc(C, sizeof(double));
	double	   *got = xcalloc(C, sizeof(double));
	NbDoc		doc;
	bool		ok = true;

	nb_doc_init(&doc, ix);
	nbt_doc_fill(ix, sc, &doc, d);
	if (doc.n_tokens < built->n_tokens || doc.n_present != built->n_present)
		FAILF("doc %s through the scorer: %u items, %u features; through the index %u, %u",
			  d->name, doc.n_tokens, doc.n_present, built->n_tokens, built->n_present);
	for (uint32_t i = 0; i < doc.n_tokens + built->n_tokens; i++)
	{
		uint32_t	k = i < doc.n_tokens ? doc.tokens[i].token : built->tokens[i - doc.n_tokens].token;
		uint32_t	feature = UINT32_MAX;
		uint32_t	bfeature = UINT32_MAX;
		double		count = doc_item_count(&doc, k, &feature);
		double		bcount = doc_item_count(built, k, &bfeature);

		if (count != bcount || feature != bfeature)
			FAILF("doc %s: item %u is (%u, %g) through the scorer, (%u, %g) through the index",
				  d->name, k, feature, count, bfeature, bcount);
	}
	for (uint32_t j = 0; j < ix->n_features; j++)
		if (doc.present[j] != built->present[j] ||
			(doc.present[j] && doc.occurrences[j] != built->occurrences[j]))
			FAILF("doc %s: feature %u differs through the scorer", d->name, j);
	nb_scorer_score(sc, &doc, got);
	nb_scorer_score(sc, built, want);
	for (uint32_t c = 0; c < C; c++)
		if (!(got[c] == want[c] || fabs(got[c] - want[c]) <= 1e-9 * fmax(1, fabs(want[c]))))
			FAILF("doc %s: log posterior of class %u is %.17g through the scorer, %.17g through the index",
				  d->name, c, got[c], want[c]);
done:
	nb_doc_free(&doc);
	free(want);
	free(got);
	return ok;
}

/* Options of the given kind, alpha, prior mode and variance smoothing, else the defaults. */
static void
set_options(NbOptions *o, NbKind kind, double alpha, NbPriorMode prior_mode, const double *prior,
			double var_smoothing)
{
	nb_options_init(o);
	o->kind = kind;
	o->alpha = alpha;
	o->prior_mode = prior_mode;
	o->class_prior = prior;
	o->var_smoothing = var_smoothing;
}

/*
 * The option sets of check_scoring (kinds, alphas with their var_smoothing,
 * prior modes) as one grid, as nb_grid_metrics scores them: the scorers of
 * nb_scorer_set_build, sharing columns, score each document (looked up in
 * the index) as each option set's scorer alone does, but for rounding.
 */
#define SET_MAX (3 * 3 * 3)

static bool
check_scorer_set(NbIndex *ix, const NbDoc *built, const NbtDoc *docs, int ndocs,
				 const double *prior, int nalphas, char *err, size_t errlen)
{
	static const double alphas[] = {0, 1, 0.5};
	static const double smoothings[] = {1e-9, 0, 0.25};
	uint32_t	C = ix->n_classes;
	uint32_t	n = 0;
	NbOptions	o[SET_MAX];
	NbScorer	in_set[SET_MAX];
	NbScorer	alone[SET_MAX];
	NbScorerSet set;
	double	   *got = xcalloc((size_t) SET_MAX * C, sizeof(double));
	double	   *want = xcalloc(C, sizeof(double));
	bool		ok = true;

	for (int kind = 0; kind < 3; kind++)
		for (int ai = 0; ai < nalphas; ai++)
			for (int pm = 0; pm < 3; pm++)
			{
				set_options(&o[n], (NbKind) kind, alphas[ai], (NbPriorMode) pm, prior, smoothings[ai]);
				nb_scorer_build_entries(&alone[n], ix, &o[n]);
				n++;
			}
	nb_scorer_set_build(&set, ix, in_set, o, n);
	for (int d = 0; d < ndocs; d++)
	{
		double		tol = 1e-9;

		for (uint32_t i = 0; i < docs[d].n_refs; i++)
			tol += 1e-13 * docs[d].refs[i].count;
		nb_scorer_set_score(&set, &built[d], got);
		for (uint32_t s = 0; s < n; s++)
		{
			nb_scorer_score(&alone[s], &built[d], want);
			for (uint32_t c = 0; c < C; c++)
			{
				double		g = got[(size_t) s * C + c];

				if (!(g == want[c] ||
					  (isfinite(g) && isfinite(want[c]) && fabs(g - want[c]) <= tol * fmax(1, fabs(want[c])))))
					FAILF("doc %s, option set %u (%s alpha=%g prior=%s): log posterior of class %u is %.17g in the set, %.17g alone",
						  docs[d].name, s, kind_name[o[s].kind], o[s].alpha, prior_name[o[s].prior_mode],
						  c, g, want[c]);
			}
		}
	}
done:
	for (uint32_t s = 0; s < n; s++)
	{
		nb_scorer_free(&in_set[s]);
		nb_scorer_free(&alone[s]);
	}
	nb_scorer_set_free(&set);
	free(got);
	free(want);
	return ok;
}

static bool
check_scoring(const NbView *v, RefModel *m, NbIndex *ix, const NbtDoc *docs, int ndocs, int flags,
			  NbtStats *stats, char *err, size_t errlen)
{
	static const double alphas[] = {0, 1, 0.5};
	static const double smoothings[] = {1e-9, 0, 0.25};
	uint32_t	C = v->n_classes;
	bool		ok = true;
	bool		nice = !(flags & NBT_NO_REFERENCE) && nbt_model_is_nice(v);
	bool		overflowed = index_overflowed(ix);
	double	   *prior = xcalloc(C, sizeof(double));
	double	   *lp = xcalloc(C, sizeof(double));
	long double *ref = xcalloc(C, sizeof(long double));
	long double *lf = xcalloc(C, sizeof(long double));
	long double *lz = xcalloc(C, sizeof(long double));
	bool	   *support = xcalloc(C, sizeof(bool));
	NbDoc	   *built = xcalloc(ndocs, sizeof(NbDoc));
	NbScorer	sc[3];
	NbOptions	o[3];
	int			nbuilt = 0;

	for (int d = 0; d < ndocs; d++)
	{
		nb_doc_init(&built[d], ix);
		nbt_doc_fill(ix, NULL, &built[d], &docs[d]);
	}
	for (uint32_t c = 0; c < C; c++)
		prior[c] = (c == 0 && C > 1) ? 0 : 1 + c % 3;

	for (int kind = 0; kind < 3; kind++)
		for (int ai = 0; ai < (nice ? 3 : 2); ai++)
		{
			/* one scorer per prior mode; the reference likelihood is shared */
			for (nbuilt = 0; nbuilt < 3; nbuilt++)
			{
				set_options(&o[nbuilt], (NbKind) kind, alphas[ai], (NbPriorMode) nbuilt, prior,
							smoothings[ai]);
				nb_scorer_build(&sc[nbuilt], ix, &o[nbuilt]);
			}
			for (int d = 0; d < ndocs; d++)
			{
				bool		ref_ok = nice && ref_likelihood(m, &o[0], &docs[d], lf, lz) == REF_OK;

				if (!same_through_scorer(ix, &sc[0], &built[d], &docs[d], err, errlen))
				{
					ok = false;
					goto done;
				}
				for (int pm = 0; pm < 3; pm++)
				{
					int64_t		best = nb_scorer_score(&sc[pm], &built[d], lp);
					int64_t		rbest = -1;

					stats->scored++;
					if (ref_ok)
					{
						rbest = ref_combine(m, &o[pm], lf, lz, ref, support);
						stats->ref_compared++;
					}
					if (!check_posterior(&o[pm], prior, C, &docs[d], best, lp,
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
			nbuilt = 0;
		}
	ok = check_scorer_set(ix, built, docs, ndocs, prior, nice ? 3 : 2, err, errlen);
done:
	for (int i = 0; i < nbuilt; i++)
		nb_scorer_free(&sc[i]);
	for (int d = 0; d < ndocs; d++)
		nb_doc_free(&built[d]);
	free(built);
	free(prior);
	free(lp);
	free(ref);
	free(lf);
	free(lz);
	free(support);
	return ok;
}

static bool
check_mutual_info(const NbView *v, const RefModel *m, int flags, NbtStats *stats,
				  char *err, size_t errlen)
{
	uint32_t	V = v->n_tokens;
	uint32_t	F = v->n_features;
	bool		ok = true;
	uint64_t	max_rows = nb_mutual_info_max_rows(v);
	NbMiRow    *rows = xcalloc(max_rows + 1, sizeof(NbMiRow));
	bool	   *seen_item = xcalloc((size_t) V + 1, sizeof(bool));
	bool	   *seen_feature = xcalloc((size_t) F + 1, sizeof(bool));
	long double *item_mi = NULL;
	long double *feature_mi = NULL;
	uint64_t	want = 0;
	uint64_t	n;
	bool		compare = false;

	for (uint32_t j = 0; j < F; j++)
		want += m->type[j] == NB_FEATURE_BAG ? m->first[j + 1] - m->first[j] : 1;
	n = nb_mutual_info(v, rows);
	if (n != want || n > max_rows)
		FAILF("nb_mutual_info returned %llu rows, expected %llu", (unsigned long long) n,
			  (unsigned long long) want);
	if (!(flags & NBT_NO_REFERENCE) && nbt_model_is_nice(v))
	{
		item_mi = xcalloc((size_t) V + 1, sizeof(long double));
		feature_mi = xcalloc((size_t) F + 1, sizeof(long double));
		ref_mutual_info(m, item_mi, feature_mi);
		compare = true;
		stats->mi_compared++;
	}
	for (uint64_t i = 0; i < n; i++)
	{
		const NbMiRow *r = &rows[i];
		long double expect;

		if (r->feature >= F)
			FAILF("row %llu: feature %u", (unsigned long long) i, r->feature);
		if (m->type[r->feature] == NB_FEATURE_BAG)
		{
			if (r->whole_feature || r->item < m->first[r->feature] ||
				r->item >= m->first[r->feature + 1] || seen_item[r->item])
				FAILF("row %llu: bag item %u of feature %u (whole %d) wrong or repeated",
					  (unsigned long long) i, r->item, r->feature, (int) r->whole_feature);
			seen_item[r->item] = true;
			expect = compare ? item_mi[r->item] : 0;
		}
		else
		{
			if (!r->whole_feature || r->item != m->first[r->feature] || seen_feature[r->feature])
				FAILF("row %llu: feature %u (item %u, whole %d) wrong or repeated",
					  (unsigned long long) i, r->feature, r->item, (int) r->whole_feature);
			seen_feature[r->feature] = true;
			expect = compare ? feature_mi[r->feature] : 0;
		}
		if (!isfinite(r->mi) || r->mi < 0)
			FAILF("mutual information of feature %u item %u is %g", r->feature, r->item, r->mi);
		if (m->type[r->feature] == NB_FEATURE_GAUSSIAN)
		{
			/* the quadrature is checked in test_mutual_info; here: at most H(class) */
			if (r->mi > log((double) v->n_classes) + 1e-9)
				FAILF("Gaussian feature %u has mutual information %g > log C", r->feature, r->mi);
		}
		else if (compare && fabsl(r->mi - expect) > 1e-9 * (1 + fabsl(expect)))
			FAILF("mutual information of feature %u item %u is %.17g, reference %.17Lg",
				  r->feature, r->item, r->mi, expect);
		/* ordered: mi descending, ties by feature then item */
		if (i > 0)
		{
			const NbMiRow *p = &rows[i - 1];

			if (p->mi < r->mi ||
				(p->mi == r->mi &&
				 (p->feature > r->feature || (p->feature == r->feature && p->item >= r->item))))
				FAILF("nb_mutual_info: wrong order at row %llu", (unsigned long long) i);
		}
	}
done:
	free(rows);
	free(seen_item);
	free(seen_feature);
	free(item_mi);
	free(feature_mi);
	return ok;
}

static unsigned char *
write_trainer(NbTrainer *t, size_t *size)
{
	unsigned char *b;

	*size = nb_trainer_flat_size(t, SIZE_MAX);
	b = malloc(*size ? *size : 1);
	nb_trainer_write_view(t, b, *size, NULL);
	return b;
}

/*
 * Merge into trainers: once (round trip must be byte-identical), twice
 * (every count doubles) and into trainers it conflicts with (refused,
 * nothing changes).
 */
static bool
check_merge(const unsigned char *bytes, size_t size, const NbView *v, char *err, size_t errlen)
{
	bool		ok = true;
	NbTrainer  *t = nb_trainer_create();
	NbTrainer  *t2 = NULL;
	NbTrainer  *t3 = NULL;
	unsigned char *out = NULL;
	unsigned char *out2 = NULL;
	unsigned char *before = NULL;
	unsigned char *after = NULL;
	size_t		n,
				nb,
				na;
	uint32_t	conflict = UINT32_MAX;
	NbMergeStatus st;

	st = nb_trainer_merge_view(t, v, &conflict);
	if (st != NB_MERGE_OK)
		FAILF("merging a valid model into an empty trainer: status %d", (int) st);
	if (t->overflow || !nb_trainer_sums_finite(t))
		FAILF("merging one valid model into an empty trainer reports an overflow");
	n = nb_trainer_flat_size(t, SIZE_MAX);
	if (n != size)
		FAILF("round trip: nb_trainer_flat_size = %zu, value is %zu bytes", n, size);
	if (nb_trainer_flat_size(t, size - 1) != 0)
		FAILF("nb_trainer_flat_size ignores max_size");
	out = malloc(n);
	nb_trainer_write_view(t, out, n, NULL);
	if (memcmp(out, bytes, size) != 0)
	{
		size_t		i = 0;

		while (out[i] == bytes[i])
			i++;
		FAILF("round trip: re-serialized model differs at byte %zu", i);
	}

	/* the model merged with itself: every sum doubles, means stay */
	t2 = nb_trainer_create();
	nb_trainer_merge_view(t2, v, &conflict);
	if (nb_trainer_merge_view(t2, v, &conflict) != NB_MERGE_OK)
		FAILF("self-merge refused");
	n = nb_trainer_flat_size(t2, SIZE_MAX);
	if (n != size)
		FAILF("self-merge: size %zu, expected %zu", n, size);
	out2 = malloc(n);
	nb_trainer_write_view(t2, out2, n, NULL);
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
		if (finite)
		{
			if (v2.version != v->version || v2.n_features != v->n_features ||
				v2.vector_len != v->vector_len)
				FAILF("self-merge: version %u, %u features, vector %u", v2.version, v2.n_features,
					  v2.vector_len);
			for (uint32_t c = 0; c < v->n_classes; c++)
				if (nb_read_f64(v2.class_docs, c) != 2 * nb_read_f64(v->class_docs, c))
					FAILF("self-merge: class %u documents not doubled", c);
			for (uint64_t e = 0; e < v->n_entries; e++)
				if (nb_read_f64(v2.entry_count, e) != 2 * nb_read_f64(v->entry_count, e) ||
					nb_read_f64(v2.entry_docs, e) != 2 * nb_read_f64(v->entry_docs, e) ||
					nb_read_u32(v2.entry_class, e) != nb_read_u32(v->entry_class, e))
					FAILF("self-merge: entry %llu not doubled", (unsigned long long) e);
			for (uint32_t j = 0; j < v->n_features; j++)
			{
				bool		gauss = nb_view_feature_type(v, j) == NB_FEATURE_GAUSSIAN;

				for (uint32_t c = 0; c < v->n_classes; c++)
					if (nb_view_present(&v2, j, c) != 2 * nb_view_present(v, j, c) ||
						nb_view_a(&v2, j, c) != (gauss ? 1 : 2) * nb_view_a(v, j, c) ||
						nb_view_b(&v2, j, c) != 2 * nb_view_b(v, j, c))
						FAILF("self-merge: statistics of feature %u class %u: %g %g %g from %g %g %g",
							  j, c, nb_view_present(&v2, j, c), nb_view_a(&v2, j, c), nb_view_b(&v2, j, c),
							  nb_view_present(v, j, c), nb_view_a(v, j, c), nb_view_b(v, j, c));
				if (v->version != 1 &&
					(nb_read_f64(v2.feature_rows, j) != 2 * nb_read_f64(v->feature_rows, j) ||
					 nb_read_f64(v2.feature_mean, j) != nb_read_f64(v->feature_mean, j) ||
					 nb_read_f64(v2.feature_m2, j) != 2 * nb_read_f64(v->feature_m2, j)))
					FAILF("self-merge: overall statistics of feature %u", j);
			}
		}
	}

	/* a trainer where the view's first feature has another type: refused, unchanged */
	if (v->n_features > 0)
	{
		NbFeatureType type = nb_view_feature_type(v, 0);
		NbFeatureType other = type == NB_FEATURE_GAUSSIAN ? NB_FEATURE_BOOLEAN : NB_FEATURE_GAUSSIAN;
		NbFeatureType existing;
		int64_t		f;
		NbMergeStatus want;

		t3 = nb_trainer_create();
		nb_trainer_begin_doc(t3, "\x01other", 6, 1);
		f = nb_trainer_feature(t3, v->feature_names, nb_view_feature_name_len(v, 0), other, &existing);
		if (f < 0)
			FAILF("nb_trainer_feature refused a new feature");
		if (other == NB_FEATURE_GAUSSIAN)
			nb_trainer_add_real(t3, (uint32_t) f, 2.5);
		else
			nb_trainer_add_boolean(t3, (uint32_t) f, true);
		if (nb_trainer_feature(t3, v->feature_names, nb_view_feature_name_len(v, 0), type, &existing) != -1 ||
			existing != other)
			FAILF("nb_trainer_feature accepts another type for an existing feature");
		before = write_trainer(t3, &nb);
		conflict = UINT32_MAX;
		/* models of unrelated kinds of rows (or settings) are refused before their features */
		want = nb_merge_compat_status(nb_compat_check(nb_trainer_input_kinds(t3), &t3->settings,
													  nb_view_input_kinds(v), &v->settings));
		st = nb_trainer_merge_view(t3, v, &conflict);
		after = write_trainer(t3, &na);
		if (want == NB_MERGE_OK ? st != NB_MERGE_TYPE_CONFLICT || conflict != 0 : st != want)
			FAILF("merge into a trainer with a conflicting type: status %d, feature %u", (int) st, conflict);
		if (na != nb || memcmp(before, after, nb) != 0)
			FAILF("a refused merge (type conflict) changed the trainer");
		free(before);
		free(after);
		before = after = NULL;
		nb_trainer_destroy(t3);
		t3 = NULL;
	}
	/* float8[] rows of another length: refused, unchanged */
	if (v->vector_len > 0)
	{
		uint32_t	bad;

		t3 = nb_trainer_create();
		nb_trainer_begin_doc(t3, "x", 1, 1);
		if (nb_trainer_vector(t3, v->vector_len + 1, &bad) == NULL)
			FAILF("nb_trainer_vector refused a first vector");
		before = write_trainer(t3, &nb);
		st = nb_trainer_merge_view(t3, v, &conflict);
		after = write_trainer(t3, &na);
		if (st != NB_MERGE_VECTOR_CONFLICT)
			FAILF("merge of a %u-vector model into a %u-vector trainer: status %d", v->vector_len,
				  v->vector_len + 1, (int) st);
		if (na != nb || memcmp(before, after, nb) != 0)
			FAILF("a refused merge (vector conflict) changed the trainer");
	}
done:
	nb_trainer_destroy(t);
	if (t2)
		nb_trainer_destroy(t2);
	if (t3)
		nb_trainer_destroy(t3);
	free(out);
	free(out2);
	free(before);
	free(after);
	return ok;
}

/*
 * Merging flat models (nb_merge.c) must give the trainer's bytes: the model
 * alone and with itself.  Where one of them finds an overflow and the other
 * not (they add up the model's totals in different orders), the one that
 * writes a model must write one that nb_view_open accepts.
 */
/*
 * nb_prune of any valid model is a valid model (the exact meaning is
 * test_prune.c's): keeping everything gives the same bytes; keeping half of
 * the mutual-information rows, and the tokens in 2 documents or more, gives
 * a model nb_view_open accepts, no larger than the input.
 */
static bool
check_prune(const unsigned char *bytes, size_t in_size, const NbView *v, char *err, size_t errlen)
{
	NbPruneOptions o;
	bool		ok = true;

	for (int round = 0; round < 2 && ok; round++)
	{
		NbPruner   *p;
		size_t		size;
		unsigned char *buf;
		NbView		out,
					reopened;
		NbFormatError why;

		nb_prune_options_init(&o);
		if (round == 1)
		{
			nb_prune_set_top_k(&o, (double) (nb_mutual_info_max_rows(v) / 2));
			nb_prune_set_min_documents(&o, 2);
		}
		p = nb_pruner_create(v, &o);
		size = nb_pruner_size(p, SIZE_MAX);
		buf = xcalloc(size + 1, 1);
		nb_pruner_write(p, buf, size, &out);
		nb_pruner_destroy(p);
		if (!nb_view_open(&reopened, buf, size, &why))
		{
			snprintf(err, errlen, "nb_prune (round %d) wrote an invalid model: %s", round, why.message);
			ok = false;
		}
		else if (size > in_size)
		{
			snprintf(err, errlen, "nb_prune (round %d) made the model larger", round);
			ok = false;
		}
		else if (round == 0 && (size != in_size || memcmp(buf, bytes, size) != 0))
		{
			snprintf(err, errlen, "nb_prune without options changed the model");
			ok = false;
		}
		free(buf);
	}
	return ok;
}

static bool
check_flat_merge(const NbView *v, char *err, size_t errlen)
{
	bool		ok = true;
	NbView		views[2] = {*v, *v};

	for (uint32_t n = 1; n <= 2 && ok; n++)
	{
		NbTrainer  *t = nb_trainer_create();
		NbMerger   *m = nb_merger_create(views, n);
		size_t		msize = nb_merger_size(m, SIZE_MAX);
		unsigned char *mbytes = malloc(msize);
		unsigned char *tbytes = NULL;
		size_t		tsize = 0;
		uint32_t	conflict;
		NbView		out;
		NbView		check;
		NbFormatError fe;
		bool		merged;
		bool		trained;

		for (uint32_t i = 0; i < n; i++)
			(void) nb_trainer_merge_view(t, v, &conflict);
		trained = !t->overflow && nb_trainer_sums_finite(t);
		if (trained)
		{
			tsize = nb_trainer_flat_size(t, SIZE_MAX);
			tbytes = malloc(tsize);
			nb_trainer_write_view(t, tbytes, tsize, NULL);
		}
		merged = nb_merger_write(m, mbytes, msize, &out);
		if (merged && !nb_view_open(&check, mbytes, msize, &fe))
			FAILF("flat merge of %u: the merged model is invalid: %s", n, fe.message);
		if (merged && trained && (msize != tsize || memcmp(mbytes, tbytes, msize) != 0))
			FAILF("flat merge of %u: %zu bytes differ from the trainer's %zu", n, msize, tsize);
		if (trained && !merged && nb_view_open(&check, tbytes, tsize, &fe))
			FAILF("flat merge of %u reports an overflow, the trainer writes a valid model", n);
done:
		free(mbytes);
		free(tbytes);
		nb_merger_destroy(m);
		nb_trainer_destroy(t);
	}
	return ok;
}

static bool
minus_zero(double x)
{
	return x == 0 && signbit(x);
}

/*
 * Whether v merged with itself, minus v, must be v byte for byte: every
 * feature has rows in some class or values, and float8[] positions, if
 * any, have values (what disappears otherwise is features the trainer made
 * but nothing reached); no Gaussian mean is -0 (merging makes it +0).
 */
static bool
survives_subtraction(const NbView *v)
{
	bool		vector_values = v->vector_len == 0;

	for (uint32_t j = 0; j < v->n_features; j++)
	{
		bool		some = nb_read_f64(v->feature_rows, j) > 0;
		uint32_t	len;
		const char *name = nb_view_feature_name(v, j, &len);

		if (minus_zero(nb_read_f64(v->feature_mean, j)))
			return false;
		for (uint32_t c = 0; c < v->n_classes; c++)
		{
			some = some || nb_view_present(v, j, c) > 0;
			if (minus_zero(nb_view_a(v, j, c)))
				return false;
		}
		if (!some)
			return false;
		if (nb_feature_type(nb_view_feature_type(v, j))->stats == NB_STATS_MOMENTS &&
			nb_is_position_name(name, len, v->vector_len) && nb_read_f64(v->feature_rows, j) > 0)
			vector_values = true;
	}
	return vector_values;
}

/*
 * Subtracting (nb_subtract.c) from any valid model: v - v is nothing;
 * v merged with itself minus v is a valid model, v itself when
 * survives_subtraction says so (doubling and halving are exact); v minus v
 * merged with itself is refused.
 */
static bool
check_subtract(const unsigned char *bytes, size_t size, const NbView *v, char *err, size_t errlen)
{
	bool		ok = true;
	NbView		views[2] = {*v, *v};
	NbMerger   *m = nb_merger_create(views, 2);
	size_t		msize = nb_merger_size(m, SIZE_MAX);
	unsigned char *mbytes = malloc(msize);
	unsigned char *sbytes = NULL;
	NbView		twice;
	NbView		out;
	NbView		check;
	NbFormatError fe;
	NbSubtractError se;
	NbPlan	   *s = nb_subtract_plan(v, v, &se);

	if (s == NULL || !nb_plan_is_empty(s))
		FAILF("subtract a model from itself: %s (status %d)",
			  s == NULL ? "refused" : "something left", (int) se.status);
	nb_plan_destroy(s);
	s = NULL;
	if (!nb_merger_write(m, mbytes, msize, &twice))
		goto done;				/* doubling overflowed: nothing to subtract from */
	s = nb_subtract_plan(&twice, v, &se);
	if (s == NULL || nb_plan_is_empty(s))
		FAILF("subtract a model from its double: %s (status %d)",
			  s == NULL ? "refused" : "nothing left", (int) se.status);
	{
		size_t		ssize = nb_plan_size(s, SIZE_MAX);

		sbytes = malloc(ssize);
		nb_plan_write(s, sbytes, ssize, &out);
		if (!nb_view_open(&check, sbytes, ssize, &fe))
			FAILF("subtract a model from its double: the result is invalid: %s", fe.message);
		if (survives_subtraction(v) &&
			(ssize != size || memcmp(sbytes, bytes, size) != 0))
		{
			size_t		at = 0;

			at = NB_HEADER_SIZE;
			while (at < ssize && at < size && sbytes[at] == bytes[at])
				at++;
			FAILF("subtract a model from its double: not the model (%zu bytes, %zu; first difference at byte %zu)",
				  ssize, size, at);
		}
	}
	nb_plan_destroy(s);
	s = nb_subtract_plan(v, &twice, &se);
	if (s != NULL || se.status != NB_SUBTRACT_NEGATIVE)
		FAILF("subtract its double from a model: not refused as negative (status %d)",
			  (int) se.status);
done:
	if (s != NULL)
		nb_plan_destroy(s);
	free(mbytes);
	free(sbytes);
	nb_merger_destroy(m);
	return ok;
}

bool
nbt_check_model(const unsigned char *bytes, size_t size, const NbView *view,
				uint64_t seed, int flags, NbtStats *stats, char *err, size_t errlen)
{
	long		live = nb_test_live_blocks();
	bool		ok = true;
	NbIndex		ix;
	RefModel	m;
	NbtDoc		docs[MAX_DOCS + 1];
	int			ndocs = 0;

	err[0] = '\0';
	ref_build(&m, view);
	nb_index_build(&ix, view);
	ok = check_index(view, &m, &ix, err, errlen);
	if (ok)
	{
		ndocs = make_docs(&m, seed, docs);
		/* a lookup document for the first bag (the unnamed one if there is one) */
		for (uint32_t j = 0; j < view->n_features && ok; j++)
			if (m.type[j] == NB_FEATURE_BAG &&
				(ix.unnamed_bag < 0 || (int64_t) j == ix.unnamed_bag))
			{
				ok = check_lookup_doc(bytes, size, &m, &ix, j, seed, &docs[ndocs++], err, errlen);
				break;
			}
	}
	/* a model of no class is not scored (nb_model_require_classes) */
	if (ok && view->n_classes > 0)
		ok = check_scoring(view, &m, &ix, docs, ndocs, flags, stats, err, errlen);
	nb_index_free(&ix);
	for (int d = 0; d < ndocs; d++)
		tdoc_free(&docs[d]);
	if (ok)
		ok = check_mutual_info(view, &m, flags, stats, err, errlen) &&
			check_merge(bytes, size, view, err, errlen) &&
			check_flat_merge(view, err, errlen) &&
			check_subtract(bytes, size, view, err, errlen) &&
			check_prune(bytes, size, view, err, errlen);
	ref_free(&m);
	if (ok && nb_test_live_blocks() != live)
	{
		snprintf(err, errlen, "%ld nb_alloc blocks leaked", nb_test_live_blocks() - live);
		ok = false;
	}
	return ok;
}
