/*
 * nb_metrics.c — the state of the classification metrics (nb_metrics.h):
 * its labels, rows, scored columns and sums, merging, and its serialized
 * form; the metrics of a state are nb_metrics_result.c's.
 */
#include "nb_metrics.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_format.h"
#include "nb_hash.h"
#include "nb_interrupt.h"

_Static_assert(sizeof(double) << NB_METRICS_SEGMENT_BITS == NB_HUGE_PAGE,
			   "a segment of a column past the first is one huge page");

/* The segments of a column of cap rows: at least the first. */
static inline uint64_t
segments(uint64_t cap)
{
	return cap == 0 ? 1 : (cap + NB_METRICS_SEGMENT_ROWS - 1) >> NB_METRICS_SEGMENT_BITS;
}

/* Row i of a column and the rows after it in its segment: at most *n in all, which this sets. */
static inline double *
score_run(double *const *column, uint64_t i, uint64_t *n)
{
	uint64_t	left = NB_METRICS_SEGMENT_ROWS - (i & (NB_METRICS_SEGMENT_ROWS - 1));

	*n = *n < left ? *n : left;
	return nb_metrics_score_at(column, i);
}

/*
 * A column's room from old_cap rows (a new column: NULL, old_cap 0) to
 * cap, the new rows zero.  The first segment grows by
 * reallocation until it is whole, and is then a huge page as the others.
 */
static double **
grow_column(double **column, uint64_t old_cap, uint64_t cap)
{
	bool		fresh = column == NULL;

	column = fresh ? nb_alloc(sizeof(double *) * segments(cap)) :
		nb_realloc(column, sizeof(double *) * segments(cap));
	if (cap < NB_METRICS_SEGMENT_ROWS)
	{
		column[0] = fresh ? nb_alloc(sizeof(double) * cap) :
			nb_realloc(column[0], sizeof(double) * cap);
		memset(column[0] + old_cap, 0, sizeof(double) * (cap - old_cap));
	}
	else if (old_cap < NB_METRICS_SEGMENT_ROWS)
	{
		double	   *whole = nb_alloc_huge_page();

		if (!fresh)
		{
			memcpy(whole, column[0], sizeof(double) * old_cap);
			nb_free(column[0]);
		}
		memset(whole + old_cap, 0, sizeof(double) * (NB_METRICS_SEGMENT_ROWS - old_cap));
		column[0] = whole;
	}
	for (uint64_t s = segments(old_cap); s < segments(cap); s++)
	{
		column[s] = nb_alloc_huge_page();
		memset(column[s], 0, NB_HUGE_PAGE);
	}
	return column;
}

static void
free_column(double **column, uint64_t cap)
{
	if (cap < NB_METRICS_SEGMENT_ROWS)
		nb_free(column[0]);
	for (uint64_t s = cap < NB_METRICS_SEGMENT_ROWS; s < segments(cap); s++)
		nb_free_huge_page(column[s]);
	nb_free(column);
}

/*
 * The serialized size of a state as its parts are now (src/README.md): kept
 * in serial_fixed and serial_per_row whenever a label, a column or a sum
 * is added, so that the size of a growing state is known at every row.
 */
static void
update_sizes(NbMetrics *m)
{
	uint32_t	K = m->labels.count;
	uint64_t	fixed = 1 + 8 + 4 + (uint64_t) K * K * sizeof(double);
	uint64_t	per_row = 0;

	/* each label's length, bytes and terminator; the arena holds the bytes */
	fixed += (uint64_t) K * (4 + 1) + nb_vocab_bytes(&m->labels);
	if (m->scored)
	{
		fixed += 2 * (uint64_t) NB_EXACT_SERIAL_SIZE;
		for (uint32_t n = 0; n <= K; n++)
			fixed += 1 + (m->ll_inv_sum[n] != NULL ? NB_EXACT_SERIAL_SIZE : 0);
		for (int b = 0; b < NB_METRICS_BINS; b++)
			fixed += 1 + (m->calib[b] != NULL ? NB_METRICS_BIN_SUMS * NB_EXACT_SERIAL_SIZE : 0);
	}
	if (m->ranked)
	{
		fixed += K;
		per_row = sizeof(uint32_t) + (m->weighted ? sizeof(double) : 0);
		for (uint32_t c = 0; c < K; c++)
			per_row += m->score[c] != NULL ? sizeof(double) : 0;
	}
	if (m->null_actual > 0)
		fixed += sizeof(uint64_t);
	m->serial_fixed = fixed;
	m->serial_per_row = per_row;
}

