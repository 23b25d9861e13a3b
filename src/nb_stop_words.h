/*
 * nb_stop_words.h — the stop word lists of the tokenizer (nb_tokenize.h).
 */
#ifndef NB_STOP_WORDS_H
#define NB_STOP_WORDS_H

#include <stdbool.h>
#include <stddef.h>

/* The bytes of the longest English stop word ("nevertheless"). */
#define NB_STOP_WORD_MAX 12

/* Whether the len bytes at word are one of scikit-learn's English stop words. */
bool		nb_stop_word_english(const char *word, size_t len);

#endif
