/*
 * test_tokenize.c — unit tests of the tokenizer (src/nb_tokenize.c) and
 * its Unicode layer (src/nb_unicode.c).
 *
 *   ./test_tokenize        run every test
 *   ./test_tokenize WORD   run the tests whose name contains WORD
 *
 * Every expected token list is worked out by hand from scikit-learn 1.2.1's
 * code (sklearn/feature_extraction/text.py) and Python's Unicode rules; the
 * parity suite (test/parity/tokens.py) compares whole corpora and every
 * code point with scikit-learn itself.  Output: see unit.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_alloc.h"
#include "nb_tokenize.h"
#include "nb_unicode.h"
#include "unit.h"

/* A failed condition is the detail of the failure. */
#define EXPECT(cond) CHECK(cond, "%s", #cond)

/* The tokens joined by "|" (no test text has one), and how many. */
typedef struct Joined
{
	char		s[4096];
	size_t		len;
	uint32_t	count;
	uint32_t	stop_after;		/* the sink stops after this many tokens (0: never) */
} Joined;

static bool
join_sink(void *arg, const char *token, uint32_t len, bool stable)
{
	Joined	   *j = arg;

	(void) stable;
	if (j->len + len + 2 > sizeof(j->s))
		abort();
	if (j->count > 0)
		j->s[j->len++] = '|';
	memcpy(j->s + j->len, token, len);
	j->len += len;
	j->s[j->len] = '\0';
	j->count++;
	return j->stop_after == 0 || j->count < j->stop_after;
}

/* The options of a test: scikit-learn's defaults changed by a few fields. */
static NbTokenizer
opts(NbAnalyzer analyzer, uint32_t min, uint32_t max)
{
	NbTokenizer t;

	nb_tokenizer_init(&t);
	t.analyzer = analyzer;
	t.ngram_min = min;
	t.ngram_max = max;
	return t;
}

/* Tokenize len bytes of text; the tokens joined into *j. */
static bool
tokenize_n(const NbTokenizer *t, const char *text, size_t len, Joined *j)
{
	j->len = 0;
	j->count = 0;
	j->s[0] = '\0';
	return nb_tokenize(t, text, len, join_sink, j);
}

