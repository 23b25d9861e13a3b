/*
 * nb_metrics.c — classification metrics, see nb_metrics.h.
 */
#include "nb_metrics.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_port.h"


_Static_assert(sizeof(double) << NB_METRICS_SEGMENT_BITS == NB_HUGE_PAGE,
			   "a segment of a column past the first is one huge page");

/* The segments of a column of cap rows: at least the first. */
static inline uint64_t
segments(uint64_t cap)
{
	return cap == 0 ? 1 : (cap + NB_METRICS_SEGMENT_ROWS - 1) >> NB_METRICS_SEGMENT_BITS;
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
 * The serialized size of a state as its parts are now (nb_metrics.h): kept
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
	fixed += (uint64_t) K * (4 + 1) + m->labels.arena_used;
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
nb_metrics_init(NbMetrics *m, bool scored, bool weighted)
{
	memset(m, 0, sizeof(*m));
	nb_strmap_init(&m->labels, 8);
	m->cap = 8;
	m->confusion = nb_alloc_zero(sizeof(double) * m->cap * m->cap);
	m->seen = nb_alloc_zero(m->cap);
	m->scored = scored;
	m->ranked = scored;
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
nb_metrics_init_unranked(NbMetrics *m, bool weighted)
{
	nb_metrics_init(m, true, weighted);
	m->ranked = false;
	update_sizes(m);
}

void
nb_metrics_free(NbMetrics *m)
{
	nb_strmap_free(&m->labels);
	nb_free(m->confusion);
	nb_free(m->seen);
	if (m->scored)
	{
		for (uint32_t c = 0; c < m->cap; c++)
			if (m->score[c] != NULL)
				free_column(m->score[c], m->rows_cap);
		nb_free(m->score);
		if (m->actual != NULL)
			nb_free(m->actual);
		if (m->weight != NULL)
			free_column(m->weight, m->rows_cap);
		for (uint32_t n = 0; n <= m->cap; n++)
			if (m->ll_inv_sum[n] != NULL)
				nb_free(m->ll_inv_sum[n]);
		nb_free(m->ll_inv_sum);
		for (int b = 0; b < NB_METRICS_BINS; b++)
			if (m->calib[b] != NULL)
				nb_free(m->calib[b]);
		nb_free(m->calib);
	}
	memset(m, 0, sizeof(*m));
}

int64_t
nb_metrics_find(const NbMetrics *m, const char *label, uint32_t len)
{
	return nb_strmap_find(&m->labels, label, len, nb_hash_token(label, len));
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
	int64_t		found = nb_strmap_find(&m->labels, label, len, hash);

	if (found >= 0)
		return (uint32_t) found;
	if (m->labels.count == m->cap)
		grow_classes(m);
	found = nb_strmap_add(&m->labels, label, len, hash);
	update_sizes(m);
	return (uint32_t) found;
}

int
nb_metrics_label_cmp(const NbMetrics *m, uint32_t a, uint32_t b)
{
	uint32_t	alen,
				blen;
	const char *as = nb_strmap_str(&m->labels, a, &alen);
	const char *bs = nb_strmap_str(&m->labels, b, &blen);
	int			cmp = memcmp(as, bs, alen < blen ? alen : blen);

	if (cmp != 0)
		return cmp;
	return alen < blen ? -1 : alen > blen;
}

static inline void
count(NbMetrics *m, uint32_t actual, uint32_t predicted, double weight)
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

void
nb_metrics_add(NbMetrics *m, uint32_t actual, uint32_t predicted, double weight)
{
	count(m, actual, predicted, weight);
}

void
nb_metrics_reserve_rows(NbMetrics *m, uint64_t rows)
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

double	  **
nb_metrics_column(NbMetrics *m, uint32_t c)
{
	if (m->score[c] == NULL)
	{
		m->score[c] = grow_column(NULL, 0, m->rows_cap);
		update_sizes(m);
	}
	return m->score[c];
}

/*
 * sklearn's np.clip(p, eps, 1 - eps), for p in [0, 1]: a maximum and then
 * a minimum, a form compilers can make maxsd and minsd of rather than
 * branches (GCC 12 does for the minimum).
 */
static inline double
clip(double p)
{
	double		above = p > DBL_EPSILON ? p : DBL_EPSILON;

	return above < 1.0 - DBL_EPSILON ? above : 1.0 - DBL_EPSILON;
}

NbExactSum *
nb_metrics_inv_sum(NbMetrics *m, uint32_t n)
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

/* The calibration bin of a top-class probability p in [0, 1] (nb_metrics.h). */
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
		nb_metrics_reserve_rows(m, 1);
	for (uint32_t i = 0; i < n; i++)
	{
		double		y = cls[i] == actual ? 1.0 : 0.0;
		double		d = prob[i] - y;
		double		c = clip(prob[i]);
		/* ties to the first label in byte order, as nb_predict breaks them */
		if (prob[i] > best_p ||
			(i > 0 && prob[i] == best_p && nb_metrics_label_cmp(m, cls[i], cls[best]) < 0))
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
				(void) nb_metrics_column(m, cls[i]);
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
	nb_exact_add(nb_metrics_inv_sum(m, n), weight / clipped);
	nb_exact_add(&m->brier, weight * brier);
	if (!m->scores_only)
	{
		NbExactSum *bin = calibration_sums(m, calibration_bin(best_p));

		nb_exact_add(&bin[0], weight);
		nb_exact_add(&bin[1], weight * best_p);
		if (cls[best] == actual)
			nb_exact_add(&bin[2], weight);
	}
	count(m, actual, cls[best], weight);
}

/* Rows [0, n) of column src into column dst from row at on, a piece within both one segment at a time. */
static void
copy_column(double **dst, uint64_t at, double *const *src, uint64_t n)
{
	for (uint64_t i = 0; i < n;)
	{
		uint64_t	piece = n - i;
		uint64_t	dst_piece;
		const double *from = nb_metrics_score_run(src, i, &piece);
		double	   *to;

		dst_piece = piece;
		to = nb_metrics_score_run(dst, at + i, &dst_piece);
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
		const char *s = nb_strmap_str(&src->labels, c, &len);

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
				nb_exact_merge(nb_metrics_inv_sum(dst, k), src->ll_inv_sum[k]);
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
		nb_metrics_reserve_rows(dst, src->rows);
		for (uint64_t i = 0; i < src->rows; i++)
		{
			nb_interrupt_at(i);
			dst->actual[row0 + i] = map[src->actual[i]];
		}
		if (dst->weighted)
			copy_column(dst->weight, row0, src->weight, src->rows);
		for (uint32_t c = 0; c < n; c++)
			if (src->score[c] != NULL)
				copy_column(nb_metrics_column(dst, map[c]), row0, src->score[c], src->rows);
	}
	dst->rows += src->rows;
	nb_free(map);
}

/* ---------------------------------------------------------------- */
/* the metrics                                                       */

typedef struct LabelRef
{
	const char *s;
	uint32_t	len;
	uint32_t	id;
} LabelRef;

static int
cmp_label_ref(const void *x, const void *y)
{
	const LabelRef *a = x;
	const LabelRef *b = y;
	int			cmp = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);

	if (cmp != 0)
		return cmp;
	return a->len < b->len ? -1 : a->len > b->len;
}

/*
 * Ranking rows by a class's score.  A row to sort (a positive, see
 * PositiveLevels) is its score as a key that orders as the scores do,
 * descending (equal keys are equal scores), followed with weights by its
 * weight: 8 or 16 bytes.
 */
typedef struct WeightedKey
{
	uint64_t	key;
	double		weight;
} WeightedKey;

/*
 * Scores are >= +0, so their bits order as the scores do, below 2^63;
 * subtracted from 2^63 - 1 for descending (leaving UINT64_MAX above every
 * key, for LEVEL_PAD).
 */
static inline uint64_t
descending_key(double score)
{
	uint64_t	bits;

	memcpy(&bits, &score, sizeof(bits));
	return (uint64_t) INT64_MAX - bits;
}

static inline uint64_t
key_at(const char *rows, size_t size, uint64_t i)
{
	uint64_t	key;

	memcpy(&key, rows + i * size, sizeof(key));
	return key;
}

static inline double
weight_at(const char *rows, size_t size, uint64_t i)
{
	double		w = 1.0;

	if (size == sizeof(WeightedKey))
		memcpy(&w, rows + i * size + offsetof(WeightedKey, weight), sizeof(w));
	return w;
}

/* Radix sort digits: 11 bits, at most six passes over 64-bit keys. */
#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
#define RADIX_PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)
#define RADIX_HIST (RADIX_PASSES * RADIX_SIZE)

/*
 * The digits a sort uses: passes digits of (key - lo) >> shift.  Keys are
 * first sorted on the top PREFIX_BITS bits of their range only (three
 * passes instead of five or six: the scattered writes of a pass are most of
 * the cost of a sort), and rows whose prefixes tie, few when scores are
 * spread, are then put in order among themselves (order_prefix_ties).
 */
typedef struct RadixDigits
{
	uint64_t	lo;
	int			shift;
	int			passes;
} RadixDigits;

#define PREFIX_BITS (3 * RADIX_BITS)
/* runs of tied prefixes up to this long are put in order by insertion */
#define SHORT_RUN 64

/* The digits of the keys lo..hi, at most PREFIX_BITS of them (shift the rest). */
static RadixDigits
range_digits(uint64_t lo, uint64_t hi, int max_bits)
{
	RadixDigits rd = {lo, 0, 0};
	int			width = hi > lo ? 64 - nb_clz64(hi - lo) : 0;

	if (width > max_bits)
		rd.shift = width - max_bits;
	rd.passes = (width - rd.shift + RADIX_BITS - 1) / RADIX_BITS;
	return rd;
}

static inline uint64_t
prefix_of(const RadixDigits *rd, uint64_t key)
{
	return (key - rd->lo) >> rd->shift;
}

/* Count the digits of a key into hist (rd->passes times RADIX_SIZE counts). */
static inline void
count_key(uint64_t *hist, const RadixDigits *rd, uint64_t key)
{
	uint64_t	p = prefix_of(rd, key);

	for (int d = 0; d < rd->passes; d++)
		hist[d * RADIX_SIZE + ((p >> (RADIX_BITS * d)) & (RADIX_SIZE - 1))]++;
}

/*
 * Sort n rows of size bytes by the digits rd of their keys: least
 * significant digit radix sort, passes skipped where every key has the
 * same digit; hist holds the counts of every row's digits (count_key),
 * made while the rows were.  tmp has room for n rows; returns whichever
 * buffer holds the result.  Inline, so that each row size gets its own
 * copy with fixed-size copies.
 */
NB_HOT_INLINE char *
sort_by_key(char *rows, char *tmp, uint64_t n, size_t size, uint64_t *hist,
			const RadixDigits *rd)
{
	for (int d = 0; d < rd->passes; d++)
	{
		uint64_t   *h = hist + d * RADIX_SIZE;
		uint64_t	sum = 0;
		bool		trivial = false;
		char	   *swap;

		for (int b = 0; b < RADIX_SIZE; b++)
		{
			uint64_t	c = h[b];

			trivial |= c == n;
			h[b] = sum;
			sum += c;
		}
		if (trivial)
			continue;
		for (uint64_t i = 0; i < n; i++)
		{
			uint64_t	digit = (prefix_of(rd, key_at(rows, size, i)) >> (RADIX_BITS * d)) &
				(RADIX_SIZE - 1);

			nb_interrupt_at(i);
			memcpy(tmp + h[digit]++ * size, rows + i * size, size);
		}
		swap = rows;
		rows = tmp;
		tmp = swap;
	}
	return rows;
}

/*
 * Put in key order the n rows of a run whose keys share everything but
 * their low shift bits: by insertion when the run is short, else by a radix
 * sort of those bits (hist: room for RADIX_HIST counts; tmp for n rows).
 */
NB_HOT_INLINE void
sort_run(char *rows, char *tmp, uint64_t n, size_t size, uint64_t base, int shift,
		 uint64_t *hist)
{
	if (n <= SHORT_RUN)
	{
		char		row[sizeof(WeightedKey)];

		for (uint64_t i = 1; i < n; i++)
		{
			uint64_t	key = key_at(rows, size, i);
			uint64_t	j = i;

			if (key_at(rows, size, i - 1) <= key)
				continue;
			memcpy(row, rows + i * size, size);
			for (; j > 0 && key_at(rows, size, j - 1) > key; j--)
				memcpy(rows + j * size, rows + (j - 1) * size, size);
			memcpy(rows + j * size, row, size);
		}
	}
	else
	{
		RadixDigits rd = range_digits(base, base + ((UINT64_C(1) << shift) - 1), shift);
		char	   *sorted;

		memset(hist, 0, sizeof(uint64_t) * rd.passes * RADIX_SIZE);
		for (uint64_t i = 0; i < n; i++)
		{
			nb_interrupt_at(i);
			count_key(hist, &rd, key_at(rows, size, i));
		}
		sorted = sort_by_key(rows, tmp, n, size, hist, &rd);
		if (sorted != rows)
			memcpy(rows, sorted, n * size);
	}
}

/* After a sort on the prefixes rd: each run of tied prefixes in key order. */
NB_HOT_INLINE void
order_prefix_ties(char *rows, char *tmp, uint64_t n, size_t size, const RadixDigits *rd,
				  uint64_t *hist)
{
	if (rd->shift == 0)
		return;
	for (uint64_t i = 0, j; i < n; i = j)
	{
		uint64_t	prefix = prefix_of(rd, key_at(rows, size, i));

		for (j = i + 1; j < n && prefix_of(rd, key_at(rows, size, j)) == prefix; j++)
			nb_interrupt_at(j);
		if (j - i > 1)
			sort_run(rows + i * size, tmp + i * size, j - i, size,
					 rd->lo + (prefix << rd->shift), rd->shift, hist);
	}
}

/*
 * The distinct scores of a class's positive rows (those whose actual class
 * it is), in key order, and the weights counted at each: the points of the
 * class's curves.  Between two successive positive scores only negatives
 * move the curves, and the area they add, their weight times the positive
 * weight above them, does not depend on their order among themselves; the
 * precision is taken only where a positive is.  So only the positives are
 * sorted, and each negative is counted into its place among them: onto one
 * of their scores, or into the gap above it (or below the last).
 */
typedef struct PositiveLevels
{
	uint64_t	n;				/* distinct positive keys */
	uint64_t   *key;			/* n, ascending, then LEVEL_WINDOW of LEVEL_PAD */
	double	   *pos;			/* n: positive weight at each key */
	double	   *neg;			/* 2 (n + 1): [2j] above key j, [2j + 1] at it; [2n] below all */
	/* buckets of the key range, for finding a key's place: */
	RadixDigits range;			/* of key[0] .. key[n - 1]: a key's bucket is prefix_of it */
	uint64_t	buckets;		/* the last one holds key[n - 1] */
	uint64_t   *first;			/* buckets + 2: the first key of each bucket or after, then n */
} PositiveLevels;

/*
 * A bucket holds about one key.  A key is counted into place among the
 * keys of its bucket, when they are at most LEVEL_WINDOW, without branches
 * (which mispredict when scores are random): the keys past a bucket are
 * above any key in it, the pads above every key.  A crowded bucket is
 * searched by bisection.
 */
#define LEVEL_BUCKET_BITS(n) (64 - nb_clz64(n))
#define LEVEL_WINDOW 2
#define LEVEL_PAD UINT64_MAX

/*
 * Room for the levels of up to most positives, made once for every class
 * (the largest blocks would otherwise be mapped and faulted in anew for
 * each): a key's bucket is below 2^LEVEL_BUCKET_BITS(n) <= 2 n.
 */
static void
init_levels(PositiveLevels *lv, uint64_t most)
{
	lv->key = nb_alloc(sizeof(uint64_t) * (most + LEVEL_WINDOW));
	lv->pos = nb_alloc(sizeof(double) * (most + 1));
	lv->neg = nb_alloc(sizeof(double) * 2 * (most + 1));
	lv->first = nb_alloc(sizeof(uint64_t) * (2 * most + 2));
}

/* The levels of 1 <= n <= most sorted positive rows. */
NB_HOT_INLINE void
make_levels(PositiveLevels *lv, const char *rows, uint64_t n, size_t size)
{
	uint64_t	j = 0;

	lv->n = 0;
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	key = key_at(rows, size, i);

		nb_interrupt_at(i);
		if (lv->n == 0 || lv->key[lv->n - 1] != key)
		{
			lv->key[lv->n] = key;
			lv->pos[lv->n++] = 0;
		}
		lv->pos[lv->n - 1] += weight_at(rows, size, i);
	}
	for (int t = 0; t < LEVEL_WINDOW; t++)
		lv->key[lv->n + t] = LEVEL_PAD;
	memset(lv->neg, 0, sizeof(double) * 2 * (lv->n + 1));
	lv->range = range_digits(lv->key[0], lv->key[lv->n - 1], LEVEL_BUCKET_BITS(lv->n));
	lv->buckets = prefix_of(&lv->range, lv->key[lv->n - 1]) + 1;
	for (uint64_t b = 0; b <= lv->buckets + 1; b++)
	{
		nb_interrupt_at(b);
		while (j < lv->n && prefix_of(&lv->range, lv->key[j]) < b)
			j++;
		lv->first[b] = j;
	}
}

