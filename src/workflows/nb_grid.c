/*
 * nb_grid.c — a grid of option sets evaluated in one pass, see nb_grid.h.
 */
#include "nb_grid.h"

#include <math.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"

uint32_t
nb_grid_max_labels(uint32_t n_sets)
{
	uint64_t	cap = NB_METRICS_MAX_CLASSES;

	while (cap >= 8 && (uint64_t) n_sets * cap * cap * sizeof(double) > NB_GRID_MAX_BYTES)
		cap /= 2;
	return cap >= 8 ? (uint32_t) cap : 0;
}

void
nb_grid_init(NbGrid *grid, uint32_t n_sets)
{
	memset(grid, 0, sizeof(*grid));
	grid->n_sets = n_sets;
	grid->max_labels = nb_grid_max_labels(n_sets);
	grid->metrics = nb_alloc(sizeof(NbMetrics) * (n_sets + 1));
	for (uint32_t s = 0; s < n_sets; s++)
		nb_metrics_init(&grid->metrics[s], true, false, false);
}

void
nb_grid_free(NbGrid *grid)
{
	for (uint32_t s = 0; s < grid->n_sets; s++)
		nb_metrics_free(&grid->metrics[s]);
	nb_free(grid->metrics);
	nb_free_if(grid->cls);
	nb_free_if(grid->log_post);
	nb_free_if(grid->prob);
	memset(grid, 0, sizeof(*grid));
}

int64_t
nb_grid_label(NbGrid *grid, const char *label, uint32_t len)
{
	int64_t		id = nb_metrics_find(&grid->metrics[0], label, len);

	if (id >= 0)
		return id;
	if (grid->metrics[0].labels.count >= grid->max_labels)
		return -1;
	for (uint32_t s = 0; s < grid->n_sets; s++)
		id = nb_metrics_class(&grid->metrics[s], label, len);
	return id;
}

/* Room for C classes of n_sets scorers in the row's scratch. */
static void
reserve_classes(NbGrid *grid, uint32_t C)
{
	if (C <= grid->cap)
		return;
	nb_free_if(grid->cls);
	nb_free_if(grid->log_post);
	nb_free_if(grid->prob);
	grid->cap = C;
	grid->cls = nb_alloc(sizeof(uint32_t) * C);
	grid->log_post = nb_alloc(sizeof(double) * C * grid->n_sets);
	grid->prob = nb_alloc(sizeof(double) * C);
}

int64_t
nb_grid_classes(NbGrid *grid, const NbIndex *ix)
{
	/* the scorers' posteriors are per component, then per label (nb_scorer.h) */
	reserve_classes(grid, ix->n_classes);
	for (uint32_t c = 0; c < ix->n_labels; c++)
	{
		uint32_t	len;
		const char *s = nb_vocab_str(&ix->labels, c, &len);
		int64_t		id = nb_grid_label(grid, s, len);

		if (id < 0)
			return c;
		grid->cls[c] = (uint32_t) id;
	}
	return -1;
}

bool
nb_grid_add(NbGrid *grid, NbScorerSet *set, const NbDoc *doc, uint32_t actual)
{
	uint32_t	C = set->scorers[0].index->n_classes;
	uint32_t	K = set->scorers[0].index->n_labels;

	if (!nb_scorer_set_score(set, doc, grid->log_post))
		return false;
	for (uint32_t s = 0; s < grid->n_sets; s++)
	{
		const double *lp = &grid->log_post[s * C];

		nb_interrupt();
		/* the probabilities as nb_predict_proba gives them */
		for (uint32_t c = 0; c < K; c++)
			grid->prob[c] = lp[c] == -INFINITY ? 0.0 : exp(lp[c]);
		nb_metrics_add_scored(&grid->metrics[s], actual, grid->cls, grid->prob, K, 1.0);
	}
	return true;
}
