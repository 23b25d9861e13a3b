/*
 * nb_moments.c — combining the moments of two samples, see nb_moments.h.
 */
#include "nb_moments.h"

void
nb_moments_add(double *n, double *mean, double *m2, double nb, double meanb, double m2b)
{
	double		total = *n + nb;
	double		delta = meanb - *mean;

	if (nb == 0)
		return;
	if (*n == 0)
	{
		/* exactly the other sample (the formula would compute inf * 0 for huge means) */
		*n = nb;
		*mean = meanb;
		*m2 = m2b;
		return;
	}
	*mean += delta * (nb / total);
	*m2 += m2b + delta * delta * (*n * nb / total);
	*n = total;
}
