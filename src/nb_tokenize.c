/*
 * nb_tokenize.c — scikit-learn's CountVectorizer analyzers (nb_tokenize.h).
 *
 * The text is preprocessed once into a buffer (lowercase, strip accents,
 * and for the char analyzers the white space rule), unless the word
 * analyzer reads the text as it is; the analyzers then walk that buffer,
 * once per n of the n-gram range, and hand out its bytes where a token is
 * a piece of it (words, character n-grams) or a small copy where it is not
 * (word n-grams joined by " ", char_wb's padded words).  Memory: the
 * buffer, plus the longest word n-gram or padded word.
 *
 * scikit-learn's code (sklearn/feature_extraction/text.py, 1.2.1) that each
 * step follows is named where the step is.
 */
#include "nb_tokenize.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_port.h"
#include "nb_stop_words.h"
#include "nb_unicode.h"

void
nb_tokenizer_init(NbTokenizer *t)
{
	t->analyzer = NB_ANALYZER_WORD;
	t->ngram_min = 1;
	t->ngram_max = 1;
	t->lowercase = true;
	t->strip_accents = NB_ACCENTS_KEEP;
	t->token_pattern = NB_PATTERN_WORD2;
	t->stop_words = NB_STOP_NONE;
}

bool
nb_tokenizer_valid(const NbTokenizer *t)
{
	return (unsigned) t->analyzer <= NB_ANALYZER_CHAR_WB &&
		t->ngram_min >= 1 && t->ngram_min <= t->ngram_max && t->ngram_max <= NB_NGRAM_MAX &&
		(unsigned) t->strip_accents <= NB_ACCENTS_UNICODE &&
		(unsigned) t->token_pattern <= NB_PATTERN_WORD1 &&
		(unsigned) t->stop_words <= NB_STOP_ENGLISH;
}

void
nb_tokenizer_encode(const NbTokenizer *t, unsigned char *out)
{
	memset(out, 0, NB_TOKENIZER_SIZE);
	out[0] = (unsigned char) t->analyzer;
	out[1] = t->lowercase ? 1 : 0;
	out[2] = (unsigned char) t->strip_accents;
	out[3] = (unsigned char) t->token_pattern;
	out[4] = (unsigned char) t->stop_words;
	nb_write_le32(out + 8, t->ngram_min);
	nb_write_le32(out + 12, t->ngram_max);
}

bool
nb_tokenizer_decode(NbTokenizer *t, const unsigned char *in)
{
	NbTokenizer d;

	/* each enumeration in its range before it is stored in one */
	if (in[0] > NB_ANALYZER_CHAR_WB || in[1] > 1 || in[2] > NB_ACCENTS_UNICODE ||
		in[3] > NB_PATTERN_WORD1 || in[4] > NB_STOP_ENGLISH ||
		in[5] != 0 || in[6] != 0 || in[7] != 0)
		return false;
	d.analyzer = (NbAnalyzer) in[0];
	d.lowercase = in[1] == 1;
	d.strip_accents = (NbStripAccents) in[2];
	d.token_pattern = (NbTokenPattern) in[3];
	d.stop_words = (NbStopWords) in[4];
	d.ngram_min = nb_read_le32(in + 8);
	d.ngram_max = nb_read_le32(in + 12);
	if (!nb_tokenizer_valid(&d))
		return false;
	*t = d;
	return true;
}

size_t
nb_tokenize_max_len(const NbTokenizer *t)
{
	/* a token is at most the preprocessed text and two spaces (char_wb) */
	return (UINT32_MAX - 2) / nb_unicode_growth(t->lowercase, t->strip_accents != NB_ACCENTS_KEEP);
}

/* ---------------------------------------------------------------- */
/* the walk's state                                                  */

typedef struct Walk
{
	const NbTokenizer *t;
	NbTokenSink sink;
	void	   *arg;
	uint64_t	work;			/* bytes read or handed out since the last check */
	NbTokenizeBuffers *b;		/* their pointers NULL until needed */
	bool		kept;			/* the buffers outlive the walk (nb_tokenize_kept) */
} Walk;