static void
free_levels(PositiveLevels *lv)
{
	nb_free(lv->key);
	nb_free(lv->pos);
	nb_free(lv->neg);
	nb_free(lv->first);
}

/* A key's bucket: below the first, the first; past the last, one after it (keys n and on). */
static inline uint64_t
level_bucket(const PositiveLevels *lv, uint64_t key)
{
	uint64_t	b = prefix_of(&lv->range, key);

	return key < lv->range.lo ? 0 : b > lv->buckets ? lv->buckets : b;
}

/* Index into lv->neg of a key in bucket b: onto a positive key, or above it. */
NB_HOT_INLINE uint64_t
level_slot(const PositiveLevels *lv, uint64_t key, uint64_t b)
{
	uint64_t	j = lv->first[b];
	uint64_t	end = lv->first[b + 1];

	if (end - j > LEVEL_WINDOW)
	{
		while (j < end)
		{
			uint64_t	mid = j + (end - j) / 2;

			if (lv->key[mid] < key)
				j = mid + 1;
			else
				end = mid;
		}
	}
	else
	{
		const uint64_t *window = lv->key + j;

		for (int t = 0; t < LEVEL_WINDOW; t++)
			j += window[t] < key;
	}
	return 2 * j + (lv->key[j] == key);
}

/*
 * Count the negatives of class c (rows whose actual class is another) into
 * lv, a block of rows at a time: the negatives and their buckets picked out
 * without a branch (the buckets fetched ahead), then counted; returns their
 * weight.  A negative above every positive or below every one counts in
 * the first or the last slot straight away: with probabilities as naive
 * Bayes gives them on text, most negatives are far below the positives.
 */
