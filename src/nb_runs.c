/*
 * nb_runs.c — building a model out of the sorted runs of others, see
 * nb_runs.h.
 */
#include "nb_runs.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_feature_type.h"
#include "nb_interrupt.h"

void
nb_run_out_alloc(NbRunOut *o, uint64_t max_items, uint64_t max_entries, size_t max_bytes)
{
	o->token_len = nb_alloc(max_items * 4 + 1);
	o->token_entries = nb_alloc(max_items * 4 + 1);
	o->entry_class = nb_alloc(max_entries * 4 + 1);
	o->entry_count = nb_alloc(max_entries * 8 + 1);
	o->entry_docs = nb_alloc(max_entries * 8 + 1);
	o->tokens_start = nb_alloc(max_bytes + 1);
	o->tokens = o->tokens_start;
	o->k = 0;
	o->e = 0;
	o->work = 0;
}

void
nb_plan_alloc_classes(NbPlan *p, size_t room)
{
	p->label = nb_alloc(sizeof(char *) * (room + 1));
	p->label_len = nb_alloc(sizeof(uint32_t) * (room + 1));
	p->class_docs = nb_alloc_zero(sizeof(double) * (room + 1));
}

void
nb_plan_alloc_features(NbPlan *p, size_t room)
{
	p->name = nb_alloc(sizeof(char *) * (room + 1));
	p->name_len = nb_alloc(sizeof(uint32_t) * (room + 1));
}

void
nb_plan_alloc_stats(NbPlan *p)
{
	size_t		fc = (size_t) p->F * p->C + 1;

	p->type = nb_alloc(sizeof(uint32_t) * ((size_t) p->F + 1));
	p->items = nb_alloc_zero(sizeof(uint32_t) * ((size_t) p->F + 1));
	p->present = nb_alloc_zero(sizeof(double) * fc);
	p->fa = nb_alloc_zero(sizeof(double) * fc);
	p->fb = nb_alloc_zero(sizeof(double) * fc);
	p->rows = nb_alloc_zero(sizeof(double) * ((size_t) p->F + 1));
	p->mean = nb_alloc_zero(sizeof(double) * ((size_t) p->F + 1));
	p->m2 = nb_alloc_zero(sizeof(double) * ((size_t) p->F + 1));
}

void
nb_plan_alloc_lengths(NbPlan *p, uint64_t max_pairs)
{
	p->lengths = true;
	p->length_pairs = nb_alloc_zero(sizeof(uint32_t) * ((size_t) p->F * p->C + 1));
	p->length_value = nb_alloc(sizeof(double) * (max_pairs + 1));
	p->length_weight = nb_alloc(sizeof(double) * (max_pairs + 1));
}

uint64_t *
nb_length_starts(const NbView *v)
{
	uint64_t	fc = (uint64_t) v->n_features * v->n_classes;
	uint64_t   *start = nb_alloc(sizeof(uint64_t) * (fc + 1));

	start[0] = 0;
	for (uint64_t x = 0; x < fc; x++)
	{
		nb_interrupt_at(x);
		start[x + 1] = start[x] + (nb_view_has_lengths(v) ? nb_view_length_pairs_at(v, x) : 0);
	}
	return start;
}

static void
plan_rows(const void *model, uint32_t c, double *docs, double *present)
{
	*docs = ((const NbPlan *) model)->class_docs[c];
	*present = ((const NbPlan *) model)->present[c];
}

/* The plan's arrays have room for one feature even when it has none. */
bool
nb_plan_is_text_only(const NbPlan *p)
{
	return nb_format_text_only(p, p->F, p->name_len[0], (NbFeatureType) p->type[0], p->C,
							   plan_rows);
}

/*
 * Every field not set here is zero: a format feature the plan does not know
 * of (a statistic of whole rows) is left out rather than copied, as the
 * rows of the result would not have it.
 */
static NbFormatShape
plan_shape(const NbPlan *p)
{
	NbFormatShape s;

	memset(&s, 0, sizeof(s));
	s.n_classes = p->C;
	s.n_tokens = (uint32_t) p->V;
	s.n_entries = p->E;
	s.n_features = p->F;
	s.vector_len = p->vector_len;
	s.label_bytes = p->label_bytes;
	s.token_bytes = p->token_bytes;
	s.name_bytes = p->name_bytes;
	s.text_only = p->text_only;
	s.lengths = p->lengths;
	s.n_lengths = p->lengths ? p->H : 0;
	s.settings = p->settings;
	/* a plan without the bag "" (pruned or subtracted away) has no bag of jsonb rows */
	if (p->F == 0 || p->name_len[0] != 0 || p->type[0] != NB_FEATURE_BAG)
		s.settings.jsonb_bag = false;
	return s;
}

size_t
nb_plan_size(const NbPlan *p, size_t max_size)
{
	NbFormatShape s = plan_shape(p);

	return nb_format_size(&s, max_size);
}

