/*
 * nb_metrics.h — classification metrics of predictions: the state the
 * nb_metrics aggregates accumulate, and the metrics computed from it.
 *
 * Definitions follow scikit-learn 1.2's sklearn.metrics with sample weights
 * (each row counts with its weight):
 *   - the report classes are the labels occurring as actual or predicted
 *     (sklearn's labels=None); precision, recall and F1 of a class whose
 *     denominator is zero are 0 (sklearn's default zero_division);
 *   - balanced accuracy is the mean recall of the classes with a non-zero
 *     support; accuracy, balanced accuracy, log loss and Brier score are
 *     NAN (undefined) when the total weight is zero;
 *   - log loss: probabilities are clipped to [eps, 1 - eps] (eps = the
 *     float8 machine epsilon, sklearn's eps="auto") and renormalised over
 *     every known class, a class a row does not name having probability 0;
 *   - Brier score: the multi-class one, the mean over rows of
 *     sum over classes (p_c - [c is actual])^2 (twice sklearn's
 *     brier_score_loss for two classes);
 *   - ROC AUC and average precision per class, one against the rest, the
 *     class's probability as the score, ties as sklearn's roc_curve and
 *     precision_recall_curve (one threshold per distinct score).  NAN for a
 *     class without positive or (AUC) negative weight; the macro averages
 *     are over the classes where they are defined, except the AUC's of two
 *     classes: the AUC of the second class in byte order, as sklearn's
 *     binary roc_auc_score (its positive label is the greater one).
 *
 * Rows with probabilities are kept whole (for AUC and average precision):
 * the state holds 4 bytes per row (the actual class), 8 more with weights,
 * and 8 per class named by some row's probabilities.  A state made by
 * nb_metrics_init_unranked keeps no rows: it has every metric but ROC AUC
 * and average precision (NAN).  Log loss is summed row by row; a row's
 * renormalising sum S counts the classes it does not name (probability 0,
 * clipped to eps) at the end, when every class is known, to first order:
 * log(S + k eps) = log S + k eps / S, the second-order term (k eps)^2 being
 * below 1e-24 for the most classes a state holds.
 *
 * Calibration (rows with probabilities, not scores_only): the rows in
 * NB_METRICS_BINS equal-width bins of their top-class confidence p (the
 * predicted class's probability as given, unclipped), bin min(floor(10 p),
 * 9) computed in double precision; per bin the weight, the weight times p
 * and the weight of the rows predicted right.  The expected calibration
 * error is the sum over bins of |weight right - weight times p| over the
 * total weight (= sum of W_b / W |accuracy_b - confidence_b|).
 *
 * Arrival order: every sum of the probability form (log loss, Brier score,
 * calibration bins, and the total weight they are divided by, the bins'
 * weights summed) is an exact sum (nb_exact.h), rounded once, and the
 * unweighted counts are integers: the metrics of the same rows are the
 * same bits in any order and any grouping of partial states, but for two
 * kinds of sums of weights: a confusion cell's weight and, with weights and
 * probabilities, the weights summed at the points of the ROC and precision
 * curves are plain sums of the rows' weights, whose orders differ by at
 * most (n - 1) 2^-53 of the sum for n rows (and so do the metrics made of
 * them, to a few units of that).
 */
#ifndef NB_METRICS_H
#define NB_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "nb_exact.h"
#include "nb_strmap.h"

/* Most distinct labels a state holds: its confusion matrix is dense. */
#define NB_METRICS_MAX_CLASSES 2048

/* seen[class] flags */
#define NB_SEEN_ACTUAL 1
#define NB_SEEN_PREDICTED 2

/*
 * A column of probabilities (one per row), and the rows' weights, are kept
 * in segments of NB_METRICS_SEGMENT_ROWS rows, each a whole 2 MB huge page
 * (nb_alloc_huge_page), but for the first while it grows by reallocation up
 * to that size.  Columns reallocated to tens of megabytes were faulted in
 * 4 kB pages instead: 22,700 faults for a million rows of ten classes
 * (4,600 now), about a twentieth of nb_metrics' time.
 */

/* Calibration bins of the top-class confidence (see above). */
#define NB_METRICS_BINS 10
/* per bin: weight, weight * confidence, weight of the rows predicted right */
#define NB_METRICS_BIN_SUMS 3

#define NB_METRICS_SEGMENT_BITS 18
#define NB_METRICS_SEGMENT_ROWS ((uint64_t) 1 << NB_METRICS_SEGMENT_BITS)

