/*
 * nb_tokenize.h — scikit-learn's CountVectorizer analyzers in C: a UTF-8
 * text in, its tokens out, token for token what
 * CountVectorizer(**options).build_analyzer()(text) returns (scikit-learn
 * 1.2, sklearn/feature_extraction/text.py), with Python's Unicode tables
 * (nb_unicode.h).
 *
 * The steps are scikit-learn's, in its order: lowercase (with the final
 * sigma rule), strip accents, then the analyzer, each option as the user
 * manual's Tokenizer table states it (README.md).  Stop words and
 * the token pattern, which only the word analyzer uses, are kept as given.
 *
 * The options travel inside a model (nb_format.h) as NB_TOKENIZER_SIZE
 * bytes: nb_tokenizer_encode writes them canonically, nb_tokenizer_decode
 * reads and validates them.
 */
#ifndef NB_TOKENIZE_H
#define NB_TOKENIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum NbAnalyzer
{
	NB_ANALYZER_WORD,
	NB_ANALYZER_CHAR,
	NB_ANALYZER_CHAR_WB
} NbAnalyzer;

typedef enum NbStripAccents
{
	NB_ACCENTS_KEEP,			/* strip_accents null */
	NB_ACCENTS_ASCII,
	NB_ACCENTS_UNICODE
} NbStripAccents;

/* The token patterns supported: runs of word characters of at least this many. */
typedef enum NbTokenPattern
{
	NB_PATTERN_WORD2,			/* (?u)\b\w\w+\b, scikit-learn's default */
	NB_PATTERN_WORD1			/* (?u)\b\w+\b */
} NbTokenPattern;

typedef enum NbStopWords
{
	NB_STOP_NONE,
	NB_STOP_ENGLISH				/* scikit-learn's ENGLISH_STOP_WORDS */
} NbStopWords;

/* The largest n of an n-gram range. */
#define NB_NGRAM_MAX 64

typedef struct NbTokenizer
{
	NbAnalyzer	analyzer;
	uint32_t	ngram_min;		/* 1 <= ngram_min <= ngram_max <= NB_NGRAM_MAX */
	uint32_t	ngram_max;
	bool		lowercase;
	NbStripAccents strip_accents;
	NbTokenPattern token_pattern;
	NbStopWords stop_words;
} NbTokenizer;

/* scikit-learn's defaults: word, [1, 1], lowercase, no accent stripping, \w\w+, no stop words. */
void		nb_tokenizer_init(NbTokenizer *t);

/* Whether the options are within the ranges above. */
bool		nb_tokenizer_valid(const NbTokenizer *t);

/* The stored form: bytes 0..3 analyzer, lowercase, strip_accents, token_pattern; 4 stop_words; 5..7 0; 8 ngram_min, 12 ngram_max (little-endian uint32). */
#define NB_TOKENIZER_SIZE 16

void		nb_tokenizer_encode(const NbTokenizer *t, unsigned char *out);

/* Read the stored form; false if it is not one nb_tokenizer_encode writes. */
bool		nb_tokenizer_decode(NbTokenizer *t, const unsigned char *in);

/*
 * Receives each token in order.  Its bytes are valid until the next call,
 * or, when stable, as long as the text given to nb_tokenize and, for
 * nb_tokenize_kept, until its buffers are used again or freed: a sink can
 * then keep the reference instead of copying the bytes.  Returning false
 * stops the walk (nb_tokenize then returns false too).
 */
typedef bool (*NbTokenSink) (void *arg, const char *token, uint32_t len, bool stable);

/* Work buffers kept from one text to the next (nb_tokenize_kept). */
typedef struct NbTokenizeBuffers
{
	unsigned char *buf;			/* the preprocessed text */
	size_t		cap;
	unsigned char *scratch;		/* word n-grams, padded words */
	size_t		scratch_cap;
} NbTokenizeBuffers;

/*
 * Allocate small buffers now, from nb_alloc: they only grow and shrink
 * (nb_realloc) afterwards, so they stay where they were made (inside the
 * server, the memory context current here, which frees them).
 */
void		nb_tokenize_buffers_init(NbTokenizeBuffers *b);

/* Give back what a long text made them grow to (a text's tokens must no longer be used). */
void		nb_tokenize_buffers_shrink(NbTokenizeBuffers *b);

/*
 * The longest text nb_tokenize takes, in bytes: lowercasing and accent
 * stripping may make a text longer (nb_unicode_growth: up to 11 times for
 * NFKD), and every token must stay shorter than 4 GiB.  About 2 GiB, or
 * 390 MB with strip_accents.
 */
size_t		nb_tokenize_max_len(const NbTokenizer *t);

/*
 * Tokenize text (len <= nb_tokenize_max_len bytes of valid UTF-8; a byte
 * that does not start valid UTF-8 is read as U+FFFD, and nothing past len
 * is read) and hand each token to sink.  Work buffers come from nb_alloc and are freed before returning
 * (on an error raised inside, with the caller's memory context); their size
 * is about the text's (after lowercasing and accent stripping, which may
 * grow it) plus the longest token.  Calls nb_interrupt at least every
 * NB_INTERRUPT_BYTES of text and of tokens.  Returns false if sink stopped it.
 * Only tokens that are pieces of text itself are stable.
 */
bool		nb_tokenize(const NbTokenizer *t, const char *text, size_t len,
						NbTokenSink sink, void *arg);

/*
 * The same with the work buffers of keep (nb_tokenize_buffers_init), left
 * as they are on return: tokens that are pieces of the text or of its
 * lowercased copy (every token of the word analyzer without n-grams, and
 * of char) are stable, which saves a batch of them a copy.
 */
bool		nb_tokenize_kept(const NbTokenizer *t, const char *text, size_t len,
							 NbTokenSink sink, void *arg, NbTokenizeBuffers *keep);

/*
 * Is name one of the tokenizer's options?  For the hint of a tokenizer
 * option given where prediction options go (pg_options.c).
 */
bool		nb_is_tokenizer_option(const char *name);

#endif
