/*
 * test_format.c — unit tests of the serialized format and its reader
 * (src/nb_format.c): size limits, nb_view_open on trainer output,
 * truncations, bit flips and corrupted structure of versions 1 and 2, the
 * committed corpus read as corpus-readings.txt says.
 *
 *   ./test_format            run every test
 *   ./test_format WORD       run the tests whose name contains WORD
 *   NBT_FLIPS_PER_BYTE=N ./test_format
 *                            flip N bits (1 to 8, default 8) of each byte
 *                            of the samples in the bit flip tests: under
 *                            emulation (make cross) every bit takes minutes,
 *                            one per byte an eighth of that
 *   ./test_format --write-corpus DIR
 *                            write the fuzzer's seed corpus (valid models)
 *   ./test_format --write-readings
 *                            print what reading each model of corpus/ gives
 *                            (corpus-readings.txt, see test_corpus_readings)
 *
 * Output: see unit.h.
 */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixtures.h"
#include "model_check.h"
#include "nb_doc.h"
#include "nb_format.h"
#include "nb_index.h"
#include "nb_options.h"
#include "nb_scorer.h"
#include "raw_model.h"
#include "unit.h"

/* ---------------------------------------------------------------- */
/* the model size limit (NB_MODEL_MAX_SIZE) and its arithmetic       */

static void
test_format_size_limit(void)
{
	/* by hand: 3 bytes make 4 characters, a partial group is padded to 4 */
	static const uint64_t enc[][2] = {{0, 0}, {1, 4}, {2, 4}, {3, 4}, {4, 8}, {5, 8}, {6, 8}, {7, 12}};
	/* characters, padding, bytes */
	static const uint64_t dec[][3] = {{0, 0, 0}, {4, 0, 3}, {4, 1, 2}, {4, 2, 1}, {8, 1, 5},
	{UINT64_C(1073741816), 0, UINT64_C(805306362)}};

	for (size_t i = 0; i < sizeof(enc) / sizeof(enc[0]); i++)
		CHECK(nb_base64_len(enc[i][0]) == enc[i][1], "nb_base64_len(%llu) = %llu",
			  (unsigned long long) enc[i][0], (unsigned long long) nb_base64_len(enc[i][0]));
	for (size_t i = 0; i < sizeof(dec) / sizeof(dec[0]); i++)
		CHECK(nb_base64_decoded_len(dec[i][0], (unsigned) dec[i][1]) == dec[i][2],
			  "nb_base64_decoded_len(%llu, %llu)", (unsigned long long) dec[i][0],
			  (unsigned long long) dec[i][1]);
	for (uint64_t n = 0; n < 3000; n++)
		CHECK(nb_base64_decoded_len(nb_base64_len(n), (unsigned) ((3 - n % 3) % 3)) == n,
			  "decoded length of the text of %llu bytes", (unsigned long long) n);

	/*
	 * MaxAllocSize is 2^30 - 1 = 1073741823; minus the varlena header and
	 * the NUL leaves 1073741818 characters: 268435454 whole groups of 4
	 * (1073741816 characters), 805306362 bytes.
	 */
	CHECK(NB_ALLOC_LIMIT == UINT64_C(1073741823), "NB_ALLOC_LIMIT");
	CHECK(NB_MODEL_MAX_SIZE == UINT64_C(805306362), "NB_MODEL_MAX_SIZE = %llu",
		  (unsigned long long) NB_MODEL_MAX_SIZE);
	CHECK(nb_base64_len(NB_MODEL_MAX_SIZE) == UINT64_C(1073741816), "text of the largest model");
	CHECK(nb_base64_len(NB_MODEL_MAX_SIZE) + NB_TEXT_OVERHEAD <= NB_ALLOC_LIMIT,
		  "the largest model's text value fits");
	CHECK(nb_base64_len(NB_MODEL_MAX_SIZE + 1) + NB_TEXT_OVERHEAD > NB_ALLOC_LIMIT,
		  "one byte more does not fit");
}

/* ---------------------------------------------------------------- */
/* nb_view_open                                                      */

/* A few valid values: the toy model, a bigger random one, edge shapes. */
typedef struct Sample
{
	const char *name;
	unsigned char *buf;
	size_t		size;
} Sample;

#define NSAMPLES 8

static unsigned char *v2_model(int which, size_t *size);

static void
make_samples(Sample *s)
{
	static const Row one_class[] = {{"only", 1, {"x", "y", "x"}}};
	static const Row no_tokens[] = {{"c", 2, {NULL}}};
	RandRow    *rows = malloc(sizeof(RandRow) * 12);

	s[0].name = "toy";
	s[0].buf = serialize_rows(toy, NTOY, &s[0].size);
	s[1].name = "one class";
	s[1].buf = serialize_rows(one_class, 1, &s[1].size);
	s[2].name = "no tokens";
	s[2].buf = serialize_rows(no_tokens, 1, &s[2].size);
	rand_rows(rows, 10, 3, 16, 3, true);
	for (int i = 0; i < 10; i++)
		rows[i].n %= 6;
	s[3].name = "random";
	s[3].buf = serialize_rand(rows, NULL, 10, &s[3].size);
	free(rows);
	s[4].name = "mixed v2";
	s[4].buf = v2_model(3, &s[4].size);
	s[5].name = "v2 with a vector";
	s[5].buf = v2_model(0, &s[5].size);
	s[6].name = "v2 prior only";
	s[6].buf = v2_model(1, &s[6].size);
	s[7].name = "v2 random mixed";
	s[7].buf = v2_model(2, &s[7].size);
}

static void
free_samples(Sample *s)
{
	for (int i = 0; i < NSAMPLES; i++)
		free(s[i].buf);
}

static void
test_view_accepts_samples(void)
{
	Sample		s[NSAMPLES];
	NbtStats	st = {0};
	char		err[512];

	make_samples(s);
	for (int i = 0; i < NSAMPLES; i++)
	{
		NbView		v;

		CHECK(open_view(&v, s[i].buf, s[i].size, err, sizeof(err)), "%s rejected: %s", s[i].name, err);
		CHECK(nbt_check_model(s[i].buf, s[i].size, &v, 1, 0, &st, err, sizeof(err)),
			  "%s: %s", s[i].name, err);
	}
	free_samples(s);
}

/* Any alignment: values are read with memcpy (UBSan checks the loads). */
static void
test_view_unaligned(void)
{
	size_t		size;
	unsigned char *buf = serialize_rows(toy, NTOY, &size);
	unsigned char *big = malloc(size + 8);
	NbtStats	st = {0};
	char		err[512];

	for (int off = 1; off < 8; off++)
	{
		NbView		v;

		memcpy(big + off, buf, size);
		CHECK(open_view(&v, big + off, size, err, sizeof(err)), "offset %d rejected: %s", off, err);
		CHECK(nbt_check_model(big + off, size, &v, 1, 0, &st, err, sizeof(err)), "offset %d: %s", off, err);
	}
	free(buf);
	free(big);
}

static void
test_view_truncations(void)
{
	Sample		s[NSAMPLES];

	make_samples(s);
	for (int i = 0; i < NSAMPLES; i++)
		for (size_t len = 0; len < s[i].size; len++)
		{
			/* a fresh exact-size copy, so ASan sees any read past the end */
			unsigned char *p = malloc(len ? len : 1);
			NbView		v;
			NbFormatError e;
			bool		accepted;

			memcpy(p, s[i].buf, len);
			accepted = nb_view_open(&v, p, len, &e);
			if (!accepted && len >= NB_HEADER_SIZE)
			{
				/* and with the checksum made right for the shorter value */
				nbt_fix_checksum(p, len);
				accepted = nb_view_open(&v, p, len, &e);
			}
			free(p);
			CHECK(!accepted, "%s truncated to %zu of %zu bytes accepted", s[i].name, len, s[i].size);
		}
	free_samples(s);
}

static void
test_view_extensions(void)
{
	Sample		s[NSAMPLES];

	make_samples(s);
	for (int i = 0; i < NSAMPLES; i++)
		for (size_t extra = 1; extra <= 24; extra++)
			for (int fill = 0; fill < 2; fill++)
			{
				size_t		len = s[i].size + extra;
				unsigned char *p = malloc(len);
				NbView		v;
				NbFormatError e;

				memcpy(p, s[i].buf, s[i].size);
				memset(p + s[i].size, fill ? 'z' : 0, extra);
				nbt_fix_checksum(p, len);
				CHECK(!nb_view_open(&v, p, len, &e), "%s + %zu bytes of %s accepted",
					  s[i].name, extra, fill ? "'z'" : "zero");
				free(p);
			}
	free_samples(s);
}

/* Bits flipped per byte by the bit flip tests (NBT_FLIPS_PER_BYTE). */
static int	flips_per_byte = 8;

