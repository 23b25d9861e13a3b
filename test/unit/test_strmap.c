/*
 * test_strmap.c — unit tests of the string map and the hashes
 * (src/nb_vocab.c, src/nb_hash.h, the checksum of src/nb_format.c).
 *
 *   ./test_strmap            run every test
 *   ./test_strmap WORD       run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb_format.h"
#include "nb_hash.h"
#include "nb_vocab.h"
#include "unit.h"

/* ---------------------------------------------------------------- */
/* string map and hash                                               */

static void
test_vocab_intern_many(void)
{
	NbVocab		m;
	char		buf[64];
	const uint32_t n = 100000;

	nb_vocab_init(&m);
	for (uint32_t i = 0; i < n; i++)
	{
		int			len = snprintf(buf, sizeof(buf), "tok%u", i * 7919u);
		uint32_t	id = nb_vocab_intern(&m, buf, len, nb_hash_token(buf, len));

		CHECK(id == i, "intern #%u returned id %u", i, id);
	}
	CHECK(m.count == n, "count %u", m.count);
	for (uint32_t i = 0; i < n; i += 13)
	{
		int			len = snprintf(buf, sizeof(buf), "tok%u", i * 7919u);
		uint64_t	h = nb_hash_token(buf, len);
		uint32_t	slen;
		const char *s;

		CHECK(nb_vocab_find(&m, buf, len, h) == i, "find %s", buf);
		CHECK(nb_vocab_intern(&m, buf, len, h) == i, "re-intern %s", buf);
		s = nb_vocab_str(&m, i, &slen);
		CHECK(slen == (uint32_t) len && memcmp(s, buf, len) == 0, "nb_vocab_str(%u)", i);
	}
	CHECK(m.count == n, "re-interning added strings (count %u)", m.count);
	for (uint32_t i = 0; i < 1000; i++)
	{
		int			len = snprintf(buf, sizeof(buf), "missing%u", i);

		CHECK(nb_vocab_find(&m, buf, len, nb_hash_token(buf, len)) == -1,
			  "found %s", buf);
	}
	/* a prefix of a present string is a different string */
	CHECK(nb_vocab_find(&m, "tok", 3, nb_hash_token("tok", 3)) == -1,
		  "found the prefix \"tok\"");
	CHECK((m.mask + 1) * (uint64_t) 3 >= 4 * (uint64_t) m.count, "load factor above 3/4");
	nb_vocab_free(&m);
}

static void
test_vocab_binary_and_long(void)
{
	NbVocab		m;
	static const char bin[] = {'a', '\0', 'b', (char) 0xff};
	char	   *big = malloc(1 << 20);
	uint32_t	id_empty,
				id_bin,
				id_bin3,
				id_big,
				len;
	const char *s;

	memset(big, 'x', 1 << 20);
	nb_vocab_init(&m);
	id_empty = nb_vocab_intern(&m, "", 0, nb_hash_token("", 0));
	id_bin = nb_vocab_intern(&m, bin, 4, nb_hash_token(bin, 4));
	id_bin3 = nb_vocab_intern(&m, bin, 3, nb_hash_token(bin, 3));
	id_big = nb_vocab_intern(&m, big, 1 << 20, nb_hash_token(big, 1 << 20));
	CHECK(id_empty == 0 && id_bin == 1 && id_bin3 == 2 && id_big == 3, "ids %u %u %u %u",
		  id_empty, id_bin, id_bin3, id_big);
	CHECK(nb_vocab_find(&m, "", 0, nb_hash_token("", 0)) == 0, "find empty");
	CHECK(nb_vocab_find(&m, bin, 4, nb_hash_token(bin, 4)) == 1, "find binary");
	s = nb_vocab_str(&m, 3, &len);
	CHECK(len == (1u << 20) && memcmp(s, big, len) == 0, "1 MB string round trip");
	s = nb_vocab_str(&m, 1, &len);
	CHECK(len == 4 && memcmp(s, bin, 4) == 0, "binary string round trip");
	nb_vocab_free(&m);
	free(big);
}

