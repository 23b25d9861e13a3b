/* temporary until the tokenizer branch lands */
#include "pg_tokenize.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
void nb_tokenizer_from_jsonb(Jsonb *options, NbTokenizer *t){nb_tokenizer_init(t); if(options){JsonbValue *v=getKeyJsonValueFromContainer(&options->root,"lowercase",9,NULL); if(v&&v->type==jbvBool)t->lowercase=v->val.boolean;}}
Jsonb *nb_tokenizer_to_jsonb(const NbTokenizer *t){char buf[200];snprintf(buf,sizeof buf,"{\"analyzer\": %d, \"lowercase\": %s}",t->analyzer,t->lowercase?"true":"false");return DatumGetJsonbP(DirectFunctionCall1(jsonb_in,CStringGetDatum(buf)));}
void nb_text_tokenize(const NbTokenizer *t, text *body, NbTokenSink sink, void *arg){(void) nb_tokenize(t,VARDATA_ANY(body),VARSIZE_ANY_EXHDR(body),sink,arg);}
