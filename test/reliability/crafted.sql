-- crafted.sql — the database of test/reliability/crafted.sh: valid seed
-- models of every kind, which crafted.c mutates, and crafted_use(), which
-- puts an accepted value through every function that takes a model.
--
-- Every seed is trained from fixed rows (no random()), so the mutated values,
-- and with them the whole run, are the same every time.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS crafted CASCADE;
CREATE SCHEMA crafted;
SET search_path = crafted, public;

CREATE TABLE crafted.seed (id int PRIMARY KEY, kind text NOT NULL, m nb_model NOT NULL);

-- text-only models (format version 3; version 1 before it)
INSERT INTO crafted.seed
SELECT 1, 'v1 two classes, text[]', nb_train(l, t)
FROM (VALUES ('ham', ARRAY['hello', 'world', 'hello']), ('spam', ARRAY['buy', 'now', 'hello']),
			 ('ham', ARRAY['see', 'you', 'world'])) v(l, t);
INSERT INTO crafted.seed
SELECT 2, 'v1 weighted, tsvector', nb_train(l, to_tsvector('simple', d), w)
FROM (VALUES ('a', 'the quick brown fox', 0.5), ('b', 'jumps over the lazy dog', 2.0),
			 ('c', 'the dog barks', 1.25), ('a', 'fox and dog', 3.0)) v(l, d, w);
INSERT INTO crafted.seed
SELECT 3, 'v1 one class', nb_train('only', ARRAY['x', 'y', 'y']);
INSERT INTO crafted.seed
SELECT 4, 'v1 three classes, 150 tokens', nb_train('c' || (g % 3), ARRAY['t' || g, 't' || (g * 7 % 50), 'u' || (g % 11)])
FROM generate_series(1, 100) g;
INSERT INTO crafted.seed
SELECT 5, 'v1 empty and non-ASCII tokens', nb_train(l, t)
FROM (VALUES ('é', ARRAY['', 'über', 'naïve', '日本']), ('', ARRAY['über', 'x']),
			 ('z', ARRAY['', '']), ('é', ARRAY['日本語'])) v(l, t);
INSERT INTO crafted.seed
SELECT 6, 'v1 no tokens', nb_train(l, ARRAY[]::text[])
FROM (VALUES ('a'), ('b'), ('b')) v(l);

-- mixed models (format version 3): bags, categorical, Gaussian, boolean, float8[]
INSERT INTO crafted.seed
SELECT 7, 'v2 bag, categorical, Gaussian, boolean', nb_train(l, f)
FROM (VALUES ('yes', '{"tags": ["a", "b"], "color": "red", "x": 1.5, "flag": true}'::jsonb),
			 ('no', '{"tags": ["b", "c", "c"], "color": "blue", "x": -2.25, "flag": false}'),
			 ('yes', '{"tags": [], "color": "red", "x": 3, "flag": false}'),
			 ('no', '{"color": "green", "x": 0.5}'),
			 ('maybe', '{"tags": ["d"], "flag": true}')) v(l, f);
INSERT INTO crafted.seed
SELECT 8, 'v2 float8[3]', nb_train(l, x)
FROM (VALUES ('p', ARRAY[1.0, 2.0, 3.0]::float8[]), ('q', ARRAY[-1.5, 0.25, 8.0]),
			 ('p', ARRAY[1.5, 2.5, 2.0]), ('q', ARRAY[-2.0, 0.5, 9.5])) v(l, x);
INSERT INTO crafted.seed
SELECT 9, 'v2 prior only', nb_train(l, '{}'::jsonb)
FROM (VALUES ('a'), ('b')) v(l);
INSERT INTO crafted.seed
SELECT 10, 'v2 weighted, missing values, object bag', nb_train(l, f, w)
FROM (VALUES ('r', '{"words": {"alpha": 2, "beta": 1}, "n": 10, "ok": true}'::jsonb, 0.5),
			 ('s', '{"words": {"beta": 3}, "n": 12.5}', 1.0),
			 ('r', '{"words": {"gamma": 1}, "ok": false, "kind": "k1"}', 2.0),
			 ('t', '{"kind": "k2", "n": -4}', 1.5)) v(l, f, w);