/* Check that text gives the tokens want (joined by "|"), and no block stays allocated. */
#define EXPECT_TOKENS(t, text, want) \
	do { \
		Joined		j_ = {{0}, 0, 0, 0}; \
		long		blocks_ = nb_test_live_blocks(); \
		CHECK(tokenize_n(&(t), (text), strlen(text), &j_), "%s: the sink did not stop it", #text); \
		CHECK(strcmp(j_.s, (want)) == 0, "%s: got \"%s\", expected \"%s\"", #text, j_.s, (want)); \
		CHECK(nb_test_live_blocks() == blocks_, "%s: blocks left allocated", #text); \
	} while (0)

/* ---------------------------------------------------------------- */
/* options, stored form                                               */

static void
test_defaults(void)
{
	NbTokenizer t;

	nb_tokenizer_init(&t);
	EXPECT(t.analyzer == NB_ANALYZER_WORD);
	EXPECT(t.ngram_min == 1 && t.ngram_max == 1);
	EXPECT(t.lowercase);
	EXPECT(t.strip_accents == NB_ACCENTS_KEEP);
	EXPECT(t.token_pattern == NB_PATTERN_WORD2);
	EXPECT(t.stop_words == NB_STOP_NONE);
	EXPECT(nb_tokenizer_valid(&t));
}

static void
test_valid(void)
{
	NbTokenizer t;

	nb_tokenizer_init(&t);
	t.ngram_min = 0;
	EXPECT(!nb_tokenizer_valid(&t));
	t.ngram_min = 3;
	t.ngram_max = 2;
	EXPECT(!nb_tokenizer_valid(&t));
	t.ngram_min = NB_NGRAM_MAX;
	t.ngram_max = NB_NGRAM_MAX;
	EXPECT(nb_tokenizer_valid(&t));
	t.ngram_max = NB_NGRAM_MAX + 1;
	EXPECT(!nb_tokenizer_valid(&t));
	nb_tokenizer_init(&t);
	t.analyzer = (NbAnalyzer) 3;
	EXPECT(!nb_tokenizer_valid(&t));
	nb_tokenizer_init(&t);
	t.strip_accents = (NbStripAccents) 3;
	EXPECT(!nb_tokenizer_valid(&t));
	nb_tokenizer_init(&t);
	t.token_pattern = (NbTokenPattern) 2;
	EXPECT(!nb_tokenizer_valid(&t));
	nb_tokenizer_init(&t);
	t.stop_words = (NbStopWords) 2;
	EXPECT(!nb_tokenizer_valid(&t));
}

static bool
same_tokenizer(const NbTokenizer *a, const NbTokenizer *b)
{
	return a->analyzer == b->analyzer && a->ngram_min == b->ngram_min &&
		a->ngram_max == b->ngram_max && a->lowercase == b->lowercase &&
		a->strip_accents == b->strip_accents && a->token_pattern == b->token_pattern &&
		a->stop_words == b->stop_words;
}

/* Every valid option set survives encode then decode, and encodes canonically. */
static void
test_encode_round_trip(void)
{
	static const uint32_t ranges[][2] = {{1, 1}, {1, 2}, {2, 3}, {64, 64}, {1, 64}};

	for (int a = 0; a < 3; a++)
		for (int l = 0; l < 2; l++)
			for (int s = 0; s < 3; s++)
				for (int p = 0; p < 2; p++)
					for (int w = 0; w < 2; w++)
						for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++)
						{
							NbTokenizer t = opts((NbAnalyzer) a, ranges[r][0], ranges[r][1]);
							NbTokenizer back;
							unsigned char bytes[NB_TOKENIZER_SIZE];
							unsigned char again[NB_TOKENIZER_SIZE];

							t.lowercase = l == 1;
							t.strip_accents = (NbStripAccents) s;
							t.token_pattern = (NbTokenPattern) p;
							t.stop_words = (NbStopWords) w;
							memset(bytes, 0xAA, sizeof(bytes));
							nb_tokenizer_encode(&t, bytes);
							CHECK(nb_tokenizer_decode(&back, bytes), "decode of %d %d %d %d %d %zu", a, l, s, p, w, r);
							CHECK(same_tokenizer(&t, &back), "round trip of %d %d %d %d %d %zu", a, l, s, p, w, r);
							nb_tokenizer_encode(&back, again);
							CHECK(memcmp(bytes, again, NB_TOKENIZER_SIZE) == 0, "re-encoding differs");
						}
}

/* The layout nb_tokenize.h documents, byte for byte. */
static void
test_encode_layout(void)
{
	static const unsigned char want[NB_TOKENIZER_SIZE] = {
		2, 0, 1, 1, 1, 0, 0, 0, 0x02, 0, 0, 0, 0x40, 0, 0, 0
	};
	NbTokenizer t = opts(NB_ANALYZER_CHAR_WB, 2, 64);
	unsigned char bytes[NB_TOKENIZER_SIZE];

	t.lowercase = false;
	t.strip_accents = NB_ACCENTS_ASCII;
	t.token_pattern = NB_PATTERN_WORD1;
	t.stop_words = NB_STOP_ENGLISH;
	nb_tokenizer_encode(&t, bytes);
	EXPECT(memcmp(bytes, want, NB_TOKENIZER_SIZE) == 0);
}

/* Each byte out of its range is refused, and the output is left alone. */
static void
test_decode_rejects(void)
{
	/* byte index, bad value */
	static const unsigned char bad[][2] = {
		{0, 3}, {0, 0xFF}, {1, 2}, {1, 0xFF}, {2, 3}, {3, 2}, {4, 2}, {5, 1}, {6, 1}, {7, 0x80},
		{8, 0}, {9, 1}, {11, 1}, {12, 0}, {12, 65}, {13, 1}, {15, 1}
	};
	NbTokenizer t = opts(NB_ANALYZER_CHAR, 2, 3);
	NbTokenizer out;
	unsigned char good[NB_TOKENIZER_SIZE];

	nb_tokenizer_encode(&t, good);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		unsigned char b[NB_TOKENIZER_SIZE];

		memcpy(b, good, sizeof(b));
		b[bad[i][0]] = bad[i][1];
		nb_tokenizer_init(&out);
		CHECK(!nb_tokenizer_decode(&out, b), "byte %d = %d accepted", bad[i][0], bad[i][1]);
		CHECK(out.analyzer == NB_ANALYZER_WORD && out.ngram_max == 1, "output changed on refusal");
	}
	/* min > max */
	good[8] = 4;
	EXPECT(!nb_tokenizer_decode(&out, good));
}

static void
test_max_len(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 1);

	t.lowercase = false;
	EXPECT(nb_tokenize_max_len(&t) == UINT32_MAX - 2);
	t.lowercase = true;
	EXPECT(nb_tokenize_max_len(&t) == (UINT32_MAX - 2) / 2);
	t.strip_accents = NB_ACCENTS_ASCII;
	EXPECT(nb_tokenize_max_len(&t) == (UINT32_MAX - 2) / 11);
	t.lowercase = false;
	t.strip_accents = NB_ACCENTS_UNICODE;
	EXPECT(nb_tokenize_max_len(&t) == (UINT32_MAX - 2) / 11);
}

/* ---------------------------------------------------------------- */
/* the word analyzer                                                  */

