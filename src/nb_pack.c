/*
 * nb_pack.c — the packed form of a serialized model (see nb_pack.h).
 */
#include "nb_pack.h"

#include "nb_interrupt.h"

#define PACK_MAGIC "NBCP"
#define PACK_MAGIC_LEN 4
#define PACK_RAW 0
#define PACK_U32 1
#define PACK_F64 2
#define PACK_F64_BYTES 1		/* a double's varint: its 8 bytes follow */
#define PACK_WHOLE_MAX 9007199254740992.0	/* 2^53: every whole number up to it is a double */
#define PACK_VARINT_MAX 10		/* bytes of a 64-bit varint */

/* The number of fixed-width sections, and a segment header for each and a gap before each. */
#define COUNT_SECTION(name, width, count, since) + 1
#define PACK_SECTIONS (0 NB_SECTIONS(COUNT_SECTION))
#define PACK_SEGMENTS (2 * PACK_SECTIONS + 1)

size_t
nb_pack_bound(size_t size)
{
	/* a 4-byte number takes at most 5 bytes, a double 9, any other byte 1 */
	return PACK_MAGIC_LEN + PACK_VARINT_MAX * (1 + PACK_SEGMENTS) + size + size / 4;
}

static unsigned char *
put_varint(unsigned char *o, uint64_t v)
{
	while (v >= 0x80)
	{
		*o++ = (unsigned char) (v | 0x80);
		v >>= 7;
	}
	*o++ = (unsigned char) v;
	return o;
}

static unsigned char *
put_bytes(unsigned char *o, const unsigned char *p, uint64_t n)
{
	if (n == 0)
		return o;
	o = put_varint(o, n << 2 | PACK_RAW);
	nb_copy(o, p, n);
	return o + n;
}

static unsigned char *
put_double(unsigned char *o, const unsigned char *at)
{
	double		d = nb_read_f64(at, 0);

	if (d >= 0 && d <= PACK_WHOLE_MAX && d == (double) (uint64_t) d && !signbit(d))
		return put_varint(o, (uint64_t) d << 1);
	*o++ = PACK_F64_BYTES;
	memcpy(o, at, 8);
	return o + 8;
}

/* Packing in progress: the model's bytes from pos to end are still to pack, into o. */
typedef struct Packer
{
	const unsigned char *pos;
	const unsigned char *end;
	unsigned char *o;
} Packer;

/*
 * Pack the bytes up to the section at at as they are, then its n numbers of
 * width bytes; nothing if the section does not lie in the bytes still to
 * pack (a version 1 view's implied sections lie elsewhere).
 */
static void
pack_section(Packer *p, const unsigned char *at, uint64_t n, int width)
{
	uintptr_t	a = (uintptr_t) at;

	if (at == NULL || n == 0 || a < (uintptr_t) p->pos || a > (uintptr_t) p->end ||
		n > ((uintptr_t) p->end - a) / width)
		return;
	p->o = put_bytes(p->o, p->pos, (uint64_t) (at - p->pos));
	p->o = put_varint(p->o, n << 2 | (width == 4 ? PACK_U32 : PACK_F64));
	for (uint64_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		p->o = width == 4 ? put_varint(p->o, nb_read_u32(at, i)) : put_double(p->o, at + i * 8);
	}
	p->pos = at + n * width;
}

size_t
nb_pack(const NbView *view, const unsigned char *data, unsigned char *out)
{
	NbSectionCounts n = nb_section_counts(view->n_classes, view->n_tokens, view->n_entries,
										  view->n_features, view->n_lengths);
	Packer		p = {data, data + view->size, out + PACK_MAGIC_LEN};

	memcpy(out, PACK_MAGIC, PACK_MAGIC_LEN);
	p.o = put_varint(p.o, view->size);
#define PACK_SECTION(name, width, count, since) pack_section(&p, view->name, n.count, (width));
	NB_SECTIONS(PACK_SECTION)
#undef PACK_SECTION
	p.o = put_bytes(p.o, p.pos, (uint64_t) (p.end - p.pos));
	return (size_t) (p.o - out);
}

/* Packed bytes being read: from p to end. */
typedef struct PackReader
{
	const unsigned char *p;
	const unsigned char *end;
} PackReader;

static bool
get_varint(PackReader *r, uint64_t *v)
{
	uint64_t	x = 0;

	for (int shift = 0; shift < 7 * PACK_VARINT_MAX && r->p < r->end; shift += 7)
	{
		unsigned char b = *r->p++;

		if (shift < 64)
			x |= (uint64_t) (b & 0x7f) << shift;
		if (!(b & 0x80))
		{
			*v = x;
			return true;
		}
	}
	return false;
}

static bool
get_bytes(PackReader *r, unsigned char *out, uint64_t n)
{
	if (n > (uint64_t) (r->end - r->p))
		return false;
	nb_copy(out, r->p, n);
	r->p += n;
	return true;
}

/* n numbers of a section of width 4 (varints) or 8 (doubles) into out. */
static bool
get_numbers(PackReader *r, unsigned char *out, uint64_t n, int width)
{
	uint64_t	v;

	for (uint64_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		if (!get_varint(r, &v))
			return false;
		if (width == 4)
		{
			if (v > UINT32_MAX)
				return false;
			nb_write_u32(out, i, (uint32_t) v);
		}
		else if (v == PACK_F64_BYTES)
		{
			if (!get_bytes(r, out + i * 8, 8))
				return false;
		}
		else if (v % 2 == 0 && (double) (v >> 1) <= PACK_WHOLE_MAX)
			nb_write_f64(out, i, (double) (v >> 1));
		else
			return false;
	}
	return true;
}

bool
nb_packed_size(const unsigned char *in, size_t n, uint64_t *size)
{
	PackReader	r = {in + PACK_MAGIC_LEN, in + n};

	return n >= PACK_MAGIC_LEN && memcmp(in, PACK_MAGIC, PACK_MAGIC_LEN) == 0 &&
		get_varint(&r, size);
}

bool
nb_unpack(const unsigned char *in, size_t n, unsigned char *out, uint64_t size)
{
	PackReader	r = {in + PACK_MAGIC_LEN, in + n};
	uint64_t	pos = 0;
	uint64_t	h;

	if (!nb_packed_size(in, n, &h) || h != size)
		return false;
	(void) get_varint(&r, &h);
	while (r.p < r.end)
	{
		static const int width[] = {1, 4, 8};
		uint64_t	count;
		bool		ok;

		if (!get_varint(&r, &h) || h % 4 > PACK_F64)
			return false;
		count = h >> 2;
		if (count > (size - pos) / width[h % 4])
			return false;
		ok = h % 4 == PACK_RAW ? get_bytes(&r, out + pos, count) :
			get_numbers(&r, out + pos, count, width[h % 4]);
		if (!ok)
			return false;
		pos += count * width[h % 4];
	}
	return pos == size;
}