INSERT INTO crafted.seed
SELECT 11, 'v2 bag "" with other features', nb_train(l, f)
FROM (VALUES ('a', '{"": ["x", "y"], "g": 1}'::jsonb), ('b', '{"": ["y"], "g": 2, "h": "q"}'),
			 ('a', '{"": ["z"], "g": 4}')) v(l, f);
INSERT INTO crafted.seed
SELECT 12, 'v2 float8[1], four classes', nb_train('k' || (g % 4), ARRAY[g * 0.5])
FROM generate_series(1, 12) g;
INSERT INTO crafted.seed
SELECT 13, 'v2 float8[3] merged with float8[3] rows of other classes',
	nb_merge((SELECT m FROM crafted.seed WHERE id = 8),
			 (SELECT nb_train('k' || (g % 3), ARRAY[g * 0.25, g * -0.5, 1.0 / g]) FROM generate_series(1, 9) g));
INSERT INTO crafted.seed
SELECT 14, 'v2 many items', nb_train('c' || (g % 5),
	jsonb_build_object('w', jsonb_build_array('w' || g, 'w' || (g % 13)), 'cat', 'v' || (g % 17), 'y', g * 0.125))
FROM generate_series(1, 60) g;
-- stored prediction options (format version 4): the server checks them as
-- scoring parses them, which nb_view_open leaves to it
INSERT INTO crafted.seed
SELECT 15, 'v4 stored options', nb_with_options(m, '{"alpha": 0.5, "class_prior": {"ham": 0.25, "spam": 0.75}}')
FROM crafted.seed WHERE id = 1;

-- The partners a value is merged with, one of each kind.
CREATE TABLE crafted.partner AS
SELECT id, m FROM crafted.seed WHERE id IN (1, 7, 8);