typedef struct NbMetrics
{
	NbStrMap	labels;			/* every label seen, ids in first-seen order */
	uint32_t	cap;			/* classes the per-class arrays have room for */
	double	   *confusion;		/* cap * cap weights: [actual * cap + predicted] */
	uint8_t    *seen;			/* cap: NB_SEEN_* */
	uint64_t	rows;			/* rows added */
	uint64_t	null_actual;	/* rows skipped for a NULL actual label */
	bool		scored;			/* rows come with probabilities, kept below */
	bool		weighted;		/* rows have weights (else every weight is 1) */
	bool		scores_only;	/* scored: the scores rank the classes but are not
								 * probabilities (complement naive Bayes): no log
								 * loss or Brier score (NAN) */
	NbExactSum	brier;			/* sum of weight * the row's Brier score */
	uint64_t	rows_cap;		/* room in the row arrays */
	uint32_t   *actual;			/* rows: class of each row */
	double	  **weight;			/* rows, if weighted: weight of each row, a column as below */
	double	 ***score;			/* cap: each class's probability per row, in segments (below); NULL while no row named it */
	bool		ranked;			/* scored rows are kept (for AUC) */
	/* scored: sum over rows of weight * log(S / clip(p of the actual class)), S the row's clipped sum */
	NbExactSum	ll_sum;
	/*
	 * scored: by the number n of classes a row names (cap + 1 pointers),
	 * sums of weight / S; NULL while no row named n classes
	 */
	NbExactSum **ll_inv_sum;
	/*
	 * scored: per calibration bin its NB_METRICS_BIN_SUMS sums, NULL while no
	 * row fell in the bin (most rows of naive Bayes fall in one or two: a
	 * state of many GROUP BY groups stays small)
	 */
	NbExactSum **calib;
	/* bytes of the serialized state: serial_fixed + rows * serial_per_row */
	uint64_t	serial_fixed;
	uint64_t	serial_per_row;
} NbMetrics;

void		nb_metrics_init(NbMetrics *m, bool scored, bool weighted);

/* A state of rows with probabilities that keeps no rows (see above). */
void		nb_metrics_init_unranked(NbMetrics *m, bool weighted);
void		nb_metrics_free(NbMetrics *m);

/* Id of a label, or -1 if the state has not seen it. */
int64_t		nb_metrics_find(const NbMetrics *m, const char *label, uint32_t len);

/* Id of a label, added if new (the caller keeps to NB_METRICS_MAX_CLASSES). */
uint32_t	nb_metrics_class(NbMetrics *m, const char *label, uint32_t len);

/*
 * Whether a predicted label is a JSON object of numbers (or nulls), at
 * least one: what nb_predict_proba and nb_predict_log_proba return, cast to
 * text, never a label that nb_predict returns for a model of text labels.
 * Whitespace is JSON's; strings and numbers are JSON's grammar.
 */
bool		nb_metrics_label_is_scores(const char *label, size_t len);

/* A row skipped for a NULL actual label: counted, nothing else. */
void		nb_metrics_add_null_actual(NbMetrics *m);

/* A row of the label form: actual and predicted class ids, weight >= 0. */
void		nb_metrics_add(NbMetrics *m, uint32_t actual, uint32_t predicted, double weight);

/*
 * A row of the probability form: the probabilities prob[i] in [0, 1] of n
 * >= 1 distinct classes cls[i] (every other class has 0).  The predicted
 * class is the most probable one, ties to the first label in byte order,
 * as nb_predict breaks them (its classes are in that order).
 */
void		nb_metrics_add_scored(NbMetrics *m, uint32_t actual, const uint32_t *cls,
								  const double *prob, uint32_t n, double weight);

/* The sum of weight / S of the rows naming n classes, made (zero) if none did yet. */
NbExactSum *nb_metrics_inv_sum(NbMetrics *m, uint32_t n);

/* Row i of a column. */
static inline double *
nb_metrics_score_at(double *const *column, uint64_t i)
{
	return column[i >> NB_METRICS_SEGMENT_BITS] + (i & (NB_METRICS_SEGMENT_ROWS - 1));
}

/* Row i of a column and the rows after it in its segment: at most *n in all, which this sets. */
static inline double *
nb_metrics_score_run(double *const *column, uint64_t i, uint64_t *n)
{
	uint64_t	left = NB_METRICS_SEGMENT_ROWS - (i & (NB_METRICS_SEGMENT_ROWS - 1));

	*n = *n < left ? *n : left;
	return nb_metrics_score_at(column, i);
}

/*
 * Room for rows more rows in the row arrays of a ranked state; the new room
 * in the columns is zero.
 */
void		nb_metrics_reserve_rows(NbMetrics *m, uint64_t rows);

/* The column of class c of a ranked state, made (zero) when no row named c yet. */
double	  **nb_metrics_column(NbMetrics *m, uint32_t c);

/* Add src's rows to dst (same form, ranked or not). */
void		nb_metrics_merge(NbMetrics *dst, NbMetrics *src);

