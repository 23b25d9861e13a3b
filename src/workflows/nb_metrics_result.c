/*
 * nb_metrics_result.c — the metrics of a state (nb_metrics_compute, see
 * src/README.md, Metrics): counts, log loss, calibration, and the rows
 * ranked by each class's score for ROC AUC and average precision.
 */
#include "nb_metrics.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_format.h"
#include "nb_interrupt.h"
#include "nb_port.h"

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

	return nb_strcmp(a->s, a->len, b->s, b->len);
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

/* The digits of keys: passes digits of (key - lo) >> shift. */
typedef struct RadixDigits
{
	uint64_t	lo;
	int			shift;
	int			passes;
} RadixDigits;

/* The digits of the keys lo..hi, at most max_bits of them (shift the rest). */
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

/*
 * Sort n rows of size bytes by the digits rd of their keys: least
 * significant digit radix sort, passes skipped where every key has the
 * same digit; hist has room for RADIX_HIST counts, tmp for n rows; returns
 * whichever buffer holds the result.  Inline, so that each row size gets
 * its own copy with fixed-size copies.
 */
NB_HOT_INLINE char *
sort_by_key(char *rows, char *tmp, uint64_t n, size_t size, uint64_t *hist,
			const RadixDigits *rd)
{
	memset(hist, 0, sizeof(uint64_t) * rd->passes * RADIX_SIZE);
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	p;

		nb_interrupt_at(i);
		p = prefix_of(rd, key_at(rows, size, i));
		for (int d = 0; d < rd->passes; d++)
			hist[d * RADIX_SIZE + ((p >> (RADIX_BITS * d)) & (RADIX_SIZE - 1))]++;
	}
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
	rd = range_digits(lo, hi, 64);
	hist = nb_alloc(sizeof(uint64_t) * RADIX_HIST);
	sorted = sort_by_key(buf, tmp, npos, size, hist, &rd);
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

/*
 * Log loss from the sums made row by row: a row naming n of the K classes
 * adds (K - n) eps to its clipped sum S (src/README.md, Metrics).
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

/* ROC AUC and average precision of every class, and their macro averages, with rows of size bytes. */
NB_HOT_INLINE void
rank_classes_sized(const NbMetrics *m, NbMetricsResult *r, size_t size)
{
	uint32_t	K = m->labels.count;
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
	gather_positives_sized(m, rows, start, size);
	for (uint32_t k = 0; k < K; k++)
	{
		uint32_t	c = r->order[k];
		NbClassMetrics *cm = &r->cls[c];

		/* start[c] is now past class c's positives */
		rank_class_sized(m, c, npos[c], rows + (start[c] - npos[c]) * size, tmp, &lv, size,
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

static void
rank_classes(const NbMetrics *m, NbMetricsResult *r)
{
	if (m->weighted)
		rank_classes_sized(m, r, sizeof(WeightedKey));
	else
		rank_classes_sized(m, r, sizeof(uint64_t));
}

/* The calibration bins and the expected calibration error (src/README.md, Metrics). */
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

/* r->order: the classes in the order of their labels' bytes. */
static void
order_labels(const NbMetrics *m, NbMetricsResult *r)
{
	uint32_t	K = m->labels.count;
	LabelRef   *refs = nb_alloc(sizeof(LabelRef) * (K + 1));

	for (uint32_t c = 0; c < K; c++)
	{
		refs[c].s = nb_vocab_str(&m->labels, c, &refs[c].len);
		refs[c].id = c;
	}
	nb_sort(refs, K, sizeof(LabelRef), cmp_label_ref);
	for (uint32_t k = 0; k < K; k++)
		r->order[k] = refs[k].id;
	nb_free(refs);
}

/*
 * The confusion's row sums (true_sum), column sums (pred_sum) and total;
 * returns the weight of the diagonal.  Every sum in label order, so that
 * the result does not depend on the order labels were first seen in (which
 * parallel plans change).
 */
static double
confusion_sums(const NbMetrics *m, const uint32_t *order, double *true_sum, double *pred_sum,
			   double *total)
{
	uint32_t	K = m->labels.count;
	double		correct = 0;

	*total = 0;
	for (uint32_t i = 0; i < K; i++)
	{
		uint32_t	a = order[i];

		nb_interrupt();
		for (uint32_t j = 0; j < K; j++)
		{
			uint32_t	p = order[j];
			double		w = m->confusion[(size_t) a * m->cap + p];

			true_sum[a] += w;
			pred_sum[p] += w;
			*total += w;
		}
		correct += m->confusion[(size_t) a * m->cap + a];
	}
	return correct;
}

/* Precision, recall and F1 of each reported class, their averages and the balanced accuracy. */
static void
class_metrics(const NbMetrics *m, const double *true_sum, const double *pred_sum, double total,
			  NbMetricsResult *r)
{
	double		recall_sum = 0;
	uint32_t	reported = 0,
				supported = 0;
	NbAverages	wsum = {0, 0, 0};

	for (uint32_t k = 0; k < m->labels.count; k++)
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
	r->balanced_accuracy = supported > 0 ? recall_sum / supported : NAN;
}

/* The metrics of the scores: log loss, Brier score, calibration, ranking (else NaN). */
static void
score_metrics(const NbMetrics *m, double total, NbMetricsResult *r)
{
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
}

void
nb_metrics_compute(NbMetrics *m, NbMetricsResult *r)
{
	uint32_t	K = m->labels.count;
	double	   *true_sum = nb_alloc_zero(sizeof(double) * (K + 1));
	double	   *pred_sum = nb_alloc_zero(sizeof(double) * (K + 1));
	double		total,
				correct;

	memset(r, 0, sizeof(*r));
	r->n_classes = K;
	r->order = nb_alloc(sizeof(uint32_t) * (K + 1));
	r->cls = nb_alloc_zero(sizeof(NbClassMetrics) * (K + 1));
	order_labels(m, r);
	correct = confusion_sums(m, r->order, true_sum, pred_sum, &total);
	class_metrics(m, true_sum, pred_sum, total, r);
	r->accuracy = total > 0 ? correct / total : NAN;
	score_metrics(m, total, r);
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
