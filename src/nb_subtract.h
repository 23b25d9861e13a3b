/*
 * nb_subtract.h — unlearning: the model of the rows of a without the rows
 * of b, where b's rows are among a's.
 *
 * The exact inverse of nb_merge, walking the sorted runs of both models
 * (nb_runs.h): counts, document counts and the bins of the length
 * histograms subtract, Gaussian statistics (per class and overall) by the
 * inverse of nb_moments_add, and classes, items and features whose counts
 * reach zero disappear.  Without lengths in a or b (versions 1 and 2) the
 * result has none.  What comes back exactly, and the rounding tolerance
 * below: src/README.md, "Training, in detail".  A count past its bound (the
 * documents of its class, the rows of its feature) beyond the tolerance is
 * refused: the rows of b are then not among the rows of a.
 */
#ifndef NB_SUBTRACT_H
#define NB_SUBTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"
#include "nb_runs.h"

/*
 * Relative tolerance of a count's subtraction, of the minuend (src/README.md):
 * it covers the rounding of sums of up to about a million weights.
 */
#define NB_SUBTRACT_TOLERANCE 1e-10

/* Why a subtraction was refused. */
typedef enum NbSubtractStatus
{
	NB_SUBTRACT_OK,
	NB_SUBTRACT_COMPAT,			/* not the same kind of model (nb_compat_check) */
	NB_SUBTRACT_VECTOR,			/* b has float8[] rows of another length than a's */
	NB_SUBTRACT_NO_CLASS,		/* b has a class a lacks */
	NB_SUBTRACT_NO_FEATURE,		/* b has a feature a lacks */
	NB_SUBTRACT_TYPE,			/* a feature of b has another type in a */
	NB_SUBTRACT_NO_ITEM,		/* b has an item (in a class) a lacks */
	NB_SUBTRACT_NEGATIVE,		/* a count of b is clearly more than a's */
	NB_SUBTRACT_MISMATCH		/* what remains of a count passes its bound */
} NbSubtractStatus;

/* Which count went negative or passed its bound. */
typedef enum NbSubtractCount
{
	NB_COUNT_DOCUMENTS,			/* documents of a class */
	NB_COUNT_ROWS,				/* rows of a class with a feature */
	NB_COUNT_TRUE,				/* rows of a class in which a boolean feature is true */
	NB_COUNT_VALUES,			/* values of a Gaussian feature, over all classes */
	NB_COUNT_OCCURRENCES,		/* occurrences of an item in a class */
	NB_COUNT_ITEM_DOCUMENTS,	/* documents of a class with an item */
	NB_COUNT_LENGTH_ROWS,		/* rows of a class whose bag has a length */
	NB_COUNT_NULL_LABELS		/* rows skipped for a NULL label */
} NbSubtractCount;

/*
 * What a refused subtraction is about: the strings point into a's or b's
 * bytes (NULL when not concerned); the numbers are the two counts.
 */
typedef struct NbSubtractError
{
	NbSubtractStatus status;
	NbSubtractCount count;
	const char *label;
	uint32_t	label_len;
	const char *feature;
	uint32_t	feature_len;
	const char *item;
	uint32_t	item_len;
	NbFeatureType type_a;
	NbFeatureType type_b;
	uint32_t	vector_a;
	uint32_t	vector_b;
	NbCompat	compat;			/* NB_SUBTRACT_COMPAT: why, and the kinds of rows */
	uint32_t	inputs_a;
	uint32_t	inputs_b;
	double		minuend;
	double		subtrahend;
	double		length;			/* NB_COUNT_LENGTH_ROWS: the document length */
} NbSubtractError;

/*
 * The plan of a minus b (validated views that must stay valid until
 * nb_plan_destroy), to write with nb_plan_size and nb_plan_write; without
 * classes (C == 0) when nothing is left: the empty model.  NULL, with *err
 * filled, if b holds something a does not.
 */
NbPlan	   *nb_subtract_plan(const NbView *a, const NbView *b, NbSubtractError *err);

#endif
