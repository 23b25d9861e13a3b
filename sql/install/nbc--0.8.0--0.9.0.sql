-- nbc 0.8.0 -> 0.9.0: text in, with the tokenizer kept inside the model;
-- nothing silent (unknown features, unrelated merges); options that travel
-- with the model; results shaped for psql.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.9.0'" to load this file. \quit
