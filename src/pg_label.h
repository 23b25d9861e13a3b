/*
 * pg_label.h — a row's class label as text, whatever the type of its column,
 * and a label (or another string a user gives) as an error message quotes it.
 */
#ifndef PG_LABEL_H
#define PG_LABEL_H

#include "postgres.h"

#include "fmgr.h"

/*
 * Argument arg of the call, a label, as text: a text argument as it is; an
 * argument of another type (declared anynonarray) as label::text makes it,
 * by the cast to text or else the type's output function.  The conversion
 * found for the argument's type is kept in *cache (in fn_mcxt), NULL at
 * first: the call's fn_extra, or a field of what the caller keeps there.
 * Not for a NULL argument.
 */
text	   *nb_label_arg(FunctionCallInfo fcinfo, int arg, void **cache);

/*
 * Is the text nb_label_arg makes of a label of type independent of the
 * session's state?  An integer's or a boolean's is; a timestamptz's
 * follows TimeZone and DateStyle, a date's DateStyle (STABLE output
 * functions), a float8's extra_float_digits (though declared IMMUTABLE).
 */
bool		nb_label_text_is_fixed(Oid type);

/* The most bytes of a user's string that a message quotes (see nb_cut_str). */
#define NB_QUOTE_BYTES 64

/*
 * A user's string of len bytes in the database encoding (a label, a token,
 * a feature, option or model name) as a message quotes it: whole up to
 * NB_QUOTE_BYTES bytes, else its first NB_QUOTE_BYTES at most, cut at a
 * character boundary, and "...".  PostgreSQL cuts a value in a message the
 * same way ("Failing row contains", ExecBuildSlotValueDescription: 64 bytes
 * with pg_mbcliplen), so that a 100 MB label does not write a 100 MB log
 * line.  NUL-terminated, in CurrentMemoryContext.
 */
char	   *nb_cut_str(const char *s, size_t len);

#endif