#define NEGATIVE_BLOCK 64

NB_HOT_INLINE double
count_negatives(const NbMetrics *m, uint32_t c, PositiveLevels *lv)
{
	double	   *const *score = m->score[c];
	uint64_t	top = lv->key[0];
	uint64_t	bottom = lv->key[lv->n - 1];
	double		neg = 0,
				above = 0,
				below = 0;
	uint64_t	work = 0;

	for (uint64_t i0 = 0; i0 < m->rows; i0 += NEGATIVE_BLOCK)
	{
		uint64_t	end = m->rows - i0 < NEGATIVE_BLOCK ? m->rows : i0 + NEGATIVE_BLOCK;
		uint64_t	key[NEGATIVE_BLOCK];
		uint64_t	bucket[NEGATIVE_BLOCK];
		double		weight[NEGATIVE_BLOCK];
		int			k = 0;
		/* in one segment: NEGATIVE_BLOCK divides NB_METRICS_SEGMENT_ROWS */
		const double *block = score != NULL ? nb_metrics_score_at(score, i0) : NULL;
		const double *weights = m->weighted ? nb_metrics_score_at(m->weight, i0) : NULL;

		nb_interrupt_count(&work, NEGATIVE_BLOCK);
		/* every row written, the negatives kept: no branch to mispredict */
		for (uint64_t i = i0; i < end; i++)
		{
			uint32_t	negative = m->actual[i] != c;
			uint32_t	is_above;
			uint32_t	is_below;

			key[k] = descending_key(block != NULL ? block[i - i0] : 0.0);
			is_above = key[k] < top;
			is_below = key[k] > bottom;
			bucket[k] = level_bucket(lv, key[k]);
			weight[k] = weights != NULL ? weights[i - i0] : 1.0;
			/* sums in row order, as the slots' would be: + 0.0 leaves them as they are */
			neg += (double) negative * weight[k];
			above += (double) (negative & is_above) * weight[k];
			below += (double) (negative & is_below) * weight[k];
			k += negative & !(is_above | is_below);
		}
		for (int t = 0; t < k; t++)
			lv->neg[level_slot(lv, key[t], bucket[t])] += weight[t];
	}
	lv->neg[0] += above;
	lv->neg[2 * lv->n] += below;
	return neg;
}