static void
test_word_default(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 1);

	EXPECT_TOKENS(t, "The quick brown fox", "the|quick|brown|fox");
	/* one-character words are not matched; digits and _ are word characters */
	EXPECT_TOKENS(t, "a b x_y 42 7 I'm", "x_y|42");
	/* \b: a word starts after a non-word character, anywhere */
	EXPECT_TOKENS(t, "don't e-mail foo.bar", "don|mail|foo|bar");
	EXPECT_TOKENS(t, "", "");
	EXPECT_TOKENS(t, " \t\n", "");
	/* word characters beyond ASCII: letters, digits of other scripts, no combining marks */
	EXPECT_TOKENS(t, "Ωμέγα ٤٢ 東京", "ωμέγα|٤٢|東京");
	/* e + U+0301: the mark is not \w and splits the word */
	EXPECT_TOKENS(t, "cafe\xcc\x81s", "cafe");
}

static void
test_word_pattern1(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 1);

	t.token_pattern = NB_PATTERN_WORD1;
	EXPECT_TOKENS(t, "a b x_y 42 7 I'm", "a|b|x_y|42|7|i|m");
}

static void
test_word_lowercase_off(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 1);

	t.lowercase = false;
	EXPECT_TOKENS(t, "Hello WORLD ΑΣ", "Hello|WORLD|ΑΣ");
}

static void
test_word_stop_words(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 1);

	t.stop_words = NB_STOP_ENGLISH;
	/* the first, the last and the longest of the list, and a prefix and an extension */
	EXPECT_TOKENS(t, "a yourselves nevertheless the then thence thenx th cat", "thenx|th|cat");
	/* the list is lowercase: without lowercasing, "The" is no stop word */
	t.lowercase = false;
	EXPECT_TOKENS(t, "The the", "The");
	/* stop words go before the n-grams are made */
	t.lowercase = true;
	t.ngram_min = 2;
	t.ngram_max = 2;
	EXPECT_TOKENS(t, "the cat and the hat", "cat hat");
}

static void
test_word_ngrams(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 3);

	t.token_pattern = NB_PATTERN_WORD1;
	/* all 1-grams, then all 2-grams, then all 3-grams */
	EXPECT_TOKENS(t, "a b c d", "a|b|c|d|a b|b c|c d|a b c|b c d");
	t.ngram_min = 2;
	EXPECT_TOKENS(t, "a, b;  c", "a b|b c|a b c");
	/* fewer tokens than n: none of that size */
	t.ngram_min = 3;
	t.ngram_max = 5;
	EXPECT_TOKENS(t, "a b", "");
	EXPECT_TOKENS(t, "a b c d", "a b c|b c d|a b c d");
	/* the ring of the last n tokens wraps many times */
	t.ngram_min = 4;
	t.ngram_max = 4;
	EXPECT_TOKENS(t, "1 2 3 4 5 6 7 8 9", "1 2 3 4|2 3 4 5|3 4 5 6|4 5 6 7|5 6 7 8|6 7 8 9");
	t.ngram_min = 64;
	t.ngram_max = 64;
	{
		char		text[131];
		char		want[256];

		for (int i = 0; i < 65; i++)
		{
			text[2 * i] = (char) ('a' + i % 26);
			text[2 * i + 1] = ' ';
		}
		text[130] = '\0';
		/* the two 64-grams: letters 0..63 and 1..64 */
		memcpy(want, text, 127);
		want[127] = '|';
		memcpy(want + 128, text + 2, 127);
		want[255] = '\0';
		EXPECT_TOKENS(t, text, want);
	}
}

/* ---------------------------------------------------------------- */
/* char and char_wb                                                   */

static void
test_char(void)
{
	NbTokenizer t = opts(NB_ANALYZER_CHAR, 1, 1);

	/* two spaces become one; a lone tab stays; lowercase */
	EXPECT_TOKENS(t, "Ab  c\td", "a|b| |c|\t|d");
	/* a run of mixed white space, and one at each end */
	EXPECT_TOKENS(t, " a \t\n b\n", " |a| |b|\n");
	t.ngram_max = 2;
	EXPECT_TOKENS(t, "abc", "a|b|c|ab|bc");
	t.ngram_min = 2;
	t.ngram_max = 5;
	EXPECT_TOKENS(t, "abc", "ab|bc|abc");
	t.ngram_min = 4;
	EXPECT_TOKENS(t, "abc", "");
	EXPECT_TOKENS(t, "", "");
	/* n counts code points: é is 2 bytes, 東 3, 𝐀 4 */
	t.ngram_min = 2;
	t.ngram_max = 2;
	EXPECT_TOKENS(t, "é東𝐀x", "é東|東𝐀|𝐀x");
	/* U+3000 and U+0085 are white space too */
	t.ngram_min = 1;
	t.ngram_max = 1;
	EXPECT_TOKENS(t, "a\xe3\x80\x80\xc2\x85z", "a| |z");
	/* stop words and token patterns are the word analyzer's */
	t.stop_words = NB_STOP_ENGLISH;
	t.token_pattern = NB_PATTERN_WORD1;
	EXPECT_TOKENS(t, "the", "t|h|e");
}

