/*
 * test_writers.c — every writer of a model writes only what nb_view_open
 * accepts, whatever valid parameters it is given: the trainer (training
 * and merging into it), EM's rows spread over the classes, the flat merge,
 * subtraction, pruning and the copy with other settings (nb_with_options).
 * The parameters are adversarial but valid: subnormal, tiny and huge row
 * weights, fractional token counts times those weights, EM weights that
 * all underflow to 0, Gaussian values at the ends of the doubles, pruning
 * thresholds at their extremes.  A writer may refuse (an overflow, a
 * subtraction that does not fit): then it writes nothing.  What it writes
 * must open, and must pass model_check.c's checks of an accepted value.
 *
 *   ./test_writers         run every test
 *   ./test_writers WORD    run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "model_check.h"
#include "nb_merge.h"
#include "nb_prune.h"
#include "nb_subtract.h"
#include "unit.h"

/* The smallest positive double, a subnormal (C11's DBL_TRUE_MIN; the tests are gnu99). */
#define TRUE_MIN 4.9406564584124654e-324

/* Row weights: the smallest subnormal, a subnormal, the smallest normal, tiny, ordinary, huge. */
static const double weights[] = {TRUE_MIN, 1e-310, DBL_MIN, 1e-300, 0.1, 1, 3, 1e300, DBL_MAX};
#define NWEIGHTS ((int) (sizeof(weights) / sizeof(weights[0])))

/* Token counts (jsonb bags take any positive count). */
static const double counts[] = {1, 0.5, 0.3, 1e-300, 2, 1e300};
#define NCOUNTS ((int) (sizeof(counts) / sizeof(counts[0])))

/* Gaussian values at the ends of the doubles. */
static const double reals[] = {0, TRUE_MIN, -1e-300, 1, 1e300, -DBL_MAX};
#define NREALS ((int) (sizeof(reals) / sizeof(reals[0])))

/* Models check_written has checked, and writes refused, in the running test. */
static int	n_checked;
static int	n_refused;

/* A written model, or none (the writer refused). */
typedef struct Written
{
	unsigned char *bytes;
	size_t		size;
} Written;

/*
 * What a writer wrote must open and pass model_check's checks (without
 * its reference: these sums are far from exact); what describes it as
 * nb_view_open would must agree.
 */
static bool
check_written(const Written *w, const NbView *described, const char *what)
{
	NbView		v;
	char		why[300];
	NbtStats	stats = {0, 0, 0};

	if (w->bytes == NULL)
	{
		n_refused++;
		return true;
	}
	n_checked++;
	if (!open_view(&v, w->bytes, w->size, why, sizeof(why)))
	{
		fail_at(__LINE__, "%s wrote a model its validation refuses: %s", what, why);
		return false;
	}
	if (described != NULL && (described->n_entries != v.n_entries ||
							  described->n_tokens != v.n_tokens ||
							  described->n_classes != v.n_classes))
	{
		fail_at(__LINE__, "%s described its model otherwise than nb_view_open", what);
		return false;
	}
	if (!nbt_check_model(w->bytes, w->size, &v, 7, NBT_NO_REFERENCE, &stats, why, sizeof(why)))
	{
		fail_at(__LINE__, "%s wrote a model that fails a check: %s", what, why);
		return false;
	}
	return true;
}

/*
 * The trainer's model, or none if a sum overflows or a weighted count
 * underflows (the glue refuses it then).
 */
static Written
write_trainer(NbTrainer *t)
{
	Written		w = {NULL, 0};

	if (nb_trainer_sums_finite(t))
		w.bytes = serialize(t, &w.size);
	return w;
}

static void
add_bag(NbTrainer *t, const char *name, const char *const *tokens, double count)
{
	NbTokenRef	refs[3];
	uint32_t	n = 0;

	for (; n < 3 && tokens[n] != NULL; n++)
	{
		refs[n].str = tokens[n];
		refs[n].len = (uint32_t) strlen(tokens[n]);
		refs[n].count = count;
	}
	nb_trainer_add_tokens(t, (uint32_t) feature_id(t, name, NB_FEATURE_BAG), refs, n);
}

/*
 * Rows of every feature type, the first of class "a" with weight w1 and
 * token count k, the others ordinary, so that the extreme row's tokens are
 * the only ones of some items.
 */