void
nb_metrics_init(NbMetrics *m, bool scored, bool ranked, bool weighted)
{
	memset(m, 0, sizeof(*m));
	nb_vocab_init(&m->labels);
	m->cap = 8;
	m->confusion = nb_alloc_zero(sizeof(double) * m->cap * m->cap);
	m->seen = nb_alloc_zero(m->cap);
	m->scored = scored;
	m->ranked = scored && ranked;
	m->weighted = weighted;
	if (scored)
	{
		m->score = nb_alloc_zero(sizeof(double *) * m->cap);
		m->ll_inv_sum = nb_alloc_zero(sizeof(NbExactSum *) * (m->cap + 1));
		m->calib = nb_alloc_zero(sizeof(NbExactSum *) * NB_METRICS_BINS);
	}
	update_sizes(m);
}

void
nb_metrics_free(NbMetrics *m)
{
	nb_vocab_free(&m->labels);
	nb_free(m->confusion);
	nb_free(m->seen);
	if (m->scored)
	{
		for (uint32_t c = 0; c < m->cap; c++)
			if (m->score[c] != NULL)
				free_column(m->score[c], m->rows_cap);
		nb_free(m->score);
		nb_free_if(m->actual);
		if (m->weight != NULL)
			free_column(m->weight, m->rows_cap);
		for (uint32_t n = 0; n <= m->cap; n++)
			nb_free_if(m->ll_inv_sum[n]);
		nb_free(m->ll_inv_sum);
		for (int b = 0; b < NB_METRICS_BINS; b++)
			nb_free_if(m->calib[b]);
		nb_free(m->calib);
	}
	memset(m, 0, sizeof(*m));
}

int64_t
nb_metrics_find(const NbMetrics *m, const char *label, uint32_t len)
{
	return nb_vocab_find(&m->labels, label, len, nb_hash_token(label, len));
}

/* Room for classes up to id cap * 2: the confusion matrix is laid out anew. */
static void
grow_classes(NbMetrics *m)
{
	uint32_t	cap = m->cap * 2;
	double	   *confusion = nb_alloc_zero(sizeof(double) * cap * cap);

	for (uint32_t a = 0; a < m->cap; a++)
		memcpy(confusion + (size_t) a * cap, m->confusion + (size_t) a * m->cap,
			   sizeof(double) * m->cap);
	nb_free(m->confusion);
	m->confusion = confusion;
	m->seen = nb_realloc(m->seen, cap);
	memset(m->seen + m->cap, 0, cap - m->cap);
	if (m->scored)
	{
		m->score = nb_realloc(m->score, sizeof(double *) * cap);
		memset(m->score + m->cap, 0, sizeof(double *) * (cap - m->cap));
		m->ll_inv_sum = nb_realloc(m->ll_inv_sum, sizeof(NbExactSum *) * (cap + 1));
		memset(m->ll_inv_sum + m->cap + 1, 0, sizeof(NbExactSum *) * (cap - m->cap));
	}
	m->cap = cap;
}

uint32_t
nb_metrics_class(NbMetrics *m, const char *label, uint32_t len)
{
	uint64_t	hash = nb_hash_token(label, len);
	int64_t		found = nb_vocab_find(&m->labels, label, len, hash);

	if (found >= 0)
		return (uint32_t) found;
	if (m->labels.count == m->cap)
		grow_classes(m);
	found = nb_vocab_add(&m->labels, label, len, hash);
	update_sizes(m);
	return (uint32_t) found;
}