static void
test_char_wb(void)
{
	NbTokenizer t = opts(NB_ANALYZER_CHAR_WB, 2, 3);

	EXPECT_TOKENS(t, "ab cde", " a|ab|b | ab|ab | c|cd|de|e | cd|cde|de ");
	/* " a " has 3 code points: n = 3 takes it whole and stops that word's n-grams */
	t.ngram_min = 1;
	t.ngram_max = 5;
	EXPECT_TOKENS(t, "a", " |a| | a|a | a ");
	t.ngram_min = 4;
	t.ngram_max = 4;
	EXPECT_TOKENS(t, "ab", " ab ");
	t.ngram_min = 3;
	t.ngram_max = 4;
	EXPECT_TOKENS(t, "ab", " ab|ab | ab ");
	/* str.split(): any white space separates, lone or not; leading and trailing ignored */
	t.ngram_min = 5;
	t.ngram_max = 5;
	EXPECT_TOKENS(t, "\tab\ncd  ef\xe2\x80\xa8gh ", " ab | cd | ef | gh ");
	EXPECT_TOKENS(t, "   ", "");
	/* multibyte: code points */
	t.ngram_min = 2;
	t.ngram_max = 2;
	EXPECT_TOKENS(t, "東京", " 東|東京|京 ");
}

/* ---------------------------------------------------------------- */
/* Python's str.lower() and accent stripping                         */

static void
test_final_sigma(void)
{
	NbTokenizer t = opts(NB_ANALYZER_CHAR, 1, 1);

	/* final: a cased letter before, none after */
	EXPECT_TOKENS(t, "ΑΣ", "α|ς");
	EXPECT_TOKENS(t, "ΑΣΑ", "α|σ|α");
	/* nothing cased before */
	EXPECT_TOKENS(t, "Σ", "σ");
	EXPECT_TOKENS(t, "1Σ", "1|σ");
	/* case-ignorable characters (' . : U+0301) are looked through, both ways */
	EXPECT_TOKENS(t, "Α'Σ", "α|'|ς");
	EXPECT_TOKENS(t, "'Σ", "'|σ");
	EXPECT_TOKENS(t, "ΑΣ.'", "α|ς|.|'");
	EXPECT_TOKENS(t, "ΑΣ'Β", "α|σ|'|β");
	EXPECT_TOKENS(t, "ΑΣ\xcc\x81x", "α|σ|\xcc\x81|x");
	/* the context is the original text: a capital sigma before is cased */
	EXPECT_TOKENS(t, "ΣΣ", "σ|ς");
	/* ASCII letters are cased too */
	EXPECT_TOKENS(t, "aΣ b", "a|ς| |b");
	/* without lowercasing nothing changes */
	t.lowercase = false;
	EXPECT_TOKENS(t, "ΑΣ", "Α|Σ");
}

static void
test_dotted_capital_i(void)
{
	NbTokenizer t = opts(NB_ANALYZER_CHAR, 1, 1);

	/* U+0130 lowercases to i + U+0307 */
	EXPECT_TOKENS(t, "İx", "i|\xcc\x87|x");
	t.analyzer = NB_ANALYZER_WORD;
	/* the combining dot is not \w: "i" alone is too short */
	EXPECT_TOKENS(t, "İstanbul", "stanbul");
	/* stripping drops the dot */
	t.strip_accents = NB_ACCENTS_UNICODE;
	EXPECT_TOKENS(t, "İstanbul", "istanbul");
	/* not lowercased: NFKD of U+0130 is I + U+0307 */
	t.lowercase = false;
	EXPECT_TOKENS(t, "İstanbul", "Istanbul");
}

static void
test_strip_unicode(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 1);

	t.strip_accents = NB_ACCENTS_UNICODE;
	EXPECT_TOKENS(t, "Crème Brûlée Ǆemal ﬁnal", "creme|brulee|dzemal|final");
	/* NFKD's compatibility forms: ½ is 1 U+2044 2, ² is 2, ① is 1 */
	t.token_pattern = NB_PATTERN_WORD1;
	EXPECT_TOKENS(t, "½ x² ①", "1|2|x2|1");
	/* non-Latin letters keep their base: ё to е, ά to α */
	EXPECT_TOKENS(t, "ёлка άλφα", "елка|αλφα");
	/* U+FDFA: one code point, four Arabic words */
	EXPECT_TOKENS(t, "\xef\xb7\xba", "صلى|الله|عليه|وسلم");
	/* a lone combining mark disappears */
	EXPECT_TOKENS(t, "a\xcc\x81" "b", "ab");
}

