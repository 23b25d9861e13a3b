/*
 * pg_options.h — the prediction options jsonb.
 */
#ifndef PG_OPTIONS_H
#define PG_OPTIONS_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "nb_format.h"
#include "nb_scorer.h"
#include "nb_settings.h"

/*
 * Parse options (NULL = all defaults) for a model.  A class_prior array is
 * allocated in CurrentMemoryContext.  Every malformed option is an ERROR
 * with SQLSTATE 22023.
 */
void		nb_parse_options(Jsonb *options, const NbIndex *index, NbOptions *opts);

/*
 * Options to keep in a model (nb_with_options): checked against it as
 * nb_parse_options checks them, and written as the canonical text the model
 * stores, every number as the shortest decimal of its float8 value (the
 * value the options use), so that equal options are equal bytes.  Sets
 * *len; the text is not terminated.
 */
char	   *nb_options_canonical(Jsonb *options, const NbIndex *index, uint32 *len);

/* The stored options of a model as jsonb (ERROR 22P02 if they are not valid JSON). */
Jsonb	   *nb_stored_options_jsonb(const NbSettings *settings);

/*
 * Check a model's stored options as scoring parses them (nb_parse_options
 * against the model's classes and features, pg_prepared.c), so that no
 * value of the type fails every call later: the type's input functions
 * check bytes from outside, and nb_subtract, which can leave fewer classes
 * and features than the options name or need, checks what it made (the
 * other writers keep every class, and every trait the options need: a bag,
 * the lengths).  If they are refused: an ERROR with sqlstate, the primary
 * message refusal, a detail saying what is wrong with them and hint (if
 * not NULL).
 */
void		nb_check_stored_options(const NbView *view, int sqlstate, const char *refusal,
									const char *hint);

#endif