/* Byte order of two labels (memcmp, then the shorter first). */
static int
label_cmp(const NbMetrics *m, uint32_t a, uint32_t b)
{
	uint32_t	alen,
				blen;
	const char *as = nb_vocab_str(&m->labels, a, &alen);
	const char *bs = nb_vocab_str(&m->labels, b, &blen);

	return nb_strcmp(as, alen, bs, blen);
}

void
nb_metrics_add(NbMetrics *m, uint32_t actual, uint32_t predicted, double weight)
{
	m->confusion[(size_t) actual * m->cap + predicted] += weight;
	m->seen[actual] |= NB_SEEN_ACTUAL;
	m->seen[predicted] |= NB_SEEN_PREDICTED;
	m->rows++;
}

void
nb_metrics_add_null_actual(NbMetrics *m)
{
	if (m->null_actual++ == 0)
		update_sizes(m);
}

/*
 * Room for rows more rows in the row arrays of a ranked state; the new room
 * in the columns is zero.
 */
static void
reserve_rows(NbMetrics *m, uint64_t rows)
{
	uint64_t	need = m->rows + rows;
	uint64_t	cap = m->rows_cap < 1024 ? 1024 : m->rows_cap;

	if (need <= m->rows_cap)
		return;
	/* doubling within the first segment, then whole segments */
	while (cap < need && cap < NB_METRICS_SEGMENT_ROWS)
		cap *= 2;
	if (cap < need)
		cap = segments(need) << NB_METRICS_SEGMENT_BITS;
	m->actual = m->rows_cap == 0 ? nb_alloc(sizeof(uint32_t) * cap) :
		nb_realloc(m->actual, sizeof(uint32_t) * cap);
	if (m->weighted)
		m->weight = grow_column(m->weight, m->rows_cap, cap);
	for (uint32_t c = 0; c < m->labels.count; c++)
		if (m->score[c] != NULL)
			m->score[c] = grow_column(m->score[c], m->rows_cap, cap);
	m->rows_cap = cap;
}

/* The column of class c of a ranked state, made (zero) when no row named c yet. */
static double **
column_of(NbMetrics *m, uint32_t c)
{
	if (m->score[c] == NULL)
	{
		m->score[c] = grow_column(NULL, 0, m->rows_cap);
		update_sizes(m);
	}
	return m->score[c];
}

/* The sum of weight / S of the rows naming n classes, made (zero) if none did yet. */
static NbExactSum *
inv_sum(NbMetrics *m, uint32_t n)
{
	if (m->ll_inv_sum[n] == NULL)
	{
		m->ll_inv_sum[n] = nb_alloc(sizeof(NbExactSum));
		nb_exact_init(m->ll_inv_sum[n]);
		update_sizes(m);
	}
	return m->ll_inv_sum[n];
}

/* The sums of calibration bin b, made (zero) when no row fell in it yet. */
static NbExactSum *
calibration_sums(NbMetrics *m, int b)
{
	if (m->calib[b] == NULL)
	{
		m->calib[b] = nb_alloc(sizeof(NbExactSum) * NB_METRICS_BIN_SUMS);
		for (int k = 0; k < NB_METRICS_BIN_SUMS; k++)
			nb_exact_init(&m->calib[b][k]);
		update_sizes(m);
	}
	return m->calib[b];
}

/* The calibration bin of a top-class probability p in [0, 1] (src/README.md, Metrics). */
static inline int
calibration_bin(double p)
{
	double		b = floor(p * NB_METRICS_BINS);

	return b >= NB_METRICS_BINS - 1 ? NB_METRICS_BINS - 1 : (int) b;
}

