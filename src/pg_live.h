/*
 * pg_live.h — what the two files of live models share (pg_live.c opens,
 * queries and reads them, pg_live_fold.c records the statements' changes
 * and folds them): the context of their work, the model's settings, and
 * the steps each file's entry points use from the other.
 */
#ifndef PG_LIVE_H
#define PG_LIVE_H

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/rel.h"

/* The extension's schema (quoted), and the caller's identity. */
typedef struct LiveContext
{
	const char *nsp;
	Oid			nsp_oid;
	int			guc_level;
	Oid			save_user;
	int			save_sec;
} LiveContext;

/* A live model: its table and the settings of its base row. */
typedef struct LiveModel
{
	Oid			state;
	const char *table;			/* its qualified, quoted name */
	Oid			owner;
	Oid			source;
	char	   *tokenizer;		/* jsonb text, or NULL */
	int32		fold_after;
	int64		folded_through; /* the largest id the last fold took */
	char	   *triggers;		/* the prefix of its triggers' names */
	bool		weighted;		/* has a weight column: set by live_weigh */
} LiveModel;

typedef void (*LiveStep) (LiveContext *c, const LiveModel *m, void *out);

void		live_begin(LiveContext *c, FunctionCallInfo fcinfo);
void		live_end(LiveContext *c);
void		live_as_role(LiveContext *c, Oid role);
void		live_as_caller(LiveContext *c);
Oid			live_model_type(LiveContext *c);
Oid			live_rel_owner(Oid relid);
void		live_run_in(bool read_only, const char *sql, int nargs, Oid *types, Datum *values,
						const char *nulls, int expect);
void		live_run(const char *sql, int expect);
Datum		live_result(int col, bool *isnull);
bool		live_is_table(Oid state);
Oid			live_lookup(text *name);
void		live_open(LiveModel *m, Oid state);
Datum		live_train(LiveContext *c, const LiveModel *m, Relation rel, const char *from,
					   bool *isnull);
bool		live_owner_reads_all(const LiveModel *m);
char	   *live_source_query(LiveContext *c, const LiveModel *m);
void		live_weigh(LiveModel *m);
void		live_model_query(StringInfo q, const LiveModel *m, const char *nsp, const char *deltas,
							 const char *base, const char *rest, bool reading);
bool		live_try_step(LiveStep step, LiveContext *c, const LiveModel *m, void *out);

#endif
