/*
 * pg_unknown.c — nbc.unknown_features, see pg_unknown.h.  Where the counts
 * live and when they are reported: src/README.md, "Features the model does
 * not know".
 */
#include "pg_unknown.h"

#include <math.h>

#include "access/xact.h"
#include "mb/pg_wchar.h"
#include "tcop/pquery.h"
#include "utils/formatting.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/portal.h"
#include "utils/varlena.h"

#include "nb_doc.h"
#include "pg_tokenize.h"

/* How many unknown jsonb keys a report names. */
#define NB_KEYS_SHOWN 5

/* The longest key compared for a misspelling (varstr_levenshtein's limit). */
#define NB_KEY_MAX 255

/*
 * A key of the model that this share of its training rows had, missing
 * from every one of at least NB_LOST_KEY_ROWS jsonb rows scored, is named:
 * by chance that happens with a probability below 0.1^10.
 */
#define NB_COMMON_KEY_SHARE 0.9
#define NB_LOST_KEY_ROWS 10

/*
 * A statement with fewer feature occurrences is not judged: one short row
 * (a tweet that is only "@handle") says nothing about the features made.
 * Chosen with the threshold from test/bench/unknown_fp.py (README).
 */
#define NB_MIN_OCCURRENCES 30

int			nb_unknown_features = NB_UNKNOWN_WARNING;
static double unknown_threshold = 0.75;

static const struct config_enum_entry unknown_features_options[] = {
	{"warning", NB_UNKNOWN_WARNING, false},
	{"error", NB_UNKNOWN_ERROR, false},
	{"ignore", NB_UNKNOWN_IGNORE, false},
	{NULL, 0, false}
};

/* A row's feature occurrences (as nb_coverage counts them). */
typedef struct RowCounts
{
	double		known;
	double		unknown;		/* tokens, values and keys the model does not have */
} RowCounts;

/* A statement's report (src/README.md, "Features the model does not know"). */
typedef struct Report
{
	MemoryContextCallback cb;
	MemoryContext cxt;
	int64		rows;
	RowCounts	sum;
	/* the last row counted, to count a row scored twice once */
	const FmgrInfo *last_site;
	const NbPrepared *last_model;
	Datum		last_features;
	RowCounts	last;
	/* a call site's first row, counted though it was the last row again */
	const FmgrInfo *pending_site;
	RowCounts	pending;
	/* a model with a tokenizer given tokens made otherwise: its tokenizer as JSON */
	char	   *tokenizer;
	/*
	 * The first model given jsonb rows: its keys, its rows, and per key the
	 * rows that lacked it.
	 */
	const NbPrepared *keys_model;
	uint32		n_keys;
	char	  **key_names;
	int64	   *key_missing;
	bool	   *key_common;		/* in NB_COMMON_KEY_SHARE of the training rows or more */
	int64		keys_rows;
	int64		unknown_key_rows;	/* rows with a key the model does not have */
	/* the first unknown jsonb keys met */
	int			n_unknown_keys;
	char	   *unknown_keys[NB_KEYS_SHOWN];
} Report;

static void report_statement(void *arg);

/*
 * The statement's report: found among the reset callbacks of its context
 * (a list of a few, read as MemoryContextCallResetCallbacks reads it), or
 * made there.
 */
static Report *
statement_report(FunctionCallInfo fcinfo)
{
	MemoryContext cxt = ActivePortal != NULL ? ActivePortal->portalContext : fcinfo->flinfo->fn_mcxt;
	Report	   *r;

	for (MemoryContextCallback *cb = cxt->reset_cbs; cb != NULL; cb = cb->next)
		if (cb->func == report_statement)
			return cb->arg;
	r = MemoryContextAllocZero(cxt, sizeof(Report));
	r->cxt = cxt;
	r->cb.func = report_statement;
	r->cb.arg = r;
	MemoryContextRegisterResetCallback(cxt, &r->cb);
	return r;
}

static bool
same_row(const Report *r, FunctionCallInfo fcinfo, int arg, const NbPrepared *pm, RowCounts c)
{
	return r->last_site != fcinfo->flinfo && r->last_model == pm &&
		r->last_features == fcinfo->args[arg].value &&
		r->last.known == c.known && r->last.unknown == c.unknown;
}

/*
 * A key copied for the report, or NULL for one it cannot name: not valid
 * in the database encoding (a model's bytes reach scoring unvalidated when
 * a value is corrupted on disk), or longer than the edit distance takes.
 * Nothing the report says may fail when it says it.
 */