static void
test_strip_ascii(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 1);

	t.strip_accents = NB_ACCENTS_ASCII;
	EXPECT_TOKENS(t, "Crème Brûlée ½", "creme|brulee|12");
	/* letters without an ASCII decomposition go */
	EXPECT_TOKENS(t, "Москва ok 東京", "ok");
	EXPECT_TOKENS(t, "straße", "strae");
}

static void
test_hangul(void)
{
	NbTokenizer t = opts(NB_ANALYZER_CHAR, 1, 1);

	EXPECT_TOKENS(t, "한가", "한|가");
	t.strip_accents = NB_ACCENTS_UNICODE;
	/* U+D55C: L U+1112, V U+1161, T U+11AB; U+AC00: L U+1100, V U+1161, no T */
	EXPECT_TOKENS(t, "한가", "\xe1\x84\x92|\xe1\x85\xa1|\xe1\x86\xab|\xe1\x84\x80|\xe1\x85\xa1");
	/* the last syllable U+D7A3: L U+1112, V U+1175, T U+11C2 */
	EXPECT_TOKENS(t, "\xed\x9e\xa3", "\xe1\x84\x92|\xe1\x85\xb5|\xe1\x87\x82");
	t.strip_accents = NB_ACCENTS_ASCII;
	EXPECT_TOKENS(t, "한a", "a");
}

/* Bytes that are not UTF-8 read as U+FFFD, never past the end. */
static void
test_invalid_utf8(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 1);
	Joined		j = {{0}, 0, 0, 0};
	/* a 3-byte sequence cut short by the end of the text: the buffer ends there */
	char	   *cut = malloc(4);

	EXPECT_TOKENS(t, "ab\xff" "cd", "ab|cd");
	EXPECT_TOKENS(t, "ab\xc0\x80" "cd", "ab|cd");
	EXPECT_TOKENS(t, "ab\xed\xa0\x80" "cd", "ab|cd");
	t.lowercase = false;
	EXPECT_TOKENS(t, "ab\xf4\x90\x80\x80" "cd", "ab|cd");
	t.analyzer = NB_ANALYZER_CHAR;
	EXPECT_TOKENS(t, "a\xff", "a|\xef\xbf\xbd");
	memcpy(cut, "ab\xe6\x9d", 4);
	tokenize_n(&t, cut, 4, &j);
	free(cut);
	EXPECT(strcmp(j.s, "a|b|\xef\xbf\xbd|\xef\xbf\xbd") == 0);
}

/* A sink that returns false stops the walk, and nb_tokenize says so. */
static void
test_sink_stops(void)
{
	NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 2);
	Joined		j = {{0}, 0, 0, 2};
	long		blocks = nb_test_live_blocks();

	EXPECT(!tokenize_n(&t, "one two three", 13, &j));
	EXPECT(strcmp(j.s, "one|two") == 0);
	j.stop_after = 4;
	EXPECT(!tokenize_n(&t, "one two three", 13, &j));
	EXPECT(strcmp(j.s, "one|two|three|one two") == 0);
	t.analyzer = NB_ANALYZER_CHAR_WB;
	j.stop_after = 1;
	EXPECT(!tokenize_n(&t, "one", 3, &j) && j.count == 1);
	EXPECT(nb_test_live_blocks() == blocks);
}

/* What random_sink checks of every token: not empty, whole UTF-8 code points. */
typedef struct Checked
{
	uint64_t	tokens;
	const char *bad;			/* the first fault, or NULL */
} Checked;

static bool
random_sink(void *arg, const char *token, uint32_t len, bool stable)
{
	Checked    *c = arg;
	uint32_t	i = 0;

	(void) stable;
	c->tokens++;
	if (len == 0 && c->bad == NULL)
		c->bad = "an empty token";
	while (i < len)
	{
		uint32_t	cp;
		uint32_t	n = nb_utf8_decode((const unsigned char *) token + i, len - i, &cp);

		if (cp == NB_UTF8_REPLACEMENT && n == 1 && c->bad == NULL)
			c->bad = "a token that is not UTF-8";
		i += n;
	}
	return true;
}

/*
 * Random bytes, mostly UTF-8 of every length with invalid bytes, white
 * space, capital sigmas and ASCII mixed in, under every analyzer and
 * option: no crash, no read past the text (ASan), every token whole
 * UTF-8, nothing left allocated.
 */
