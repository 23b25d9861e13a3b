--
-- tokens: nb_tokens(body, options), scikit-learn's CountVectorizer analyzers.
-- Every result below is what CountVectorizer(**options).build_analyzer()(body)
-- gives in scikit-learn 1.2.1 under Python 3.11 (test/parity/tokens.py
-- compares whole corpora).
--

-- the defaults: word analyzer, (?u)\b\w\w+\b, lowercase, nothing stripped
SELECT nb_tokens('The quick brown fox -- jumps over the lazy dog''s 2 bones, x_y!');
SELECT nb_tokens('Hello World') = nb_tokens('Hello World', '{}') AS empty_options_are_defaults;
SELECT nb_tokens('Hello World') = nb_tokens('Hello World', NULL) AS null_options_are_defaults;

-- NULL and empty
SELECT nb_tokens(NULL) IS NULL AS null_body;
SELECT nb_tokens(NULL, '{"analyzer": "char"}') IS NULL AS null_body_with_options;
SELECT nb_tokens('');
SELECT nb_tokens('', '{"analyzer": "char"}');
SELECT nb_tokens('  ', '{"analyzer": "char_wb"}');
SELECT nb_tokens('a . b');
SELECT array_ndims(nb_tokens('')) AS ndims, cardinality(nb_tokens('')) AS n;
SELECT array_lower(nb_tokens('one two'), 1) AS lower_bound, array_length(nb_tokens('one two'), 1) AS n;

-- token_pattern: one-character words too
SELECT nb_tokens('a b c de', '{"token_pattern": "(?u)\\b\\w+\\b"}');
SELECT nb_tokens('a b c de', '{"token_pattern": "\\b\\w+\\b"}');
SELECT nb_tokens('a b c de', '{"token_pattern": "\\b\\w\\w+\\b"}');

-- lowercase false
SELECT nb_tokens('Hello WORLD', '{"lowercase": false}');

-- stop words: removed before the n-grams are made
SELECT nb_tokens('This is the end of the world as we know it', '{"stop_words": "english"}');
SELECT nb_tokens('This is the end of the world as we know it',
                 '{"stop_words": "english", "ngram_range": [1, 2]}');
SELECT nb_tokens('This is the end', '{"stop_words": null}');

-- word n-grams: all 1-grams, then all 2-grams, then all 3-grams
SELECT nb_tokens('a b c d', '{"token_pattern": "(?u)\\b\\w+\\b", "ngram_range": [1, 3]}');
SELECT nb_tokens('one two three', '{"ngram_range": [2, 3]}');
SELECT nb_tokens('one two', '{"ngram_range": [3, 5]}');

-- char: runs of two or more white space characters become one space, a lone one stays
SELECT nb_tokens(E'ab  c\td', '{"analyzer": "char"}');
SELECT nb_tokens('Abc', '{"analyzer": "char", "ngram_range": [1, 2]}');
SELECT nb_tokens('abc', '{"analyzer": "char", "ngram_range": [2, 5]}');

-- char_wb: " word " padded; a word no longer than n is taken whole, once
SELECT nb_tokens('ab cde', '{"analyzer": "char_wb", "ngram_range": [2, 3]}');
SELECT nb_tokens('a', '{"analyzer": "char_wb", "ngram_range": [1, 5]}');
SELECT nb_tokens('ab', '{"analyzer": "char_wb", "ngram_range": [4, 4]}');

-- stop words and token patterns do not apply to the char analyzers, as in scikit-learn
SELECT nb_tokens('the', '{"analyzer": "char", "stop_words": "english", "token_pattern": "(?u)\\b\\w+\\b"}');

-- multibyte UTF-8: n-grams count code points
SELECT nb_tokens('Ça déjà vu: naïve café', '{"analyzer": "char", "ngram_range": [2, 2]}');
SELECT nb_tokens('Съешь же ещё этих мягких французских булок');
SELECT nb_tokens('東京 is 日本の首都', '{"analyzer": "char_wb", "ngram_range": [2, 2]}');
SELECT nb_tokens('𝐀𝐁 emoji 🙂🙂 x', '{"analyzer": "char", "ngram_range": [2, 2]}');

-- Python's str.lower(): final sigma by context, İ (U+0130) to i + U+0307
SELECT nb_tokens('ΟΔΟΣ ΟΔΟΣΣ Σ AΣ. AΣ''Β');
SELECT nb_tokens('İstanbul', '{"analyzer": "char"}');
SELECT nb_tokens('İstanbul');

-- strip_accents, after lowercasing: unicode drops combining marks after NFKD,
-- ascii drops everything outside ASCII after NFKD
SELECT nb_tokens('Crème Brûlée À Ǆemal ﬁnal ½', '{"strip_accents": "unicode"}');
SELECT nb_tokens('Crème Brûlée À Ǆemal ﬁnal ½', '{"strip_accents": "ascii"}');
SELECT nb_tokens('İstanbul', '{"strip_accents": "unicode"}');
SELECT nb_tokens('Москва ёлка', '{"strip_accents": "ascii"}');
SELECT nb_tokens('Москва ёлка', '{"strip_accents": "unicode"}');
-- Hangul syllables decompose to their jamo
SELECT nb_tokens('한국', '{"analyzer": "char", "strip_accents": "unicode"}');
SELECT nb_tokens('한국', '{"analyzer": "char"}');

