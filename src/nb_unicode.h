/*
 * nb_unicode.h — what the tokenizer (nb_tokenize.h) needs of Unicode, as
 * Python sees it: \w of re, str.isspace(), str.lower() with its final sigma
 * classes, NFKD without combining characters; and UTF-8.
 *
 * The tables (nb_unicode_tables.h) are generated from Python itself by
 * src/nb_unicode_gen.py, which documents how each property is probed; the
 * committed tables are Python 3.11's, Unicode 14.0.0 (nb_unicode_version).
 */
#ifndef NB_UNICODE_H
#define NB_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* The Unicode version of the tables, as Python's unicodedata.unidata_version. */
extern const char nb_unicode_version[];

/* A code point's flags (nb_unicode_flags). */
#define NB_UC_WORD 1			/* \w of re's str patterns */
#define NB_UC_SPACE 2			/* str.isspace(): \s and str.split()'s separators */
#define NB_UC_IGNORABLE 4		/* case-ignorable, for the final sigma rule */
#define NB_UC_CASED 8			/* cased and not case-ignorable */
#define NB_UC_LOWER 16			/* str.lower() changes it */
#define NB_UC_STRIP 32			/* NFKD without combining characters changes it */

/* The flags: 128 code points a block, identical blocks shared. */
#define NB_UC_SHIFT 7
#define NB_UC_MASK ((1 << NB_UC_SHIFT) - 1)
#define NB_UC_BLOCKS (0x110000 >> NB_UC_SHIFT)

extern const uint8_t nb_unicode_flags_index[NB_UC_BLOCKS];
extern const uint8_t nb_unicode_flags_block[][1 << NB_UC_SHIFT];

/* The flags of a code point (<= 0x10FFFF). */
static inline unsigned
nb_unicode_flags(uint32_t c)
{
	return nb_unicode_flags_block[nb_unicode_flags_index[c >> NB_UC_SHIFT]][c & NB_UC_MASK];
}

/* Code points str.lower() makes of one at most (U+0130 makes two). */
#define NB_UNICODE_LOWER_MAX 3

/*
 * str.lower() of a code point with flag NB_UC_LOWER, without context
 * (U+03A3 gives U+03C3; the final sigma rule is the caller's): writes the
 * code points to out, returns how many.
 */
uint32_t	nb_unicode_lower(uint32_t c, uint32_t *out);

/* The longest UTF-8 of nb_unicode_strip (U+FDFA's 33 bytes). */
#define NB_UNICODE_STRIP_MAX 64

/*
 * NFKD of a code point with flag NB_UC_STRIP, without its combining
 * characters (ccc > 0), as UTF-8: returns the bytes, and their number in
 * *len (0 for a combining character).  Hangul syllables are decomposed
 * into buf (NB_UNICODE_STRIP_MAX bytes), the rest point into a table.
 */
const unsigned char *nb_unicode_strip(uint32_t c, unsigned char *buf, uint32_t *len);

/*
 * How much lowercasing and accent stripping may multiply a text's UTF-8
 * length at most, rounded up (nb_unicode_tables.h's, from Python).
 */
uint32_t	nb_unicode_growth(int lowercase, int strip);

/* U+FFFD, what nb_utf8_decode makes of a byte that does not start valid UTF-8. */
#define NB_UTF8_REPLACEMENT 0xFFFD

/*
 * The code point at s, of which len > 0 bytes may be read: returns its
 * length, 1 to 4.  A byte that does not start a valid sequence (a
 * continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut
 * short by the end) counts as one code point, NB_UTF8_REPLACEMENT.
 */
static inline uint32_t
nb_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned	b0 = s[0];
	uint32_t	c;

	if (b0 < 0x80)
	{
		*cp = b0;
		return 1;
	}
	if (b0 >= 0xC2 && b0 <= 0xDF)
	{
		if (len >= 2 && (s[1] & 0xC0) == 0x80)
		{
			*cp = (uint32_t) (b0 & 0x1F) << 6 | (s[1] & 0x3F);
			return 2;
		}
	}
	else if (b0 >= 0xE0 && b0 <= 0xEF)
	{
		if (len >= 3 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80)
		{
			c = (uint32_t) (b0 & 0x0F) << 12 | (uint32_t) (s[1] & 0x3F) << 6 | (s[2] & 0x3F);
			if (c >= 0x800 && (c < 0xD800 || c > 0xDFFF))
			{
				*cp = c;
				return 3;
			}
		}
	}
	else if (b0 >= 0xF0 && b0 <= 0xF4)
	{
		if (len >= 4 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80)
		{
			c = (uint32_t) (b0 & 0x07) << 18 | (uint32_t) (s[1] & 0x3F) << 12 |
				(uint32_t) (s[2] & 0x3F) << 6 | (s[3] & 0x3F);
			if (c >= 0x10000 && c <= 0x10FFFF)
			{
				*cp = c;
				return 4;
			}
		}
	}
	*cp = NB_UTF8_REPLACEMENT;
	return 1;
}

/* The UTF-8 of code point c (<= 0x10FFFF, not a surrogate) into out (4 bytes); its length. */
static inline uint32_t
nb_utf8_encode(uint32_t c, unsigned char *out)
{
	if (c < 0x80)
	{
		out[0] = (unsigned char) c;
		return 1;
	}
	if (c < 0x800)
	{
		out[0] = (unsigned char) (0xC0 | c >> 6);
		out[1] = (unsigned char) (0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000)
	{
		out[0] = (unsigned char) (0xE0 | c >> 12);
		out[1] = (unsigned char) (0x80 | (c >> 6 & 0x3F));
		out[2] = (unsigned char) (0x80 | (c & 0x3F));
		return 3;
	}
	out[0] = (unsigned char) (0xF0 | c >> 18);
	out[1] = (unsigned char) (0x80 | (c >> 12 & 0x3F));
	out[2] = (unsigned char) (0x80 | (c >> 6 & 0x3F));
	out[3] = (unsigned char) (0x80 | (c & 0x3F));
	return 4;
}

#endif
