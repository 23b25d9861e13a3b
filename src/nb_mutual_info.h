/*
 * nb_mutual_info.h — mutual information between token presence and class.
 */
#ifndef NB_MUTUAL_INFO_H
#define NB_MUTUAL_INFO_H

#include <stdint.h>

#include "nb_format.h"

/*
 * mi[k] for every token k of the model, in nats (Murphy eq. 3.76 with the
 * maximum-likelihood theta_jc = d_jc / D_c and pi_c = D_c / D).
 */
void		nb_mutual_info(const NbView *view, double *mi);

/* Token indexes ordered by mi descending, ties by token index (byte order). */
void		nb_rank_by_mutual_info(const double *mi, uint32_t n, uint32_t *order);

#endif