-- p is a probability distribution: values in [0, 1] adding up to 1.
CREATE FUNCTION crafted.is_distribution(p jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT count(*) > 0 AND bool_and(v::float8 BETWEEN 0 AND 1) AND abs(sum(v::float8) - 1) < 1e-9
	FROM jsonb_each_text(p) e(k, v)
$$;

-- lp holds log probabilities: all <= 0, not NaN
CREATE FUNCTION crafted.is_log_distribution(lp jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT count(*) > 0 AND bool_and(v::float8 <= 0) FROM jsonb_each_text(lp) e(k, v)
$$;

/*
 * Put a model through every function that takes one (but nbc_train_transfn,
 * which works only inside its aggregate), each in its own
 * subtransaction; the result lists "operation:outcome", outcome being ok,
 * the SQLSTATE of the error, or "bad" when the result is wrong (not a
 * probability distribution, a NaN, a merge that is not valid again).
 */
CREATE FUNCTION crafted.use(m nb_model) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text := '';
	p jsonb;
	t text;
	n bigint;
	x nb_model;
	ok boolean;
	op text;
	ops text[] := ARRAY['info', 'jsonb', 'mi', 'classes', 'prune', 'merge_self', 'merge_agg',
		'merge_v1', 'merge_mixed', 'merge_vector',
		'predict_text', 'proba_text', 'log_proba_text', 'proba_tsvector',
		'proba_jsonb', 'proba_vector', 'proba_bernoulli', 'proba_complement',
		'top_text', 'explain_text', 'explain_jsonb', 'feature_log_prob'];
BEGIN
	FOREACH op IN ARRAY ops LOOP
		BEGIN
			ok := true;
			CASE op
			WHEN 'info' THEN
				ok := (nb_info(m) ->> 'classes') IS NOT NULL;
			WHEN 'jsonb' THEN
				ok := jsonb_typeof(m::jsonb) = 'object';
			WHEN 'mi' THEN
				SELECT count(*), bool_and(mutual_info >= 0 AND mutual_info < 'infinity')
				INTO n, ok FROM nb_mutual_info(m);
				ok := coalesce(ok, true);
			WHEN 'classes' THEN
				SELECT abs(sum(prior) - 1) < 1e-9 AND bool_and(documents > 0) INTO ok FROM nb_classes(m);
			WHEN 'prune' THEN
				x := nb_prune(m, '{"top_k": 5, "min_documents": 1}');
				ok := x::text::nb_model::text = x::text AND nb_prune(m, '{}') = m;
			WHEN 'merge_self' THEN
				x := nb_merge(m, m);
				ok := x::text::nb_model::text = x::text;
			WHEN 'merge_agg' THEN
				SELECT nb_merge(v) INTO x FROM (VALUES (m), (m), (m)) s(v);
				ok := x::text::nb_model::text = x::text;
			WHEN 'merge_v1' THEN
				x := nb_merge(m, (SELECT q.m FROM crafted.partner q WHERE id = 1));
			WHEN 'merge_mixed' THEN
				x := nb_merge((SELECT q.m FROM crafted.partner q WHERE id = 7), m);
			WHEN 'merge_vector' THEN
				x := nb_merge(m, (SELECT q.m FROM crafted.partner q WHERE id = 8));
			WHEN 'predict_text' THEN
				t := nb_predict(m, ARRAY['hello', 'buy', 't7', 'über', '']);
				ok := t IS NOT NULL;
			WHEN 'proba_text' THEN
				ok := crafted.is_distribution(nb_predict_proba(m, ARRAY['hello', 'world', 'x', 'w3']));
			WHEN 'log_proba_text' THEN
				ok := crafted.is_log_distribution(nb_predict_log_proba(m, ARRAY['buy', 'y', 'fox']));
			WHEN 'proba_tsvector' THEN
				ok := crafted.is_distribution(nb_predict_proba(m, 'dog fox hello'::tsvector));
			WHEN 'proba_jsonb' THEN
				ok := crafted.is_distribution(nb_predict_proba(m,
					'{"tags": ["a", "c"], "color": "red", "x": 1, "flag": true, "n": 11, "words": ["beta"], "g": 2}'::jsonb));
			WHEN 'proba_vector' THEN
				ok := crafted.is_distribution(nb_predict_proba(m, ARRAY[1.0, 2.0, 3.0]::float8[]));
			WHEN 'proba_bernoulli' THEN
				ok := crafted.is_distribution(nb_predict_proba(m, ARRAY['hello', 'x'],
					'{"kind": "bernoulli", "alpha": 0.5}'));
			WHEN 'proba_complement' THEN
				ok := crafted.is_distribution(nb_predict_proba(m, '{"tags": ["b"], "": ["y"]}'::jsonb,
					'{"kind": "complement", "fit_prior": false}'));
			WHEN 'top_text' THEN
				-- every class once, probabilities a distribution, most probable first
				SELECT count(*) = count(DISTINCT t.label) AND abs(sum(t.probability) - 1) < 1e-9
					   AND bool_and(t.probability BETWEEN 0 AND 1)
					   AND array_agg(t.probability ORDER BY t.ord) = array_agg(t.probability ORDER BY t.probability DESC, t.ord)
				INTO ok
				FROM nb_predict_top(m, ARRAY['hello', 'buy', 't7'], NULL) WITH ORDINALITY AS t(label, probability, ord);
			WHEN 'explain_text' THEN
				SELECT coalesce(bool_and(contribution <> 'NaN'), true) INTO ok
				FROM nb_explain(m, ARRAY['hello', 'buy', 'buy', 'x'], '{"kind": "bernoulli"}');
			WHEN 'explain_jsonb' THEN
				SELECT coalesce(bool_and(contribution <> 'NaN'), true) INTO ok
				FROM nb_explain(m, '{"tags": ["a", "c"], "color": "red", "x": 1, "flag": true, "g": 2}'::jsonb);
			WHEN 'feature_log_prob' THEN
				SELECT coalesce(bool_and(log_prob <> 'NaN'), true) INTO ok FROM nb_feature_log_prob(m);
			END CASE;
			r := r || op || ':' || CASE WHEN ok THEN 'ok' ELSE 'bad' END || ' ';
		EXCEPTION WHEN OTHERS THEN
			r := r || op || ':' || SQLSTATE || ' ';
		END;
	END LOOP;
	RETURN r;
END
$$;

/*
 * The value's bytes as an nb_model without the input functions, the way a
 * value corrupted on disk reaches nbc's functions.  Needs the cast from
 * bytea to nb_model WITHOUT FUNCTION that crafted.sh creates for the run
 * (a superuser's privilege) and drops afterwards.
 */
CREATE FUNCTION crafted.use_raw(raw bytea) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	RETURN crafted.use(raw::nb_model);
END
$$;