static void
bitflips(bool fix_checksum)
{
	Sample		s[NSAMPLES];
	NbtStats	st = {0};
	unsigned long accepted = 0,
				total = 0,
				bad = 0;
	char		first[600] = "";

	make_samples(s);
	if (flips_per_byte < 8)
		note("%d of each byte's 8 bits flipped (NBT_FLIPS_PER_BYTE)", flips_per_byte);
	for (int i = 0; i < NSAMPLES; i++)
	{
		unsigned char *p = malloc(s[i].size);

		for (size_t flip = 0; flip < flips_per_byte * s[i].size; flip++)
		{
			/* bits in turn, every bit of a byte with 8 flips per byte */
			size_t		byte = flip / flips_per_byte;
			size_t		bit = 8 * byte + (3 * byte + flip % flips_per_byte) % 8;
			NbView		v;
			NbFormatError e;
			char		err[512];

			if (fix_checksum && bit / 8 >= 24 && bit / 8 < 32)
				continue;
			memcpy(p, s[i].buf, s[i].size);
			p[bit / 8] ^= (unsigned char) (1u << (bit % 8));
			if (fix_checksum)
				nbt_fix_checksum(p, s[i].size);
			total++;
			if (!nb_view_open(&v, p, s[i].size, &e))
				continue;
			accepted++;
			if (!fix_checksum)
				note("%s: flip of bit %zu (byte %zu) accepted despite the checksum",
					 s[i].name, bit, bit / 8);
			/* an accepted value must be fully usable */
			if (!nbt_check_model(p, s[i].size, &v, bit, 0, &st, err, sizeof(err)) && bad++ == 0)
			{
				note("first failing value: %s", hex(p, s[i].size));
				snprintf(first, sizeof(first), "%s with bit %zu flipped%s: %s", s[i].name, bit,
						 fix_checksum ? " (checksum fixed)" : "", err);
			}
		}
		free(p);
	}
	free_samples(s);
	note("%lu of %lu single-bit flips accepted%s; %llu posteriors compared with the reference",
		 accepted, total, fix_checksum ? " after fixing the checksum" : "",
		 (unsigned long long) st.ref_compared);
	CHECK(bad == 0, "%lu accepted values fail the checks; first: %s", bad, first);
	if (!fix_checksum)
		CHECK(accepted == 0, "%lu flips accepted despite the checksum", accepted);
}

static void
test_view_bitflips(void)
{
	bitflips(false);
}

static void
test_view_bitflips_checksum_fixed(void)
{
	bitflips(true);
}

/* The toy model as a RawModel, to corrupt. */
static void
toy_raw(RawModel *m)
{
	uint32_t	k;

	raw_init(m);
	raw_add_class(m, "ham", 3, 1);
	raw_add_class(m, "spam", 4, 2);
	k = raw_add_token(m, "a", 1);
	raw_add_entry(m, k, SPAM, 3, 2);
	k = raw_add_token(m, "b", 1);
	raw_add_entry(m, k, HAM, 1, 1);
	raw_add_entry(m, k, SPAM, 1, 1);
	k = raw_add_token(m, "c", 1);
	raw_add_entry(m, k, HAM, 2, 1);
	raw_add_entry(m, k, SPAM, 1, 1);
	k = raw_add_token(m, "d", 1);
	raw_add_entry(m, k, HAM, 1, 1);
}

typedef enum
{
	C_NONE,
	C_TOKENS_UNSORTED, C_TOKEN_DUP, C_LABELS_UNSORTED, C_LABEL_DUP,
	C_CLASS_OUT_OF_RANGE, C_CLASS_HUGE, C_CLASSES_UNSORTED, C_CLASS_DUP,
	C_COUNT_ZERO, C_COUNT_NEG_ZERO, C_COUNT_NEG, C_COUNT_NAN, C_COUNT_INF,
	C_EDOCS_ZERO, C_EDOCS_NAN, C_EDOCS_INF,
	C_CDOCS_ZERO, C_CDOCS_NEG, C_CDOCS_NAN, C_CDOCS_INF, C_CDOCS_NEG_INF,
	C_TOKEN_NO_ENTRIES, C_TOKEN_TOO_MANY_ENTRIES,
	C_TOKEN_ZERO_BYTE, C_LABEL_ZERO_BYTE, C_NO_CLASSES, C_TOKEN_EMPTY_DUP,
	/* header / length patches after writing */
	P_BAD_MAGIC, P_VERSION, P_FLAGS, P_C_ZERO, P_C_PLUS1, P_C_HUGE, P_V_PLUS1, P_V_HUGE,
	P_E_ZERO, P_E_PLUS1, P_E_MINUS1, P_E_HUGE, P_E_WRAP4, P_E_WRAP8, P_E_WRAP20,
	P_LABEL_LEN_HUGE, P_LABEL_LEN_PLUS1, P_LABEL_LEN_MINUS1, P_TOKEN_LEN_PLUS1,
	P_TOKEN_LEN_MINUS1, P_TOKEN_LEN_HUGE, P_TOKEN_ENTRIES_HUGE, P_TOKEN_ENTRIES_ZERO,
	P_LABEL_LEN_SHIFT, P_TOKEN_LEN_SHIFT,
	N_CORRUPTIONS
} Corruption;

static const char *const corruption_name[] = {
	"none",
	"tokens unsorted", "duplicate token", "labels unsorted", "duplicate label",
	"entry class = C", "entry class 0xffffffff", "entry classes decreasing", "duplicate entry class",
	"count 0", "count -0.0", "count negative", "count NaN", "count infinite",
	"entry docs 0", "entry docs NaN", "entry docs infinite",
	"class docs 0", "class docs negative", "class docs NaN", "class docs infinite", "class docs -infinity",
	"token with 0 entries", "token with C+1 entries",
	"zero byte in a token", "zero byte in a label", "no classes", "two empty tokens",
	"bad magic", "version 3", "flags 1", "header C = 0", "header C + 1", "header C huge",
	"header V + 1", "header V huge",
	"header E = 0", "header E + 1", "header E - 1", "header E = 2^64-1",
	"header E = 2^62 (E*4 wraps)", "header E = 2^61 (E*8 wraps)", "header E * 20 wraps",
	"label length huge", "label length + 1", "label length - 1", "token length + 1",
	"token length - 1", "token length huge", "token entries huge", "token entries 0 (kept E)",
	"label lengths shifted (sum kept)", "token lengths shifted (sum kept)",
};

static unsigned char *
corrupted(Corruption c, size_t *size)
{
	RawModel	m;
	unsigned char *p;
	uint64_t	E = 6;
	const size_t label_len = 32 + 2 * 8;
	const size_t token_len = label_len + 2 * 4;
	const size_t token_entries = token_len + 4 * 4;

	toy_raw(&m);
	switch (c)
	{
		case C_TOKENS_UNSORTED:
			{
				RawToken	x = m.t[1];

				m.t[1] = m.t[2];
				m.t[2] = x;
			}
			break;
		case C_TOKEN_DUP:
			raw_dup_token(&m, 1);
			break;
		case C_LABELS_UNSORTED:
			{
				RawClass	x = m.c[0];

				m.c[0] = m.c[1];
				m.c[1] = x;
			}
			break;
		case C_LABEL_DUP:
			raw_dup_class(&m, 0);
			break;
		case C_CLASS_OUT_OF_RANGE:
			m.t[0].e[0].cls = 2;
			break;
		case C_CLASS_HUGE:
			m.t[0].e[0].cls = UINT32_MAX;
			break;
		case C_CLASSES_UNSORTED:
			m.t[1].e[0].cls = SPAM;
			m.t[1].e[1].cls = HAM;
			break;
		case C_CLASS_DUP:
			m.t[1].e[1].cls = HAM;
			break;
		case C_COUNT_ZERO:
			m.t[2].e[1].count = 0;
			break;
		case C_COUNT_NEG_ZERO:
			m.t[2].e[1].count = -0.0;
			break;
		case C_COUNT_NEG:
			m.t[2].e[1].count = -1;
			break;
		case C_COUNT_NAN:
			m.t[2].e[1].count = NAN;
			break;
		case C_COUNT_INF:
			m.t[2].e[1].count = INFINITY;
			break;
		case C_EDOCS_ZERO:
			m.t[3].e[0].docs = 0;
			break;
		case C_EDOCS_NAN:
			m.t[3].e[0].docs = -NAN;
			break;
		case C_EDOCS_INF:
			m.t[3].e[0].docs = INFINITY;
			break;
		case C_CDOCS_ZERO:
			m.c[1].docs = 0;
			break;
		case C_CDOCS_NEG:
			m.c[1].docs = -2;
			break;
		case C_CDOCS_NAN:
			m.c[1].docs = NAN;
			break;
		case C_CDOCS_INF:
			m.c[0].docs = INFINITY;
			break;
		case C_CDOCS_NEG_INF:
			m.c[0].docs = -INFINITY;
			break;
		case C_TOKEN_NO_ENTRIES:
			m.t[0].n = 0;
			break;
		case C_TOKEN_TOO_MANY_ENTRIES:
			raw_add_entry(&m, 1, 2, 1, 1);
			break;
		case C_TOKEN_ZERO_BYTE:
			raw_set_string(&m.t[3].str, (const unsigned char *) "d\0", 2);
			break;
		case C_LABEL_ZERO_BYTE:
			raw_set_string(&m.c[1].label, (const unsigned char *) "sp\0am", 5);
			break;
		case C_NO_CLASSES:
			while (m.nt > 0)
				raw_del_token(&m, 0);
			raw_del_class(&m, 1);
			raw_del_class(&m, 0);
			break;
		case C_TOKEN_EMPTY_DUP:
			raw_set_string(&m.t[0].str, (const unsigned char *) "", 0);
			raw_set_string(&m.t[1].str, (const unsigned char *) "", 0);
			break;
		default:
			break;
	}
	p = raw_serialize(&m, size);
	raw_free(&m);

	switch (c)
	{
		case P_BAD_MAGIC:
			p[3] = 'N';
			break;
		case P_VERSION:
			p[4] = 3;
			break;
		case P_FLAGS:
			p[6] = 1;
			break;
		case P_C_ZERO:
			nb_write_u32(p + 8, 0, 0);
			break;
		case P_C_PLUS1:
			nb_write_u32(p + 8, 0, 3);
			break;
		case P_C_HUGE:
			nb_write_u32(p + 8, 0, UINT32_MAX);
			break;
		case P_V_PLUS1:
			nb_write_u32(p + 12, 0, 5);
			break;
		case P_V_HUGE:
			nb_write_u32(p + 12, 0, UINT32_MAX);
			break;
		case P_E_ZERO:
		case P_E_PLUS1:
		case P_E_MINUS1:
		case P_E_HUGE:
		case P_E_WRAP4:
		case P_E_WRAP8:
		case P_E_WRAP20:
			E = c == P_E_ZERO ? 0 : c == P_E_PLUS1 ? 7 : c == P_E_MINUS1 ? 5 :
				c == P_E_HUGE ? UINT64_MAX : c == P_E_WRAP4 ? UINT64_C(1) << 62 :
				c == P_E_WRAP8 ? (UINT64_C(1) << 61) + 1 :
				/* 20 * E = 2^64 + 40 */
				UINT64_C(0xcccccccccccccccc) + 3;
			nb_write_u32(p + 16, 0, (uint32_t) E);
			nb_write_u32(p + 20, 0, (uint32_t) (E >> 32));
			break;
		case P_LABEL_LEN_HUGE:
			nb_write_u32(p + label_len, 1, UINT32_MAX);
			break;
		case P_LABEL_LEN_PLUS1:
			nb_write_u32(p + label_len, 1, 5);
			break;
		case P_LABEL_LEN_MINUS1:
			nb_write_u32(p + label_len, 1, 3);
			break;
		case P_TOKEN_LEN_PLUS1:
			nb_write_u32(p + token_len, 3, 2);
			break;
		case P_TOKEN_LEN_MINUS1:
			nb_write_u32(p + token_len, 3, 0);
			break;
		case P_TOKEN_LEN_HUGE:
			nb_write_u32(p + token_len, 0, UINT32_MAX);
			break;
		case P_TOKEN_ENTRIES_HUGE:
			nb_write_u32(p + token_entries, 0, UINT32_MAX);
			break;
		case P_TOKEN_ENTRIES_ZERO:
			nb_write_u32(p + token_entries, 0, 0);
			break;
		case P_LABEL_LEN_SHIFT:
			/* "ham" "spam" read as "hams" "pam": sum kept, order kept, still valid? no: */
			nb_write_u32(p + label_len, 0, 4);
			nb_write_u32(p + label_len, 1, 3);
			break;
		case P_TOKEN_LEN_SHIFT:
			/* "a" "b" "c" "d" read as "ab" "" "c" "d": unsorted */
			nb_write_u32(p + token_len, 0, 2);
			nb_write_u32(p + token_len, 1, 0);
			break;
		default:
			break;
	}
	nbt_fix_checksum(p, *size);
	return p;
}