/* Byte order of two labels (memcmp, then the shorter first). */
int			nb_metrics_label_cmp(const NbMetrics *m, uint32_t a, uint32_t b);

typedef struct NbClassMetrics
{
	double		precision;
	double		recall;
	double		f1;
	double		support;		/* weight of the rows of the class */
	double		roc_auc;		/* NAN if undefined or not scored */
	double		average_precision;	/* NAN if undefined or not scored */
} NbClassMetrics;

typedef struct NbCalibrationBin
{
	double		weight;			/* of the rows in the bin */
	double		confidence;		/* their mean top-class probability; NAN if weight 0 */
	double		accuracy;		/* the weight predicted right over weight; NAN if weight 0 */
} NbCalibrationBin;

typedef struct NbAverages
{
	double		precision;
	double		recall;
	double		f1;
} NbAverages;

typedef struct NbMetricsResult
{
	uint32_t	n_classes;		/* every class of the state */
	uint32_t   *order;			/* n_classes: class ids in label byte order */
	NbClassMetrics *cls;		/* by class id */
	double		accuracy;
	double		balanced_accuracy;
	NbAverages	macro;
	NbAverages	weighted;
	double		log_loss;		/* NAN if not scored */
	double		brier;
	double		roc_auc_macro;	/* NAN if not ranked */
	double		average_precision_macro;
	double		ece;			/* expected calibration error; NAN if not calibrated */
	NbCalibrationBin bins[NB_METRICS_BINS];
} NbMetricsResult;

/* Whether a state has calibration bins: probabilities, not only scores. */
static inline bool
nb_metrics_calibrated(const NbMetrics *m)
{
	return m->scored && !m->scores_only;
}

/* Whether a class is a report class (occurs as actual or predicted). */
static inline bool
nb_metrics_reported(const NbMetrics *m, uint32_t c)
{
	return m->seen[c] != 0;
}

/* The metrics of a state; free with nb_metrics_result_free. */
void		nb_metrics_compute(NbMetrics *m, NbMetricsResult *r);
void		nb_metrics_result_free(NbMetricsResult *r);

/*
 * The serialized form of states, for the nb_metrics_state type (its binary
 * form; base64 of it as text) and so for parallel workers and Citus.
 * Little-endian on every machine.  A value holds one or more states (a
 * grid's, one per option set) after a header:
 *   magic "NBM" and version 1 (4 bytes), the number of states (u32), a tag
 *   the caller keeps with them (u32 length, bytes: a grid's option sets);
 * then each state:
 *   flags (u8: 1 scored, 2 weighted, 4 ranked, 8 scores_only), rows (u64),
 *   labels K (u32), each label (u32 length, bytes, seen flags u8), the K x
 *   K confusion weights (f64, [actual][predicted] by id); if scored, the
 *   exact sums (nb_exact.h's form) of the Brier score and the log loss, for
 *   n = 0..K a flag (u8) and the sum of weight / S of rows naming n
 *   classes, for each calibration bin a flag (u8) and its three sums; if ranked, the rows' actual class ids
 *   (u32 each), their weights if weighted (f64), then per class a flag (u8)
 *   and its column (f64 per row); if flags has 16, the rows skipped for a
 *   NULL actual label (u64, > 0: a state without them has not the flag,
 *   and its bytes are those of states before the flag).
 */
#define NB_METRICS_SERIAL_HEADER 12
#define NB_METRICS_SERIAL_VERSION 1

/* Bytes of a state's serialized form (kept up to date as rows come). */
static inline uint64_t
nb_metrics_serial_size(const NbMetrics *m)
{
	return m->serial_fixed + m->rows * m->serial_per_row;
}

/* Write the header of n states and a tag of tag_len bytes; returns the end. */
unsigned char *nb_metrics_write_header(unsigned char *out, uint32_t n, const void *tag,
									   uint32_t tag_len);

/* Write a state (nb_metrics_serial_size bytes); returns the end. */
unsigned char *nb_metrics_write(NbMetrics *m, unsigned char *out);

/* Reading serialized states: *p advances up to end; error says why it stopped. */
typedef struct NbMetricsIn
{
	const unsigned char *p;
	const unsigned char *end;
	const char *error;			/* static text, set when a read returns false */
} NbMetricsIn;

/* The header: number of states, and the tag (pointing into the input). */
bool		nb_metrics_read_header(NbMetricsIn *in, uint32_t *n, const unsigned char **tag,
								   uint32_t *tag_len);

/*
 * A state, validated (labels distinct, ids, weights and probabilities in
 * range, exact sums in their form), into m, which this initializes: free it
 * with nb_metrics_free whether or not this succeeds.
 */
bool		nb_metrics_read(NbMetrics *m, NbMetricsIn *in);

#endif
