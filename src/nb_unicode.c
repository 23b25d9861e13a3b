/*
 * nb_unicode.c — the Unicode tables of nb_unicode.h and their lookups.
 */
#include "nb_unicode.h"

#include "nb_unicode_tables.h"

const char	nb_unicode_version[] = NB_UNICODE_TABLES_VERSION;

/* Hangul syllables decompose by arithmetic (Unicode 14.0, section 3.12). */
#define HANGUL_S_BASE 0xAC00
#define HANGUL_L_BASE 0x1100
#define HANGUL_V_BASE 0x1161
#define HANGUL_T_BASE 0x11A7
#define HANGUL_T_COUNT 28
#define HANGUL_N_COUNT (21 * HANGUL_T_COUNT)
#define HANGUL_S_COUNT (19 * HANGUL_N_COUNT)

/* The row of c in a table sorted by its first column; -1 if none. */
static long
find_row(const uint32_t *table, size_t n, size_t stride, uint32_t c)
{
	size_t		lo = 0;
	size_t		hi = n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;
		uint32_t	k = table[mid * stride];

		if (k == c)
			return (long) mid;
		if (k < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

#define ROWS(t) (sizeof(t) / sizeof((t)[0]))

uint32_t
nb_unicode_lower(uint32_t c, uint32_t *out)
{
	long		r = find_row(&lower_table[0][0], ROWS(lower_table), 2, c);

	if (r >= 0)
	{
		out[0] = lower_table[r][1];
		return 1;
	}
	for (size_t i = 0; i < ROWS(lower_multi_table); i++)
		if (lower_multi_table[i].cp == c)
		{
			for (uint32_t k = 0; k < lower_multi_table[i].n; k++)
				out[k] = lower_multi_table[i].to[k];
			return lower_multi_table[i].n;
		}
	/* not flagged NB_UC_LOWER: str.lower() keeps it */
	out[0] = c;
	return 1;
}

const unsigned char *
nb_unicode_strip(uint32_t c, unsigned char *buf, uint32_t *len)
{
	long		r;

	if (c >= HANGUL_S_BASE && c < HANGUL_S_BASE + HANGUL_S_COUNT)
	{
		uint32_t	s = c - HANGUL_S_BASE;

		*len = nb_utf8_encode(HANGUL_L_BASE + s / HANGUL_N_COUNT, buf);
		*len += nb_utf8_encode(HANGUL_V_BASE + s % HANGUL_N_COUNT / HANGUL_T_COUNT, buf + *len);
		if (s % HANGUL_T_COUNT != 0)
			*len += nb_utf8_encode(HANGUL_T_BASE + s % HANGUL_T_COUNT, buf + *len);
		return buf;
	}
	r = find_row(&strip_table[0][0], ROWS(strip_table), 3, c);
	if (r >= 0)
	{
		*len = strip_table[r][2];
		return strip_pool + strip_table[r][1];
	}
	/* not flagged NB_UC_STRIP: NFKD keeps it */
	*len = nb_utf8_encode(c, buf);
	return buf;
}

uint32_t
nb_unicode_growth(int lowercase, int strip)
{
	if (strip)
		return NB_UNICODE_STRIP_GROWTH;
	return lowercase ? NB_UNICODE_LOWER_GROWTH : 1;
}
