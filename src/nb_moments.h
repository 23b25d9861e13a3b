/*
 * nb_moments.h — combining the moments of two samples (count, mean, sum of
 * squared deviations): Gaussian features' statistics in training, merging
 * and the feature type table.
 */
#ifndef NB_MOMENTS_H
#define NB_MOMENTS_H

/*
 * Add (nb, meanb, m2b) of a sample to (*n, *mean, *m2): Chan et al.'s
 * parallel update.  Deliberately not inline: the trainer and the merge must
 * round alike, so both call this one compiled copy.
 */
void		nb_moments_add(double *n, double *mean, double *m2,
						   double nb, double meanb, double m2b);

#endif
