/*
 * nb_feature_type.h — the one description of each feature type: its names,
 * whether it has items, and what its per-class statistics hold and how two
 * combine.  The format, the trainer, merging, inspection and the SQL glue
 * consult this table for those.  A type's maths is elsewhere, keyed by the
 * type: how a row trains it (nb_trainer.c, read from jsonb by
 * pg_features.c and pg_train.c), how it is scored and explained
 * (nb_doc.c, nb_scorer_build.c, nb_explain.c, pg_predict.c, pg_explain.c), its
 * mutual information (nb_mutual_info.c), the format's checks of its
 * statistics (nb_format.c), how it is subtracted (nb_subtract.c) and shown
 * (pg_inspect.c).  A new type is an entry here and a case in each of those.
 */
#ifndef NB_FEATURE_TYPE_H
#define NB_FEATURE_TYPE_H

#include <stdbool.h>
#include <stdint.h>

/* The stored type of a feature (the values are the format's). */
typedef enum NbFeatureType
{
	NB_FEATURE_BAG = 1,
	NB_FEATURE_CATEGORICAL = 2,
	NB_FEATURE_GAUSSIAN = 3,
	NB_FEATURE_BOOLEAN = 4
} NbFeatureType;

#define NB_FEATURE_TYPE_MAX NB_FEATURE_BOOLEAN

/*
 * What the per-(feature, class) statistics a and b hold besides present (the
 * weighted rows of the class with the feature), and how two are combined.
 */
typedef enum NbFeatureStats
{
	NB_STATS_NONE,				/* a = b = 0 */
	NB_STATS_TRUE_ROWS,			/* a = weighted rows that were true (<= present); b = 0 */
	NB_STATS_MOMENTS			/* a = weighted mean, b = weighted sum of squared
								 * deviations; the feature also keeps the unweighted
								 * overall moments the variance floor uses */
} NbFeatureStats;

typedef struct NbFeatureTypeInfo
{
	const char *name;			/* in nb_info and inspection: "bag" */
	const char *prose;			/* in messages: "a bag of tokens" */
	const char *items;			/* its items in nb_info ("tokens"); NULL: it has none */
	NbFeatureStats stats;
} NbFeatureTypeInfo;

/* The description of a type, or NULL if type is not one. */
const NbFeatureTypeInfo *nb_feature_type_info(uint32_t type);

/* The description of a type known to be valid (a view's or the trainer's). */
static inline const NbFeatureTypeInfo *
nb_feature_type(NbFeatureType type)
{
	return nb_feature_type_info((uint32_t) type);
}

/*
 * Add the statistics (present2, a2, b2) of one (feature, class) to
 * (*present, *a, *b), as the type's statistics combine.
 */
void		nb_feature_stats_add(NbFeatureType type, double *present, double *a, double *b,
								 double present2, double a2, double b2);

/*
 * The positions of a float8[] row are Gaussian features named by their
 * decimal number from 1.  The longest name (4294967295) plus NUL:
 */
#define NB_POSITION_NAME_SIZE 11

/* The name of a float8[] position (0-based) as a feature: "1", "2", ... */
uint32_t	nb_position_name(uint32_t position, char *buf);

/* Is name the decimal name of a position in 1..n (no sign, no leading zero)? */
bool		nb_is_position_name(const char *name, uint32_t len, uint32_t n);

#endif