/* A corrupted value (what) must be rejected, with a message. */
static void
check_rejected(const char *what, const unsigned char *p, size_t size, bool accepted,
			   const NbFormatError *e)
{
	if (accepted)
		note("accepted: %s", hex(p, size));
	CHECK(!accepted, "%s: accepted", what);
	CHECK(e->message[0] != '\0', "%s: no error message", what);
}

static void
test_view_corrupt_structure(void)
{
	for (int c = 0; c < N_CORRUPTIONS; c++)
	{
		size_t		size;
		unsigned char *p = corrupted((Corruption) c, &size);
		NbView		v;
		NbFormatError e;
		bool		accepted;

		e.message[0] = '\0';
		accepted = nb_view_open(&v, p, size, &e);
		if (c == C_NONE)
		{
			CHECK(accepted, "the uncorrupted control value is rejected: %s", e.message);
		}
		else if (c == P_LABEL_LEN_SHIFT)
		{
			/* "hams" < "pam": a different but valid model; it must be usable */
			NbtStats	st = {0};
			char		err[512];

			if (accepted && !nbt_check_model(p, size, &v, 1, 0, &st, err, sizeof(err)))
				CHECK(false, "%s: accepted and then: %s", corruption_name[c], err);
		}
		else
			check_rejected(corruption_name[c], p, size, accepted, &e);
		free(p);
	}
}

/* ---------------------------------------------------------------- */
/* nb_view_open: version 2 structure                                 */

typedef enum
{
	V2_NONE,
	V2_TYPE_ZERO, V2_TYPE_FIVE, V2_TYPE_HUGE, V2_ITEMS_ON_GAUSSIAN, V2_ITEMS_ON_BOOLEAN,
	V2_ITEMS_PLUS1, V2_ITEMS_MINUS1, V2_ITEMS_MOVED, V2_NAMES_UNSORTED, V2_NAME_DUP,
	V2_NAME_ZERO_BYTE, V2_PRESENT_GT_DOCS, V2_PRESENT_NEG, V2_PRESENT_NAN, V2_BOOL_TRUE_GT_PRESENT,
	V2_BOOL_TRUE_NEG, V2_BOOL_B, V2_GAUSS_M2_NEG, V2_GAUSS_B_NEG, V2_GAUSS_MEAN_NAN,
	V2_GAUSS_ROWS_NEG, V2_GAUSS_ABSENT_MEAN, V2_CAT_A, V2_BAG_B, V2_CAT_ROWS, V2_ENTRY_DOCS_GT_PRESENT,
	V2_VECTOR_MISSING, V2_VECTOR_NOT_GAUSSIAN, V2_VECTOR_HUGE, V2_ITEMS_UNSORTED,
	V2_F_PLUS1, V2_F_HUGE, V2_TRAILING, V2_VERSION1,
	N_V2_CORRUPTIONS
} V2Corruption;

static const char *const v2_corruption_name[] = {
	"none",
	"feature type 0", "feature type 5", "feature type 0xffffffff", "items on a Gaussian feature",
	"items on a boolean feature",
	"feature items + 1", "feature items - 1", "an item moved to the next feature",
	"feature names unsorted", "duplicate feature name",
	"zero byte in a feature name", "present > class docs", "present negative", "present NaN",
	"boolean true > present",
	"boolean true negative", "boolean b != 0", "Gaussian overall m2 negative", "Gaussian class M2 negative",
	"Gaussian mean NaN",
	"Gaussian rows negative", "Gaussian mean without rows", "categorical a != 0", "bag b != 0",
	"categorical overall rows != 0", "entry docs > feature present",
	"vector_len 6 (positions missing)", "vector position not Gaussian", "vector_len 0xffffffff",
	"items unsorted within a feature",
	"header F + 1", "header F huge", "trailing bytes", "version 1 header on a version 2 body",
};

/*
 * A valid version 2 model with every type and a vector of length 2:
 *   features (byte order): "1" Gaussian, "2" Gaussian, "color" categorical,
 *   "flag" boolean, "tags" bag; classes "a" (docs 4), "b" (docs 2).
 */
static void
v2_raw(RawModel *m)
{
	uint32_t	j;

	raw_init_v2(m);
	m->vector_len = 2;
	raw_add_class(m, "a", 1, 4);
	raw_add_class(m, "b", 1, 2);
	for (int p = 0; p < 2; p++)
	{
		j = raw_add_feature(m, p ? "2" : "1", 1, NB_FEATURE_GAUSSIAN);
		m->f[j].present[0] = 4;
		m->f[j].present[1] = 2;
		m->f[j].a[0] = 1.5 + p;
		m->f[j].b[0] = 2;
		m->f[j].a[1] = -3;
		m->f[j].b[1] = 0.5;
		m->f[j].rows = 6;
		m->f[j].mean = 0;
		m->f[j].m2 = 40;
	}
	mix_raw_discrete(m);
}

#define F_G1 0
#define F_G2 1
#define F_COLOR 2
#define F_FLAG 3
#define F_TAGS 4