/* Count bytes of work; check for a cancel once they reach NB_INTERRUPT_BYTES. */
static inline void
tick(Walk *w, size_t bytes)
{
	w->work += bytes;
	if (w->work >= NB_INTERRUPT_BYTES)
	{
		w->work = 0;
		nb_interrupt();
	}
}

/*
 * A token costs as much as a hash lookup (64 bytes) besides its bytes.
 * stable: it is a piece of the text or, with kept buffers, of the buffer.
 */
static inline bool
emit(Walk *w, const unsigned char *token, size_t len, bool stable)
{
	tick(w, len + 64);
	return w->sink(w->arg, (const char *) token, (uint32_t) len, stable);
}

/* Room for need bytes at *p (nb_alloc'd, or NULL with *cap 0). */
static unsigned char *
grow(unsigned char **p, size_t *cap, size_t need)
{
	if (need > *cap)
	{
		size_t		new_cap = *cap + *cap / 2 > need ? *cap + *cap / 2 : need;

		*p = *p == NULL ? nb_alloc(new_cap) : nb_realloc(*p, new_cap);
		*cap = new_cap;
	}
	return *p;
}

/* The length of the code point whose first byte is b, in text nb_tokenize wrote (valid UTF-8). */
static inline size_t
cp_len(unsigned char b)
{
	return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

/* Whether the code point at text + i (i < len) is white space (str.isspace()). */
static inline bool
space_at(const unsigned char *text, size_t len, size_t i)
{
	uint32_t	c;

	nb_utf8_decode(text + i, len - i, &c);
	return (nb_unicode_flags(c) & NB_UC_SPACE) != 0;
}

/* ---------------------------------------------------------------- */
/* preprocessing: _preprocess (lower, then strip accents)            */

/* Room for more bytes after the first len of the buffer. */
static void
reserve(Walk *w, size_t len, size_t more)
{
	(void) grow(&w->b->buf, &w->b->cap, len + more);
}

/* Append code point c, stripped of accents as the options say. */
static size_t
put_stripped(Walk *w, size_t out, uint32_t c)
{
	NbStripAccents mode = w->t->strip_accents;
	const unsigned char *s;
	uint32_t	len;

	if (mode == NB_ACCENTS_KEEP || !(nb_unicode_flags(c) & NB_UC_STRIP))
	{
		/* strip_accents_ascii: what is not ASCII after NFKD goes */
		if (mode == NB_ACCENTS_ASCII && c >= 0x80)
			return out;
		reserve(w, out, 4);
		return out + nb_utf8_encode(c, w->b->buf + out);
	}
	reserve(w, out, NB_UNICODE_STRIP_MAX);
	s = nb_unicode_strip(c, w->b->buf + out, &len);
	if (mode == NB_ACCENTS_UNICODE)
	{
		if (s != w->b->buf + out)
			memcpy(w->b->buf + out, s, len);
		return out + len;
	}
	for (uint32_t i = 0; i < len; i++)
		if (s[i] < 0x80)
			w->b->buf[out++] = s[i];
	return out;
}

/*
 * Whether the capital sigma followed by the text at s (len bytes) is
 * final: CPython's handle_capital_sigma (Objects/unicodeobject.c), whose
 * look behind the caller did (a cased letter before, case-ignorable
 * characters aside); here the look ahead: no cased letter after, the same
 * characters aside.
 */
static bool
sigma_final_ahead(Walk *w, const unsigned char *s, size_t len)
{
	size_t		i = 0;

	while (i < len)
	{
		uint32_t	c;
		uint32_t	n = nb_utf8_decode(s + i, len - i, &c);
		unsigned	f = nb_unicode_flags(c);

		tick(w, n);
		if (!(f & NB_UC_IGNORABLE))
			return !(f & NB_UC_CASED);
		i += n;
	}
	return true;
}

/*
 * _preprocess into the buffer: str.lower() if lowercase (per code point,
 * U+03A3 by its context), then per code point of that strip_accents_unicode
 * (NFKD without combining characters) or strip_accents_ascii (the ASCII of
 * NFKD).  Both strip per code point what they strip of the whole string:
 * NFKD decomposes code points one by one, and its canonical reordering
 * moves only combining characters, which both drop.  Returns the length.
 */
static size_t
preprocess(Walk *w, const unsigned char *s, size_t len)
{
	bool		lower = w->t->lowercase;
	bool		after_cased = false;	/* the last character not case-ignorable was cased */
	size_t		out = 0;
	size_t		i = 0;

	reserve(w, 0, len + len / 8 + 16);
	while (i < len)
	{
		uint32_t	c;
		uint32_t	n;
		unsigned	f;
		uint32_t	low[NB_UNICODE_LOWER_MAX];
		uint32_t	n_low = 1;

		if (s[i] < 0x80)
		{
			/* a run of ASCII, up to a check: nothing to strip, A-Z to lower */
			size_t		stop = len - i < NB_INTERRUPT_BYTES ? len : i + NB_INTERRUPT_BYTES;
			size_t		from = i;
			unsigned char *o;

			reserve(w, out, stop - i);
			o = w->b->buf + out;
			for (; i < stop && s[i] < 0x80; i++)
			{
				unsigned char b = s[i];

				*o++ = lower && (unsigned char) (b - 'A') < 26 ? (unsigned char) (b + 32) : b;
			}
			out = (size_t) (o - w->b->buf);
			/* the final sigma rule needs the run's last character that is not case-ignorable */
			for (size_t k = i; k > from; k--)
			{
				f = nb_unicode_flags(s[k - 1]);
				if (!(f & NB_UC_IGNORABLE))
				{
					after_cased = (f & NB_UC_CASED) != 0;
					break;
				}
			}
			tick(w, i - from);
			continue;
		}
		n = nb_utf8_decode(s + i, len - i, &c);
		f = nb_unicode_flags(c);
		low[0] = c;
		if (lower && (f & NB_UC_LOWER))
		{
			if (c == 0x3A3)
				low[0] = after_cased && sigma_final_ahead(w, s + i + n, len - i - n) ? 0x3C2 : 0x3C3;
			else
				n_low = nb_unicode_lower(c, low);
		}
		if (!(f & NB_UC_IGNORABLE))
			after_cased = (f & NB_UC_CASED) != 0;
		for (uint32_t k = 0; k < n_low; k++)
			out = put_stripped(w, out, low[k]);
		i += n;
		tick(w, n);
	}
	return out;
}

/*
 * _white_spaces.sub(" ", text) with _white_spaces = re.compile(r"\s\s+"),
 * in place: each run of two or more white space characters becomes one
 * space; a lone one stays what it is.  Returns the new length.
 */
static size_t
collapse_white_space(Walk *w, size_t len)
{
	unsigned char *b = w->b->buf;
	size_t		out = 0;
	size_t		i = 0;

	while (i < len)
	{
		size_t		n = cp_len(b[i]);

		if (space_at(b, len, i))
		{
			size_t		end = i + n;
			size_t		run = 1;

			tick(w, n);
			while (end < len && space_at(b, len, end))
			{
				size_t		m = cp_len(b[end]);

				end += m;
				run++;
				tick(w, m);
			}
			if (run >= 2)
				b[out++] = ' ';
			else
			{
				memmove(b + out, b + i, n);
				out += n;
			}
			i = end;
			continue;
		}
		memmove(b + out, b + i, n);
		out += n;
		i += n;
		tick(w, n);
	}
	return out;
}

/* ---------------------------------------------------------------- */
/* word: the token pattern's findall, stop words, _word_ngrams      */

/*
 * The \w characters of a text by 64-byte windows, so that finding where a
 * word starts and ends costs a few bit operations per word rather than a
 * branch per character (whose mispredictions at every word's two ends
 * dominated).  Bit k of a window at "at" is the byte text[at + k]: in word
 * if it is an ASCII \w character, in high if it is not ASCII (a code
 * point the walk then decodes).
 */
typedef struct WordWindow
{
	size_t		at;
	size_t		n;				/* bytes in the window, at most 64 */
	uint64_t	word;
	uint64_t	high;
} WordWindow;

/* The window at i, unless the one in *win already holds byte i. */
static inline void
word_window(WordWindow *win, const unsigned char *text, size_t len, size_t i)
{
	const uint8_t *ascii = nb_unicode_flags_block[nb_unicode_flags_index[0]];
	const unsigned char *p = text + i;
	uint64_t	word = 0;
	uint64_t	high = 0;
	unsigned	any_high = 0;
	size_t		n;

	if (i >= win->at && i - win->at < win->n)
		return;
	n = len - i < 64 ? len - i : 64;
	/* from the last byte down: bit k is byte k, in one dependency step a byte */
	for (size_t k = n; k-- > 0;)
	{
		any_high |= p[k];
		word = word * 2 + ((ascii[p[k] & 0x7F] & NB_UC_WORD) != 0);
	}
	if (any_high & 0x80)
		for (size_t k = n; k-- > 0;)
			high = high * 2 + (p[k] >> 7);
	win->at = i;
	win->n = n;
	win->word = word & ~high;
	win->high = high;
}

/* Bits 0 to n - 1. */
static inline uint64_t
low_bits(size_t n)
{
	return n >= 64 ? ~(uint64_t) 0 : ((uint64_t) 1 << n) - 1;
}

/* Whether the code point at text + i, which is not ASCII, is \w; its length in *n. */
static inline bool
decoded_word_char(const unsigned char *text, size_t len, size_t i, uint32_t *n)
{
	uint32_t	c;

	*n = nb_utf8_decode(text + i, len - i, &c);
	return (nb_unicode_flags(c) & NB_UC_WORD) != 0;
}

/*
 * From i, where the run of code points that are \w (in_word) or are not
 * ends: the first one of the other kind, or len; the code points passed are
 * added to *passed.  Inline, so that each caller's in_word is a constant.
 */
NB_HOT_INLINE size_t
skip_run(Walk *w, WordWindow *win, const unsigned char *text, size_t len, size_t i,
		 bool in_word, uint32_t *passed)
{
	while (i < len)
	{
		uint64_t	stops;
		size_t		k;
		uint32_t	n;

		word_window(win, text, len, i);
		/* where the run may end: an ASCII byte of the other kind, or one to decode */
		stops = ((in_word ? ~win->word : win->word) | win->high) >> (i - win->at) &
			low_bits(win->at + win->n - i);
		k = stops == 0 ? win->at + win->n - i : (size_t) nb_ctz64(stops);
		*passed += (uint32_t) k;
		tick(w, k);
		i += k;
		if (stops == 0)
			continue;
		if (!(win->high >> (i - win->at) & 1) || decoded_word_char(text, len, i, &n) != in_word)
			return i;
		(*passed)++;
		tick(w, n);
		i += n;
	}
	return len;
}

/*
 * The next match of \b\w\w+\b (min_cps 2) or \b\w+\b (min_cps 1) at or
 * after *pos: a maximal run of \w characters (\b is a change between \w
 * and not \w) of at least min_cps code points.  false at the end.
 */
static bool
next_word(Walk *w, WordWindow *win, const unsigned char *text, size_t len, size_t *pos,
		  uint32_t min_cps, size_t *start, size_t *end)
{
	size_t		i = *pos;
	uint32_t	gap = 0;		/* the code points between words, not needed */

	while ((i = skip_run(w, win, text, len, i, false, &gap)) < len)
	{
		size_t		s = i;
		uint32_t	cps = 0;

		i = skip_run(w, win, text, len, i, true, &cps);
		if (cps >= min_cps)
		{
			*start = s;
			*end = i;
			*pos = i;
			return true;
		}
	}
	*pos = len;
	return false;
}

/* The next token that is not a stop word. */
static bool
next_token(Walk *w, WordWindow *win, const unsigned char *text, size_t len, size_t *pos,
		   size_t *start, size_t *end)
{
	uint32_t	min_cps = w->t->token_pattern == NB_PATTERN_WORD2 ? 2 : 1;

	while (next_word(w, win, text, len, pos, min_cps, start, end))
		if (w->t->stop_words == NB_STOP_NONE ||
			!nb_stop_word_english((const char *) text + *start, *end - *start))
			return true;
	return false;
}

/*
 * _word_ngrams: the tokens (stop words removed) for n = 1, then for each n
 * up to ngram_max every n consecutive ones joined by " ", a walk over the
 * text per n that keeps the last n tokens.  An n with fewer tokens than n
 * has none, nor any larger n.
 */
static bool
word_ngrams(Walk *w, const unsigned char *text, size_t len, bool stable)
{
	for (uint32_t n = w->t->ngram_min; n <= w->t->ngram_max; n++)
	{
		size_t		ring_start[NB_NGRAM_MAX];
		size_t		ring_len[NB_NGRAM_MAX];
		uint64_t	count = 0;
		size_t		pos = 0;
		size_t		start;
		size_t		end;
		WordWindow	win = {0, 0, 0, 0};

		while (next_token(w, &win, text, len, &pos, &start, &end))
		{
			uint32_t	slot = (uint32_t) (count % n);
			size_t		size;
			unsigned char *gram;

			count++;
			if (n == 1)
			{
				if (!emit(w, text + start, end - start, stable))
					return false;
				continue;
			}
			ring_start[slot] = start;
			ring_len[slot] = end - start;
			if (count < n)
				continue;
			/* the oldest of the n is in the next slot */
			size = n - 1;
			for (uint32_t k = 0; k < n; k++)
				size += ring_len[k];
			gram = grow(&w->b->scratch, &w->b->scratch_cap, size);
			size = 0;
			for (uint32_t k = 1; k <= n; k++)
			{
				uint32_t	r = (slot + k) % n;

				if (k > 1)
					gram[size++] = ' ';
				memcpy(gram + size, text + ring_start[r], ring_len[r]);
				size += ring_len[r];
			}
			if (!emit(w, gram, size, false))
				return false;
		}
		if (count < n)
			break;
	}
	return true;
}

/* ---------------------------------------------------------------- */
/* char and char_wb                                                  */

/* The byte offset n code points after offset at in text (len bytes); len if there are fewer. */
static size_t
skip_cps(const unsigned char *text, size_t len, size_t at, uint32_t n, uint32_t *skipped)
{
	uint32_t	k = 0;

	while (k < n && at < len)
	{
		at += cp_len(text[at]);
		k++;
	}
	*skipped = k;
	return at;
}

/*
 * Every n code points long piece of text, from the first, in order.
 * Returns false if the sink stopped it; sets *shorter if the text has
 * fewer than n code points (nothing handed out).
 */
static bool
slide(Walk *w, const unsigned char *text, size_t len, uint32_t n, bool stable, bool *shorter)
{
	uint32_t	got;
	size_t		a = 0;
	size_t		b = skip_cps(text, len, 0, n, &got);

	*shorter = got < n;
	if (*shorter)
		return true;
	for (;;)
	{
		if (!emit(w, text + a, b - a, stable))
			return false;
		if (b >= len)
			return true;
		a += cp_len(text[a]);
		b += cp_len(text[b]);
	}
}

/*
 * _char_ngrams: for each n, every n code points long piece of the text; an
 * n longer than the text has none, nor any larger n.
 */
static bool
char_ngrams(Walk *w, const unsigned char *text, size_t len)
{
	for (uint32_t n = w->t->ngram_min; n <= w->t->ngram_max; n++)
	{
		bool		shorter;

		if (!slide(w, text, len, n, w->kept, &shorter))
			return false;
		if (shorter)
			break;
	}
	return true;
}

/*
 * _char_wb_ngrams: for each word of str.split(), padded " " word " ", and
 * each n, its n code points long pieces; a padded word of n code points or
 * fewer is handed out whole, once, and ends that word's n-grams (its
 * "count a short word only once" break).
 */
static bool
char_wb_ngrams(Walk *w, const unsigned char *text, size_t len)
{
	size_t		i = 0;

	while (i < len)
	{
		size_t		start;
		unsigned char *padded;
		size_t		size;
		uint32_t	cps = 2;

		if (space_at(text, len, i))
		{
			i += cp_len(text[i]);
			tick(w, 1);
			continue;
		}
		start = i;
		do
		{
			size_t		n = cp_len(text[i]);

			i += n;
			cps++;
			tick(w, n);
		} while (i < len && !space_at(text, len, i));
		size = i - start + 2;
		padded = grow(&w->b->scratch, &w->b->scratch_cap, size);
		padded[0] = ' ';
		memcpy(padded + 1, text + start, i - start);
		padded[size - 1] = ' ';
		for (uint32_t n = w->t->ngram_min; n <= w->t->ngram_max; n++)
		{
			bool		shorter;

			if (n >= cps)
			{
				if (!emit(w, padded, size, false))
					return false;
				break;
			}
			if (!slide(w, padded, size, n, false, &shorter))
				return false;
		}
	}
	return true;
}

/* ---------------------------------------------------------------- */

static bool
walk(Walk *w, const char *text, size_t len)
{
	const NbTokenizer *t = w->t;
	const unsigned char *s = (const unsigned char *) text;
	size_t		n;

	if (t->analyzer == NB_ANALYZER_WORD && !t->lowercase && t->strip_accents == NB_ACCENTS_KEEP)
		return word_ngrams(w, s, len, true);
	n = preprocess(w, s, len);
	if (t->analyzer == NB_ANALYZER_WORD)
		return word_ngrams(w, w->b->buf, n, w->kept);
	n = collapse_white_space(w, n);
	return t->analyzer == NB_ANALYZER_CHAR ? char_ngrams(w, w->b->buf, n) : char_wb_ngrams(w, w->b->buf, n);
}

bool
nb_tokenize(const NbTokenizer *t, const char *text, size_t len, NbTokenSink sink, void *arg)
{
	NbTokenizeBuffers b = {NULL, 0, NULL, 0};
	Walk		w = {t, sink, arg, 0, &b, false};
	bool		ok = walk(&w, text, len);

	nb_free_if(b.buf);
	nb_free_if(b.scratch);
	return ok;
}

/* What kept buffers start as, and shrink back to past the limit. */
#define KEPT_BUFFER_BYTES 4096
#define KEPT_BUFFER_LIMIT ((size_t) 1 << 20)

void
nb_tokenize_buffers_init(NbTokenizeBuffers *b)
{
	b->buf = nb_alloc(KEPT_BUFFER_BYTES);
	b->cap = KEPT_BUFFER_BYTES;
	b->scratch = nb_alloc(KEPT_BUFFER_BYTES);
	b->scratch_cap = KEPT_BUFFER_BYTES;
}

static void
shrink(unsigned char **p, size_t *cap)
{
	if (*cap > KEPT_BUFFER_LIMIT)
	{
		*p = nb_realloc(*p, KEPT_BUFFER_BYTES);
		*cap = KEPT_BUFFER_BYTES;
	}
}

void
nb_tokenize_buffers_shrink(NbTokenizeBuffers *b)
{
	shrink(&b->buf, &b->cap);
	shrink(&b->scratch, &b->scratch_cap);
}

bool
nb_tokenize_kept(const NbTokenizer *t, const char *text, size_t len, NbTokenSink sink, void *arg,
				 NbTokenizeBuffers *keep)
{
	Walk		w = {t, sink, arg, 0, keep, true};

	return walk(&w, text, len);
}

/* The tokenizer's options, as the hint of an unrecognized one lists them. */
static const char *const tokenizer_options[] = {
	"analyzer", "ngram_range", "lowercase", "strip_accents", "token_pattern", "stop_words"
};

bool
nb_is_tokenizer_option(const char *name)
{
	for (size_t i = 0; i < sizeof(tokenizer_options) / sizeof(tokenizer_options[0]); i++)
		if (strcmp(name, tokenizer_options[i]) == 0)
			return true;
	return false;
}
