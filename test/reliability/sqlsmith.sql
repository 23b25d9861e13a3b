-- sqlsmith.sql — the database sqlsmith.sh lets sqlsmith loose on: documents
-- with features of every type nbc takes (text[], tsvector, jsonb, float8[],
-- weights), models of every kind trained from them, and a view that scores,
-- so that random queries find nb_model columns and feature columns to pass to
-- nbc's functions.  Run by the owner of the database (not a superuser).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS nbc;

CREATE TABLE docs (
	id int PRIMARY KEY,
	label text NOT NULL,
	words text[],
	tsv tsvector,
	f jsonb,
	x float8[],
	w float8
);
INSERT INTO docs
SELECT g, 'c' || (g % 3),
	ARRAY['w' || (g % 7), 'w' || (g % 11), 'common'],
	to_tsvector('simple', 'doc ' || (g % 5) || ' term' || (g % 13)),
	jsonb_build_object('tags', jsonb_build_array('t' || (g % 4), 't' || (g % 9)),
					   'color', (ARRAY['red', 'green', 'blue'])[1 + g % 3],
					   'size', g * 0.75 - 20,
					   'flag', g % 2 = 0),
	ARRAY[g * 0.5, (g % 10)::float8, -g::float8],
	1 + (g % 4) * 0.5
FROM generate_series(1, 200) g;

CREATE TABLE models (
	kind text PRIMARY KEY,
	m nb_model NOT NULL
);
INSERT INTO models SELECT 'text', nb_train(label, words) FROM docs;
INSERT INTO models SELECT 'text weighted', nb_train(label, words, w) FROM docs;
INSERT INTO models SELECT 'tsvector', nb_train(label, tsv) FROM docs;
INSERT INTO models SELECT 'mixed', nb_train(label, f) FROM docs;
INSERT INTO models SELECT 'mixed weighted', nb_train(label, f, w) FROM docs;
INSERT INTO models SELECT 'vector', nb_train(label, x) FROM docs;
INSERT INTO models SELECT 'one class', nb_train('only', words) FROM docs WHERE id < 5;
INSERT INTO models SELECT 'prior only', nb_train(label, '{}'::jsonb) FROM docs;
INSERT INTO models
SELECT 'mixed merged with weighted', nb_merge(a.m, b.m)
FROM models a, models b WHERE a.kind = 'mixed' AND b.kind = 'mixed weighted';
INSERT INTO models SELECT 'text with options', nb_with_options(nb_train(label, array_to_string(words, ' ')), '{"alpha": 0.5}') FROM docs;

-- models per class, for nb_merge over groups
CREATE TABLE part_models AS
SELECT id % 4 AS part, nb_train(label, words) AS m, nb_train(label, f) AS mixed
FROM docs GROUP BY id % 4;

CREATE VIEW scores AS
SELECT d.id, d.label, nb_predict(m.m, d.words) AS predicted,
	nb_predict_proba(m.m, d.words) AS proba
FROM docs d, models m WHERE m.kind = 'text';

ANALYZE docs;
ANALYZE models;
ANALYZE part_models;
