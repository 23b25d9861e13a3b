/*
 * nb_metrics.h — classification metrics of predictions: the state the
 * nb_metrics aggregates accumulate, and the metrics computed from it.  The
 * definitions (scikit-learn 1.2's sklearn.metrics with sample weights), the
 * memory a state takes and why the result does not depend on the order of
 * the rows are in src/README.md (Metrics), and so is the serialized form.
 */
#ifndef NB_METRICS_H
#define NB_METRICS_H

#include <float.h>
#include <stdbool.h>
#include <stdint.h>

#include "nb_exact.h"
#include "nb_vocab.h"

/* Most distinct labels a state holds: its confusion matrix is dense. */
#define NB_METRICS_MAX_CLASSES 2048

/* seen[class] flags */
#define NB_SEEN_ACTUAL 1
#define NB_SEEN_PREDICTED 2

/*
 * sklearn's np.clip(p, eps, 1 - eps) of a log loss, for p in [0, 1]: a
 * maximum and then a minimum, a form compilers can make maxsd and minsd of
 * rather than branches (GCC 12 does for the minimum).
 */
static inline double
nb_metrics_clip(double p)
{
	double		above = p > DBL_EPSILON ? p : DBL_EPSILON;

	return above < 1.0 - DBL_EPSILON ? above : 1.0 - DBL_EPSILON;
}

/* Calibration bins of the top-class confidence (src/README.md, Metrics). */
#define NB_METRICS_BINS 10
/* per bin: weight, weight * confidence, weight of the rows predicted right */
#define NB_METRICS_BIN_SUMS 3

/*
 * A column of probabilities (one per row), and the rows' weights, are kept
 * in segments of NB_METRICS_SEGMENT_ROWS rows, each a whole 2 MB huge page
 * (nb_alloc_huge_page; src/README.md, Metrics, says why), but for the first
 * while it grows by reallocation up to that size.
 */
#define NB_METRICS_SEGMENT_BITS 18
#define NB_METRICS_SEGMENT_ROWS ((uint64_t) 1 << NB_METRICS_SEGMENT_BITS)

typedef struct NbMetrics
{
	NbVocab		labels;			/* every label seen, ids in first-seen order */
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

/*
 * A state of rows with probabilities (scored) or labels; a scored state
 * that is not ranked keeps no rows: every metric but ROC AUC and average
 * precision (NAN).
 */
void		nb_metrics_init(NbMetrics *m, bool scored, bool ranked, bool weighted);
void		nb_metrics_free(NbMetrics *m);

/* Id of a label, or -1 if the state has not seen it. */
int64_t		nb_metrics_find(const NbMetrics *m, const char *label, uint32_t len);

/* Id of a label, added if new (the caller keeps to NB_METRICS_MAX_CLASSES). */
uint32_t	nb_metrics_class(NbMetrics *m, const char *label, uint32_t len);

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

/* Row i of a column. */
static inline double *
nb_metrics_score_at(double *const *column, uint64_t i)
{
	return column[i >> NB_METRICS_SEGMENT_BITS] + (i & (NB_METRICS_SEGMENT_ROWS - 1));
}

/* Add src's rows to dst (same form, ranked or not). */
void		nb_metrics_merge(NbMetrics *dst, NbMetrics *src);

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
 * The serialized form of states (src/README.md, Metrics), for the
 * nb_metrics_state type and so for parallel workers and Citus: a header,
 * then one or more states (a grid's, one per option set).
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