void
nb_plan_write_begin(const NbPlan *p, unsigned char *buf, size_t size, NbFormatWriter *w)
{
	NbFormatShape shape = plan_shape(p);
	char	   *strings;
	uint64_t	work = 0;

	nb_format_begin(w, &shape, buf, size);
	if (p->lengths)
	{
		for (uint64_t x = 0; x < (uint64_t) p->F * p->C; x++)
			nb_write_u32(w->length_pairs, x, p->length_pairs[x]);
		for (uint64_t h = 0; h < p->H; h++)
		{
			nb_interrupt_at(h);
			nb_write_f64(w->length_value, h, p->length_value[h]);
			nb_write_f64(w->length_weight, h, p->length_weight[h]);
		}
	}
	if (w->feature_name_len != NULL)
	{
		for (uint32_t j = 0; j < p->F; j++)
		{
			nb_write_u32(w->feature_name_len, j, p->name_len[j]);
			nb_write_u32(w->feature_type, j, p->type[j]);
			nb_write_u32(w->feature_items, j, p->items[j]);
			nb_write_f64(w->feature_rows, j, p->rows[j]);
			nb_write_f64(w->feature_mean, j, p->mean[j]);
			nb_write_f64(w->feature_m2, j, p->m2[j]);
		}
		for (uint64_t x = 0; x < (uint64_t) p->F * p->C; x++)
		{
			nb_interrupt_at(x);
			nb_write_f64(w->feature_present, x, p->present[x]);
			nb_write_f64(w->feature_a, x, p->fa[x]);
			nb_write_f64(w->feature_b, x, p->fb[x]);
		}
		strings = w->feature_names;
		for (uint32_t j = 0; j < p->F; j++)
		{
			memcpy(strings, p->name[j], p->name_len[j]);
			strings += p->name_len[j];
		}
	}
	strings = w->labels;
	for (uint32_t c = 0; c < p->C; c++)
	{
		nb_interrupt_count(&work, 1 + p->label_len[c] / 64);
		nb_write_f64(w->class_docs, c, p->class_docs[c]);
		nb_write_u32(w->label_len, c, p->label_len[c]);
		memcpy(strings, p->label[c], p->label_len[c]);
		strings += p->label_len[c];
	}
}

void
nb_run_out_at(NbRunOut *o, const NbFormatWriter *w)
{
	o->token_len = w->token_len;
	o->token_entries = w->token_entries;
	o->entry_class = w->entry_class;
	o->entry_count = w->entry_count;
	o->entry_docs = w->entry_docs;
	o->tokens_start = w->tokens;
	o->tokens = w->tokens;
	o->k = 0;
	o->e = 0;
	o->work = 0;
}

void
nb_plan_write(const NbPlan *p, unsigned char *buf, size_t size, NbView *out)
{
	NbFormatWriter w;

	nb_plan_write_begin(p, buf, size, &w);
	nb_copy(w.token_len, p->out.token_len, p->V * 4);
	nb_copy(w.token_entries, p->out.token_entries, p->V * 4);
	nb_copy(w.entry_class, p->out.entry_class, p->E * 4);
	nb_copy(w.entry_count, p->out.entry_count, p->E * 8);
	nb_copy(w.entry_docs, p->out.entry_docs, p->E * 8);
	nb_copy(w.tokens, p->out.tokens_start, p->token_bytes);
	nb_format_finish(&w, out);
}

void
nb_plan_free(NbPlan *p)
{
	nb_free(p->label);
	nb_free(p->label_len);
	nb_free(p->class_docs);
	nb_free(p->name);
	nb_free(p->name_len);
	nb_free(p->type);
	nb_free(p->items);
	nb_free(p->present);
	nb_free(p->fa);
	nb_free(p->fb);
	nb_free(p->rows);
	nb_free(p->mean);
	nb_free(p->m2);
	/* a plan whose items are written straight into the model has no out */
	if (p->out.token_len != NULL)
	{
		nb_free(p->out.token_len);
		nb_free(p->out.token_entries);
		nb_free(p->out.entry_class);
		nb_free(p->out.entry_count);
		nb_free(p->out.entry_docs);
		nb_free(p->out.tokens_start);
	}
	if (p->lengths)
	{
		nb_free(p->length_pairs);
		nb_free(p->length_value);
		nb_free(p->length_weight);
	}
}

void
nb_plan_destroy(NbPlan *p)
{
	nb_plan_free(p);
	nb_free(p);
}

uint32_t
nb_run_end(const NbView *v, const NbCursor *cur, uint32_t end, const NbHead *other)
{
	uint32_t	k = cur->item + 1;
	size_t		off = cur->off + nb_view_token_len(v, cur->item);

	while (k < end)
	{
		NbHead		h;

		nb_head_set(&h, v, 0, k, off);
		if (nb_head_cmp(&h, other) >= 0)
			break;
		off += h.len;
		k++;
	}
	return k;
}

void
nb_copy_run(const NbView *v, const uint32_t *cmap, uint32_t C, NbCursor *cur,
			uint64_t r, NbRunOut *o)
{
	uint32_t	k = cur->item;
	uint64_t	e = cur->entry;
	uint64_t	ne = 0;
	size_t		bytes = 0;

	for (uint64_t x = 0; x < r; x++)
	{
		bytes += nb_view_token_len(v, k + x);
		ne += nb_view_token_entries(v, k + x);
	}
	memcpy(o->token_len + o->k * 4, v->token_len + (uint64_t) k * 4, r * 4);
	memcpy(o->token_entries + o->k * 4, v->token_entries + (uint64_t) k * 4, r * 4);
	memcpy(o->tokens, v->tokens + cur->off, bytes);
	if (v->n_classes == C)
		memcpy(o->entry_class + o->e * 4, v->entry_class + e * 4, ne * 4);
	else
		for (uint64_t x = 0; x < ne; x++)
			nb_write_u32(o->entry_class, o->e + x, cmap[nb_view_entry_class(v, e + x)]);
	memcpy(o->entry_count + o->e * 8, v->entry_count + e * 8, ne * 8);
	memcpy(o->entry_docs + o->e * 8, v->entry_docs + e * 8, ne * 8);
	o->tokens += bytes;
	o->k += r;
	o->e += ne;
	cur->item += (uint32_t) r;
	cur->entry += ne;
	cur->off += bytes;
	nb_interrupt_count(&o->work, r + ne);
}