static unsigned char *
v2_corrupted(V2Corruption c, size_t *size)
{
	RawModel	m;
	unsigned char *p;

	v2_raw(&m);
	switch (c)
	{
		case V2_TYPE_ZERO:
			m.f[F_FLAG].type = 0;
			break;
		case V2_TYPE_FIVE:
			m.f[F_FLAG].type = 5;
			break;
		case V2_TYPE_HUGE:
			m.f[F_COLOR].type = UINT32_MAX;
			break;
		case V2_ITEMS_ON_GAUSSIAN:
			/* the categorical feature's items, now Gaussian (statistics otherwise valid) */
			m.f[F_COLOR].type = NB_FEATURE_GAUSSIAN;
			break;
		case V2_ITEMS_ON_BOOLEAN:
			m.f[F_COLOR].type = NB_FEATURE_BOOLEAN;
			break;
		case V2_ITEMS_PLUS1:
			m.f[F_TAGS].items++;
			break;
		case V2_ITEMS_MINUS1:
			m.f[F_TAGS].items--;
			break;
		case V2_ITEMS_MOVED:
			/* "red" becomes a token of "flag": items on a boolean */
			m.f[F_COLOR].items--;
			m.f[F_FLAG].items++;
			break;
		case V2_NAMES_UNSORTED:
			raw_set_string(&m.f[F_FLAG].name, (const unsigned char *) "zzz", 3);
			break;
		case V2_NAME_DUP:
			raw_set_string(&m.f[F_FLAG].name, (const unsigned char *) "color", 5);
			break;
		case V2_NAME_ZERO_BYTE:
			raw_set_string(&m.f[F_FLAG].name, (const unsigned char *) "fl\0g", 4);
			break;
		case V2_PRESENT_GT_DOCS:
			m.f[F_FLAG].present[1] = 2.5;
			break;
		case V2_PRESENT_NEG:
			m.f[F_COLOR].present[1] = -1;
			break;
		case V2_PRESENT_NAN:
			m.f[F_G1].present[0] = NAN;
			break;
		case V2_BOOL_TRUE_GT_PRESENT:
			m.f[F_FLAG].a[0] = 3.5;
			break;
		case V2_BOOL_TRUE_NEG:
			m.f[F_FLAG].a[0] = -1;
			break;
		case V2_BOOL_B:
			m.f[F_FLAG].b[0] = 1;
			break;
		case V2_GAUSS_M2_NEG:
			m.f[F_G2].m2 = -1;
			break;
		case V2_GAUSS_B_NEG:
			m.f[F_G1].b[1] = -0.5;
			break;
		case V2_GAUSS_MEAN_NAN:
			m.f[F_G1].a[0] = NAN;
			break;
		case V2_GAUSS_ROWS_NEG:
			m.f[F_G1].rows = -6;
			break;
		case V2_GAUSS_ABSENT_MEAN:
			m.f[F_G1].present[1] = 0;
			break;
		case V2_CAT_A:
			m.f[F_COLOR].a[0] = 1;
			break;
		case V2_BAG_B:
			m.f[F_TAGS].b[1] = 1;
			break;
		case V2_CAT_ROWS:
			m.f[F_COLOR].rows = 1;
			break;
		case V2_ENTRY_DOCS_GT_PRESENT:
			m.f[F_TAGS].present[1] = 0.5;
			break;
		case V2_VECTOR_MISSING:
			m.vector_len = 6;
			break;
		case V2_VECTOR_NOT_GAUSSIAN:
			m.f[F_G2].type = NB_FEATURE_BOOLEAN;
			m.f[F_G2].a[0] = m.f[F_G2].a[1] = m.f[F_G2].b[0] = m.f[F_G2].b[1] = 0;
			m.f[F_G2].rows = m.f[F_G2].mean = m.f[F_G2].m2 = 0;
			break;
		case V2_VECTOR_HUGE:
			m.vector_len = UINT32_MAX;
			break;
		case V2_ITEMS_UNSORTED:
			raw_set_string(&m.t[0].str, (const unsigned char *) "zed", 3);
			break;
		default:
			break;
	}
	p = raw_serialize(&m, size);
	raw_free(&m);
	switch (c)
	{
		case V2_F_PLUS1:
			nb_write_u32(p + NB_HEADER_SIZE, 0, 6);
			break;
		case V2_F_HUGE:
			nb_write_u32(p + NB_HEADER_SIZE, 0, UINT32_MAX);
			break;
		case V2_TRAILING:
			p = realloc(p, *size + 3);
			memset(p + *size, 'z', 3);
			*size += 3;
			break;
		case V2_VERSION1:
			p[4] = 1;
			break;
		default:
			break;
	}
	nbt_fix_checksum(p, *size);
	return p;
}

static void
test_view_v2_corrupt_structure(void)
{
	for (int c = 0; c < N_V2_CORRUPTIONS; c++)
	{
		size_t		size;
		unsigned char *p = v2_corrupted((V2Corruption) c, &size);
		NbView		v;
		NbFormatError e;
		bool		accepted;

		e.message[0] = '\0';
		accepted = nb_view_open(&v, p, size, &e);
		if (c == V2_NONE)
		{
			NbtStats	st = {0};
			char		err[512];

			CHECK(accepted, "the uncorrupted control value is rejected: %s", e.message);
			CHECK(v.version == 2 && v.n_features == 5 && v.vector_len == 2, "control: F %u", v.n_features);
			CHECK(nbt_check_model(p, size, &v, 1, 0, &st, err, sizeof(err)), "control: %s", err);
		}
		else
			check_rejected(v2_corruption_name[c], p, size, accepted, &e);
		free(p);
	}
}

/* Prior-only (no features), a vector only, zero-feature classes: valid and usable. */
static void
test_view_v2_edge_shapes(void)
{
	RawModel	m;
	unsigned char *p;
	size_t		size;
	NbView		v;
	NbtStats	st = {0};
	char		err[512];
	uint32_t	j;

	raw_init_v2(&m);
	raw_add_class(&m, "a", 1, 1);
	raw_add_class(&m, "b", 1, 3);
	p = raw_serialize(&m, &size);
	CHECK(open_view(&v, p, size, err, sizeof(err)), "prior only: rejected: %s", err);
	CHECK(v.n_features == 0 && v.n_tokens == 0, "prior only: F %u", v.n_features);
	CHECK(nbt_check_model(p, size, &v, 1, 0, &st, err, sizeof(err)), "prior only: %s", err);
	free(p);

	/* a Gaussian feature only class b has; a bag no class has */
	j = raw_add_feature(&m, "g", 1, NB_FEATURE_GAUSSIAN);
	m.f[j].present[1] = 3;
	m.f[j].a[1] = 7;
	m.f[j].b[1] = 0;
	m.f[j].rows = 2;
	m.f[j].mean = 7;
	raw_add_feature(&m, "h", 1, NB_FEATURE_BAG);
	j = raw_add_feature(&m, "k", 1, NB_FEATURE_CATEGORICAL);
	m.f[j].present[0] = 1;
	p = raw_serialize(&m, &size);
	raw_free(&m);
	CHECK(open_view(&v, p, size, err, sizeof(err)), "sparse features: rejected: %s", err);
	CHECK(nbt_check_model(p, size, &v, 1, 0, &st, err, sizeof(err)), "sparse features: %s", err);
	free(p);
}

/* Version 2 samples: 0 every type and a vector (raw), 1 prior only, 2 random mixed, 3 the mixed model. */
/*
 * A version 2 model of classes a (4 documents) and b (2) with one Gaussian
 * feature "x": class a's mean a0 and M2 b0, class b's 3 and 1, overall
 * rows, mean and M2 as given.
 */
static void
gaussian_raw(RawModel *m, double a0, double b0, double rows, double mean, double m2)
{
	uint32_t	j;

	raw_init_v2(m);
	raw_add_class(m, "a", 1, 4);
	raw_add_class(m, "b", 1, 2);
	j = raw_add_feature(m, "x", 1, NB_FEATURE_GAUSSIAN);
	m->f[j].present[0] = 4;
	m->f[j].present[1] = 2;
	m->f[j].a[0] = a0;
	m->f[j].b[0] = b0;
	m->f[j].a[1] = 3;
	m->f[j].b[1] = 1;
	m->f[j].rows = rows;
	m->f[j].mean = mean;
	m->f[j].m2 = m2;
}

/*
 * A version 1 model of classes a (docs_a documents) and b (1): token "t" has
 * one entry (class cls, count, docs), token "u" one entry in b.
 */
static void
entry_raw(RawModel *m, double docs_a, uint32_t cls, double count, double docs)
{
	uint32_t	k;

	raw_init(m);
	raw_add_class(m, "a", 1, docs_a);
	raw_add_class(m, "b", 1, 1);
	k = raw_add_token(m, "t", 1);
	raw_add_entry(m, k, cls, count, docs);
	k = raw_add_token(m, "u", 1);
	raw_add_entry(m, k, 1, 3, 1);
}

/*
 * The inputs behind the bugs that model_check.c once let through by their
 * error text: each is now rejected by nb_view_open, or valid (the comment
 * says why) and then passes every check of nbt_check_model.
 */
