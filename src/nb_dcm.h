/*
 * nb_dcm.h — the Dirichlet compound multinomial (DCM) of a bag of tokens
 * (Murphy eq. 3.79; Madsen, Kauchak & Elkan 2005): Elkan (2006)'s EDCM fit
 * and the terms of its likelihood.  The formulas, the fit and the
 * smoothing of tokens a class never saw are in src/README.md (Formulas).
 *
 * The exact DCM's maximum likelihood fit (Minka 2000) needs every
 * document's count of every token, which no model keeps.  The EDCM's
 * approximation Gamma(x + beta) / Gamma(beta) ~ Gamma(x) beta (small beta)
 * leaves as sufficient statistics the documents d_w containing each token
 * and the document lengths, which a model keeps.  Its s, the fixed point
 * of s <- D / Z(s), is unique since s Z(s) grows from the rows of positive
 * length (s -> 0) to the tokens T (s -> infinity); it exists when rows < D
 * < T, and D = T (no token ever repeats in a document) is the multinomial
 * limit s = infinity, which the fit approaches up to NB_DCM_S_MAX.
 *
 * Pure C: no PostgreSQL; digamma is computed here (libm has none).
 */
#ifndef NB_DCM_H
#define NB_DCM_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The pseudo document count a of a token a class never saw (the option
 * alpha of kind dcm) when alpha is not given.  Chosen by 5-fold
 * cross-validation within the training splits of the text corpora the
 * tests use (SpamAssassin, Reuters Grain; test/bench/dcm_accuracy.py
 * --cv): of 0.03, 0.05, 0.1, 0.2, 0.3, 0.5 and 1, the value with the least
 * log loss averaged over the two corpora.  Their test splits played no
 * part.  alpha 1, the other kinds' default, gives a small class most of
 * its s in tokens it never saw (Reuters Grain's 103 grain documents: half).
 */
#define NB_DCM_DEFAULT_ALPHA 0.1

/* Relative change of s at which the fixed point stops, and its iteration cap. */
#define NB_DCM_TOLERANCE 1e-12
#define NB_DCM_MAX_ITERATIONS 1000

/*
 * The work of one step of a fit per length of the histogram, in
 * nb_interrupt.h's units: a digamma difference and two trigammas, each a
 * few logarithms or a short recurrence.
 */
#define NB_DCM_STEP_UNITS 4

/* Bounds of s: beyond them the class is as good as multinomial, or degenerate. */
#define NB_DCM_S_MIN 1e-10
#define NB_DCM_S_MAX 1e10

/* The digamma function psi(x) for x > 0, to about 1e-15 relative. */
double		nb_digamma(double x);

/*
 * log Gamma(b + x) - log Gamma(b) for b > 0 and x >= 0, accurate when b is
 * large (where the difference of two lgamma calls loses digits).
 */
double		nb_lgamma_ratio(double b, double x);

/*
 * log Gamma(beta + x) - log Gamma(beta + 1) for beta > 0 and x >= 0: what a
 * token occurring x times adds to its first occurrence's log beta.  For a
 * whole x from 2 to NB_DCM_PRODUCT_MAX and beta below NB_DCM_PRODUCT_BETA
 * (counts of text, where scoring spends its time) it is the log of the
 * product (beta + 1) ... (beta + x - 1), one log instead of two log-gamma
 * calls; the product stays below 1e250 there, and its rounding (x ulps) is
 * far below the parity tolerances.
 */
#define NB_DCM_PRODUCT_MAX 32
#define NB_DCM_PRODUCT_BETA 1e8
double		nb_dcm_repeat(double beta, double x);

/* The EDCM fit of one bag in one class. */
typedef struct NbDcmFit
{
	double		s;				/* sum of the data's beta_w: D / Z */
	double		z;				/* Z(s): beta_w = d_w / Z */
	uint32_t	iterations;
	bool		converged;		/* within NB_DCM_TOLERANCE before the cap */
} NbDcmFit;

/*
 * Fit s from D (documents summed over tokens: sum_w d_w) and the histogram
 * (n lengths with their weights, lengths > 0).  With no length (the class
 * has no token of the bag) s and z are 0: the caller scores the bag alike
 * for that class.
 */
NbDcmFit	nb_dcm_fit(double D, const double *length, const double *weight, uint64_t n);

#endif