void
nb_metrics_add_scored(NbMetrics *m, uint32_t actual, const uint32_t *cls,
					  const double *prob, uint32_t n, double weight)
{
	uint32_t	best = 0;
	double		best_p = prob[0];
	double		brier = 0;
	double		clipped = 0;
	double		p_actual = DBL_EPSILON;
	bool		named = false;
	uint64_t	row = m->rows;

	if (m->ranked)
		reserve_rows(m, 1);
	for (uint32_t i = 0; i < n; i++)
	{
		double		y = cls[i] == actual ? 1.0 : 0.0;
		double		d = prob[i] - y;
		double		c = nb_metrics_clip(prob[i]);
		/* ties to the first label in byte order, as nb_predict breaks them */
		if (prob[i] > best_p ||
			(i > 0 && prob[i] == best_p && label_cmp(m, cls[i], cls[best]) < 0))
		{
			best = i;
			best_p = prob[i];
		}
		if (cls[i] == actual)
		{
			named = true;
			p_actual = c;
		}
		brier += d * d;
		clipped += c;
		if (m->ranked)
		{
			if (m->score[cls[i]] == NULL)
				(void) column_of(m, cls[i]);
			/* + 0.0 makes a -0 +0, which the sort keys need */
			*nb_metrics_score_at(m->score[cls[i]], row) = prob[i] + 0.0;
		}
	}
	if (!named)
		brier += 1.0;
	if (m->ranked)
	{
		m->actual[row] = actual;
		if (m->weighted)
			*nb_metrics_score_at(m->weight, row) = weight;
	}
	nb_exact_add(&m->ll_sum, weight * log(clipped / p_actual));
	nb_exact_add(inv_sum(m, n), weight / clipped);
	nb_exact_add(&m->brier, weight * brier);
	if (!m->scores_only)
	{
		NbExactSum *bin = calibration_sums(m, calibration_bin(best_p));

		nb_exact_add(&bin[0], weight);
		nb_exact_add(&bin[1], weight * best_p);
		if (cls[best] == actual)
			nb_exact_add(&bin[2], weight);
	}
	nb_metrics_add(m, actual, cls[best], weight);
}

/* Rows [0, n) of column src into column dst from row at on, a piece within both one segment at a time. */
static void
copy_column(double **dst, uint64_t at, double *const *src, uint64_t n)
{
	for (uint64_t i = 0; i < n;)
	{
		uint64_t	piece = n - i;
		uint64_t	dst_piece;
		const double *from = score_run(src, i, &piece);
		double	   *to;

		dst_piece = piece;
		to = score_run(dst, at + i, &dst_piece);
		nb_copy(to, from, sizeof(double) * dst_piece);
		i += dst_piece;
	}
}

void
nb_metrics_merge(NbMetrics *dst, NbMetrics *src)
{
	uint32_t	n = src->labels.count;
	uint32_t   *map = nb_alloc(sizeof(uint32_t) * (n + 1));
	uint64_t	row0 = dst->rows;

	if (src->null_actual > 0)
	{
		dst->null_actual += src->null_actual;
		update_sizes(dst);
	}

	for (uint32_t c = 0; c < n; c++)
	{
		uint32_t	len;
		const char *s = nb_vocab_str(&src->labels, c, &len);

		map[c] = nb_metrics_class(dst, s, len);
		dst->seen[map[c]] |= src->seen[c];
	}
	for (uint32_t a = 0; a < n; a++)
	{
		nb_interrupt();
		for (uint32_t p = 0; p < n; p++)
			dst->confusion[(size_t) map[a] * dst->cap + map[p]] +=
				src->confusion[(size_t) a * src->cap + p];
	}
	if (dst->scored)
	{
		/* by counts of named classes (at most src's labels), not class ids: no mapping */
		nb_exact_merge(&dst->ll_sum, &src->ll_sum);
		for (uint32_t k = 0; k <= n; k++)
			if (src->ll_inv_sum[k] != NULL)
				nb_exact_merge(inv_sum(dst, k), src->ll_inv_sum[k]);
		nb_exact_merge(&dst->brier, &src->brier);
		for (int b = 0; b < NB_METRICS_BINS; b++)
			if (src->calib[b] != NULL)
			{
				NbExactSum *sums = calibration_sums(dst, b);

				for (int k = 0; k < NB_METRICS_BIN_SUMS; k++)
					nb_exact_merge(&sums[k], &src->calib[b][k]);
			}
	}
	if (dst->ranked)
	{
		/* the rows of both in their columns: src's are copied after dst's */
		reserve_rows(dst, src->rows);
		for (uint64_t i = 0; i < src->rows; i++)
		{
			nb_interrupt_at(i);
			dst->actual[row0 + i] = map[src->actual[i]];
		}
		if (dst->weighted)
			copy_column(dst->weight, row0, src->weight, src->rows);
		for (uint32_t c = 0; c < n; c++)
			if (src->score[c] != NULL)
				copy_column(column_of(dst, map[c]), row0, src->score[c], src->rows);
	}
	dst->rows += src->rows;
	nb_free(map);
}