static NbTrainer *
train_extreme(double w1, double k, double x, bool text_only)
{
	static const char *const rare[] = {"rare", "both", NULL};
	static const char *const usual[] = {"both", "usual", NULL};
	NbTrainer  *t = nb_trainer_create();

	nb_trainer_begin_doc(t, "a", 1, w1);
	add_bag(t, "", rare, k);
	if (!text_only)
	{
		add_bag(t, "tags", rare, k);
		nb_trainer_add_category(t, (uint32_t) feature_id(t, "color", NB_FEATURE_CATEGORICAL),
								"red", 3);
		nb_trainer_add_boolean(t, (uint32_t) feature_id(t, "flag", NB_FEATURE_BOOLEAN), true);
		nb_trainer_add_real(t, (uint32_t) feature_id(t, "x", NB_FEATURE_GAUSSIAN), x);
	}
	nb_trainer_begin_doc(t, "b", 1, 1);
	add_bag(t, "", usual, 1);
	if (!text_only)
	{
		add_bag(t, "tags", usual, 1);
		nb_trainer_add_category(t, (uint32_t) feature_id(t, "color", NB_FEATURE_CATEGORICAL),
								"blue", 4);
		nb_trainer_add_boolean(t, (uint32_t) feature_id(t, "flag", NB_FEATURE_BOOLEAN), false);
		nb_trainer_add_real(t, (uint32_t) feature_id(t, "x", NB_FEATURE_GAUSSIAN), 1);
	}
	nb_trainer_begin_doc(t, "a", 1, 2);
	add_bag(t, "", usual, 1);
	return t;
}

/* Training: every weight, token count and Gaussian value, text rows and mixed ones. */
static void
test_trainer(void)
{
	for (int wi = 0; wi < NWEIGHTS; wi++)
		for (int ki = 0; ki < NCOUNTS; ki++)
			for (int xi = 0; xi < NREALS; xi++)
				for (int text_only = 0; text_only < 2; text_only++)
				{
					NbTrainer  *t = train_extreme(weights[wi], counts[ki], reals[xi], text_only);
					Written		w = write_trainer(t);
					bool		ok = check_written(&w, NULL, "the trainer");

					nb_trainer_destroy(t);
					free(w.bytes);
					if (!ok)
					{
						fail_append(" (weight %g, count %g, x %g, %s)", weights[wi], counts[ki],
									reals[xi], text_only ? "text" : "mixed");
						return;
					}
				}
}

/*
 * EM's rows (pg_em.c): labelled rows of three classes, then unlabelled rows
 * spread over them with weights lambda p(c | x), which underflow to 0 in
 * some classes or in all of them (lambda 5e-324 and no posterior above
 * 1/2), or are huge.
 */
static void
test_em_spread(void)
{
	static const double spreads[][3] = {
		{0, 0, 0}, {TRUE_MIN, 0, 0}, {TRUE_MIN, TRUE_MIN, TRUE_MIN},
		{1e-310, DBL_MIN, 0}, {0.2, 0.3, 0.5}, {1, 0, 0}, {1e300, 1e300, 0},
	};
	static const char *const labels[] = {"a", "b", "c"};
	int			n = (int) (sizeof(spreads) / sizeof(spreads[0]));

	for (int s = 0; s < n; s++)
		for (int ki = 0; ki < NCOUNTS; ki++)
		{
			NbTrainer  *t = nb_trainer_create();
			NbTokenRef	unlabelled[2] = {{"new", 3, counts[ki]}, {"x", 1, counts[ki]}};
			NbTokenRef	labelled[1] = {{"x", 1, 1}};
			Written		w;
			bool		ok;

			CHECK(nb_trainer_spread_init(t, 3), "no dense counts");
			for (int c = 0; c < 3; c++)
				CHECK(nb_trainer_class(t, labels[c], 1) == (uint32_t) c, "class ids");
			for (int c = 0; c < 3; c++)
			{
				nb_trainer_begin_doc(t, labels[c], 1, 1);
				CHECK(nb_trainer_add_text(t, labelled, 1), "a labelled row refused");
			}
			CHECK(nb_trainer_add_text_spread(t, unlabelled, 2, spreads[s]), "an unlabelled row refused");
			CHECK(nb_trainer_add_text_spread(t, unlabelled, 1, spreads[s]), "an unlabelled row refused");
			w = write_trainer(t);
			ok = check_written(&w, NULL, "EM's trainer");
			nb_trainer_destroy(t);
			free(w.bytes);
			if (!ok)
			{
				fail_append(" (weights %g %g %g, count %g)", spreads[s][0], spreads[s][1],
							spreads[s][2], counts[ki]);
				return;
			}
		}
}

/*
 * The models the other writers start from: extreme rows (weight, token
 * count and Gaussian value by index), mixed features, each one the trainer
 * writes, with rows skipped for a NULL label (none, one, or the most a
 * model counts); and the last, a model of such rows alone (no class).
 */
