/*
 * pg_tokenize.c — nb_tokens(body, options), the tokenizer's options jsonb,
 * and tokenizing a text value in any database encoding (pg_tokenize.h).
 *
 * What the options mean and the tokens themselves are Core's
 * (nb_tokenize.h); this file reads the JSON, reports a refused value as an
 * error, converts encodings and builds the text[] result.
 */
#include "pg_tokenize.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "pg_jsonb.h"
#include "pg_label.h"
#include "nb_options.h"

PG_FUNCTION_INFO_V1(nb_tokens);

/*
 * The token patterns nb_tokenize knows, two per NbTokenPattern in its order:
 * with (?u), the canonical form, and without, which Python 3 implies.
 */
static const char *const token_patterns[] = {
	"(?u)\\b\\w\\w+\\b", "\\b\\w\\w+\\b", "(?u)\\b\\w+\\b", "\\b\\w+\\b"
};

StaticAssertDecl(lengthof(token_patterns) == 2 * (NB_PATTERN_WORD1 + 1), "two forms of each token pattern");

/* The names of each enumeration's values in order; NULL: JSON null. */
static const char *const analyzers[] = {"word", "char", "char_wb"};
static const char *const accents[] = {NULL, "ascii", "unicode"};
static const char *const stop_words[] = {NULL, "english"};

#define ANALYZER_DETAIL "Valid analyzers are \"word\", \"char\" and \"char_wb\"."
#define NGRAM_RANGE_DETAIL "It must be an array of two integers [min, max] with 1 <= min <= max <= 64."
#define LOWERCASE_DETAIL "It must be true or false."
#define STRIP_ACCENTS_DETAIL "It must be null, \"ascii\" or \"unicode\"."
#define TOKEN_PATTERN_DETAIL "The supported patterns are \"(?u)\\\\b\\\\w\\\\w+\\\\b\" and \"(?u)\\\\b\\\\w+\\\\b\", with or without \"(?u)\"."
#define STOP_WORDS_DETAIL "It must be null or \"english\"."

StaticAssertDecl(NB_NGRAM_MAX == 64, "NGRAM_RANGE_DETAIL names NB_NGRAM_MAX");

/* detail: one of the literal *_DETAIL strings above (translatable as they are) */
#define option_error(option, detail) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), \
			 errmsg("invalid value for tokenizer option \"%s\"", option), \
			 errdetail(detail)))

static bool
is_string(const JsonbValue *v, const char *s)
{
	return v->type == jbvString && v->val.string.len == strlen(s) &&
		memcmp(v->val.string.val, s, v->val.string.len) == 0;
}

/* The index of v among names (a string, or null for a NULL name); -1 if none. */
static int
name_index(const JsonbValue *v, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (names[i] == NULL ? v->type == jbvNull : is_string(v, names[i]))
			return i;
	return -1;
}

/* ngram_range: [min, max] */
static void
parse_ngram_range(const JsonbValue *v, NbTokenizer *t)
{
	double		n[2];

	/* written so that NaN and fractions fail too */
	if (!nb_jsonb_number_pair(v, n) || !(1 <= n[0] && n[0] <= n[1] && n[1] <= NB_NGRAM_MAX) ||
		n[0] != floor(n[0]) || n[1] != floor(n[1]))
		option_error("ngram_range", NGRAM_RANGE_DETAIL);
	t->ngram_min = (uint32) n[0];
	t->ngram_max = (uint32) n[1];
}

static void
parse_option(const char *name, const JsonbValue *v, void *arg)
{
	NbTokenizer *t = arg;
	int			i;

	if (strcmp(name, "analyzer") == 0)
	{
		if ((i = name_index(v, analyzers, lengthof(analyzers))) < 0)
			option_error("analyzer", ANALYZER_DETAIL);
		t->analyzer = (NbAnalyzer) i;
	}
	else if (strcmp(name, "ngram_range") == 0)
		parse_ngram_range(v, t);
	else if (strcmp(name, "lowercase") == 0)
	{
		if (v->type != jbvBool)
			option_error("lowercase", LOWERCASE_DETAIL);
		t->lowercase = v->val.boolean;
	}
	else if (strcmp(name, "strip_accents") == 0)
	{
		if ((i = name_index(v, accents, lengthof(accents))) < 0)
			option_error("strip_accents", STRIP_ACCENTS_DETAIL);
		t->strip_accents = (NbStripAccents) i;
	}
	else if (strcmp(name, "token_pattern") == 0)
	{
		if ((i = name_index(v, token_patterns, lengthof(token_patterns))) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for tokenizer option \"token_pattern\""),
					 errdetail(TOKEN_PATTERN_DETAIL),
					 errhint("Other regular expressions are not supported: nbc matches these two itself, as Python's re does.")));
		t->token_pattern = (NbTokenPattern) (i / 2);
	}
	else if (strcmp(name, "stop_words") == 0)
	{
		if ((i = name_index(v, stop_words, lengthof(stop_words))) < 0)
			option_error("stop_words", STOP_WORDS_DETAIL);
		t->stop_words = (NbStopWords) i;
	}
	else if (nb_is_prediction_option(name))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized tokenizer option \"%s\"", name),
				 errdetail("\"%s\" is a prediction option: the tokenizer's options say how text becomes tokens.", name),
				 errhint("Pass it as the options of the scoring functions or of nb_with_options(model, '{\"%s\": ...}').", name)));
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized tokenizer option \"%s\"", nb_cut_str(name, strlen(name))),
				 errhint("Valid options are analyzer, ngram_range, lowercase, strip_accents, token_pattern and stop_words.")));
}