/*
 * ROC AUC and average precision of class c against the rest, with rows of
 * size bytes (8 unweighted, 16 weighted): buf holds the class's npos
 * positive rows, tmp has room for as many, lv for their levels.  The area
 * is the trapezoids between the points of successive distinct scores, as
 * sklearn's roc_curve and auc; average precision the sum over those points
 * of the recall gained times the precision there, as
 * average_precision_score.
 */
NB_HOT_INLINE void
rank_class_sized(const NbMetrics *m, uint32_t c, uint64_t npos, char *buf, char *tmp,
				 PositiveLevels *lv, size_t size, double *auc, double *ap)
{
	uint64_t   *hist;
	char	   *sorted;
	double		tp = 0,
				fp = 0,
				area = 0,
				avg = 0;
	double		pos = 0,
				neg = 0;
	uint64_t	lo = UINT64_MAX,
				hi = 0;
	RadixDigits rd;

	*auc = NAN;
	*ap = NAN;
	for (uint64_t i = 0; i < npos; i++)
	{
		uint64_t	key = key_at(buf, size, i);

		nb_interrupt_at(i);
		lo = key < lo ? key : lo;
		hi = key > hi ? key : hi;
		pos += weight_at(buf, size, i);
	}
	if (pos <= 0)
		return;
	rd = range_digits(lo, hi, PREFIX_BITS);
	hist = nb_alloc_zero(sizeof(uint64_t) * RADIX_HIST);
	for (uint64_t i = 0; i < npos; i++)
	{
		nb_interrupt_at(i);
		count_key(hist, &rd, key_at(buf, size, i));
	}
	sorted = sort_by_key(buf, tmp, npos, size, hist, &rd);
	/* the buffer the rows are not in is free for their ties */
	order_prefix_ties(sorted, sorted == buf ? tmp : buf, npos, size, &rd, hist);
	nb_free(hist);
	make_levels(lv, sorted, npos, size);

	neg = count_negatives(m, c, lv);

	/* the points, highest score first */
	for (uint64_t j = 0;; j++)
	{
		double		dtp,
					dfp;

		nb_interrupt_at(j);
		area += lv->neg[2 * j] * tp;
		fp += lv->neg[2 * j];
		if (j == lv->n)
			break;
		dtp = lv->pos[j];
		dfp = lv->neg[2 * j + 1];
		area += dfp * (tp + dtp / 2);
		tp += dtp;
		fp += dfp;
		if (dtp > 0)
			avg += dtp / pos * (tp / (tp + fp));
	}
	if (neg > 0)
		*auc = area / (pos * neg);
	*ap = avg;
}