static void
test_view_once_known_bugs(void)
{
	static const struct
	{
		const char *name;
		bool		valid;
	}			cases[] = {
		/* a number must be +0 where the trainer writes +0 (nb_format.c, is_zero) */
		{"-0.0 as a class's M2", false},
		{"-0.0 as the overall M2", false},
		{"-0.0 as an entry's document count", false},
		/* a mean is any finite number, and a merge keeps the sign of a -0.0 mean */
		{"-0.0 as a class's mean", true},
		{"-0.0 as the overall mean", true},
		/* any finite mean: merge_moments no longer squares it (no 0 * inf) */
		{"class and overall means 1e200", true},
		{"class and overall means -1e160", true},
		/* no rows, no statistics */
		{"feature_rows 0 with a mean", false},
		{"feature_rows 0 with an M2", false},
		/* finite: a self-merge doubles M2 to infinity and must say so (checked) */
		{"overall M2 DBL_MAX with 1 row", true},
		{"class and overall M2 DBL_MAX", true},
		/* the totals of a model must be finite */
		{"class documents adding up to infinity", false},
		{"entry counts adding up to infinity", false},
		/* theta_j subnormal: mutual information takes the difference of logarithms */
		{"a subnormal entry", true},
		{"a subnormal entry in a class of 1e-300 documents", true},
	};
	NbtStats	st = {0};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		RawModel	m;
		unsigned char *buf;
		size_t		size;
		NbView		v;
		NbFormatError e;
		char		err[512];
		bool		opened,
					usable = false;

		switch (i)
		{
			case 0:
				gaussian_raw(&m, 1, -0.0, 6, 1, 4);
				break;
			case 1:
				gaussian_raw(&m, 1, 2, 6, 1, -0.0);
				break;
			case 2:
				entry_raw(&m, 1, 0, 1, -0.0);
				break;
			case 3:
				gaussian_raw(&m, -0.0, 2, 6, 1, 4);
				break;
			case 4:
				gaussian_raw(&m, 1, 2, 6, -0.0, 4);
				break;
			case 5:
				gaussian_raw(&m, 1e200, 2, 6, 1e200, 4);
				break;
			case 6:
				gaussian_raw(&m, -1e160, 2, 6, -1e160, 4);
				break;
			case 7:
				gaussian_raw(&m, 1, 2, 0, 1, 0);
				break;
			case 8:
				gaussian_raw(&m, 1, 2, 0, 0, 3);
				break;
			case 9:
				gaussian_raw(&m, 1, 2, 1, 1, DBL_MAX);
				break;
			case 10:
				gaussian_raw(&m, 1, DBL_MAX, 6, 1, DBL_MAX);
				break;
			case 11:
				entry_raw(&m, 1.5e308, 0, 1, 1);
				m.c[1].docs = 1.5e308;
				break;
			case 12:
				entry_raw(&m, 1, 0, 1.5e308, 1);
				m.t[1].e[0].count = 1.5e308;
				break;
			case 13:
				entry_raw(&m, 1, 0, 5e-324, 5e-324);
				break;
			default:
				entry_raw(&m, 1e-300, 0, 5e-324, 5e-324);
				break;
		}
		buf = raw_serialize(&m, &size);
		raw_free(&m);
		opened = nb_view_open(&v, buf, size, &e);
		if (opened)
			usable = nbt_check_model(buf, size, &v, i, 0, &st, err, sizeof(err));
		free(buf);
		CHECK(opened == cases[i].valid, "%s: %s", cases[i].name,
			  opened ? "accepted" : e.message);
		CHECK(!opened || usable, "%s: accepted, but %s", cases[i].name, err);
	}
}

static unsigned char *
v2_model(int which, size_t *size)
{
	RawModel	m;
	unsigned char *p;

	switch (which)
	{
		case 0:
			v2_raw(&m);
			break;
		case 1:
			raw_init_v2(&m);
			raw_add_class(&m, "a", 1, 1);
			raw_add_class(&m, "b", 1, 0.5);
			break;
		case 2:
			{
				RandMix    *rows = malloc(sizeof(RandMix) * 12);

				rand_mix(rows, 12, 3, 31, false);
				for (int i = 0; i < 12; i++)
					rows[i].ntags %= 4, rows[i].ntext %= 3;
				p = serialize_rand_mix(rows, NULL, 12, size);
				free(rows);
				return p;
			}
		default:
			return serialize_mix(mix, NMIX, size);
	}
	p = raw_serialize(&m, size);
	raw_free(&m);
	return p;
}

/* ---------------------------------------------------------------- */
/* seed corpus for the fuzzer                                        */

static int
write_file(const char *dir, const char *name, const unsigned char *buf, size_t size)
{
	char		path[4096];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(buf, 1, size, f) != size || fclose(f) != 0)
	{
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("%s (%zu bytes)\n", path, size);
	return 0;
}

/* The model of bytes with stored options, and with a tokenizer if tokenizer, as a seed. */
static int
write_with_settings(const char *dir, const char *name, const unsigned char *bytes, size_t size,
					bool tokenizer)
{
	static const char options[] = "{\"alpha\": 0.5, \"beta\": [1, 2]}";
	NbSettings	settings;
	NbView		v;
	NbFormatError err;
	NbFormatShape shape;
	NbFormatWriter w;
	unsigned char *out;
	size_t		out_size;
	int			rc;

	if (!nb_view_open(&v, bytes, size, &err))
		abort();
	memset(&settings, 0, sizeof(settings));
	nb_tokenizer_init(&settings.tokenizer);
	settings.tokenizer.ngram_max = 2;
	settings.has_tokenizer = tokenizer;
	settings.options = options;
	settings.options_len = sizeof(options) - 1;
	shape = nb_view_shape(&v, &settings);
	out_size = nb_format_size(&shape, SIZE_MAX);
	out = malloc(out_size);
	nb_format_begin(&w, &shape, out, out_size);
	nb_format_copy(&w, &v);
	nb_format_finish(&w, NULL);
	rc = write_file(dir, name, out, out_size);
	free(out);
	return rc;
}

static int
write_corpus(const char *dir)
{
	static const Row one_class[] = {{"only", 1, {"x", "y", "x"}}};
	static const Row no_tokens[] = {{"c", 2, {NULL}}};
	static const Row bytes[] = {
		{"", 1, {"", "\xff", "a\x01", "\xc3\xa9t\xc3\xa9"}},
		{"\xff\xfe", 0.5, {"a\x01", "\x7f"}},
	};
	RandRow    *rows = malloc(sizeof(RandRow) * 30);
	unsigned char *buf;
	size_t		size;
	int			rc = 0;

	mkdir(dir, 0777);
	buf = serialize_rows(toy, NTOY, &size);
	rc |= write_file(dir, "toy.nbm", buf, size);
	free(buf);
	buf = serialize_rows(one_class, 1, &size);
	rc |= write_file(dir, "one_class.nbm", buf, size);
	free(buf);
	buf = serialize_rows(no_tokens, 1, &size);
	rc |= write_file(dir, "no_tokens.nbm", buf, size);
	free(buf);
	buf = serialize_rows(empty_full, 2, &size);
	rc |= write_file(dir, "empty_class.nbm", buf, size);
	free(buf);
	buf = serialize_rows(bytes, 2, &size);
	rc |= write_file(dir, "bytes.nbm", buf, size);
	free(buf);
	rand_rows(rows, 30, 5, 24, 11, true);
	for (int i = 0; i < 30; i++)
		rows[i].n = rows[i].n % 6;
	buf = serialize_rand(rows, NULL, 30, &size);
	rc |= write_file(dir, "weighted.nbm", buf, size);
	free(buf);
	free(rows);
	/* version 2 */
	{
		static const char *const names[] = {"v2_vector_all_types.nbm", "v2_prior_only.nbm",
		"v2_random_mixed.nbm", "v2_mixed.nbm"};
		static const char training[] =
			"{\x0f\x90red a b\n"
			"\x05\x3a" "blue c\n"
			"\x11\x0b\x70red\n"
			"\x02\x4a\x88\n"
			"\x16\x8e\x81x y z\n";
		RandMix    *mrows = malloc(sizeof(RandMix) * 40);

		for (int i = 0; i < 4; i++)
		{
			buf = v2_model(i, &size);
			rc |= write_file(dir, names[i], buf, size);
			free(buf);
		}
		buf = serialize_mix(score_rows_mix, 6, &size);
		rc |= write_file(dir, "v2_scoring.nbm", buf, size);
		free(buf);
		rand_mix(mrows, 40, 4, 9, false);
		for (int i = 0; i < 40; i++)
			mrows[i].ntags %= 3, mrows[i].ntext %= 3;
		buf = serialize_rand_mix(mrows, NULL, 40, &size);
		rc |= write_file(dir, "v2_random_vector.nbm", buf, size);
		free(buf);
		free(mrows);
		rc |= write_file(dir, "train_mixed.txt", (const unsigned char *) training, sizeof(training) - 1);
	}
	/* version 4: a tokenizer and stored options, with and without lengths */
	buf = serialize_rows(toy, NTOY, &size);
	rc |= write_with_settings(dir, "v4_text.nbm", buf, size, true);
	free(buf);
	buf = v2_model(3, &size);
	rc |= write_with_settings(dir, "v4_options.nbm", buf, size, false);
	free(buf);
	/* models written before format version 3: their bags' lengths unknown */
	{
		RawModel	m;

		buf = serialize_rows(toy, NTOY, &size);
		if (!raw_parse(&m, buf, size))
			abort();
		free(buf);
		raw_set_version(&m, NB_FORMAT_VERSION_TEXT);
		buf = raw_serialize(&m, &size);
		raw_free(&m);
		rc |= write_file(dir, "v1_toy.nbm", buf, size);
		free(buf);
		buf = serialize_mix(mix, NMIX, &size);
		if (!raw_parse(&m, buf, size))
			abort();
		free(buf);
		raw_set_version(&m, NB_FORMAT_VERSION_FEATURES);
		buf = raw_serialize(&m, &size);
		raw_free(&m);
		rc |= write_file(dir, "v2_bags.nbm", buf, size);
		free(buf);
	}
	return rc;
}

/* ---------------------------------------------------------------- */
/* the committed corpus, read alike on every architecture            */

/*
 * corpus-readings.txt says what reading each model of corpus/ gives (both
 * written by make corpus, on x86-64): per part of the view a digest of
 * every value its accessors return, and the log posteriors of two
 * documents under each kind.  test_corpus_readings reads every committed
 * model and compares, the parts bit for bit and the posteriors within
 * CORPUS_TOLERANCE (relative): another compiler or libm may round their
 * last bits differently (GCC contracts a * b + c into one rounding on
 * aarch64 and s390x).  Under make cross this is the proof that a model
 * written on one architecture reads the same on the others, little- and
 * big-endian.  The test programs find the files in NBT_UNIT_DIR (the
 * Makefile passes test/unit's path), wherever they run.
 */
#define CORPUS_DIR NBT_UNIT_DIR "/corpus"
#define CORPUS_READINGS NBT_UNIT_DIR "/corpus-readings.txt"
#define CORPUS_TOLERANCE 1e-12