static char *
copy_key(MemoryContext cxt, const char *s, uint32 len)
{
	char	   *copy;

	if (len > NB_KEY_MAX || !pg_verifymbstr(s, (int) len, true) || memchr(s, '\0', len) != NULL)
		return NULL;
	copy = MemoryContextAlloc(cxt, (Size) len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	return copy;
}

/* The keys of the first model given jsonb rows, copied: the report outlives the call site. */
static void
take_keys(Report *r, const NbPrepared *pm)
{
	uint32		F = pm->index.n_features;

	r->keys_model = pm;
	r->n_keys = F;
	r->key_names = MemoryContextAlloc(r->cxt, sizeof(char *) * Max(F, 1));
	r->key_missing = MemoryContextAllocZero(r->cxt, sizeof(int64) * Max(F, 1));
	r->key_common = MemoryContextAllocZero(r->cxt, sizeof(bool) * Max(F, 1));
	for (uint32 j = 0; j < F; j++)
	{
		uint32		len;
		const char *s = nb_vocab_str(&pm->index.features, j, &len);
		double		rows = 0;

		for (uint32 c = 0; c < pm->index.n_classes; c++)
			rows += nb_index_present(&pm->index, (uint64) j * pm->index.n_classes + c);
		r->key_common[j] = rows >= NB_COMMON_KEY_SHARE * pm->index.total_docs;

		r->key_names[j] = copy_key(r->cxt, s, len);
	}
}

static void
note_unknown_key(Report *r, const char *key, uint32 len)
{
	char	   *copy;

	for (int i = 0; i < r->n_unknown_keys; i++)
		if (strlen(r->unknown_keys[i]) == len && memcmp(r->unknown_keys[i], key, len) == 0)
			return;
	if (r->n_unknown_keys < NB_KEYS_SHOWN && (copy = copy_key(r->cxt, key, len)) != NULL)
		r->unknown_keys[r->n_unknown_keys++] = copy;
}

/*
 * A jsonb row: counted for the first model given jsonb rows, with the keys
 * of the model it lacks and whether it has a key the model does not (a
 * misspelled key is unknown, and the key it stands for is missing); its
 * first unknown key is noted.
 */
static void
count_keys(Report *r, const NbPrepared *pm)
{
	if (r->keys_model == NULL)
		take_keys(r, pm);
	if (pm->unknown_key != NULL)
		note_unknown_key(r, pm->unknown_key, pm->unknown_key_len);
	if (r->keys_model != pm)
		return;
	r->keys_rows++;
	if (pm->unknown_key != NULL)
		r->unknown_key_rows++;
	for (uint32 j = 0; j < r->n_keys; j++)
		if (pm->index.feature_type[j] != NB_FEATURE_BAG && !pm->doc.present[j])
			r->key_missing[j]++;
}

/* A model that tokenizes text given tokens made otherwise: keep its tokenizer to name it. */
static void
note_tokenizer(Report *r, const NbPrepared *pm, NbFeatureInput input)
{
	Jsonb	   *jb;

	if (r->tokenizer != NULL || !pm->has_tokenizer ||
		(input != NB_INPUT_ARRAY && input != NB_INPUT_TSVECTOR))
		return;
	jb = nb_tokenizer_to_jsonb(&pm->tokenizer);
	r->tokenizer = MemoryContextStrdup(r->cxt, JsonbToCString(NULL, &jb->root, VARSIZE(jb)));
}

/* A share as a percentage with one decimal, never rounded up to the threshold. */
static void
format_share(double share, char *buf, size_t size)
{
	snprintf(buf, size, "%.1f%%", floor(share * 1000) / 10);
}

/* A count with thousands separators, as the report shows it. */
static void
format_count(double x, char *buf, size_t size)
{
	char		digits[64];
	int			n = snprintf(digits, sizeof(digits), "%.0f", x);
	int			o = 0;

	for (int i = 0; i < n && o < (int) size - 2; i++)
	{
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

static void
refuse_row(const NbPrepared *pm, NbFeatureInput input, RowCounts c)
{
	char		share[32];
	char		limit[32];
	double		all = c.known + c.unknown;

	format_share(c.known / all, share, sizeof(share));
	format_share(unknown_threshold, limit, sizeof(limit));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("naive Bayes model knows %s of the row's %.15g feature occurrences", share, all),
			 errdetail("nbc.unknown_features is \"error\" and nbc.unknown_features_threshold is %s.", limit),
			 pm->has_tokenizer && (input == NB_INPUT_ARRAY || input == NB_INPUT_TSVECTOR) ?
			 errhint("The model tokenizes text itself: pass the text, not tokens made otherwise.") :
			 errhint("Make the features as for training (the same tokenizer, stemming and keys), "
					 "or set nbc.unknown_features to \"warning\".")));
}

/*
 * Whether the row is the last one counted, scored again by another call
 * site (two functions on one row).  A call site's first row cannot tell
 * (the last site may be gone: a PL/pgSQL loop's PERFORM is a new call
 * site each time, and its features may lie where the last ones did): it
 * is counted and kept pending, and taken back when the same site's next
 * row proves it a twin.
 */
static bool
twin_row(Report *r, FunctionCallInfo fcinfo, int arg, const NbPrepared *pm, RowCounts c)
{
	NbSiteRows *site = nb_prepared_site_rows(fcinfo);
	bool		again = same_row(r, fcinfo, arg, pm, c);

	if (site->report != r)
	{
		site->report = r;
		site->rows = 0;
	}
	if (again && site->rows > 0)
	{
		if (r->pending_site == fcinfo->flinfo)
		{
			r->rows--;
			r->sum.known -= r->pending.known;
			r->sum.unknown -= r->pending.unknown;
			r->pending_site = NULL;
		}
		return true;
	}
	site->rows++;
	if (again)
	{
		r->pending_site = fcinfo->flinfo;
		r->pending = c;
	}
	return false;
}

void
nb_count_row(FunctionCallInfo fcinfo, int arg, NbFeatureInput input, NbPrepared *pm)
{
	RowCounts	c = {nb_doc_known(&pm->doc, &pm->index), pm->doc.unknown};
	Report	   *r;

	if (nb_unknown_features == NB_UNKNOWN_ERROR && c.known < unknown_threshold * (c.known + c.unknown))
		refuse_row(pm, input, c);
	r = statement_report(fcinfo);
	if (twin_row(r, fcinfo, arg, pm, c))
		return;
	r->rows++;
	r->sum.known += c.known;
	r->sum.unknown += c.unknown;
	r->last_site = fcinfo->flinfo;
	r->last_model = pm;
	r->last_features = fcinfo->args[arg].value;
	r->last = c;
	if (input == NB_INPUT_JSONB)
		count_keys(r, pm);
	if (c.unknown > 0)
		note_tokenizer(r, pm, input);
}

/*
 * Whether an unknown key looks like a misspelling of the model's key: the
 * same but for case, or within one edit (two for keys of 8 bytes or more;
 * none for keys under 4, where one edit makes another word).
 */
static bool
looks_like(const char *given, const char *key)
{
	int			len = (int) strlen(key);
	int			edits = len >= 8 ? 2 : len >= 4 ? 1 : 0;
	char	   *a = asc_tolower(given, strlen(given));
	char	   *b = asc_tolower(key, len);

	return varstr_levenshtein_less_equal(a, (int) strlen(a), b, len, 1, 1, 1, edits, true) <= edits;
}

/*
 * The unknown keys that look like keys of the model missing from every
 * jsonb row (every such row had an unknown key), as a list; NULL if none.
 */
static char *
misspelled_keys(const Report *r)
{
	StringInfoData s;

	if (r->keys_rows == 0 || r->n_unknown_keys == 0 || r->unknown_key_rows < r->keys_rows)
		return NULL;
	initStringInfo(&s);
	for (uint32 j = 0; j < r->n_keys; j++)
	{
		if (r->key_missing[j] < r->keys_rows || r->key_names[j] == NULL)
			continue;
		for (int i = 0; i < r->n_unknown_keys; i++)
			if (looks_like(r->unknown_keys[i], r->key_names[j]))
				appendStringInfo(&s, "%s\"%s\" for \"%s\"", s.len > 0 ? ", " : "",
								 r->unknown_keys[i], r->key_names[j]);
	}
	return s.len > 0 ? s.data : NULL;
}

/*
 * The keys of the model that nearly every training row had and no jsonb
 * row scored has (at least NB_LOST_KEY_ROWS of them), as a list; NULL if
 * none.
 */
static char *
lost_keys(const Report *r)
{
	StringInfoData s;
	int			shown = 0;

	if (r->keys_rows < NB_LOST_KEY_ROWS)
		return NULL;
	initStringInfo(&s);
	for (uint32 j = 0; j < r->n_keys && shown < NB_KEYS_SHOWN; j++)
		if (r->key_common[j] && r->key_missing[j] == r->keys_rows && r->key_names[j] != NULL)
		{
			appendStringInfo(&s, "%s\"%s\"", s.len > 0 ? ", " : "", r->key_names[j]);
			shown++;
		}
	return s.len > 0 ? s.data : NULL;
}

/* The warning of keys the model relies on that no row scored had. */
static void
warn_lost_keys(const Report *r, const char *lost)
{
	char		rows[64];

	format_count((double) r->keys_rows, rows, sizeof(rows));
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("every one of the %s jsonb rows scored lacked keys of the naive Bayes model: %s",
					rows, lost),
			 errdetail("The model learned them from at least %.0f%% of its training rows; the rows were predicted without them.",
					   NB_COMMON_KEY_SHARE * 100),
			 errhint("Give the rows the keys of training: jsonb keys are case-sensitive, and nb_info lists the model's features.")));
}