/* ---------------------------------------------------------------- */
/* the serialized form (src/README.md, Metrics)                     */

/* An unsigned integer of size bytes, little-endian. */
static unsigned char *
put_le(unsigned char *out, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		out[i] = (unsigned char) (v >> (8 * i));
	return out + size;
}

/* n doubles, little-endian. */
static unsigned char *
put_doubles(unsigned char *out, const double *v, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		nb_write_f64(out, i, v[i]);
	return out + sizeof(double) * n;
}

static void
get_doubles(double *v, const unsigned char *in, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		v[i] = nb_read_f64(in, i);
}

static unsigned char *
put_exact(unsigned char *out, const NbExactSum *sum)
{
	nb_exact_write(sum, out);
	return out + NB_EXACT_SERIAL_SIZE;
}

/* The first rows values of a column, a segment at a time. */
static unsigned char *
put_column(unsigned char *out, double *const *column, uint64_t rows)
{
	for (uint64_t i = 0, n; i < rows; i += n)
	{
		const double *run;

		n = rows - i;
		run = score_run(column, i, &n);
		out = put_doubles(out, run, n);
	}
	return out;
}

unsigned char *
nb_metrics_write_header(unsigned char *out, uint32_t n, const void *tag, uint32_t tag_len)
{
	memcpy(out, "NBM", 3);
	out = put_le(out + 3, NB_METRICS_SERIAL_VERSION, 1);
	out = put_le(out, n, 4);
	out = put_le(out, tag_len, 4);
	if (tag_len > 0)
		memcpy(out, tag, tag_len);
	return out + tag_len;
}

#define FLAG_SCORED 1
#define FLAG_WEIGHTED 2
#define FLAG_RANKED 4
#define FLAG_SCORES_ONLY 8
#define FLAG_NULL_ACTUAL 16
#define FLAGS_ALL 31

unsigned char *
nb_metrics_write(NbMetrics *m, unsigned char *out)
{
	uint32_t	K = m->labels.count;

	out = put_le(out, (m->scored ? FLAG_SCORED : 0) | (m->weighted ? FLAG_WEIGHTED : 0) |
				 (m->ranked ? FLAG_RANKED : 0) | (m->scores_only ? FLAG_SCORES_ONLY : 0) |
				 (m->null_actual > 0 ? FLAG_NULL_ACTUAL : 0), 1);
	out = put_le(out, m->rows, 8);
	out = put_le(out, K, 4);
	for (uint32_t c = 0; c < K; c++)
	{
		uint32_t	len;
		const char *s = nb_vocab_str(&m->labels, c, &len);

		out = put_le(out, len, 4);
		memcpy(out, s, len);
		out = put_le(out + len, m->seen[c], 1);
	}
	for (uint32_t a = 0; a < K; a++)
	{
		nb_interrupt();
		out = put_doubles(out, m->confusion + (size_t) a * m->cap, K);
	}
	if (m->scored)
	{
		out = put_exact(out, &m->brier);
		out = put_exact(out, &m->ll_sum);
		for (uint32_t n = 0; n <= K; n++)
		{
			out = put_le(out, m->ll_inv_sum[n] != NULL, 1);
			if (m->ll_inv_sum[n] != NULL)
				out = put_exact(out, m->ll_inv_sum[n]);
		}
		for (int b = 0; b < NB_METRICS_BINS; b++)
		{
			out = put_le(out, m->calib[b] != NULL, 1);
			for (int k = 0; m->calib[b] != NULL && k < NB_METRICS_BIN_SUMS; k++)
				out = put_exact(out, &m->calib[b][k]);
		}
	}
	if (m->ranked)
	{
		for (uint64_t i = 0; i < m->rows; i++)
		{
			nb_interrupt_at(i);
			out = put_le(out, m->actual[i], 4);
		}
		if (m->weighted)
			out = put_column(out, m->weight, m->rows);
		for (uint32_t c = 0; c < K; c++)
		{
			out = put_le(out, m->score[c] != NULL, 1);
			if (m->score[c] != NULL)
				out = put_column(out, m->score[c], m->rows);
		}
	}
	if (m->null_actual > 0)
		out = put_le(out, m->null_actual, 8);
	return out;
}