#define NMODELS 9

static void
extreme_models(Written *m)
{
	static const int picks[NMODELS - 1][3] = {
		{0, 0, 1}, {0, 4, 0}, {1, 1, 2}, {2, 2, 3}, {3, 0, 0}, {5, 3, 3}, {7, 0, 3}, {4, 5, 2},
	};
	static const uint64_t null_labels[] = {0, 1, NB_NULL_LABELS_MAX};

	for (int i = 0; i < NMODELS; i++)
	{
		NbTrainer  *t = i == NMODELS - 1 ? nb_trainer_create() :
			train_extreme(weights[picks[i][0]], counts[picks[i][1]], reals[picks[i][2]], false);

		nb_trainer_count_null_labels(t, i == NMODELS - 1 ? 2 : null_labels[i % 3]);
		m[i] = write_trainer(t);
		nb_trainer_destroy(t);
		if (m[i].bytes == NULL)
			fail_at(__LINE__, "extreme model %d refused", i);
	}
}

static void
free_models(Written *m, int n)
{
	for (int i = 0; i < n; i++)
		free(m[i].bytes);
}

static bool
open_written(const Written *w, NbView *v)
{
	char		why[300];

	return w->bytes != NULL && open_view(v, w->bytes, w->size, why, sizeof(why));
}

/* a merged with b flat (nb_merge.c), or none if refused or overflowing. */
static Written
merge_flat(const NbView *a, const NbView *b, NbView *out)
{
	NbView		v[2] = {*a, *b};
	NbMergeConflict conflict;
	Written		w = {NULL, 0};
	NbMerger   *m;

	if (nb_merge_check(v, 1, &v[1], &conflict) != NB_MERGE_OK)
		return w;
	m = nb_merger_create(v, 2);
	w.size = nb_merger_size(m, SIZE_MAX);
	w.bytes = malloc(w.size);
	if (!nb_merger_write(m, w.bytes, w.size, out))
	{
		free(w.bytes);
		w.bytes = NULL;
	}
	nb_merger_destroy(m);
	return w;
}

/* a merged into a trainer with b, or none if refused or overflowing. */
static Written
merge_trainer(const NbView *a, const NbView *b)
{
	NbTrainer  *t = nb_trainer_create();
	uint32_t	feature;
	Written		w = {NULL, 0};

	if (nb_trainer_merge_view(t, a, &feature) == NB_MERGE_OK &&
		nb_trainer_merge_view(t, b, &feature) == NB_MERGE_OK)
		w = write_trainer(t);
	nb_trainer_destroy(t);
	return w;
}

/* A check of what writers make of two extreme models: false if it failed. */
typedef bool (*PairCheck) (const NbView *a, const NbView *b);

static void
each_pair(PairCheck check)
{
	Written		m[NMODELS];

	extreme_models(m);
	for (int i = 0; i < NMODELS; i++)
		for (int j = 0; j < NMODELS; j++)
		{
			NbView		a;
			NbView		b;

			if (open_written(&m[i], &a) && open_written(&m[j], &b) && !check(&a, &b))
			{
				fail_append(" (models %d and %d)", i, j);
				free_models(m, NMODELS);
				return;
			}
		}
	free_models(m, NMODELS);
}

static bool
merges_valid(const NbView *a, const NbView *b)
{
	NbView		out;
	Written		flat = merge_flat(a, b, &out);
	Written		trained = merge_trainer(a, b);
	bool		ok = check_written(&flat, &out, "the flat merge") &&
		check_written(&trained, NULL, "a merge into the trainer");

	free(flat.bytes);
	free(trained.bytes);
	return ok;
}

/* Merging every pair of extreme models, flat and into a trainer. */
static void
test_merges(void)
{
	each_pair(merges_valid);
}

/* a - b, or none if refused or empty. */
static Written
subtract(const NbView *a, const NbView *b, NbView *out)
{
	NbSubtractError err;
	NbPlan	   *s = nb_subtract_plan(a, b, &err);
	Written		w = {NULL, 0};

	if (s == NULL)
		return w;
	if (!nb_plan_is_empty(s))
	{
		w.size = nb_plan_size(s, SIZE_MAX);
		w.bytes = malloc(w.size);
		nb_plan_write(s, w.bytes, w.size, out);
	}
	nb_plan_destroy(s);
	return w;
}