/*
 * Every row into its actual class's positives: class c's at buf from row
 * start[c] on (which this advances past them).  One pass for every class.
 */
NB_HOT_INLINE void
gather_positives_sized(const NbMetrics *m, char *buf, uint64_t *start, size_t size)
{
	for (uint64_t i = 0; i < m->rows; i++)
	{
		uint32_t	a = m->actual[i];
		WeightedKey row;

		nb_interrupt_at(i);
		row.key = descending_key(m->score[a] != NULL ? *nb_metrics_score_at(m->score[a], i) : 0.0);
		row.weight = m->weighted ? *nb_metrics_score_at(m->weight, i) : 1.0;
		memcpy(buf + start[a]++ * size, &row, size);
	}
}

static void
rank_class(const NbMetrics *m, uint32_t c, uint64_t npos, char *buf, char *tmp,
		   PositiveLevels *lv, double *auc, double *ap)
{
	if (m->weighted)
		rank_class_sized(m, c, npos, buf, tmp, lv, sizeof(WeightedKey), auc, ap);
	else
		rank_class_sized(m, c, npos, buf, tmp, lv, sizeof(uint64_t), auc, ap);
}

/*
 * Log loss from the sums made row by row: a row naming n of the K classes
 * adds (K - n) eps to its clipped sum S (see nb_metrics.h).
 */
static double
log_loss(const NbMetrics *m, double total)
{
	uint32_t	K = m->labels.count;
	NbExactSum	loss = m->ll_sum;

	for (uint32_t n = 1; n <= K; n++)
		if (m->ll_inv_sum[n] != NULL)
			nb_exact_add(&loss, (double) (K - n) * DBL_EPSILON * nb_exact_value(m->ll_inv_sum[n]));
	return nb_exact_value(&loss) / total;
}