void
nb_tokenizer_from_jsonb(Jsonb *options, NbTokenizer *t)
{
	nb_tokenizer_init(t);
	if (options == NULL)
		return;
	if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
	{
		JsonbValue	v;

		/* a number: most likely nb_train(label, body, weight) */
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tokenizer options must be a JSON object"),
				 JsonbExtractScalar(&options->root, &v) && v.type == jbvNumeric ?
				 errhint("To weight rows of text, pass the weight before the tokenizer: nb_train(label, body, weight, NULL) (NULL: the default tokenizer).") : 0));
	}
	nb_jsonb_each_option(options, parse_option, t);
	Assert(nb_tokenizer_valid(t));
}

static void
push_int(JsonbParseState **state, uint32 v)
{
	JsonbValue	jv;

	jv.type = jbvNumeric;
	jv.val.numeric = int64_to_numeric(v);
	pushJsonbValue(state, WJB_ELEM, &jv);
}

/* A string value, or null for NULL. */
static void
push_string_or_null(JsonbParseState **state, const char *s)
{
	JsonbValue	jv;

	if (s != NULL)
	{
		nb_push_string(state, s);
		return;
	}
	jv.type = jbvNull;
	pushJsonbValue(state, WJB_VALUE, &jv);
}

Jsonb *
nb_tokenizer_to_jsonb(const NbTokenizer *t)
{
	JsonbParseState *state = NULL;
	JsonbValue	jv;
	JsonbValue *root;

	Assert(nb_tokenizer_valid(t));
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	nb_push_key(&state, "analyzer", 8);
	nb_push_string(&state, analyzers[t->analyzer]);
	nb_push_key(&state, "ngram_range", 11);
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	push_int(&state, t->ngram_min);
	push_int(&state, t->ngram_max);
	pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	nb_push_key(&state, "lowercase", 9);
	jv.type = jbvBool;
	jv.val.boolean = t->lowercase;
	pushJsonbValue(&state, WJB_VALUE, &jv);
	nb_push_key(&state, "strip_accents", 13);
	push_string_or_null(&state, accents[t->strip_accents]);
	nb_push_key(&state, "token_pattern", 13);
	nb_push_string(&state, token_patterns[2 * t->token_pattern]);
	nb_push_key(&state, "stop_words", 10);
	push_string_or_null(&state, stop_words[t->stop_words]);
	root = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(root);
}

/* ---------------------------------------------------------------- */
/* encodings                                                          */

/* What a sink in another encoding than UTF-8 needs: the caller's sink. */
typedef struct Reencode
{
	NbTokenSink sink;
	void	   *arg;
} Reencode;

/*
 * A UTF-8 token converted to the database encoding, then handed on; never
 * stable, since the UTF-8 text is a copy freed once it is tokenized.
 */
static bool
reencode_token(void *arg, const char *token, uint32_t len, bool stable)
{
	Reencode   *r = arg;
	char	   *s = pg_any_to_server(token, (int) len, PG_UTF8);
	bool		more;

	/* pg_any_to_server gives its input back when the bytes stay the same */
	if (s == token)
		return r->sink(r->arg, token, len, false);
	more = r->sink(r->arg, s, (uint32_t) strlen(s), false);
	pfree(s);
	return more;
}

static void
check_length(const NbTokenizer *t, size_t len)
{
	if (len > nb_tokenize_max_len(t))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("text too long to tokenize"),
				 errdetail("The text has %zu bytes in UTF-8; with these options at most %zu can be tokenized.",
						   len, nb_tokenize_max_len(t)),
				 errhint("Accent stripping can make a text up to 11 times longer; tokenize shorter pieces.")));
}