static bool
subtractions_valid(const NbView *a, const NbView *b)
{
	NbView		ab;
	NbView		out;
	Written		merged = merge_flat(a, b, &ab);
	Written		back = {NULL, 0};
	Written		direct;
	bool		ok;

	if (merged.bytes != NULL)
		back = subtract(&ab, b, &out);
	ok = check_written(&back, &out, "subtracting from a merge");
	direct = subtract(a, b, &out);
	ok = ok && check_written(&direct, &out, "subtracting");
	free(merged.bytes);
	free(back.bytes);
	free(direct.bytes);
	return ok;
}

/* Subtracting: each extreme model from each merge of two, and from each model. */
static void
test_subtractions(void)
{
	each_pair(subtractions_valid);
}

/* Pruning every extreme model with thresholds at their extremes. */
static void
test_prunes(void)
{
	static const double top_k[] = {-1, 0, 1, 9007199254740992.0};
	static const double min_docs[] = {0, TRUE_MIN, 1e-300, 1, 1e300};
	static const double fraction[] = {-1, 0, TRUE_MIN, 0.5, 1};
	Written		m[NMODELS];

	extreme_models(m);
	for (int i = 0; i < NMODELS; i++)
		for (int k = 0; k < 4; k++)
			for (int d = 0; d < 5; d++)
				for (int f = 0; f < 5; f++)
				{
					NbView		v;
					NbView		out;
					NbPruneOptions o;
					NbPruner   *p;
					Written		w;
					bool		ok;

					if (!open_written(&m[i], &v))
						continue;
					nb_prune_options_init(&o);
					if (top_k[k] >= 0)
						CHECK(nb_prune_set_top_k(&o, top_k[k]), "top_k refused");
					CHECK(nb_prune_set_min_documents(&o, min_docs[d]),
						  "min_documents refused");
					if (fraction[f] >= 0)
						CHECK(nb_prune_set_max_document_fraction(&o, fraction[f]),
							  "max_document_fraction refused");
					p = nb_pruner_create(&v, &o);
					w.size = nb_pruner_size(p, SIZE_MAX);
					w.bytes = malloc(w.size);
					nb_pruner_write(p, w.bytes, w.size, &out);
					nb_pruner_destroy(p);
					ok = check_written(&w, &out, "pruning");
					free(w.bytes);
					if (!ok)
					{
						fail_append(" (model %d, top_k %g, min_documents %g, fraction %g)", i,
									top_k[k], min_docs[d], fraction[f]);
						free_models(m, NMODELS);
						return;
					}
				}
	free_models(m, NMODELS);
}

/* The copy with other settings (nb_with_options' writer): options set, kept, removed. */
static void
test_with_settings(void)
{
	static const char *const options[] = {"{\"alpha\": 5e-324}", "{\"kind\": \"multinomial\"}", ""};
	Written		m[NMODELS];

	extreme_models(m);
	for (int i = 0; i < NMODELS; i++)
		for (int s = 0; s < 3; s++)
		{
			NbView		v;
			NbView		out;
			NbSettings	settings;
			NbFormatShape shape;
			NbFormatWriter fw;
			Written		w;
			bool		ok;

			/* nb_with_options refuses options for a model of no class */
			if (!open_written(&m[i], &v) || (v.n_classes == 0 && options[s][0] != '\0'))
				continue;
			settings = v.settings;
			settings.options = options[s];
			settings.options_len = (uint32_t) strlen(options[s]);
			shape = nb_view_shape(&v, &settings);
			w.size = nb_format_size(&shape, SIZE_MAX);
			w.bytes = malloc(w.size);
			nb_format_begin(&fw, &shape, w.bytes, w.size);
			nb_format_copy(&fw, &v);
			nb_format_finish(&fw, &out);
			ok = check_written(&w, &out, "the copy with other settings");
			free(w.bytes);
			if (!ok)
			{
				fail_append(" (model %d, options %s)", i, options[s]);
				free_models(m, NMODELS);
				return;
			}
		}
	free_models(m, NMODELS);
}

/* Run a test, then say how many models it checked: none would prove nothing. */
static void
run_counted(const char *name, TestFn fn)
{
	n_checked = 0;
	n_refused = 0;
	run(name, fn);
	note("%s: %d models written and valid, %d writes refused", name, n_checked, n_refused);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run_counted("writers: the trainer, at every extreme weight, count and value", test_trainer);
	run_counted("writers: EM's spread rows, weights underflowing in some or all classes", test_em_spread);
	run_counted("writers: merging extreme models, flat and into the trainer", test_merges);
	run_counted("writers: subtracting extreme models, from a merge and directly", test_subtractions);
	run_counted("writers: pruning extreme models at extreme thresholds", test_prunes);
	run_counted("writers: the copy with other settings", test_with_settings);
	return unit_done();
}
