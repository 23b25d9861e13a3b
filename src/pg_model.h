/*
 * pg_model.h — nb_model datums: the expanded (mutable) form and validated
 * read access to the flat form.
 *
 * The aggregates' transition state is an nb_model, kept as a read/write
 * expanded object (see utils/expandeddatum.h) that wraps an NbTrainer and is
 * updated in place from row to row; it is serialized only when it has to
 * leave the aggregate (result, parallel worker, hash spill, Citus).
 *
 * Merging (nb_merge and every combine function) needs no trainer: such a
 * model keeps its inputs flat and validated, merges them as sorted runs
 * (nb_merge.h) when it is flattened or when NB_MERGE_FANIN have come in,
 * and becomes a trainer only if rows are added to it.
 */
#ifndef PG_MODEL_H
#define PG_MODEL_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/expandeddatum.h"
#include "utils/jsonb.h"

#include "nb_format.h"
#include "nb_merge.h"
#include "nb_trainer.h"

/*
 * Inputs merged at once: more means fewer passes over the merged part,
 * fewer means less memory for inputs held flat.  32 takes the partial
 * states of a Citus table's 32 shards (its default) in one merge.
 */
#define NB_MERGE_FANIN 32

typedef struct NbExpandedModel
{
	ExpandedObjectHeader hdr;
	NbTrainer  *trainer;		/* NULL while the model only merges flat inputs */
	/* flat inputs of a merging model, validated, in its context, in order */
	struct varlena *input[NB_MERGE_FANIN];
	NbView		view[NB_MERGE_FANIN];	/* view[i] points into input[i] */
	uint32		n_inputs;
	bool		merged;			/* input[0] is all inputs merged: the flat form */
	NbTokenRef *refs;			/* scratch: the current row's tokens */
	uint32		refs_cap;
} NbExpandedModel;

/*
 * A new empty expanded model in its own context under parent; merging flat
 * models, it has no trainer until rows come.
 */
NbExpandedModel *nb_expanded_create(MemoryContext parent, bool merging);

/*
 * The trainer of an expanded model, built from the inputs merged so far
 * if it has none yet: for adding rows.
 */
NbTrainer  *nb_expanded_trainer(NbExpandedModel *em);

/*
 * Add the model datum d (flat, toasted or expanded): every count into the
 * trainer, or as flat input if merging.
 */
void		nb_expanded_add(NbExpandedModel *em, Datum d);

/* The model of the union of n (1..NB_MERGE_FANIN) model datums, flat, in the current context. */
struct varlena *nb_model_merge(const Datum *d, int n);

/* Is d a read/write expanded model whose context hangs directly off parent? */
NbExpandedModel *nb_expanded_owned(Datum d, MemoryContext parent);

/*
 * ERROR: a model of size bytes (0: not known exactly) would pass
 * NB_MODEL_MAX_SIZE, the limit that keeps every model dumpable.
 */
void		nb_report_too_large(uint64 size);

/*
 * ERROR 0A000 if view is a model of mixture components (EM-CM), which
 * function cannot take: its components match no other model's.
 */
void		nb_refuse_components(const NbView *view, const char *function);

/*
 * A model value for a serialized model of size bytes (0, as the size
 * functions give for one past NB_MODEL_MAX_SIZE: nb_report_too_large),
 * allocated in ctx with nb_alloc, so that a large result gets huge pages
 * (see pg_alloc.c).  Its header is set; the caller writes VARDATA.
 */
struct varlena *nb_model_alloc(size_t size, MemoryContext ctx);

/*
 * A training model's flat form, as flattening writes it, in ctx, and the
 * view of it (nb_trainer_write_view): for a caller that reads the model it
 * has just written, which need not validate it again.  Raises the errors
 * flattening raises (sums not finite, a model too large).
 */
struct varlena *nb_expanded_write(NbExpandedModel *em, MemoryContext ctx, NbView *view);

/*
 * The model datum with options (NULL: none) as its stored prediction
 * options, in the current context (nb_with_options, pg_settings.c).
 */
struct varlena *nb_model_with_options(Datum model, Jsonb *options);

/*
 * ERROR 22023 if status says that models of these kinds of rows
 * (NB_INPUT_*) or settings cannot be merged, or the second subtracted from
 * the first; nothing otherwise.
 */
void		nb_report_incompatible(bool subtract, NbMergeStatus status, uint32 kinds_a,
								   uint32 kinds_b);

/*
 * The classes of the model datum d (flat, toasted or expanded) and its
 * documents (the sum of the rows' weights), read from a training state
 * without writing its flat form.
 */
void		nb_model_class_totals(Datum d, uint32 *classes, double *documents);

/*
 * Raise an error if training made a count overflow to infinity or a
 * weighted count underflow to 0, or the model pass NB_MODEL_MAX_SIZE.
 */
void		nb_expanded_check(NbExpandedModel *em);

/*
 * ERROR 22023 if the model has no class: the model of rows that all had a
 * NULL label, which keeps their count and nothing to score with.
 */
void		nb_model_require_classes(const NbView *view);

/*
 * Detoast a model datum and validate it.  The result view points into the
 * returned varlena.  On invalid bytes: ERROR with the given SQLSTATE.
 */
struct varlena *nb_model_open(Datum d, NbView *view, int sqlstate);

/*
 * The same, but a training state's flat form is written with its view
 * (nb_expanded_write), which needs no validation: for sending a partial state.
 */
struct varlena *nb_model_open_written(Datum d, NbView *view);

/*
 * Validate raw payload bytes as a model.  Bytes from outside the server
 * (the type's input and receive functions) are checked further: their
 * strings' encoding, and their stored options as scoring will parse them
 * (nb_check_stored_options).
 */
void		nb_model_validate_bytes(const char *data, size_t size, NbView *view,
									int sqlstate, bool from_outside);

/*
 * Base64 text in memory (the text forms of nb_model and nb_metrics_state),
 * read in chunks with a check for a cancel after each: the bytes str[0, len)
 * decodes to (false if it cannot be base64, white space not counted), then
 * its decoding into dst of exactly size bytes (false unless it is that).
 */
bool		nb_base64_text_size(const char *str, size_t len, uint64 *size);
bool		nb_base64_text_decode(const char *str, size_t len, char *dst, uint64 size);

/* The base64 text of size bytes into out (nb_base64_len(size) characters, returned), likewise. */
size_t		nb_base64_text_encode(const char *data, size_t size, char *out);

#endif