-- the value is immutable and parallel safe, options not strict
SELECT provolatile, proisstrict, proparallel FROM pg_proc WHERE proname = 'nb_tokens';

-- errors: every option, each wrong type and value
SELECT nb_tokens('x', '[]');
SELECT nb_tokens('x', '"word"');
SELECT nb_tokens('x', '{"analyser": "word"}');
-- a prediction option among the tokenizer's names where it goes
SELECT nb_tokens('x', '{"alpha": 1}');
SELECT nb_tokens('x', '{"analyzer": "words"}');
SELECT nb_tokens('x', '{"analyzer": null}');
SELECT nb_tokens('x', '{"analyzer": 1}');
SELECT nb_tokens('x', '{"ngram_range": [0, 1]}');
SELECT nb_tokens('x', '{"ngram_range": [2, 1]}');
SELECT nb_tokens('x', '{"ngram_range": [1, 65]}');
SELECT nb_tokens('x', '{"ngram_range": [1.5, 2]}');
SELECT nb_tokens('x', '{"ngram_range": [1]}');
SELECT nb_tokens('x', '{"ngram_range": [1, 2, 3]}');
SELECT nb_tokens('x', '{"ngram_range": ["1", "2"]}');
SELECT nb_tokens('x', '{"ngram_range": {"min": 1}}');
SELECT nb_tokens('x', '{"ngram_range": 1}');
SELECT nb_tokens('x', '{"lowercase": "true"}');
SELECT nb_tokens('x', '{"lowercase": null}');
SELECT nb_tokens('x', '{"strip_accents": "Unicode"}');
SELECT nb_tokens('x', '{"strip_accents": true}');
SELECT nb_tokens('x', '{"token_pattern": "(?u)\\b\\w\\w\\w+\\b"}');
SELECT nb_tokens('x', '{"token_pattern": "[a-z]+"}');
SELECT nb_tokens('x', '{"token_pattern": null}');
SELECT nb_tokens('x', '{"stop_words": "french"}');
SELECT nb_tokens('x', '{"stop_words": ["the"]}');
-- the largest n-gram size is fine
SELECT cardinality(nb_tokens(repeat('a ', 70), '{"ngram_range": [64, 64], "token_pattern": "(?u)\\b\\w+\\b"}')) AS n;
-- integral numbers are integers
SELECT nb_tokens('one two', '{"ngram_range": [2.0, 2]}');

-- a result over 1 GB is refused before it is built (54000): the 64-grams of
-- 16 million characters take 68 bytes each, 1,087,995,716 bytes in all
DO $$
BEGIN
  PERFORM nb_tokens(repeat('a', 16000000), '{"analyzer": "char", "ngram_range": [64, 64]}');
EXCEPTION WHEN program_limit_exceeded THEN
  RAISE NOTICE 'refused: %', SQLERRM;
END $$;

-- the tokens in a table, counted
CREATE TABLE tok_docs (id int, body text);
INSERT INTO tok_docs VALUES (1, 'Spam spam SPAM eggs'), (2, NULL), (3, ''), (4, 'Eggs and ham');
SELECT id, nb_tokens(body) FROM tok_docs ORDER BY id;
SELECT t, count(*) FROM tok_docs, unnest(nb_tokens(body)) AS t GROUP BY t ORDER BY t;
DROP TABLE tok_docs;

-- other database encodings: LATIN1 converts to UTF-8 and each token back;
-- SQL_ASCII is read as UTF-8 and must be valid UTF-8
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS nbc_tokens_latin1;
DROP DATABASE IF EXISTS nbc_tokens_sql_ascii;
CREATE DATABASE nbc_tokens_latin1 TEMPLATE template0 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C';
CREATE DATABASE nbc_tokens_sql_ascii TEMPLATE template0 ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C';
RESET client_min_messages;
\c nbc_tokens_latin1
SET client_encoding = 'UTF8';
CREATE EXTENSION nbc;
SELECT nb_tokens('Crème BRÛLÉE ÀÉÎ');
SELECT nb_tokens('Crème BRÛLÉE', '{"analyzer": "char_wb", "ngram_range": [3, 3]}');
SELECT nb_tokens('Crème BRÛLÉE', '{"strip_accents": "ascii"}');
-- NFKD makes U+2044 of ½, which LATIN1 cannot hold
SELECT nb_tokens('½', '{"strip_accents": "unicode", "analyzer": "char"}');
\c nbc_tokens_sql_ascii
SET client_encoding = 'UTF8';
CREATE EXTENSION nbc;
SELECT nb_tokens('Crème BRÛLÉE');
SELECT nb_tokens(convert_from('\x43728a6d65', 'SQL_ASCII'));
\c :regress_db
DROP DATABASE nbc_tokens_latin1;
DROP DATABASE nbc_tokens_sql_ascii;