/* ROC AUC and average precision of every class, and their macro averages. */
static void
rank_classes(const NbMetrics *m, NbMetricsResult *r)
{
	uint32_t	K = m->labels.count;
	size_t		size = m->weighted ? sizeof(WeightedKey) : sizeof(uint64_t);
	uint64_t   *npos = nb_alloc_zero(sizeof(uint64_t) * (K + 1));
	uint64_t   *start = nb_alloc(sizeof(uint64_t) * (K + 1));
	uint64_t	most = 0;
	uint64_t	sum = 0;
	char	   *rows;
	char	   *tmp;
	PositiveLevels lv;
	double		auc_sum = 0,
				ap_sum = 0;
	uint32_t	auc_n = 0,
				ap_n = 0;

	for (uint64_t i = 0; i < m->rows; i++)
	{
		nb_interrupt_at(i);
		npos[m->actual[i]]++;
	}
	for (uint32_t c = 0; c < K; c++)
	{
		most = npos[c] > most ? npos[c] : most;
		start[c] = sum;
		sum += npos[c];
	}
	rows = nb_alloc(size * (m->rows + 1));
	tmp = nb_alloc(size * (most + 1));
	init_levels(&lv, most);
	if (m->weighted)
		gather_positives_sized(m, rows, start, sizeof(WeightedKey));
	else
		gather_positives_sized(m, rows, start, sizeof(uint64_t));
	for (uint32_t k = 0; k < K; k++)
	{
		uint32_t	c = r->order[k];
		NbClassMetrics *cm = &r->cls[c];

		/* start[c] is now past class c's positives */
		rank_class(m, c, npos[c], rows + (start[c] - npos[c]) * size, tmp, &lv,
				   &cm->roc_auc, &cm->average_precision);
		if (!isnan(cm->roc_auc))
		{
			auc_sum += cm->roc_auc;
			auc_n++;
		}
		if (!isnan(cm->average_precision))
		{
			ap_sum += cm->average_precision;
			ap_n++;
		}
	}
	/*
	 * Two classes: sklearn's binary roc_auc_score, the AUC of the class
	 * last in order (its positive label).  The other class's AUC is the
	 * same but where probabilities round to 0 or 1 and tie there.
	 */
	if (K == 2)
		r->roc_auc_macro = r->cls[r->order[1]].roc_auc;
	else if (auc_n > 0)
		r->roc_auc_macro = auc_sum / auc_n;
	if (ap_n > 0)
		r->average_precision_macro = ap_sum / ap_n;
	nb_free(npos);
	nb_free(start);
	nb_free(rows);
	nb_free(tmp);
	free_levels(&lv);
}

/* The calibration bins and the expected calibration error (nb_metrics.h). */
static void
calibration(const NbMetrics *m, double total, NbMetricsResult *r)
{
	double		gap = 0;

	for (int b = 0; b < NB_METRICS_BINS; b++)
	{
		const NbExactSum *sums = m->calib[b];
		double		weight,
					confident,
					right;

		if (sums == NULL)
			continue;
		weight = nb_exact_value(&sums[0]);
		confident = nb_exact_value(&sums[1]);
		right = nb_exact_value(&sums[2]);
		r->bins[b].weight = weight;
		if (weight > 0)
		{
			r->bins[b].confidence = confident / weight;
			r->bins[b].accuracy = right / weight;
		}
		gap += fabs(right - confident);
	}
	r->ece = gap / total;
}

void
nb_metrics_compute(NbMetrics *m, NbMetricsResult *r)
{
	uint32_t	K = m->labels.count;
	LabelRef   *refs = nb_alloc(sizeof(LabelRef) * (K + 1));
	double	   *true_sum = nb_alloc_zero(sizeof(double) * (K + 1));
	double	   *pred_sum = nb_alloc_zero(sizeof(double) * (K + 1));
	double		total = 0,
				correct = 0,
				recall_sum = 0;
	uint32_t	reported = 0,
				supported = 0;
	NbAverages	wsum = {0, 0, 0};

	memset(r, 0, sizeof(*r));
	r->n_classes = K;
	r->order = nb_alloc(sizeof(uint32_t) * (K + 1));
	r->cls = nb_alloc_zero(sizeof(NbClassMetrics) * (K + 1));
	for (uint32_t c = 0; c < K; c++)
	{
		refs[c].s = nb_strmap_str(&m->labels, c, &refs[c].len);
		refs[c].id = c;
	}
	nb_sort(refs, K, sizeof(LabelRef), cmp_label_ref);
	for (uint32_t k = 0; k < K; k++)
		r->order[k] = refs[k].id;
	nb_free(refs);

	/*
	 * Every sum in label order, so that the result does not depend on the
	 * order labels were first seen in (which parallel plans change).
	 */
	for (uint32_t i = 0; i < K; i++)
	{
		uint32_t	a = r->order[i];

		nb_interrupt();
		for (uint32_t j = 0; j < K; j++)
		{
			uint32_t	p = r->order[j];
			double		w = m->confusion[(size_t) a * m->cap + p];

			true_sum[a] += w;
			pred_sum[p] += w;
			total += w;
		}
		correct += m->confusion[(size_t) a * m->cap + a];
	}

	for (uint32_t k = 0; k < K; k++)
	{
		uint32_t	c = r->order[k];
		NbClassMetrics *cm = &r->cls[c];
		double		tp = m->confusion[(size_t) c * m->cap + c];

		cm->roc_auc = NAN;
		cm->average_precision = NAN;
		if (!nb_metrics_reported(m, c))
			continue;
		cm->support = true_sum[c];
		cm->precision = pred_sum[c] > 0 ? tp / pred_sum[c] : 0.0;
		cm->recall = true_sum[c] > 0 ? tp / true_sum[c] : 0.0;
		/* sklearn's expression, so that the roundings agree too */
		cm->f1 = cm->precision + cm->recall > 0 ?
			2.0 * cm->precision * cm->recall / (cm->precision + cm->recall) : 0.0;
		reported++;
		r->macro.precision += cm->precision;
		r->macro.recall += cm->recall;
		r->macro.f1 += cm->f1;
		wsum.precision += cm->support * cm->precision;
		wsum.recall += cm->support * cm->recall;
		wsum.f1 += cm->support * cm->f1;
		if (true_sum[c] > 0)
		{
			recall_sum += cm->recall;
			supported++;
		}
	}
	if (reported > 0)
	{
		r->macro.precision /= reported;
		r->macro.recall /= reported;
		r->macro.f1 /= reported;
	}
	/* zero support: sklearn's zero_division value 0 for every average */
	if (total > 0)
	{
		r->weighted.precision = wsum.precision / total;
		r->weighted.recall = wsum.recall / total;
		r->weighted.f1 = wsum.f1 / total;
	}
	r->accuracy = total > 0 ? correct / total : NAN;
	r->balanced_accuracy = supported > 0 ? recall_sum / supported : NAN;

	r->log_loss = NAN;
	r->brier = NAN;
	r->roc_auc_macro = NAN;
	r->average_precision_macro = NAN;
	r->ece = NAN;
	for (int b = 0; b < NB_METRICS_BINS; b++)
		r->bins[b].confidence = r->bins[b].accuracy = NAN;
	if (nb_metrics_calibrated(m) && m->rows > 0 && total > 0)
	{
		/*
		 * the total weight as the exact sum of the bins' (every row is in
		 * one), not the confusion's: the same bits in any order of rows
		 */
		NbExactSum	exact_total;

		nb_exact_init(&exact_total);
		for (int b = 0; b < NB_METRICS_BINS; b++)
			if (m->calib[b] != NULL)
				nb_exact_merge(&exact_total, &m->calib[b][0]);
		total = nb_exact_value(&exact_total);
		r->log_loss = log_loss(m, total);
		r->brier = nb_exact_value(&m->brier) / total;
		calibration(m, total, r);
	}
	if (m->ranked && m->rows > 0)
		rank_classes(m, r);
	nb_free(true_sum);
	nb_free(pred_sum);
}

