/*
 * fixtures.h — training rows, models and view lookups shared by the unit
 * test programs (test_*.c).
 */
#ifndef FIXTURES_H
#define FIXTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_dcm.h"
#include "nb_format.h"
#include "nb_trainer.h"
#include "raw_model.h"

/* ---------------------------------------------------------------- */
/* training rows, serialization and view lookups                    */

#define MAX_DOC_TOKENS 64

typedef struct Row
{
	const char *label;
	double		weight;
	const char *tokens[MAX_DOC_TOKENS]; /* NULL-terminated, each counts once */
} Row;

/* A document's tokens as one batch, as the aggregates do. */
void train_row(NbTrainer *t, const Row *r);

NbTrainer *train_rows(const Row *rows, int n);

/* Serialize into a new malloc'ed buffer. */
unsigned char *serialize(NbTrainer *t, size_t *size);

unsigned char *serialize_rows(const Row *rows, int n, size_t *size);

bool open_view(NbView *v, const unsigned char *buf, size_t size, char *why, size_t whylen);

int64_t view_find_token(const NbView *v, const char *tok);

char *hex(const unsigned char *p, size_t n);

/* ---------------------------------------------------------------- */
/* the toy model of the scorer and mutual-information tests          */

/*
 * Classes (byte order): 0 = "ham", 1 = "spam".  Tokens: a b c d.
 *   ham : b c c d
 *   spam: a a b
 *   spam: a c
 * N (count)  a  b  c  d | T_c   D_c      d (docs)  a  b  c  d
 *   ham      0  1  2  1 |  4     1        ham       0  1  1  1
 *   spam     3  1  1  0 |  5     2        spam      2  1  1  0
 * V = 4, D = 3, T = 9, F = (3, 2, 3, 1); fitted prior 1/3, 2/3.
 */
extern const Row toy[];
#define NTOY 3
#define HAM 0
#define SPAM 1

typedef struct RandRow
{
	char		label[8];
	double		weight;
	uint32_t	n;
	uint32_t	tok[MAX_DOC_TOKENS];
} RandRow;

void rand_rows(RandRow *rows, int n, int nclasses, uint32_t vocab, uint64_t seed, bool empty_docs);

/*
 * batch: 0 = the whole document in one nb_trainer_add_tokens call, 1 = one
 * call per token, 2 = batches of random sizes (seeded by the row).
 */
extern int train_batching;

void train_rand(NbTrainer *t, const RandRow *r);

unsigned char *serialize_rand(const RandRow *rows, const int *order, int n, size_t *size);

/*
 * A class whose documents had no tokens (README: "An empty array is a
 * document with no tokens: it counts for its class's documents and prior").
 *   empty: 1 document, no tokens (T = 0);  full: 1 document "x y".
 * Multinomial, document "x": theta_x,empty = a / (0 + 2a) = 1/2 and
 * theta_x,full = (1 + a) / (2 + 2a) = 1/2 for EVERY a > 0, so the
 * posterior is 1/2, 1/2 for every a > 0 and therefore also in the limit
 * a -> 0 that alpha = 0 is documented to return.
 */
extern const Row empty_full[];

/*
 * The small DCM model (kind dcm) of test_dcm.c and test_explain.c: classes
 * a (lengths 4, 2, 2; documents with x 2, y 2, z 1) and b (lengths 3, 1;
 * z 1, w 2), its per-class EDCM fits and, for a given alpha, beta over the
 * vocabulary w, x, y, z (alpha / Z for a token the class never saw) and s.
 */
extern const Row dcm_rows[];
#define NDCM 5

typedef struct DcmToy
{
	NbDcmFit	fit[2];
	double		beta[2][4];		/* w, x, y, z */
	double		s[2];
} DcmToy;

DcmToy		dcm_toy(double alpha);

/* ---------------------------------------------------------------- */
/* mixed feature types (format version 2)                            */

/*
 * A row with named features: categorical "color", boolean "flag" (-1:
 * missing), Gaussian "x" (has_x), bag "tags" (has_tags).
 */
typedef struct MixRow
{
	const char *label;
	double		weight;
	const char *color;
	int			flag;
	bool		has_x;
	double		x;
	bool		has_tags;
	const char *tags[4];
} MixRow;

int64_t feature_id(NbTrainer *t, const char *name, NbFeatureType type);

void train_mix(NbTrainer *t, const MixRow *r);

unsigned char *serialize_mix(const MixRow *rows, int n, size_t *size);

/*
 * Classes a (3 rows of weights 1, 2, 1) and b (2 rows of weight 1):
 *   color  a: red (w1), blue (w2);  b: red, -        -> present a 3, b 1
 *   flag   a: 1 (w1), 0 (w2), -;    b: 1, 1          -> present a 3, b 2; true a 1, b 2
 *   x      a: 1 (w1), 4 (w2), -;    b: 2, 6          -> a: W 3, mean (1 + 8) / 3 = 3,
 *            M2 1*(1-3)^2 + 2*(4-3)^2 = 6; b: W 2, mean 4, M2 8; overall (unweighted)
 *            1, 4, 2, 6: rows 4, mean 13/4, M2 5.0625 + 0.5625 + 1.5625 + 7.5625 = 14.75
 *   tags   a: {t, u}, {} , -;       b: {t, t}, -     -> present a 3, b 1;
 *            t: a (1, 1), b (2, 1); u: a (1, 1)
 * Class docs a 4, b 2.
 */
extern const MixRow mix[];
#define NMIX 5

/* Random mixed rows: dyadic weights, Gaussian values arbitrary doubles. */
typedef struct RandMix
{
	char		label[4];
	double		weight;
	int			color;			/* -1 missing */
	int			flag;			/* -1 missing */
	bool		has_x;
	double		x;
	bool		has_y;
	double		y;
	uint32_t	ntags;			/* UINT32_MAX: missing */
	uint32_t	tags[6];
	bool		text;			/* the bag "" */
	uint32_t	ntext;
	uint32_t	texttok[6];
	bool		has_vec;		/* float8[] of length 2 */
	double		vec[2];
} RandMix;

void rand_mix(RandMix *rows, int n, int nclasses, uint64_t seed, bool dyadic_x);

void train_rand_mix(NbTrainer *t, const RandMix *r);

unsigned char *serialize_rand_mix(const RandMix *rows, const int *order, int n, size_t *size);

/* ---------------------------------------------------------------- */
/* scoring with mixed features, by hand                              */

/*
 * The scoring model (weights 1):
 *   class a (3 rows): color red, red, red;  flag 1, 1, 0;  x 1, 3, -;  y 5, 5, 5
 *   class b (2 rows): color red, blue;      flag 0, -;     x 10, 14;   y 5, 5
 *   class c (1 row) : color blue;           -              -           -
 * color: K = 2 (blue, red); N_a = (0, 3), N_b = (1, 1), N_c = (1, 0).
 * flag: a: 2 of 3 true; b: 0 of 1; c: none.
 * x: a: mean 2, M2 2 (var 1); b: mean 12, M2 8 (var 4); c: none.
 *    overall 1, 3, 10, 14: mean 7, M2 36 + 16 + 9 + 49 = 110, variance 27.5.
 * y: constant 5: variance 0 in every class and overall.
 * Prior 3/6, 2/6, 1/6.
 */
extern const MixRow score_rows_mix[];

/*
 * Append the categorical "color", boolean "flag" and bag "tags" features of
 * the mix rows, field by field from the layout in src/nb_format.h, to m
 * (version 2, classes a and b).
 */
void mix_raw_discrete(RawModel *m);

#endif
