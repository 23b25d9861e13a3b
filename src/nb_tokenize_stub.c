/* temporary until the tokenizer branch lands */
#include "nb_tokenize.h"
#include <string.h>
void nb_tokenizer_init(NbTokenizer *t){memset(t,0,sizeof(*t));t->ngram_min=t->ngram_max=1;t->lowercase=true;}
bool nb_tokenizer_valid(const NbTokenizer *t){return t->analyzer<=2&&t->strip_accents<=2&&t->token_pattern<=1&&t->stop_words<=1&&t->ngram_min>=1&&t->ngram_min<=t->ngram_max&&t->ngram_max<=NB_NGRAM_MAX;}
void nb_tokenizer_encode(const NbTokenizer *t, unsigned char *o){memset(o,0,16);o[0]=t->analyzer;o[1]=t->lowercase;o[2]=t->strip_accents;o[3]=t->token_pattern;o[4]=t->stop_words;o[8]=t->ngram_min;o[12]=t->ngram_max;}
bool nb_tokenizer_decode(NbTokenizer *t, const unsigned char *i){for(int k=5;k<8;k++)if(i[k])return false;for(int k=9;k<12;k++)if(i[k]||i[k+4])return false;if(i[1]>1)return false;t->analyzer=i[0];t->lowercase=i[1];t->strip_accents=i[2];t->token_pattern=i[3];t->stop_words=i[4];t->ngram_min=i[8];t->ngram_max=i[12];return nb_tokenizer_valid(t);}
bool nb_tokenize(const NbTokenizer *t, const char *text, size_t len, NbTokenSink sink, void *arg){size_t i=0;while(i<len){while(i<len&&!(text[i]>='a'&&text[i]<='z'))i++;size_t b=i;while(i<len&&text[i]>='a'&&text[i]<='z')i++;if(i-b>=2&&!sink(arg,text+b,(uint32_t)(i-b)))return false;}return true;}