void
nb_text_tokenize(const NbTokenizer *t, text *body, NbTokenSink sink, void *arg, NbTokenizeBuffers *keep)
{
	const char *s = VARDATA_ANY(body);
	int			len = VARSIZE_ANY_EXHDR(body);
	int			encoding = GetDatabaseEncoding();
	char	   *utf8;
	size_t		utf8_len;
	Reencode	r;

	if (encoding == PG_UTF8 || encoding == PG_SQL_ASCII)
	{
		/* SQL_ASCII: bytes of no declared encoding, read as UTF-8 once they are valid UTF-8 */
		if (encoding == PG_SQL_ASCII)
			(void) pg_verify_mbstr(PG_UTF8, s, len, false);
		check_length(t, len);
		if (keep != NULL)
			(void) nb_tokenize_kept(t, s, len, sink, arg, keep);
		else
			(void) nb_tokenize(t, s, len, sink, arg);
		return;
	}
	/* the converted text ends in a NUL; the unconverted one (empty) does not */
	utf8 = pg_server_to_any(s, len, PG_UTF8);
	utf8_len = utf8 == s ? (size_t) len : strlen(utf8);
	check_length(t, utf8_len);
	r.sink = sink;
	r.arg = arg;
	(void) nb_tokenize(t, utf8, utf8_len, reencode_token, &r);
	if (utf8 != s)
		pfree(utf8);
}

/* ---------------------------------------------------------------- */
/* nb_tokens(body text, options jsonb) RETURNS text[]                 */

/*
 * The result array, built in place: the header of a one-dimensional array
 * without nulls, then each token as a text element (4-byte header, int
 * alignment, padding zeroed) as construct_md_array lays them out.
 */
typedef struct TokenArray
{
	char	   *buf;
	Size		used;
	Size		cap;
	int			count;
} TokenArray;

#define TOKEN_ARRAY_HEADER ARR_OVERHEAD_NONULLS(1)

/*
 * Every element takes at least 8 bytes, so a result within MaxAllocSize
 * has fewer than MaxArraySize elements.
 */
StaticAssertDecl((MaxAllocSize - TOKEN_ARRAY_HEADER) / INTALIGN(VARHDRSZ + 1) <= MaxArraySize,
				 "a text[] within MaxAllocSize may have too many elements");

static bool
append_token(void *arg, const char *token, uint32_t len, bool stable)
{
	TokenArray *a = arg;
	Size		size = INTALIGN(VARHDRSZ + (Size) len);
	char	   *elem;

	if (size > MaxAllocSize - a->used)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tokens exceed the maximum size of an array"),
				 errdetail("An array of the tokens of this text would be larger than %zu bytes.",
						   (Size) MaxAllocSize),
				 errhint("Tokenize shorter pieces of the text, or fewer n-gram sizes.")));
	if (a->used + size > a->cap)
	{
		Size		cap = a->cap > MaxAllocSize / 2 ? MaxAllocSize : a->cap * 2;

		if (cap < a->used + size)
			cap = a->used + size;
		a->buf = repalloc(a->buf, cap);
		a->cap = cap;
	}
	elem = a->buf + a->used;
	SET_VARSIZE(elem, VARHDRSZ + len);
	memcpy(VARDATA(elem), token, len);
	memset(elem + VARHDRSZ + len, 0, size - VARHDRSZ - len);
	a->used += size;
	a->count++;
	return true;
}

/*
 * Not STRICT: a NULL options argument means the defaults (and is the
 * default); a NULL body gives NULL.
 */
Datum
nb_tokens(PG_FUNCTION_ARGS)
{
	text	   *body;
	NbTokenizer t;
	TokenArray	a;
	ArrayType  *result;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	body = PG_GETARG_TEXT_PP(0);
	nb_tokenizer_from_jsonb(PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1), &t);

	/* room for the header and about as many bytes as the text has */
	a.cap = TOKEN_ARRAY_HEADER + Min((Size) VARSIZE_ANY_EXHDR(body) + 64, MaxAllocSize / 2);
	a.buf = palloc(a.cap);
	a.used = TOKEN_ARRAY_HEADER;
	a.count = 0;
	nb_text_tokenize(&t, body, append_token, &a, NULL);
	if (a.count == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(TEXTOID));

	memset(a.buf, 0, TOKEN_ARRAY_HEADER);
	result = (ArrayType *) a.buf;
	SET_VARSIZE(result, a.used);
	result->ndim = 1;
	result->dataoffset = 0;
	result->elemtype = TEXTOID;
	ARR_DIMS(result)[0] = a.count;
	ARR_LBOUND(result)[0] = 1;
	PG_RETURN_ARRAYTYPE_P(result);
}
