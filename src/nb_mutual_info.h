/*
 * nb_mutual_info.h — mutual information between each feature and the class.
 */
#ifndef NB_MUTUAL_INFO_H
#define NB_MUTUAL_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include "nb_format.h"

/*
 * One ranked row: a token of a bag feature, or a whole categorical, boolean
 * or Gaussian feature.  mi is in nats, finite and >= 0.
 */
typedef struct NbMiRow
{
	uint32_t	feature;
	uint32_t	item;			/* bag token index; for a whole feature its first item */
	bool		whole_feature;
	double		mi;
} NbMiRow;

/* Rows nb_mutual_info can return at most: one per item plus one per feature. */
static inline uint64_t
nb_mutual_info_max_rows(const NbView *view)
{
	return (uint64_t) view->n_tokens + view->n_features;
}

/*
 * The rows of a model ordered by mi descending, ties in
 * model order (feature name, then token, both in byte order); returns how
 * many.  Bag tokens: Murphy eq. 3.76 with the maximum-likelihood
 * theta_jc = d_jc / D_c and pi_c = D_c / D, D_c the rows of class c with the
 * bag.  Categorical and boolean features: the plug-in mutual information of
 * the (weighted) value-class counts over the rows with the feature.
 * Gaussian features: the mutual information of the class and the value
 * under the model's own normals (see nb_mutual_info.c), 0 with fewer than
 * two classes that have the feature.
 */
uint64_t	nb_mutual_info(const NbView *view, NbMiRow *rows);

#endif