/* The next n bytes of the input, or NULL (error set) if there are fewer. */
static const unsigned char *
take(NbMetricsIn *in, uint64_t n)
{
	const unsigned char *p = in->p;

	if ((uint64_t) (in->end - in->p) < n)
	{
		in->error = "truncated";
		return NULL;
	}
	in->p += n;
	return p;
}

static bool
fail(NbMetricsIn *in, const char *error)
{
	in->error = error;
	return false;
}

bool
nb_metrics_read_header(NbMetricsIn *in, uint32_t *n, const unsigned char **tag,
					   uint32_t *tag_len)
{
	const unsigned char *p = take(in, NB_METRICS_SERIAL_HEADER);

	if (p == NULL)
		return false;
	if (memcmp(p, "NBM", 3) != 0)
		return fail(in, "not an nb_metrics state");
	if (p[3] != NB_METRICS_SERIAL_VERSION)
		return fail(in, "an nb_metrics state of another version");
	*n = (uint32_t) nb_read_le32(p + 4);
	*tag_len = (uint32_t) nb_read_le32(p + 8);
	*tag = take(in, *tag_len);
	return *tag != NULL;
}

static bool
read_exact(NbMetricsIn *in, NbExactSum *sum)
{
	const unsigned char *p = take(in, NB_EXACT_SERIAL_SIZE);

	if (p == NULL)
		return false;
	if (!nb_exact_read(sum, p))
		return fail(in, "an exact sum out of its form");
	return true;
}

/* A presence flag (0 or 1) into *set. */
static bool
read_flag(NbMetricsIn *in, bool *set)
{
	const unsigned char *p = take(in, 1);

	if (p == NULL)
		return false;
	if (*p > 1)
		return fail(in, "a flag out of range");
	*set = *p == 1;
	return true;
}

/* A weight: finite and not negative. */
static inline bool
valid_weight(double w)
{
	return w >= 0 && w <= DBL_MAX;
}

/*
 * rows values of a column: weights (finite, >= 0) or probabilities (in [0,
 * 1], not -0, which the sort keys need).
 */
static bool
read_column(NbMetricsIn *in, double *const *column, uint64_t rows, bool probabilities)
{
	for (uint64_t i = 0, n; i < rows; i += n)
	{
		double	   *run;
		const unsigned char *p;

		n = rows - i;
		run = score_run(column, i, &n);
		if ((p = take(in, sizeof(double) * n)) == NULL)
			return false;
		get_doubles(run, p, n);
		for (uint64_t j = 0; j < n; j++)
		{
			bool		ok = probabilities ? run[j] >= 0 && run[j] <= 1 && !signbit(run[j]) :
				valid_weight(run[j]);

			nb_interrupt_at(j);
			if (!ok)
				return fail(in, probabilities ? "a probability out of range" :
							"a weight out of range");
		}
	}
	return true;
}