/* FNV-1a over the bytes of each value, least significant first: the same digest on any machine. */
static void
digest_bytes(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * UINT64_C(0x100000001b3);
}

static void
digest_u64(uint64_t *h, uint64_t x)
{
	for (int i = 0; i < 8; i++)
	{
		unsigned char b = (unsigned char) (x >> (8 * i));

		digest_bytes(h, &b, 1);
	}
}

static void
digest_all(uint64_t *h, const uint64_t *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		digest_u64(h, x[i]);
}

static void
digest_f64(uint64_t *h, double x)
{
	uint64_t	u;

	memcpy(&u, &x, sizeof(u));
	digest_u64(h, u);
}

static void
digest_str(uint64_t *h, const char *s, uint32_t len)
{
	digest_u64(h, len);
	digest_bytes(h, s, len);
}

#define DIGEST_START UINT64_C(0xcbf29ce484222325)

/* The digests of the view's parts, one line each. */
static void
reading_view(FILE *out, const char *name, const NbView *v)
{
	uint64_t	h = DIGEST_START;
	NbStringIter labels = nb_view_labels(v);
	NbFeatureIter features = nb_view_features(v);
	NbFeature	f;
	const char *s;
	uint32_t	len;
	uint32_t	c = 0;
	const uint64_t header[] = {v->version, v->size, v->checksum, v->n_classes, v->n_tokens,
	v->n_entries, v->n_features, v->vector_len, v->n_lengths};

	digest_all(&h, header, sizeof(header) / sizeof(header[0]));
	fprintf(out, "%s view header %016llx\n", name, (unsigned long long) h);

	h = DIGEST_START;
	while (nb_string_next(&labels, &s, &len))
	{
		digest_str(&h, s, len);
		digest_f64(&h, nb_view_class_docs(v, c++));
	}
	fprintf(out, "%s view classes %016llx\n", name, (unsigned long long) h);

	h = DIGEST_START;
	while (nb_feature_next(&features, &f))
	{
		digest_str(&h, f.name, f.name_len);
		digest_u64(&h, f.type);
		digest_u64(&h, f.n_items);
		for (c = 0; c < v->n_classes; c++)
		{
			digest_f64(&h, nb_view_present(v, f.index, c));
			digest_f64(&h, nb_view_a(v, f.index, c));
			digest_f64(&h, nb_view_b(v, f.index, c));
		}
		if (v->version != NB_FORMAT_VERSION_TEXT)
		{
			digest_f64(&h, nb_view_feature_rows(v, f.index));
			digest_f64(&h, nb_view_feature_mean(v, f.index));
			digest_f64(&h, nb_view_feature_m2(v, f.index));
		}
	}
	fprintf(out, "%s view features %016llx\n", name, (unsigned long long) h);

	h = DIGEST_START;
	features = nb_view_features(v);
	while (nb_feature_next(&features, &f))
	{
		NbItemIter	items = nb_feature_item_iter(v, &f);
		NbItem		item;

		while (nb_item_next(&items, &item))
		{
			digest_str(&h, item.str, item.len);
			digest_u64(&h, item.n_entries);
			for (uint32_t i = 0; i < item.n_entries; i++)
			{
				NbEntry		en = nb_view_entry(v, item.first_entry + i);

				digest_u64(&h, en.cls);
				digest_f64(&h, en.count);
				digest_f64(&h, en.docs);
			}
		}
	}
	fprintf(out, "%s view items %016llx\n", name, (unsigned long long) h);

	h = DIGEST_START;
	if (nb_view_has_lengths(v))
	{
		for (uint64_t jc = 0; jc < (uint64_t) v->n_features * v->n_classes; jc++)
			digest_u64(&h, nb_view_length_pairs_at(v, jc));
		for (uint64_t i = 0; i < v->n_lengths; i++)
		{
			digest_f64(&h, nb_view_length_value(v, i));
			digest_f64(&h, nb_view_length_weight(v, i));
		}
	}
	fprintf(out, "%s view lengths %016llx\n", name, (unsigned long long) h);

	h = DIGEST_START;
	digest_u64(&h, v->settings.has_tokenizer);
	if (v->settings.has_tokenizer)
	{
		const NbTokenizer *t = &v->settings.tokenizer;
		const uint64_t tokenizer[] = {t->analyzer, t->ngram_min, t->ngram_max, t->lowercase,
		t->strip_accents, t->token_pattern, t->stop_words};

		digest_all(&h, tokenizer, sizeof(tokenizer) / sizeof(tokenizer[0]));
	}
	digest_str(&h, v->settings.options, v->settings.options_len);
	fprintf(out, "%s view settings %016llx\n", name, (unsigned long long) h);
}

/*
 * The document "all": every feature present, each item of a bag (item k
 * counted 1 + k % 3 times) and an unknown token, a categorical feature's
 * first value, boolean features true, Gaussian ones at their overall mean.
 */
static void
reading_doc_all(const NbView *v, const NbIndex *ix, NbDoc *doc)
{
	static const char unknown[] = "\x01unknown";
	NbFeatureIter features = nb_view_features(v);
	NbFeature	f;
	NbTokenRef *refs = malloc(sizeof(NbTokenRef) * ((size_t) v->n_tokens + 1));

	nb_doc_begin(doc);
	while (nb_feature_next(&features, &f))
	{
		NbStringIter items = nb_feature_items(v, &f);
		uint32_t	n = 0;

		switch (f.type)
		{
			case NB_FEATURE_BAG:
			case NB_FEATURE_CATEGORICAL:
				while ((f.type == NB_FEATURE_BAG || n == 0) &&
					   nb_string_next(&items, &refs[n].str, &refs[n].len))
				{
					refs[n].count = 1 + (f.first_item + n) % 3;
					n++;
				}
				if (f.type == NB_FEATURE_BAG || n == 0)
				{
					refs[n].str = unknown;
					refs[n].len = sizeof(unknown) - 1;
					refs[n].count = 1;
					n++;
				}
				nb_doc_add_tokens(ix, doc, f.index, refs, n);
				break;
			case NB_FEATURE_BOOLEAN:
				nb_doc_add_value(doc, f.index, 1);
				break;
			default:
				nb_doc_add_value(doc, f.index, nb_view_feature_mean(v, f.index));
				break;
		}
	}
	free(refs);
}

/* The log posteriors of the documents "empty" and "all" under each kind, one line each. */
static void
reading_scores(FILE *out, const char *name, const NbView *v)
{
	static const char *const kinds[] = {"multinomial", "bernoulli", "complement", "dcm"};
	NbIndex		ix;
	NbDoc		docs[2];
	double	   *log_post = malloc(sizeof(double) * v->n_classes);

	nb_index_build(&ix, v);
	for (int d = 0; d < 2; d++)
		nb_doc_init(&docs[d], &ix);
	nb_doc_begin(&docs[0]);
	reading_doc_all(v, &ix, &docs[1]);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
	{
		NbOptions	o;
		NbModelTraits traits = nb_scorer_model_traits(&ix);
		NbOptionStatus st;
		NbScorer	sc;

		nb_options_init(&o);
		st = nb_options_set_kind(&o, kinds[k], strlen(kinds[k]));
		if (st == NB_OPTION_OK)
			st = nb_options_check_set(&o);
		if (st == NB_OPTION_OK)
			st = nb_options_check_model(&o, &traits);
		if (st != NB_OPTION_OK)
		{
			fprintf(out, "%s score %s refused %d\n", name, kinds[k], (int) st);
			continue;
		}
		nb_scorer_build(&sc, &ix, &o);
		for (int d = 0; d < 2; d++)
		{
			int64_t		best = nb_scorer_score(&sc, &docs[d], log_post);

			fprintf(out, "%s score %s %s", name, kinds[k], d == 0 ? "empty" : "all");
			if (best < 0)
				fprintf(out, " failed %lld", (long long) best);
			else
				for (uint32_t c = 0; c < v->n_classes; c++)
					fprintf(out, " %.17g", log_post[c]);
			fprintf(out, "\n");
		}
		nb_scorer_free(&sc);
	}
	for (int d = 0; d < 2; d++)
		nb_doc_free(&docs[d]);
	nb_index_free(&ix);
	free(log_post);
}

/* The whole of a file into a malloc'd buffer (NUL-terminated), or NULL. */
static char *
read_whole(const char *path, size_t *size)
{
	FILE	   *f = fopen(path, "rb");
	char	   *buf = NULL;
	size_t		n = 0;
	size_t		got;

	if (f == NULL)
		return NULL;
	do
	{
		buf = realloc(buf, n + 4096 + 1);
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got == 4096);
	if (ferror(f))
	{
		free(buf);
		buf = NULL;
	}
	else
		buf[n] = '\0';
	fclose(f);
	*size = n;
	return buf;
}