/* Every string has the same hash: probing must compare bytes. */
static void
test_hash(void)
{
	/*
	 * The checksum is part of the stored format: these values must never
	 * change (they were computed with the first implementation).
	 */
	static const struct
	{
		const char *s;
		uint64_t	seed;
		uint64_t	h;
	}			golden[] = {
		{"", 0, UINT64_C(0x0000000000000000)},
		{"", NB_CHECKSUM_SEED, UINT64_C(0xb5bbaa4f6a88d113)},
		{"a", 1, UINT64_C(0x7da4fdb9879b54fa)},
		{"hello world", 1, UINT64_C(0xb2f3b792e113621d)},
		{"0123456789abcdef0123", NB_CHECKSUM_SEED, UINT64_C(0xa08053a82ebda070)},
	};
	unsigned char buf[80];
	unsigned char shifted[96];
	uint64_t	hashes[65];

	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++)
	{
		uint64_t	h = nb_hash_bytes(golden[i].s, strlen(golden[i].s), golden[i].seed);

		CHECK(h == golden[i].h, "nb_hash_bytes(\"%s\", %#llx) = 0x%016llx, expected 0x%016llx",
			  golden[i].s, (unsigned long long) golden[i].seed, (unsigned long long) h,
			  (unsigned long long) golden[i].h);
	}
	for (int i = 0; i < 80; i++)
		buf[i] = (unsigned char) (i * 37 + 11);
	/* deterministic, alignment-independent */
	for (int off = 0; off < 8; off++)
	{
		memcpy(shifted + off, buf, 80);
		CHECK(nb_hash_bytes(shifted + off, 80, 1) == nb_hash_bytes(buf, 80, 1),
			  "hash depends on alignment (offset %d)", off);
	}
	/* every prefix length gives a different hash, including trailing zero bytes */
	memset(buf + 40, 0, 40);
	for (int len = 0; len <= 64; len++)
	{
		hashes[len] = nb_hash_bytes(buf, len, 7);
		CHECK(hashes[len] == nb_hash_bytes(buf, len, 7), "not deterministic");
		for (int j = 0; j < len; j++)
			CHECK(hashes[j] != hashes[len], "prefixes %d and %d collide", j, len);
	}
	CHECK(nb_hash_bytes(buf, 20, 1) != nb_hash_bytes(buf, 20, 2), "seed ignored");
	/*
	 * The format's checksum as nb_format.h defines it: the hash of the bytes
	 * after the header, seeded with the hash of the header's first 24 bytes.
	 */
	for (size_t size = NB_HEADER_SIZE; size <= 80; size += 7)
	{
		uint64_t	want = nb_hash_bytes(buf + NB_HEADER_SIZE, size - NB_HEADER_SIZE,
										 nb_hash_bytes(buf, 24, NB_CHECKSUM_SEED));

		CHECK(nb_format_checksum(buf, size) == want, "nb_format_checksum of %zu bytes", size);
	}
	/* a single bit changes the hash, in every position */
	for (int bit = 0; bit < 8 * 24; bit++)
	{
		uint64_t	h0 = nb_hash_bytes(buf, 24, 3);

		buf[bit / 8] ^= (unsigned char) (1 << (bit % 8));
		CHECK(nb_hash_bytes(buf, 24, 3) != h0, "bit %d ignored", bit);
		buf[bit / 8] ^= (unsigned char) (1 << (bit % 8));
	}
}

/*
 * nb_hash_token and nb_bytes_equal read strings with overlapping word loads:
 * every length up to 40 at every alignment, with a difference in every byte.
 * The strings sit at the very end of an exact-size allocation, so ASan
 * catches a read past them.
 */
static void
test_token_hash_and_equal(void)
{
	for (size_t len = 0; len <= 40; len++)
		for (size_t off = 0; off < 8; off++)
		{
			char	   *a = malloc(off + len);
			char	   *b = malloc(len ? len : 1);
			uint64_t	ha;

			for (size_t i = 0; i < len; i++)
				a[off + i] = b[i] = (char) ('a' + (i * 7) % 26);
			ha = nb_hash_token(a + off, len);
			CHECK(ha == nb_hash_token(b, len), "hash of %zu bytes depends on alignment %zu", len, off);
			CHECK(nb_bytes_equal(a + off, b, len), "equal strings of %zu bytes differ", len);
			for (size_t i = 0; i < len; i++)
			{
				b[i] ^= 0x20;
				CHECK(!nb_bytes_equal(a + off, b, len), "byte %zu of %zu ignored by nb_bytes_equal", i, len);
				CHECK(nb_hash_token(b, len) != ha, "byte %zu of %zu ignored by nb_hash_token", i, len);
				b[i] ^= 0x20;
			}
			/* a zero byte more: a different string, a different hash */
			if (len > 0)
				CHECK(nb_hash_token(a + off, len - 1) != ha, "length %zu vs %zu collide", len - 1, len);
			free(a);
			free(b);
		}
}

/* ---------------------------------------------------------------- */
/* the trainer's compact map                                         */

/*
 * String i of the vocab tests: lengths 0 to 299, many sharing their first
 * 8 bytes (the slot's head) and many of 255 bytes or more (whose length
 * the tag does not hold exactly).
 */
static uint32_t
vocab_string(uint32_t i, char *buf)
{
	uint32_t	len = (i * 37u) % 300;

	memset(buf, 'a' + (char) (i % 3), len);
	for (uint32_t k = 0; k < 4 && 8 + k < len; k++)
		buf[len - 1 - k] = (char) ('0' + (i >> (4 * k)) % 16);
	if (len > 0 && len <= 8)
		buf[0] = (char) (1 + i % 250);
	return len;
}

/* The string found in v for (str, len) under the given hash, or -1. */
static int64_t
vocab_find(NbVocab *v, const char *str, uint32_t len, uint64_t hash)
{
	nb_vocab_index(v);
	return nb_vocab_find(v, str, len, hash);
}

