/*
 * test_pack.c — unit tests of the packed form of a model (src/nb_pack.c):
 * round trips of trainer output of every kind and of doubles at the edges
 * of the whole-number coding, the bound, and packed bytes cut short or
 * with a bit flipped, which unpack to nothing or to bytes the reader
 * rejects (or to the model itself).
 *
 *   ./test_pack              run every test
 *   ./test_pack WORD         run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "nb_pack.h"
#include "unit.h"

#define NMODELS 6

/*
 * Trainer output: the toy model, weighted rows, a random model, a mixed one
 * with real values, the toy model with rows skipped for a NULL label
 * (format version 4, flag 4) and a model of such rows alone (no class).
 */
static unsigned char *
sample(int which, size_t *size)
{
	static const Row weighted[] = {{"a", 0.25, {"x", "y", "x"}}, {"b", 3, {"y", "z"}}};
	RandRow    *rows;
	RandMix    *mix;
	unsigned char *buf;
	NbTrainer  *t;

	if (which == 0)
		return serialize_rows(toy, NTOY, size);
	if (which >= 4)
	{
		t = which == 4 ? train_rows(toy, NTOY) : nb_trainer_create();
		nb_trainer_count_null_labels(t, 3);
		buf = serialize(t, size);
		nb_trainer_destroy(t);
		return buf;
	}
	if (which == 1)
		return serialize_rows(weighted, 2, size);
	if (which == 2)
	{
		rows = malloc(sizeof(RandRow) * 200);
		rand_rows(rows, 200, 5, 300, 7, false);
		buf = serialize_rand(rows, NULL, 200, size);
		free(rows);
		return buf;
	}
	mix = malloc(sizeof(RandMix) * 50);
	rand_mix(mix, 50, 3, 11, false);
	buf = serialize_rand_mix(mix, NULL, 50, size);
	free(mix);
	return buf;
}

/* Pack the view of the size bytes at data; malloc'd, *n bytes. */
static unsigned char *
pack(const NbView *view, const unsigned char *data, size_t *n)
{
	unsigned char *out = malloc(nb_pack_bound(view->size));

	*n = nb_pack(view, data, out);
	return out;
}

/* Whether the n packed bytes at in unpack to exactly the size bytes at want. */
static bool
unpacks_to(const unsigned char *in, size_t n, const unsigned char *want, size_t size)
{
	uint64_t	declared;
	unsigned char *out;
	bool		same;

	if (!nb_packed_size(in, n, &declared) || declared != size)
		return false;
	out = malloc(size + 1);
	same = nb_unpack(in, n, out, size) && memcmp(out, want, size) == 0;
	free(out);
	return same;
}

static void
test_pack_round_trip(void)
{
	for (int m = 0; m < NMODELS; m++)
	{
		size_t		size,
					n;
		unsigned char *buf = sample(m, &size);
		unsigned char *packed;
		NbView		view;
		char		why[160];
		bool		ok;

		CHECK(open_view(&view, buf, size, why, sizeof(why)), "sample %d: %s", m, why);
		packed = pack(&view, buf, &n);
		ok = n <= nb_pack_bound(size) && unpacks_to(packed, n, buf, size);
		note("sample %d: %zu bytes, packed %zu", m, size, n);
		free(packed);
		free(buf);
		CHECK(ok, "sample %d does not unpack to its bytes", m);
		/* counts of whole numbers pack to a fraction of the model */
		CHECK(m != 2 || n * 2 < size, "the random model packs to %zu of %zu bytes", n, size);
	}
}

/* Doubles at the edges of the whole-number coding, as a model's class_docs. */
static void
test_pack_doubles(void)
{
	const double values[] = {0, -0.0, 1, 0.5, 3, 9007199254740991.0, 9007199254740992.0,
		9007199254740994.0, 18446744073709551616.0, -1, DBL_MIN, DBL_MAX, INFINITY, NAN};
	int			nv = sizeof(values) / sizeof(values[0]);
	size_t		size = NB_HEADER_SIZE + 8 * nv,
				n;
	unsigned char *buf = calloc(size, 1);
	unsigned char *packed;
	NbView		view;
	bool		ok;

	memset(&view, 0, sizeof(view));
	for (int i = 0; i < nv; i++)
		nb_write_f64(buf + NB_HEADER_SIZE, i, values[i]);
	view.size = size;
	view.n_classes = nv;
	view.class_docs = buf + NB_HEADER_SIZE;
	packed = pack(&view, buf, &n);
	ok = unpacks_to(packed, n, buf, size);
	free(packed);
	free(buf);
	CHECK(ok, "the doubles do not come back bit for bit");
}

/*
 * Every cut of a packed model fails to unpack, and every single-bit flip
 * unpacks to nothing, to bytes the reader rejects, or to the model itself.
 */
static void
test_pack_damage(void)
{
	size_t		size,
				n;
	unsigned char *buf = sample(1, &size);
	unsigned char *packed = NULL;
	unsigned char *out = malloc(size);
	NbView		view;
	char		why[160];
	uint64_t	declared;

	CHECK_OR_DONE(open_view(&view, buf, size, why, sizeof(why)), "%s", why);
	packed = pack(&view, buf, &n);
	for (size_t cut = 0; cut < n; cut++)
		CHECK_OR_DONE(!nb_packed_size(packed, cut, &declared) || declared != size ||
					  !nb_unpack(packed, cut, out, declared), "a cut at %zu unpacks", cut);
	for (size_t bit = 0; bit < n * 8; bit++)
	{
		packed[bit / 8] ^= 1 << bit % 8;
		if (nb_packed_size(packed, n, &declared) && declared == size &&
			nb_unpack(packed, n, out, size))
			CHECK_OR_DONE(!open_view(&view, out, size, why, sizeof(why)) ||
						  memcmp(out, buf, size) == 0, "bit %zu flipped gives another valid model", bit);
		packed[bit / 8] ^= 1 << bit % 8;
	}
done:
	free(packed);
	free(out);
	free(buf);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("pack: trainer output of every kind unpacks to its bytes, within the bound",
		test_pack_round_trip);
	run("pack: doubles at the edges of the whole-number coding come back bit for bit",
		test_pack_doubles);
	run("pack: cuts and bit flips never unpack to another valid model", test_pack_damage);
	return unit_done();
}
