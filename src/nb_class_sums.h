/*
 * nb_class_sums.h — each class's document weight over models added and
 * subtracted, summed so that cancellation shows.
 *
 * A live model is its base plus the models its statements added less those
 * they removed, merged and subtracted in plain double precision: with
 * fractional weights of very different sizes a sum can round away a small
 * weight that a later subtraction would have left alone (a row of weight
 * 1e15 and one of 0.001 from two statements, then the first deleted: the
 * class is gone, where the table's model has 0.001).  The class weights
 * alone catch such cases cheaply: each is summed here in double-double
 * (a two-sum keeps what every addition rounds away), and a result whose
 * class weights differ from these sums by more than a tolerance lost
 * precision (a token's count cannot cancel more than its class's weight,
 * which holds every row that counts the token).
 *
 * Pure C: no PostgreSQL.
 */
#ifndef NB_CLASS_SUMS_H
#define NB_CLASS_SUMS_H

#include <stdbool.h>

#include "nb_format.h"

typedef struct NbClassSums NbClassSums;

NbClassSums *nb_class_sums_create(void);

/* Add each class's document weight of view v times sign (+1 or -1). */
void		nb_class_sums_add(NbClassSums *s, const NbView *v, double sign);

/*
 * Whether view result (NULL: the model of no rows) has the class weights
 * of the sums: each within rel of the larger of the two, or within 1e-20 of
 * the sum of the magnitudes of its terms (what double-double itself cannot
 * resolve), a class absent from result weighing 0.
 */
bool		nb_class_sums_match(const NbClassSums *s, const NbView *result, double rel);

void		nb_class_sums_destroy(NbClassSums *s);

#endif
