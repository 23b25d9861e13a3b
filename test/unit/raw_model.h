/*
 * raw_model.h — an unvalidated, editable form of a serialized model.
 *
 * Used to build values field by field from the layout documented in
 * src/nb_format.h (independently of nb_trainer_write), to corrupt their
 * structure on purpose in the unit tests, and by the fuzzer's custom
 * mutator to make structural changes.  raw_write always produces header
 * counts that match the arrays and a correct checksum; nothing else about
 * the content is checked or fixed (labels may be unsorted, classes out of
 * range, counts NaN, ...).
 */
#ifndef RAW_MODEL_H
#define RAW_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct RawEntry
{
	uint32_t	cls;
	double		count;
	double		docs;
} RawEntry;

typedef struct RawString
{
	unsigned char *s;
	uint32_t	len;
} RawString;

typedef struct RawClass
{
	RawString	label;
	double		docs;
} RawClass;

typedef struct RawToken
{
	RawString	str;
	uint32_t	n;
	RawEntry   *e;
} RawToken;

typedef struct RawModel
{
	uint32_t	nc;
	uint32_t	nt;
	RawClass   *c;
	RawToken   *t;
} RawModel;

void		raw_init(RawModel *m);
void		raw_free(RawModel *m);

/*
 * Parse a value whose sizes are consistent (header counts fit, string
 * lengths add up, token entry counts add up to E); contents unchecked.
 */
bool		raw_parse(RawModel *m, const unsigned char *buf, size_t size);

/* Serialized size (may be huge: the caller checks it). */
uint64_t	raw_size(const RawModel *m);

/* Write raw_size(m) bytes, with a correct header and checksum. */
void		raw_write(const RawModel *m, unsigned char *buf);

/* Convenience: write into a new malloc'ed buffer. */
unsigned char *raw_serialize(const RawModel *m, size_t *size);

uint32_t	raw_add_class(RawModel *m, const char *label, uint32_t len, double docs);
uint32_t	raw_add_token(RawModel *m, const char *str, uint32_t len);
void		raw_add_entry(RawModel *m, uint32_t token, uint32_t cls, double count, double docs);

/* Insert a copy of token i (or class i) right after it; remove token i / class i. */
void		raw_dup_token(RawModel *m, uint32_t i);
void		raw_del_token(RawModel *m, uint32_t i);
void		raw_dup_class(RawModel *m, uint32_t i);
void		raw_del_class(RawModel *m, uint32_t i);
void		raw_set_string(RawString *s, const unsigned char *bytes, uint32_t len);

#endif