static void
test_random_bytes(void)
{
	static const char *const pieces[] = {
		"a", "Z", " ", "  ", "\t", "\n", "_", "7", "'", ".", "\xce\xa3", "\xc4\xb0", "\xcc\x81",
		"\xe3\x80\x80", "\xea\xb0\x80", "\xef\xb7\xba", "\xf0\x9d\x90\x80", "\xff", "\xc3", "\xe6\x9d",
		"\xed\xa0\x80", "\xc2\x85", "the", "\xef\xbf\xbd"
	};
	long		blocks = nb_test_live_blocks();
	char		text[512];

	for (int round = 0; round < 3000; round++)
	{
		size_t		len = 0;
		size_t		n = unit_random() % 60;
		NbTokenizer t = opts((NbAnalyzer) (unit_random() % 3), 1, 1);
		Checked		c = {0, NULL};
		char	   *copy;

		for (size_t k = 0; k < n; k++)
		{
			const char *p = pieces[unit_random() % (sizeof(pieces) / sizeof(pieces[0]))];

			memcpy(text + len, p, strlen(p));
			len += strlen(p);
		}
		t.ngram_min = 1 + (uint32_t) (unit_random() % 3);
		t.ngram_max = t.ngram_min + (uint32_t) (unit_random() % 3);
		t.lowercase = unit_random() % 2;
		t.strip_accents = (NbStripAccents) (unit_random() % 3);
		t.token_pattern = (NbTokenPattern) (unit_random() % 2);
		t.stop_words = (NbStopWords) (unit_random() % 2);
		/* a block of exactly len bytes, so that ASan sees a read past it */
		copy = malloc(len > 0 ? len : 1);
		memcpy(copy, text, len);
		nb_tokenize(&t, copy, len, random_sink, &c);
		free(copy);
		CHECK(c.bad == NULL, "round %d: %s", round, c.bad);
	}
	EXPECT(nb_test_live_blocks() == blocks);
}

/* Stable tokens as they were handed out: where they are, and a copy of their bytes. */
typedef struct Kept
{
	Joined		joined;			/* every token, as join_sink keeps them */
	const char *where[256];
	char		copy[256][64];
	uint32_t	len[256];
	uint32_t	stable;
} Kept;

static bool
kept_sink(void *arg, const char *token, uint32_t len, bool stable)
{
	Kept	   *k = arg;

	if (stable)
	{
		if (k->stable == 256 || len > 64)
			abort();
		k->where[k->stable] = token;
		memcpy(k->copy[k->stable], token, len);
		k->len[k->stable++] = len;
	}
	return join_sink(&k->joined, token, len, stable);
}

/*
 * nb_tokenize_kept: the tokens of nb_tokenize, in order; those it calls
 * stable still hold their bytes after it returns (the buffers kept, the
 * text unchanged), which the batch relies on to reference them without a
 * copy; n-grams of words and char_wb's padded words are never stable; the
 * buffers are reused from text to text, shrink back after a long one, and
 * are all that is left allocated until they are freed.
 */
static void
test_kept_buffers(void)
{
	static const char *const texts[] = {
		"Hello World, the WORLD says hello", "ΣΑΣ σας Καλημέρα", "  tabs\tand\nnew lines  ", "", "a"
	};
	long		blocks = nb_test_live_blocks();
	NbTokenizeBuffers keep;
	char	   *long_text;
	size_t		long_len = (size_t) 3 << 20;

	nb_tokenize_buffers_init(&keep);
	for (int round = 0; round < 3 * 2 * 2 * 2; round++)
	{
		NbTokenizer t = opts((NbAnalyzer) (round % 3), 1, 1 + (uint32_t) (round / 3 % 2));

		t.lowercase = round / 6 % 2 == 0;
		t.strip_accents = round / 12 % 2 == 0 ? NB_ACCENTS_KEEP : NB_ACCENTS_UNICODE;
		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		{
			Kept		k;
			Joined		plain = {{0}, 0, 0, 0};
			size_t		len = strlen(texts[i]);

			memset(&k, 0, sizeof(k));
			CHECK(tokenize_n(&t, texts[i], len, &plain), "round %d text %zu", round, i);
			CHECK(nb_tokenize_kept(&t, texts[i], len, kept_sink, &k, &keep), "round %d text %zu", round, i);
			CHECK(strcmp(k.joined.s, plain.s) == 0, "round %d text %zu: \"%s\" kept, \"%s\" not",
				  round, i, k.joined.s, plain.s);
			for (uint32_t s = 0; s < k.stable; s++)
				CHECK(memcmp(k.where[s], k.copy[s], k.len[s]) == 0,
					  "round %d text %zu: stable token %u changed", round, i, s);
			if (t.analyzer == NB_ANALYZER_WORD && t.ngram_max == 1)
				CHECK(k.stable == k.joined.count, "round %d text %zu: %u of %u tokens stable",
					  round, i, k.stable, k.joined.count);
			if (t.analyzer == NB_ANALYZER_CHAR_WB)
				CHECK(k.stable == 0, "round %d text %zu: padded words called stable", round, i);
		}
	}
	/* a long text grows them; the next batch's start gives the memory back */
	long_text = malloc(long_len);
	memset(long_text, 'A', long_len);
	{
		Checked		c = {0, NULL};
		NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 2);

		long_text[long_len / 2] = ' ';
		EXPECT(nb_tokenize_kept(&t, long_text, long_len, random_sink, &c, &keep));
		EXPECT(c.tokens == 3 && c.bad == NULL);
		EXPECT(keep.cap >= long_len && keep.scratch_cap >= long_len);
	}
	free(long_text);
	nb_tokenize_buffers_shrink(&keep);
	EXPECT(keep.cap < ((size_t) 1 << 20) && keep.scratch_cap < ((size_t) 1 << 20));
	nb_free(keep.buf);
	nb_free(keep.scratch);
	EXPECT(nb_test_live_blocks() == blocks);
}