/* The rows of a ranked state. */
static bool
read_rows(NbMetrics *m, NbMetricsIn *in, uint64_t rows)
{
	uint32_t	K = m->labels.count;
	const unsigned char *p;
	bool		set;

	/* at least 4 bytes a row: no room is made for rows the input cannot have */
	if (rows > (uint64_t) (in->end - in->p) / sizeof(uint32_t))
		return fail(in, "truncated");
	reserve_rows(m, rows > 0 ? rows : 1);
	p = take(in, sizeof(uint32_t) * rows);
	for (uint64_t i = 0; i < rows; i++)
	{
		nb_interrupt_at(i);
		m->actual[i] = (uint32_t) nb_read_u32(p, i);
		if (m->actual[i] >= K)
			return fail(in, "a row's class out of range");
	}
	if (m->weighted && !read_column(in, m->weight, rows, false))
		return false;
	for (uint32_t c = 0; c < K; c++)
		if (!read_flag(in, &set) || (set && !read_column(in, column_of(m, c), rows, true)))
			return false;
	return true;
}

bool
nb_metrics_read(NbMetrics *m, NbMetricsIn *in)
{
	const unsigned char *p = take(in, 1 + 8 + 4);
	uint8_t		flags;
	uint64_t	rows;
	uint32_t	K;
	bool		set;

	nb_metrics_init(m, false, false, false);
	if (p == NULL)
		return false;
	flags = p[0];
	rows = nb_read_le64(p + 1);
	K = (uint32_t) nb_read_le32(p + 9);
	if (flags > FLAGS_ALL || (!(flags & FLAG_SCORED) && (flags & (FLAG_RANKED | FLAG_SCORES_ONLY))))
		return fail(in, "flags out of range");
	if (K > NB_METRICS_MAX_CLASSES)
		return fail(in, "too many labels");
	nb_metrics_free(m);
	nb_metrics_init(m, (flags & FLAG_SCORED) != 0, (flags & FLAG_RANKED) != 0,
					(flags & FLAG_WEIGHTED) != 0);
	m->scores_only = (flags & FLAG_SCORES_ONLY) != 0;
	for (uint32_t c = 0; c < K; c++)
	{
		uint32_t	len;
		const unsigned char *s;

		if ((p = take(in, 4)) == NULL)
			return false;
		len = (uint32_t) nb_read_le32(p);
		if ((s = take(in, (uint64_t) len + 1)) == NULL)
			return false;
		if (nb_metrics_find(m, (const char *) s, len) >= 0)
			return fail(in, "a label repeated");
		(void) nb_metrics_class(m, (const char *) s, len);
		m->seen[c] = s[len];
		if (m->seen[c] > (NB_SEEN_ACTUAL | NB_SEEN_PREDICTED))
			return fail(in, "a label's flags out of range");
	}
	for (uint32_t a = 0; a < K; a++)
	{
		double	   *row = m->confusion + (size_t) a * m->cap;

		nb_interrupt();
		if ((p = take(in, sizeof(double) * K)) == NULL)
			return false;
		get_doubles(row, p, K);
		for (uint32_t j = 0; j < K; j++)
			if (!valid_weight(row[j]))
				return fail(in, "a weight out of range");
	}
	if (m->scored)
	{
		if (!read_exact(in, &m->brier) || !read_exact(in, &m->ll_sum))
			return false;
		for (uint32_t n = 0; n <= K; n++)
			if (!read_flag(in, &set) || (set && !read_exact(in, inv_sum(m, n))))
				return false;
		for (int b = 0; b < NB_METRICS_BINS; b++)
		{
			if (!read_flag(in, &set))
				return false;
			for (int k = 0; set && k < NB_METRICS_BIN_SUMS; k++)
				if (!read_exact(in, &calibration_sums(m, b)[k]))
					return false;
		}
	}
	if (m->ranked && !read_rows(m, in, rows))
		return false;
	m->rows = rows;
	if (flags & FLAG_NULL_ACTUAL)
	{
		if ((p = take(in, sizeof(uint64_t))) == NULL)
			return false;
		if (nb_read_le64(p) == 0)
			return fail(in, "a count of NULL actual labels of 0 with its flag");
		m->null_actual = nb_read_le64(p);
		update_sizes(m);
	}
	return true;
}