void
nb_metrics_result_free(NbMetricsResult *r)
{
	nb_free(r->order);
	nb_free(r->cls);
	memset(r, 0, sizeof(*r));
}

/* The position after JSON whitespace from i. */
static size_t
json_space(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_hex_digit(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A JSON string at i: the position after it, or 0 if there is none. */
static size_t
json_string(const char *s, size_t i, size_t n)
{
	if (i >= n || s[i] != '"')
		return 0;
	for (i++; i < n; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c == '"')
			return i + 1;
		if (c < 0x20)
			return 0;
		if (c != '\\')
			continue;
		if (++i >= n)
			return 0;
		switch (s[i])
		{
			case '"':
			case '\\':
			case '/':
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't':
				break;
			case 'u':
				for (int k = 0; k < 4; k++)
					if (++i >= n || !is_hex_digit(s[i]))
						return 0;
				break;
			default:
				return 0;
		}
	}
	return 0;
}

/* A JSON number or null at i: the position after it, or 0 if there is none. */
static size_t
json_number_or_null(const char *s, size_t i, size_t n)
{
	size_t		start;

	if (n - i >= 4 && memcmp(s + i, "null", 4) == 0)
		return i + 4;
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && is_digit(s[i]))
		while (i < n && is_digit(s[i]))
			i++;
	else
		return 0;
	if (i < n && s[i] == '.')
	{
		start = ++i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == start)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E'))
	{
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		start = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == start)
			return 0;
	}
	return i;
}

bool
nb_metrics_label_is_scores(const char *s, size_t n)
{
	size_t		i = json_space(s, 0, n);

	if (i >= n || s[i] != '{')
		return false;
	for (;;)
	{
		i = json_string(s, json_space(s, i + 1, n), n);
		if (i == 0)
			return false;
		i = json_space(s, i, n);
		if (i >= n || s[i] != ':')
			return false;
		i = json_number_or_null(s, json_space(s, i + 1, n), n);
		if (i == 0)
			return false;
		i = json_space(s, i, n);
		if (i < n && s[i] == ',')
			continue;
		return i < n && s[i] == '}' && json_space(s, i + 1, n) == n;
	}
}

/* ---------------------------------------------------------------- */
/* the serialized form (nb_metrics.h)                                */

static unsigned char *
put_u8(unsigned char *out, uint8_t v)
{
	*out = v;
	return out + 1;
}

static unsigned char *
put_u32(unsigned char *out, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		out[i] = (unsigned char) (v >> (8 * i));
	return out + 4;
}

static unsigned char *
put_u64(unsigned char *out, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		out[i] = (unsigned char) (v >> (8 * i));
	return out + 8;
}

static uint32_t
get_u32(const unsigned char *in)
{
	uint32_t	v = 0;

	for (int i = 0; i < 4; i++)
		v |= (uint32_t) in[i] << (8 * i);
	return v;
}

static uint64_t
get_u64(const unsigned char *in)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t) in[i] << (8 * i);
	return v;
}

/* n doubles, little-endian: a copy where the machine is. */
static unsigned char *
put_doubles(unsigned char *out, const double *v, uint64_t n)
{
#ifdef NB_LITTLE_ENDIAN
	memcpy(out, v, sizeof(double) * n);
#else
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	bits;

		memcpy(&bits, &v[i], sizeof(bits));
		put_u64(out + 8 * i, bits);
	}
#endif
	return out + sizeof(double) * n;
}

static void
get_doubles(double *v, const unsigned char *in, uint64_t n)
{
#ifdef NB_LITTLE_ENDIAN
	memcpy(v, in, sizeof(double) * n);
#else
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	bits = get_u64(in + 8 * i);

		memcpy(&v[i], &bits, sizeof(bits));
	}
#endif
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
		run = nb_metrics_score_run(column, i, &n);
		out = put_doubles(out, run, n);
	}
	return out;
}

