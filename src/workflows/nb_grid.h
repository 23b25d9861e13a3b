/*
 * nb_grid.h — a grid of option sets evaluated in one pass: each document,
 * looked up once in a model's index (nb_doc_add_tokens, so that every
 * scorer of the model can score it), is scored by the scorers of every
 * option set at once (NbScorerSet), and its probabilities go to each option
 * set's metrics, an unranked nb_metrics state (every metric but ROC AUC and
 * average precision), by nb_metrics_add_scored's rules.
 *
 * The states of a grid see the same labels in the same order, so a label
 * has the same id in each of them.
 */
#ifndef NB_GRID_H
#define NB_GRID_H

#include <stdint.h>

#include "nb_doc.h"
#include "nb_metrics.h"
#include "nb_scorer.h"

/*
 * The most memory the confusion matrices of a grid's states take together:
 * as much as PostgreSQL keeps in one value, which the result, an array of
 * as many confusion matrices, could not pass either.
 */
#define NB_GRID_MAX_BYTES UINT64_C(0x3fffffff)

typedef struct NbGrid
{
	uint32_t	n_sets;
	uint32_t	max_labels;		/* nb_grid_max_labels(n_sets) */
	NbMetrics  *metrics;		/* per option set */
	/* scratch for one row, room for cap classes */
	uint32_t	cap;
	uint32_t   *cls;			/* the state id of each class of the model */
	double	   *log_post;		/* n_sets * cap */
	double	   *prob;
} NbGrid;

/*
 * The most labels each state of a grid of n_sets option sets holds: a
 * state's confusion matrix is dense, cap * cap weights for a capacity cap
 * (a power of two from 8) of at least its labels, and the n_sets matrices
 * take at most NB_GRID_MAX_BYTES.  NB_METRICS_MAX_CLASSES, or fewer for a
 * large grid; 0 if even 8 labels would take more.
 */
uint32_t	nb_grid_max_labels(uint32_t n_sets);

void		nb_grid_init(NbGrid *grid, uint32_t n_sets);
void		nb_grid_free(NbGrid *grid);

/*
 * The id of a label in every state, added if new; -1 (nothing added) if
 * that would make more than grid->max_labels labels.
 */
int64_t		nb_grid_label(NbGrid *grid, const char *label, uint32_t len);

/*
 * The ids of the classes of a model's index, for the rows nb_grid_add then
 * adds: -1 when done, else the class whose label would be one too many.
 */
int64_t		nb_grid_classes(NbGrid *grid, const NbIndex *index);

/*
 * Score a document under the set's n_sets scorers, of the index of the last
 * nb_grid_classes, and add the row, of the actual class (an id of
 * nb_grid_label), to the states.  False (nothing added) if a score was out
 * of range (nb_scorer_score).
 */
bool		nb_grid_add(NbGrid *grid, NbScorerSet *set, const NbDoc *doc, uint32_t actual);

#endif