/*
 * The word analyzer's findall, one code point at a time as the definition
 * says (runs of \w of at least min_cps code points), for the test below.
 */
static void
reference_words(const char *text, size_t len, uint32_t min_cps, Joined *j)
{
	const unsigned char *s = (const unsigned char *) text;
	size_t		i = 0;

	j->len = 0;
	j->count = 0;
	j->s[0] = '\0';
	while (i < len)
	{
		size_t		start = i;
		uint32_t	cps = 0;
		uint32_t	c;
		uint32_t	n = nb_utf8_decode(s + i, len - i, &c);

		if (!(nb_unicode_flags(c) & NB_UC_WORD))
		{
			i += n;
			continue;
		}
		while (i < len && (n = nb_utf8_decode(s + i, len - i, &c), nb_unicode_flags(c) & NB_UC_WORD))
		{
			i += n;
			cps++;
		}
		if (cps >= min_cps)
			join_sink(j, text + start, (uint32_t) (i - start), false);
	}
}

/*
 * The word scan reads 64-byte windows of bits (nb_tokenize.c): words and
 * gaps longer than a window, multibyte letters and non-letters across a
 * window's edge, invalid bytes, against the code point by code point
 * reference, for both token patterns.
 */
static void
test_word_windows(void)
{
	static const char *const pieces[] = {
		"a", "Q", "_", "7", " ", ".", "'", "\xc3\xa9", "\xd0\x94", "\xe4\xb8\xad", "\xf0\x9d\x90\x80",
		"\xe3\x80\x80", "\xcc\x81", "\xc2\xa0", "\xff", "\xe6\x9d",
		"abcdefghijklmnopqrstuvwxyz0123456789", "------------------------------------------"
	};
	char		text[1024];

	for (int round = 0; round < 3000; round++)
	{
		size_t		len = 0;
		size_t		n = unit_random() % 40;
		NbTokenizer t = opts(NB_ANALYZER_WORD, 1, 1);
		Joined		got = {{0}, 0, 0, 0};
		Joined		want = {{0}, 0, 0, 0};

		for (size_t k = 0; k < n; k++)
		{
			const char *p = pieces[unit_random() % (sizeof(pieces) / sizeof(pieces[0]))];

			memcpy(text + len, p, strlen(p));
			len += strlen(p);
		}
		t.lowercase = false;
		t.token_pattern = (NbTokenPattern) (unit_random() % 2);
		tokenize_n(&t, text, len, &got);
		reference_words(text, len, t.token_pattern == NB_PATTERN_WORD2 ? 2 : 1, &want);
		CHECK(strcmp(got.s, want.s) == 0, "round %d: got \"%s\", expected \"%s\"", round, got.s, want.s);
	}
}

/* ---------------------------------------------------------------- */
/* nb_unicode.h                                                       */

/* Every code point but the surrogates encodes and decodes back; its length is UTF-8's. */
static void
test_utf8_every_code_point(void)
{
	for (uint32_t c = 0; c <= 0x10FFFF; c++)
	{
		unsigned char b[4];
		uint32_t	n;
		uint32_t	back;
		uint32_t	want = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

		if (c >= 0xD800 && c <= 0xDFFF)
			continue;
		n = nb_utf8_encode(c, b);
		CHECK(n == want, "U+%04X: %u bytes", c, n);
		CHECK(nb_utf8_decode(b, n, &back) == n && back == c, "U+%04X decodes to U+%04X", c, back);
		/* one byte short: the lead byte alone is invalid */
		if (n > 1)
			CHECK(nb_utf8_decode(b, n - 1, &back) == 1 && back == NB_UTF8_REPLACEMENT,
				  "U+%04X cut short", c);
	}
}

static void
test_utf8_invalid(void)
{
	static const char *const bad[] = {
		"\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xed\xa0\x80",
		"\xed\xbf\xbf", "\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
		"\xff", "\xc3\x28", "\xe2\x28\xa1", "\xf0\x9f\x98\x28"
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		uint32_t	c;

		CHECK(nb_utf8_decode((const unsigned char *) bad[i], strlen(bad[i]), &c) == 1 &&
			  c == NB_UTF8_REPLACEMENT, "invalid sequence %zu decoded", i);
	}
}