/* The statement's warning; misspelled lists the keys that look misspelled, or is NULL. */
static void
warn(const Report *r, const char *misspelled)
{
	char		share[32];
	char		limit[32];
	char		occurrences[64];
	char		rows[64];
	double		all = r->sum.known + r->sum.unknown;

	format_share(all > 0 ? r->sum.known / all : 0, share, sizeof(share));
	format_share(unknown_threshold, limit, sizeof(limit));
	format_count(all, occurrences, sizeof(occurrences));
	format_count((double) r->rows, rows, sizeof(rows));
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg_plural("naive Bayes model knew %s of the %s feature occurrences in %s row scored",
						   "naive Bayes model knew %s of the %s feature occurrences in %s rows scored",
						   (unsigned long) r->rows, share, occurrences, rows),
			 misspelled != NULL ?
			 errdetail("Every row lacked keys the model has and had keys it does not have: %s.", misspelled) :
			 errdetail("That is below nbc.unknown_features_threshold (%s): the predictions rest on a part of the features.",
					   limit),
			 r->tokenizer != NULL ?
			 errhint("The model tokenizes text itself, with the tokenizer %s; tokens made otherwise "
					 "(a tsvector's stems, a text[]) are not its tokens: pass the text.", r->tokenizer) :
			 misspelled != NULL ?
			 errhint("Spell the keys as in training: jsonb keys are case-sensitive, and nb_info lists the model's features.") :
			 errhint("Make the features as for training (the same tokenizer, stemming and keys); "
					 "nb_coverage shows the share of each row's features that the model knows. "
					 "A model pruned by nb_prune or trained on few rows knows fewer by design: lower "
					 "nbc.unknown_features_threshold, or set nbc.unknown_features to \"ignore\".")));
}