static void
test_vocab_many(void)
{
	NbVocab		v;
	char		buf[320];
	uint32_t	added = 0;
	const uint32_t n = 60000;
	int64_t    *id = malloc(sizeof(int64_t) * n);

	nb_vocab_init(&v);
	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	len = vocab_string(i, buf);
		uint64_t	h = nb_hash_token(buf, len);
		int64_t		found = vocab_find(&v, buf, len, h);

		/* strings repeat: the same i mod 300 and pattern give the same bytes */
		id[i] = found >= 0 ? found : nb_vocab_add(&v, buf, len, h);
		if (found < 0)
			CHECK(id[i] == added++, "string %u got id %lld", i, (long long) id[i]);
		/* lend the index now and then, to be scribbled on: the next lookup rebuilds it */
		if (i % 9973 == 0)
		{
			nb_vocab_index(&v);
			memset(nb_vocab_lend_index(&v), 0xa5, 16 * (size_t) v.count);
		}
	}
	CHECK(v.count == added, "count %u, added %u", v.count, added);
	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	len = vocab_string(i, buf);
		uint32_t	slen;
		const char *s = nb_vocab_str(&v, (uint32_t) id[i], &slen);

		CHECK(vocab_find(&v, buf, len, nb_hash_token(buf, len)) == id[i], "string %u not found", i);
		CHECK(slen == len && memcmp(s, buf, len) == 0, "nb_vocab_str of string %u", i);
		/* one byte more or less is another string */
		buf[len] = 'z';
		CHECK(vocab_find(&v, buf, len + 1, nb_hash_token(buf, len + 1)) != id[i],
			  "string %u found with a byte more", i);
		if (len > 0)
			CHECK(vocab_find(&v, buf, len - 1, nb_hash_token(buf, len - 1)) != id[i],
				  "string %u found with a byte less", i);
	}
	nb_vocab_free(&v);
	free(id);
}

/*
 * Every string under one hash: the tag then matches whenever the lengths
 * do (and for all lengths from 255 on), so the head, the exact length and
 * the bytes after the head must tell them apart.  Fewer strings than fit
 * in the first table (48), and no dropped index: a rebuild places strings
 * by their real hash.
 */
static void
test_vocab_collisions(void)
{
	NbVocab		v;
	char		a[600];
	char		b[600];
	const uint64_t h = UINT64_C(0x123456789abcdef0);
	uint32_t	n = 0;

	nb_vocab_init(&v);
	memset(a, 'x', sizeof(a));
	/* same first 8 bytes, lengths 8..552: ids in order */
	for (uint32_t len = 8; len <= 552; len += 16)
	{
		CHECK(vocab_find(&v, a, len, h) == -1, "length %u found before it was added", len);
		CHECK(nb_vocab_add(&v, a, len, h) == n, "length %u", len);
		n++;
	}
	/* same length (296, also added above), differing only in the last byte */
	memcpy(b, a, sizeof(b));
	b[295] = 'y';
	CHECK(vocab_find(&v, b, 296, h) == -1, "a differing last byte matched");
	CHECK(nb_vocab_add(&v, b, 296, h) == n, "the differing string");
	for (uint32_t len = 8, id = 0; len <= 552; len += 16, id++)
		CHECK(vocab_find(&v, a, len, h) == id, "length %u", len);
	CHECK(vocab_find(&v, b, 296, h) == n, "the differing string");
	/* short strings under one hash: the head holds all their bytes */
	CHECK(vocab_find(&v, "ab", 2, h) == -1 && vocab_find(&v, "ba", 2, h) == -1, "short strings");
	CHECK(nb_vocab_add(&v, "ab", 2, h) == n + 1, "ab");
	CHECK(vocab_find(&v, "ba", 2, h) == -1 && vocab_find(&v, "ab", 2, h) == n + 1, "ab vs ba");
	CHECK(vocab_find(&v, "", 0, h) == -1, "empty string");
	CHECK(nb_vocab_add(&v, "", 0, h) == n + 2, "empty string added");
	CHECK(vocab_find(&v, "", 0, h) == n + 2, "empty string found");
	CHECK(v.count < 48, "%u strings: the table grew", v.count);
	nb_vocab_free(&v);
}

/* ---------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("vocab: intern 100000 strings, growth, find missing", test_vocab_intern_many);
	run("vocab: empty, binary and 1 MB strings", test_vocab_binary_and_long);
	run("vocab: 60000 strings of 0-299 bytes, growth, lent index, near misses",
		test_vocab_many);
	run("vocab: one hash for all: heads, exact lengths from 255 on, bytes after the head",
		test_vocab_collisions);
	run("hash: golden values, determinism, alignment, prefixes, bits", test_hash);
	run("hash: nb_hash_token and nb_bytes_equal at every length and alignment",
		test_token_hash_and_equal);
	return unit_done();
}