/* A few code points of each flag, as Python has them. */
static void
test_unicode_flags(void)
{
	EXPECT(nb_unicode_flags('a') & NB_UC_WORD);
	EXPECT(nb_unicode_flags('_') & NB_UC_WORD);
	EXPECT(nb_unicode_flags('7') & NB_UC_WORD);
	EXPECT(!(nb_unicode_flags('-') & NB_UC_WORD));
	EXPECT(nb_unicode_flags(0x00B2) & NB_UC_WORD);	/* ² is numeric */
	EXPECT(!(nb_unicode_flags(0x0301) & NB_UC_WORD));	/* combining acute */
	EXPECT(nb_unicode_flags(0x1C) & NB_UC_SPACE);	/* Python's isspace: the file separator */
	EXPECT(nb_unicode_flags(0x85) & NB_UC_SPACE);
	EXPECT(nb_unicode_flags(0x3000) & NB_UC_SPACE);
	EXPECT(!(nb_unicode_flags(0x200B) & NB_UC_SPACE));	/* zero width space is not */
	EXPECT(!(nb_unicode_flags(0xFEFF) & NB_UC_SPACE));
	EXPECT(nb_unicode_flags('\'') & NB_UC_IGNORABLE);
	EXPECT(nb_unicode_flags(0x0301) & NB_UC_IGNORABLE);
	EXPECT(nb_unicode_flags('A') & NB_UC_CASED);
	EXPECT(!(nb_unicode_flags('1') & (NB_UC_CASED | NB_UC_IGNORABLE)));
	EXPECT(nb_unicode_flags(0x3A3) & NB_UC_LOWER);
	EXPECT(!(nb_unicode_flags('a') & NB_UC_LOWER));
	EXPECT(nb_unicode_flags(0xE9) & NB_UC_STRIP);
	EXPECT(!(nb_unicode_flags('e') & NB_UC_STRIP));
	EXPECT(nb_unicode_flags(0x10FFFF) == 0);
	EXPECT(strcmp(nb_unicode_version, "14.0.0") == 0);
}

static void
test_unicode_lower(void)
{
	uint32_t	out[NB_UNICODE_LOWER_MAX];

	EXPECT(nb_unicode_lower('A', out) == 1 && out[0] == 'a');
	EXPECT(nb_unicode_lower(0x130, out) == 2 && out[0] == 'i' && out[1] == 0x307);
	EXPECT(nb_unicode_lower(0x3A3, out) == 1 && out[0] == 0x3C3);
	EXPECT(nb_unicode_lower(0x1E9E, out) == 1 && out[0] == 0xDF);	/* ẞ to ß */
	EXPECT(nb_unicode_lower(0x10400, out) == 1 && out[0] == 0x10428);	/* Deseret */
	EXPECT(nb_unicode_lower(0x212A, out) == 1 && out[0] == 'k');	/* Kelvin sign */
	EXPECT(nb_unicode_lower('a', out) == 1 && out[0] == 'a');
}

/* ---------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("tokenizer: defaults are scikit-learn's", test_defaults);
	run("tokenizer: option ranges", test_valid);
	run("tokenizer: encode, decode, encode again, every option set", test_encode_round_trip);
	run("tokenizer: the stored form's layout", test_encode_layout);
	run("tokenizer: decode refuses every byte out of range", test_decode_rejects);
	run("tokenizer: the longest text with each growth", test_max_len);
	run("word: the default pattern \\b\\w\\w+\\b, lowercased", test_word_default);
	run("word: the pattern \\b\\w+\\b", test_word_pattern1);
	run("word: lowercase off", test_word_lowercase_off);
	run("word: English stop words, before n-grams", test_word_stop_words);
	run("word: n-grams, 1-grams first", test_word_ngrams);
	run("char: white space runs, n-grams in code points", test_char);
	run("char_wb: padded words, short words once", test_char_wb);
	run("lower: Python's final sigma rule", test_final_sigma);
	run("lower: U+0130 to two code points", test_dotted_capital_i);
	run("strip_accents unicode: NFKD without combining marks", test_strip_unicode);
	run("strip_accents ascii: NFKD's ASCII", test_strip_ascii);
	run("strip_accents: Hangul syllables to jamo", test_hangul);
	run("input: bytes that are not UTF-8 read as U+FFFD, not past the end", test_invalid_utf8);
	run("sink: returning false stops the walk", test_sink_stops);
	run("input: random bytes under random options, tokens whole UTF-8", test_random_bytes);
	run("kept buffers: the same tokens, stable ones still valid after, memory given back", test_kept_buffers);
	run("word: the 64-byte windows of the scan against a code point by code point one", test_word_windows);
	run("utf8: every code point encodes and decodes back", test_utf8_every_code_point);
	run("utf8: invalid sequences are one U+FFFD byte", test_utf8_invalid);
	run("unicode: flags as Python has them", test_unicode_flags);
	run("unicode: lower mappings", test_unicode_lower);
	return unit_done();
}