unsigned char *
nb_metrics_write_header(unsigned char *out, uint32_t n, const void *tag, uint32_t tag_len)
{
	memcpy(out, "NBM", 3);
	out = put_u8(out + 3, NB_METRICS_SERIAL_VERSION);
	out = put_u32(out, n);
	out = put_u32(out, tag_len);
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

	out = put_u8(out, (m->scored ? FLAG_SCORED : 0) | (m->weighted ? FLAG_WEIGHTED : 0) |
				 (m->ranked ? FLAG_RANKED : 0) | (m->scores_only ? FLAG_SCORES_ONLY : 0) |
				 (m->null_actual > 0 ? FLAG_NULL_ACTUAL : 0));
	out = put_u64(out, m->rows);
	out = put_u32(out, K);
	for (uint32_t c = 0; c < K; c++)
	{
		uint32_t	len;
		const char *s = nb_strmap_str(&m->labels, c, &len);

		out = put_u32(out, len);
		memcpy(out, s, len);
		out = put_u8(out + len, m->seen[c]);
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
			out = put_u8(out, m->ll_inv_sum[n] != NULL);
			if (m->ll_inv_sum[n] != NULL)
				out = put_exact(out, m->ll_inv_sum[n]);
		}
		for (int b = 0; b < NB_METRICS_BINS; b++)
		{
			out = put_u8(out, m->calib[b] != NULL);
			for (int k = 0; m->calib[b] != NULL && k < NB_METRICS_BIN_SUMS; k++)
				out = put_exact(out, &m->calib[b][k]);
		}
	}
	if (m->ranked)
	{
		for (uint64_t i = 0; i < m->rows; i++)
		{
			nb_interrupt_at(i);
			out = put_u32(out, m->actual[i]);
		}
		if (m->weighted)
			out = put_column(out, m->weight, m->rows);
		for (uint32_t c = 0; c < K; c++)
		{
			out = put_u8(out, m->score[c] != NULL);
			if (m->score[c] != NULL)
				out = put_column(out, m->score[c], m->rows);
		}
	}
	if (m->null_actual > 0)
		out = put_u64(out, m->null_actual);
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
	*n = get_u32(p + 4);
	*tag_len = get_u32(p + 8);
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
		run = nb_metrics_score_run(column, i, &n);
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

	/* at least 4 bytes a row: no room is made for rows the input cannot have */
	if (rows > (uint64_t) (in->end - in->p) / sizeof(uint32_t))
		return fail(in, "truncated");
	nb_metrics_reserve_rows(m, rows > 0 ? rows : 1);
	p = take(in, sizeof(uint32_t) * rows);
	for (uint64_t i = 0; i < rows; i++)
	{
		nb_interrupt_at(i);
		m->actual[i] = get_u32(p + 4 * i);
		if (m->actual[i] >= K)
			return fail(in, "a row's class out of range");
	}
	if (m->weighted && !read_column(in, m->weight, rows, false))
		return false;
	for (uint32_t c = 0; c < K; c++)
	{
		if ((p = take(in, 1)) == NULL)
			return false;
		if (*p > 1)
			return fail(in, "a flag out of range");
		if (*p == 1 && !read_column(in, nb_metrics_column(m, c), rows, true))
			return false;
	}
	return true;
}

bool
nb_metrics_read(NbMetrics *m, NbMetricsIn *in)
{
	const unsigned char *p = take(in, 1 + 8 + 4);
	uint8_t		flags;
	uint64_t	rows;
	uint32_t	K;

	nb_metrics_init(m, false, false);
	if (p == NULL)
		return false;
	flags = p[0];
	rows = get_u64(p + 1);
	K = get_u32(p + 9);
	if (flags > FLAGS_ALL || (!(flags & FLAG_SCORED) && (flags & (FLAG_RANKED | FLAG_SCORES_ONLY))))
		return fail(in, "flags out of range");
	if (K > NB_METRICS_MAX_CLASSES)
		return fail(in, "too many labels");
	nb_metrics_free(m);
	if ((flags & FLAG_SCORED) && !(flags & FLAG_RANKED))
		nb_metrics_init_unranked(m, (flags & FLAG_WEIGHTED) != 0);
	else
		nb_metrics_init(m, (flags & FLAG_SCORED) != 0, (flags & FLAG_WEIGHTED) != 0);
	m->scores_only = (flags & FLAG_SCORES_ONLY) != 0;
	for (uint32_t c = 0; c < K; c++)
	{
		uint32_t	len;
		const unsigned char *s;

		if ((p = take(in, 4)) == NULL)
			return false;
		len = get_u32(p);
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
		{
			if ((p = take(in, 1)) == NULL)
				return false;
			if (*p > 1)
				return fail(in, "a flag out of range");
			if (*p == 1 && !read_exact(in, nb_metrics_inv_sum(m, n)))
				return false;
		}
		for (int b = 0; b < NB_METRICS_BINS; b++)
		{
			if ((p = take(in, 1)) == NULL)
				return false;
			if (*p > 1)
				return fail(in, "a flag out of range");
			for (int k = 0; *p == 1 && k < NB_METRICS_BIN_SUMS; k++)
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
		if (get_u64(p) == 0)
			return fail(in, "a count of NULL actual labels of 0 with its flag");
		m->null_actual = get_u64(p);
		update_sizes(m);
	}
	return true;
}