static int
compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The names of the .nbm files of corpus/ in byte order (malloc'd, *n of them), or NULL. */
static char **
corpus_models(int *n)
{
	DIR		   *dir = opendir(CORPUS_DIR);
	struct dirent *e;
	char	  **names = NULL;

	*n = 0;
	if (dir == NULL)
		return NULL;
	while ((e = readdir(dir)) != NULL)
	{
		size_t		len = strlen(e->d_name);

		if (len > 4 && strcmp(e->d_name + len - 4, ".nbm") == 0)
		{
			names = realloc(names, sizeof(char *) * (*n + 1));
			names[(*n)++] = strdup(e->d_name);
		}
	}
	closedir(dir);
	qsort(names, *n, sizeof(char *), compare_names);
	return names;
}

static void
free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 * What reading corpus/name gives (malloc'd lines), or NULL with why: the
 * model must open and pass model_check.c's checks.
 */
static char *
corpus_reading(const char *name, char *why, size_t whylen)
{
	char		path[4096];
	size_t		size;
	unsigned char *bytes;
	NbView		v;
	NbtStats	st = {0};
	char	   *text = NULL;
	size_t		text_size;
	FILE	   *out;

	snprintf(path, sizeof(path), "%s/%s", CORPUS_DIR, name);
	bytes = (unsigned char *) read_whole(path, &size);
	if (bytes == NULL)
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
	else if (!open_view(&v, bytes, size, why, whylen))
		;
	else if (nbt_check_model(bytes, size, &v, 1, 0, &st, why, whylen))
	{
		out = open_memstream(&text, &text_size);
		reading_view(out, name, &v);
		reading_scores(out, name, &v);
		fclose(out);
	}
	free(bytes);
	return text;
}

/* ./test_format --write-readings: corpus-readings.txt's text, on stdout. */
static int
write_readings(void)
{
	int			n;
	char	  **names = corpus_models(&n);
	int			rc = n > 0 ? 0 : 1;

	printf("# What test_format reads from each model of corpus/, written by make corpus\n"
		   "# (./test_format --write-readings) on x86-64; see test_corpus_readings.\n");
	for (int i = 0; i < n && rc == 0; i++)
	{
		char		why[512];
		char	   *text = corpus_reading(names[i], why, sizeof(why));

		if (text == NULL)
		{
			fprintf(stderr, "corpus/%s: %s\n", names[i], why);
			rc = 1;
		}
		else
			fputs(text, stdout);
		free(text);
	}
	free_names(names, n);
	return rc;
}

/* Whether words g and w, both numbers, differ by CORPUS_TOLERANCE at most. */
static bool
numbers_near(const char *g, const char *w)
{
	char	   *gend,
			   *wend;
	double		gv = strtod(g, &gend),
				wv = strtod(w, &wend);

	return *gend == '\0' && *wend == '\0' && fabs(gv - wv) <= CORPUS_TOLERANCE * fmax(1, fabs(wv));
}

/*
 * Whether a line read matches the line expected: the same words, but that
 * the log posteriors of a "score" line (its fifth word on) may differ by
 * CORPUS_TOLERANCE.
 */
static bool
reading_line_matches(const char *got, const char *want)
{
	char	   *g_copy = strdup(got),
			   *w_copy = strdup(want);
	char	   *g_save,
			   *w_save;
	char	   *g = strtok_r(g_copy, " ", &g_save),
			   *w = strtok_r(w_copy, " ", &w_save);
	bool		score = false;
	bool		same = true;

	for (int word = 0; same && g != NULL && w != NULL; word++)
	{
		if (word == 1)
			score = strcmp(w, "score") == 0;
		same = strcmp(g, w) == 0 || (score && word >= 4 && numbers_near(g, w));
		g = strtok_r(NULL, " ", &g_save);
		w = strtok_r(NULL, " ", &w_save);
	}
	same = same && g == NULL && w == NULL;
	free(g_copy);
	free(w_copy);
	return same;
}

/* Split text into its lines in place, but empty and "#" ones; *lines malloc'd. */
static int
split_lines(char *text, char ***lines)
{
	int			n = 0;

	*lines = NULL;
	for (char *line = text; line != NULL && *line != '\0';)
	{
		char	   *end = strchr(line, '\n');

		if (end != NULL)
			*end++ = '\0';
		if (*line != '\0' && *line != '#')
		{
			*lines = realloc(*lines, sizeof(char *) * (n + 1));
			(*lines)[n++] = line;
		}
		line = end;
	}
	return n;
}

/* Whether line is a line of model name's reading. */
static bool
line_of(const char *line, const char *name)
{
	size_t		len = strlen(name);

	return strncmp(line, name, len) == 0 && line[len] == ' ';
}

/*
 * Every model of corpus/ opens, passes model_check.c's checks and reads as
 * corpus-readings.txt says; the file has no reading of a model not there.
 */
static void
test_corpus_readings(void)
{
	int			n_models;
	char	  **names = corpus_models(&n_models);
	size_t		size;
	char	   *expected = read_whole(CORPUS_READINGS, &size);
	char	  **want = NULL;
	int			n_want = expected != NULL ? split_lines(expected, &want) : 0;
	bool	   *used = calloc(n_want + 1, sizeof(bool));
	char	   *text = NULL;
	char	  **got = NULL;

	CHECK_OR_DONE(n_models > 0, "no models in %s", CORPUS_DIR);
	CHECK_OR_DONE(expected != NULL, "cannot read %s: %s", CORPUS_READINGS, strerror(errno));
	for (int i = 0; i < n_models; i++)
	{
		char		why[512];
		int			n_got,
					w = 0;

		text = corpus_reading(names[i], why, sizeof(why));
		CHECK_OR_DONE(text != NULL, "corpus/%s: %s", names[i], why);
		n_got = split_lines(text, &got);
		for (int g = 0; g < n_got; g++, w++)
		{
			while (w < n_want && !line_of(want[w], names[i]))
				w++;
			CHECK_OR_DONE(w < n_want, "corpus/%s reads \"%s\", which %s does not have",
						  names[i], got[g], CORPUS_READINGS);
			CHECK_OR_DONE(reading_line_matches(got[g], want[w]), "corpus/%s reads \"%s\", expected \"%s\"",
						  names[i], got[g], want[w]);
			used[w] = true;
		}
		for (; w < n_want; w++)
			CHECK_OR_DONE(!line_of(want[w], names[i]), "corpus/%s: no reading \"%s\"", names[i], want[w]);
		free(got);
		free(text);
		got = NULL;
		text = NULL;
	}
	for (int w = 0; w < n_want; w++)
		CHECK_OR_DONE(used[w], "%s: \"%s\" is of no model of corpus/", CORPUS_READINGS, want[w]);
	note("%d models of corpus/ read as corpus-readings.txt says (%d lines)", n_models, n_want);
done:
	free(got);
	free(text);
	free(used);
	free(want);
	free(expected);
	free_names(names, n_models);
}

/* ---------------------------------------------------------------- */

/*
 * One model, one byte string: version 2 holding only the bag "" present in
 * every document is what version 1 says, and is rejected; the same bag
 * missing from some document is version 2's to say, and is valid.
 */
static void
test_view_text_only_is_version_1(void)
{
	for (int everywhere = 0; everywhere <= 1; everywhere++)
	{
		RawModel	m;
		uint32_t	t;
		size_t		size;
		unsigned char *bytes;
		NbView		v;
		NbFormatError e;
		bool		ok;

		raw_init_v2(&m);
		raw_add_class(&m, "ham", 3, 2);
		raw_add_class(&m, "spam", 4, 3);
		raw_add_feature(&m, "", 0, NB_FEATURE_BAG);
		t = raw_add_item(&m, 0, "money", 5);
		raw_add_entry(&m, t, 0, 1, 1);
		raw_add_entry(&m, t, 1, 4, 2);
		m.f[0].present[0] = everywhere ? 2 : 1;
		m.f[0].present[1] = 3;
		bytes = raw_serialize(&m, &size);
		ok = nb_view_open(&v, bytes, size, &e);
		free(bytes);
		raw_free(&m);
		if (everywhere)
			CHECK(!ok && strstr(e.message, "must be format version 1") != NULL,
				  "version 2 text-only model: %s", ok ? "accepted" : e.message);
		else
			CHECK(ok, "version 2 bag \"\" missing from a document rejected: %s", e.message);
	}
}

/*
 * A version 3 model: a bag "b" (classes a and b, lengths 2 and 5 in a, 3 in
 * b) and a categorical "c".
 */
static void
v3_model(RawModel *m)
{
	uint32_t	k;

	raw_init_v3(m);
	raw_add_class(m, "a", 1, 3);
	raw_add_class(m, "b", 1, 2);
	raw_add_feature(m, "b", 1, NB_FEATURE_BAG);
	m->f[0].present[0] = 3;
	m->f[0].present[1] = 1;
	k = raw_add_item(m, 0, "x", 1);
	raw_add_entry(m, k, 0, 5, 2);
	raw_add_entry(m, k, 1, 3, 1);
	k = raw_add_item(m, 0, "y", 1);
	raw_add_entry(m, k, 0, 2, 1);
	raw_add_length(m, 0, 0, 2, 1);
	raw_add_length(m, 0, 0, 5, 1);
	raw_add_length(m, 0, 1, 3, 1);
	raw_add_feature(m, "c", 1, NB_FEATURE_CATEGORICAL);
	m->f[1].present[0] = 1;
	k = raw_add_item(m, 1, "v", 1);
	raw_add_entry(m, k, 0, 1, 1);
}

static bool
raw_opens(const RawModel *m, NbFormatError *e)
{
	size_t		size;
	unsigned char *bytes = raw_serialize(m, &size);
	NbView		v;
	bool		ok = nb_view_open(&v, bytes, size, e);

	free(bytes);
	return ok;
}

/* Each corruption of the length histograms of version 3 is rejected with its reason. */
static void
test_view_v3_lengths(void)
{
	static const struct
	{
		const char *what;
		uint32_t	j,
					c,
					i;
		double		length,
					weight;
		const char *reason;
	}			bad[] = {
		{"equal lengths", 0, 0, 1, 2, 1, "strictly increasing"},
		{"decreasing lengths", 0, 0, 1, 1, 1, "strictly increasing"},
		{"length 0", 0, 0, 0, 0, 1, "strictly increasing"},
		{"length -0", 0, 0, 0, -0.0, 1, "strictly increasing"},
		{"negative length", 0, 0, 0, -2, 1, "strictly increasing"},
		{"NaN length", 0, 0, 1, NAN, 1, "strictly increasing"},
		{"infinite length", 0, 0, 1, INFINITY, 1, "strictly increasing"},
		{"weight 0", 0, 1, 0, 3, 0, "invalid weight"},
		{"negative weight", 0, 1, 0, 3, -1, "invalid weight"},
		{"NaN weight", 0, 1, 0, 3, NAN, "invalid weight"},
		{"weight above the bag's rows", 0, 1, 0, 3, 1.5, "invalid weight"},
	};
	RawModel	m;
	NbFormatError e;
	size_t		size;
	unsigned char *bytes;
	NbView		v;
	uint64_t	h;
	size_t		pairs;

	v3_model(&m);
	CHECK(raw_opens(&m, &e), "control rejected: %s", e.message);
	raw_free(&m);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		v3_model(&m);
		m.f[bad[i].j].lengths[bad[i].c].value[bad[i].i] = bad[i].length;
		m.f[bad[i].j].lengths[bad[i].c].weight[bad[i].i] = bad[i].weight;
		CHECK(!raw_opens(&m, &e) && strstr(e.message, bad[i].reason) != NULL, "%s: %s", bad[i].what,
			  e.message);
		raw_free(&m);
	}

	/* lengths of a categorical feature */
	v3_model(&m);
	raw_add_length(&m, 1, 0, 1, 1);
	CHECK(!raw_opens(&m, &e) && strstr(e.message, "not a bag") != NULL, "categorical: %s", e.message);
	raw_free(&m);

	/* a version 3 model without a bag is version 2's to hold */
	v3_model(&m);
	raw_del_feature(&m, 0);
	CHECK(!raw_opens(&m, &e) && strstr(e.message, "must be format version 2") != NULL,
		  "no bag: %s", e.message);
	m.version = NB_FORMAT_VERSION_FEATURES;
	CHECK(raw_opens(&m, &e), "the same as version 2 rejected: %s", e.message);
	raw_free(&m);

	/* weights and weighted lengths whose sums overflow */
	v3_model(&m);
	m.c[0].docs = m.f[0].present[0] = 1.5e308;
	m.f[0].lengths[0].weight[0] = 1e308;
	m.f[0].lengths[0].weight[1] = 1e308;
	CHECK(!raw_opens(&m, &e) && strstr(e.message, "range of double precision") != NULL,
		  "weights: %s", e.message);
	m.f[0].lengths[0].weight[1] = 1;
	m.f[0].lengths[0].value[1] = 1e308;
	CHECK(!raw_opens(&m, &e) && strstr(e.message, "range of double precision") != NULL,
		  "weighted lengths: %s", e.message);
	raw_free(&m);

	/* H one more or one less than the pairs, behind a valid checksum */
	v3_model(&m);
	bytes = raw_serialize(&m, &size);
	raw_free(&m);
	CHECK(nb_view_open(&v, bytes, size, &e) && v.n_lengths == 3 &&
		  nb_view_length_pairs(&v, 0, 0) == 2 && nb_view_length_pairs(&v, 1, 0) == 0,
		  "control: %s", e.message);
	pairs = (size_t) (v.length_pairs - bytes);
	for (int d = -1; d <= 1; d += 2)
	{
		unsigned char *copy = malloc(size);

		memcpy(copy, bytes, size);
		h = 3 + d;
		nb_write_u32(copy + NB_HEADER_SIZE + 8, 0, (uint32_t) h);
		nbt_fix_checksum(copy, size);
		CHECK(!nb_view_open(&v, copy, size, &e), "H = %llu accepted", (unsigned long long) h);
		free(copy);
	}
	/* a pair count larger than H */
	{
		unsigned char *copy = malloc(size);

		memcpy(copy, bytes, size);
		nb_write_u32(copy + pairs, 0, UINT32_MAX);
		nbt_fix_checksum(copy, size);
		CHECK(!nb_view_open(&v, copy, size, &e) && strstr(e.message, "add up to more") != NULL,
			  "huge pair count: %s", e.message);
		free(copy);
	}
	free(bytes);
}

/*
 * The feature, item and entry iterators walk the mixed fixture in storage
 * order: color's values blue, red; tags' tokens t, u (the features by
 * name: color, flag, tags, x), each item with its entries.
 */
static void
test_view_item_iterators(void)
{
	size_t		size;
	unsigned char *buf = serialize_mix(mix, NMIX, &size);
	NbView		v;
	char		why[160];
	NbFeatureIter it;
	NbFeature	f;
	NbItemIter	items;
	NbItem		item;
	uint64_t	entries = 0;
	uint32_t	next_item = 0;
	static const char *const want[] = {"blue", "red", "t", "u"};
	static const uint32_t want_entries[] = {1, 2, 2, 1};

	CHECK_OR_DONE(open_view(&v, buf, size, why, sizeof(why)), "not a model: %s", why);
	it = nb_view_features(&v);
	while (nb_feature_next(&it, &f))
	{
		CHECK_OR_DONE(f.first_entry == entries, "feature %u starts at entry %llu, not %llu",
					  f.index, (unsigned long long) f.first_entry, (unsigned long long) entries);
		items = nb_feature_item_iter(&v, &f);
		while (nb_item_next(&items, &item))
		{
			CHECK_OR_DONE(next_item < 4 && item.index == next_item, "item %u out of order", item.index);
			CHECK_OR_DONE(item.len == strlen(want[next_item]) &&
						  memcmp(item.str, want[next_item], item.len) == 0,
						  "item %u is %.*s", item.index, (int) item.len, item.str);
			CHECK_OR_DONE(item.first_entry == entries && item.n_entries == want_entries[next_item],
						  "item %u has entries %llu + %u", item.index,
						  (unsigned long long) item.first_entry, item.n_entries);
			for (uint32_t i = 0; i < item.n_entries; i++)
			{
				NbEntry		en = nb_view_entry(&v, item.first_entry + i);

				CHECK_OR_DONE(en.cls == nb_read_u32(v.entry_class, item.first_entry + i) &&
							  en.count == nb_read_f64(v.entry_count, item.first_entry + i) &&
							  en.docs == nb_read_f64(v.entry_docs, item.first_entry + i),
							  "entry %llu read wrong", (unsigned long long) (item.first_entry + i));
			}
			entries += item.n_entries;
			next_item++;
		}
	}
	CHECK_OR_DONE(next_item == v.n_tokens && entries == v.n_entries,
				  "walked %u items and %llu entries of %u and %llu", next_item,
				  (unsigned long long) entries, v.n_tokens, (unsigned long long) v.n_entries);
	/* t: a (count 1), b (count 2) */
	CHECK_OR_DONE(nb_view_entry(&v, 3).cls == 0 && nb_view_entry(&v, 3).count == 1 &&
				  nb_view_entry(&v, 4).cls == 1 && nb_view_entry(&v, 4).count == 2,
				  "the entries of token t are not a: 1, b: 2");
done:
	free(buf);
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
		return write_corpus(argv[2]);
	if (argc == 2 && strcmp(argv[1], "--write-readings") == 0)
		return write_readings();
	if (getenv("NBT_FLIPS_PER_BYTE") != NULL)
	{
		flips_per_byte = atoi(getenv("NBT_FLIPS_PER_BYTE"));
		if (flips_per_byte < 1 || flips_per_byte > 8)
		{
			fprintf(stderr, "NBT_FLIPS_PER_BYTE must be 1 to 8\n");
			return 2;
		}
	}
	unit_init(argc, argv);
	run("format: size limit, base64 lengths (NB_MODEL_MAX_SIZE by hand)", test_format_size_limit);
	run("view: accepts trainer output and it is fully usable", test_view_accepts_samples);
	run("view: accepts values at any alignment", test_view_unaligned);
	run("view: feature, item and entry iterators walk the model in order", test_view_item_iterators);
	run("view: rejects every truncation", test_view_truncations);
	run("view: rejects trailing bytes", test_view_extensions);
	run("view: rejects every single-bit flip (checksum)", test_view_bitflips);
	run("view: single-bit flips with the checksum fixed are rejected or usable",
		test_view_bitflips_checksum_fixed);
	run("view: rejects corrupted structure behind a valid checksum", test_view_corrupt_structure);
	run("view v2: rejects corrupted feature structure behind a valid checksum",
		test_view_v2_corrupt_structure);
	run("view v2: prior-only and sparse feature models are valid and usable",
		test_view_v2_edge_shapes);
	run("view v2: a text-only model must be version 1 (one model, one byte string)",
		test_view_text_only_is_version_1);
	run("view v3: corrupted document length histograms are rejected", test_view_v3_lengths);
	run("view: inputs of bugs once tolerated by model_check.c are rejected, or valid and usable",
		test_view_once_known_bugs);
	run("corpus: every committed model (corpus/) is valid and reads as corpus-readings.txt says",
		test_corpus_readings);
	return unit_done();
}