/*
 * Reset callback of the statement's context: it is over.  Outside a
 * transaction in progress (it failed, or aborts) nothing is said.
 */
static void
report_statement(void *arg)
{
	Report	   *r = arg;
	double		all = r->sum.known + r->sum.unknown;
	MemoryContext old;
	char	   *misspelled;
	char	   *lost;

	if (!IsTransactionState() || r->rows == 0)
		return;
	/* what the report makes goes with the context, which is valid until its callbacks return */
	old = MemoryContextSwitchTo(r->cxt);
	misspelled = misspelled_keys(r);
	if (misspelled != NULL ||
		(all >= NB_MIN_OCCURRENCES && r->sum.known < unknown_threshold * all))
		warn(r, misspelled);
	else if ((lost = lost_keys(r)) != NULL)
		warn_lost_keys(r, lost);
	MemoryContextSwitchTo(old);
}

void
nb_unknown_init(void)
{
	DefineCustomEnumVariable("nbc.unknown_features",
							 "What to do when the model knows too few of the features scored.",
							 "warning: one warning when the statement ends if the share of its feature "
							 "occurrences the model knows is below nbc.unknown_features_threshold; "
							 "error: refuse a row whose own share is below it; ignore: count nothing.",
							 &nb_unknown_features,
							 NB_UNKNOWN_WARNING, unknown_features_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomRealVariable("nbc.unknown_features_threshold",
							 "Share of the feature occurrences scored that the model must know, 0 to 1.",
							 "Below it, nbc.unknown_features warns (or refuses the row).",
							 &unknown_threshold,
							 0.75, 0.0, 1.0,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
}
