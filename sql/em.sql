--
-- em: nb_train_em and nb_train_em_trace, semi-supervised training by EM
-- (Nigam et al. 2000).  Each iteration's model is checked against nb_train
-- with the weights the previous model's nb_predict_proba gives; the log
-- likelihood against its definition (nb_em.h) computed here from
-- nb_feature_log_prob and nb_classes.
--
SET extra_float_digits = 0;
SET jit = off;
CREATE TABLE em_docs AS
SELECT i AS id,
       CASE WHEN i % 5 = 0 THEN CASE WHEN i % 2 = 0 THEN 'ham' ELSE 'spam' END END AS label,
       ARRAY(SELECT 'w' || ((i * j + (i % 2) * 3) % 11) FROM generate_series(1, 3 + i % 4) AS j) AS tokens
FROM generate_series(1, 120) AS i;

-- the trace: iteration 0 is the model of the labelled rows; the log
-- likelihood never decreases from iteration 1 on (iteration 0's vocabulary
-- is the labelled rows' only)
CREATE TABLE em_trace AS SELECT * FROM nb_train_em_trace('em_docs', 'label', 'tokens', '{"lambda": 0.5, "iterations": 6}');
SELECT iteration, round((nb_info(model) ->> 'documents')::numeric, 9) AS documents,
       nb_info(model) -> 'vocabulary' AS vocabulary,
       log_likelihood >= lag(log_likelihood) OVER (ORDER BY iteration) - 1e-9 AS not_decreasing
FROM em_trace ORDER BY iteration;
SELECT model = (SELECT nb_train(label, tokens) FROM em_docs WHERE label IS NOT NULL) AS labelled_only
FROM em_trace WHERE iteration = 0;
-- nb_train_em returns the last model of the trace
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"lambda": 0.5, "iterations": 6}') = model AS last
FROM em_trace WHERE iteration = 6;
-- nb_train_em_history: the trace's iterations and log likelihoods, to the bit, without the models
SELECT count(*) AS iterations,
       count(*) FILTER (WHERE h.log_likelihood = t.log_likelihood) AS same_log_likelihood
FROM nb_train_em_history('em_docs', 'label', 'tokens', '{"lambda": 0.5, "iterations": 6}') h
     FULL JOIN em_trace t USING (iteration);
SELECT pg_get_function_result('nb_train_em_history(regclass, text, text, jsonb)'::regprocedure) AS columns;

-- iteration k + 1 is nb_train over the labelled rows and, for each
-- unlabelled row and class, the row with weight lambda p(class | row) under
-- iteration k's model (with the trace's options): the same posteriors on
-- every row.  em_same_as_weighted(trace table, lambda) checks every iteration.
CREATE FUNCTION em_same_as_weighted(trace regclass, lambda float8)
RETURNS TABLE (iteration integer, same_posteriors boolean) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format($q$
    WITH next AS (
      SELECT t.iteration + 1 AS iteration, nb_info(t.model) -> 'options' AS options,
             (SELECT nb_train(l, tokens, w) FROM (
                SELECT label AS l, tokens, 1.0::float8 AS w FROM em_docs WHERE label IS NOT NULL
                UNION ALL
                SELECT p.key, d.tokens, $1 * p.value::float8
                FROM em_docs d, jsonb_each_text(nb_predict_proba(t.model, d.tokens)) p
                WHERE d.label IS NULL AND p.value::float8 > 0) r) AS model
      FROM %s t WHERE t.iteration < (SELECT max(iteration) FROM %s))
    SELECT n.iteration,
           max(abs((nb_predict_proba(n.model, d.tokens, n.options) ->> 'ham')::float8
                   - (nb_predict_proba(t.model, d.tokens) ->> 'ham')::float8)) < 1e-12
    FROM next n JOIN %s t USING (iteration), em_docs d
    GROUP BY n.iteration ORDER BY n.iteration$q$, trace, trace, trace) USING lambda;
END $$;
SELECT * FROM em_same_as_weighted('em_trace', 0.5);

-- the log likelihood by its definition: labelled rows log pi_y + sum x_t
-- log theta_yt, unlabelled lambda log sum_c pi_c prod theta_ct^x_t, and the
-- Dirichlet prior alpha sum_{c,t} log theta_ct (alpha 1)
WITH lp AS (SELECT t.iteration, f.label, f.value, f.log_prob
            FROM em_trace t, nb_feature_log_prob(t.model) f WHERE t.iteration >= 1),
prior AS (SELECT t.iteration, c.label, ln(c.prior) AS log_pi
          FROM em_trace t, nb_classes(t.model) c WHERE t.iteration >= 1),
joint AS (SELECT p.iteration, d.id, d.label AS actual, p.label,
                 p.log_pi + sum(lp.log_prob) AS log_joint
          FROM em_docs d CROSS JOIN LATERAL unnest(d.tokens) AS tok(token)
          JOIN prior p ON true
          JOIN lp ON lp.iteration = p.iteration AND lp.label = p.label AND lp.value = tok.token
          GROUP BY p.iteration, d.id, d.label, p.label, p.log_pi),
rows AS (SELECT iteration, id,
                CASE WHEN max(actual) IS NOT NULL THEN max(log_joint) FILTER (WHERE label = actual)
                     ELSE 0.5 * (max(log_joint) + ln(sum(exp(log_joint - (SELECT max(log_joint) FROM joint j2 WHERE j2.iteration = joint.iteration AND j2.id = joint.id)))))
                END AS term
         FROM joint GROUP BY iteration, id)
SELECT r.iteration,
       abs(sum(r.term) + (SELECT sum(log_prob) FROM lp WHERE lp.iteration = r.iteration) - t.log_likelihood)
         < 1e-9 * abs(t.log_likelihood) AS by_definition
FROM rows r JOIN em_trace t USING (iteration)
GROUP BY r.iteration, t.log_likelihood ORDER BY r.iteration;

-- Bernoulli: the same for the weighted documents each token is in (the
-- log likelihood by its definition is checked by test/parity/em.py)
CREATE TABLE em_trace_b AS SELECT * FROM nb_train_em_trace('em_docs', 'label', 'tokens',
  '{"kind": "bernoulli", "lambda": 0.5, "iterations": 3, "beta": [0.5, 2]}');
SELECT iteration, log_likelihood >= lag(log_likelihood) OVER (ORDER BY iteration) - 1e-9 AS not_decreasing,
       nb_info(model) -> 'options' AS options
FROM em_trace_b ORDER BY iteration;
SELECT * FROM em_same_as_weighted('em_trace_b', 0.5);

-- every row labelled, or lambda 0: nb_train over the labelled rows (with the
-- options kept in the model when there are any); text documents keep their
-- tokenizer, tsvector rows count positions
CREATE TABLE em_labelled AS
SELECT label, tokens, array_to_string(tokens, ' ') || ' Extra' AS body,
       array_to_tsvector(tokens) AS tsv
FROM em_docs WHERE label IS NOT NULL;
SELECT nb_train_em('em_labelled', 'label', 'tokens') = (SELECT nb_train(label, tokens) FROM em_labelled) AS text_array,
       nb_train_em('em_labelled', 'label', 'body') = (SELECT nb_train(label, body) FROM em_labelled) AS text,
       nb_train_em('em_labelled', 'label', 'body', '{"tokenizer": {"ngram_range": [1, 2]}}')
         = (SELECT nb_train(label, body, '{"ngram_range": [1, 2]}') FROM em_labelled) AS tokenizer,
       nb_train_em('em_labelled', 'label', 'tsv') = (SELECT nb_train(label, tsv) FROM em_labelled) AS tsvector,
       nb_train_em('em_docs', 'label', 'tokens', '{"lambda": 0}')
         = (SELECT nb_train(label, tokens) FROM em_docs WHERE label IS NOT NULL) AS lambda_0,
       nb_train_em('em_labelled', 'label', 'tokens', '{"alpha": 0.5}')
         = (SELECT nb_with_options(nb_train(label, tokens), '{"alpha": 0.5}') FROM em_labelled) AS options;
SELECT count(*) AS iterations FROM nb_train_em_trace('em_labelled', 'label', 'tokens');

-- documents of text: the model keeps the tokenizer and scores text
CREATE TABLE em_text AS SELECT label, array_to_string(tokens, ' ') AS body FROM em_docs;
SELECT nb_predict(nb_train_em('em_text', 'label', 'body', '{"iterations": 3}'), 'w1 w2 w3') AS predicted,
       nb_info(nb_train_em('em_text', 'label', 'body', '{"iterations": 1, "alpha": 0.25}')) -> 'options' AS options;

-- a label of another type is read as label::text, varchar[] features as
-- text[]: the same EM as with labels ham and spam, which sort alike
CREATE TABLE em_typed AS
SELECT CASE label WHEN 'ham' THEN 0 WHEN 'spam' THEN 1 END AS label, tokens::varchar[] AS tokens FROM em_docs;
WITH m AS (SELECT nb_train_em('em_typed', 'label', 'tokens', '{"iterations": 2}') AS typed,
                  nb_train_em('em_docs', 'label', 'tokens', '{"iterations": 2}') AS named)
SELECT (SELECT array_agg(label ORDER BY label) FROM nb_classes(typed)) AS classes,
       max(abs((nb_predict_proba(typed, d.tokens) ->> '0')::float8
               - (nb_predict_proba(named, d.tokens) ->> 'ham')::float8)) AS max_difference
FROM m, em_docs d GROUP BY typed;

-- one class: every unlabelled row goes to it with weight lambda; the second
-- iteration changes nothing
CREATE TABLE em_one AS SELECT CASE WHEN label IS NOT NULL THEN 'only' END AS label, tokens FROM em_docs;
SELECT iteration, round((nb_info(model) ->> 'documents')::numeric, 9) AS documents
FROM nb_train_em_trace('em_one', 'label', 'tokens', '{"lambda": 0.25}') ORDER BY iteration;

-- lambda 5e-324, the smallest float8: lambda p(c | x) underflows to 0 in
-- every class when no posterior reaches 1/2 (rows of unknown tokens, three
-- classes of one row each: 1/3), and such a row adds nothing, not even its
-- tokens: the model is the labelled rows' model, and reads back from its text
CREATE TABLE em_tiny (label text, tokens text[]);
INSERT INTO em_tiny VALUES ('a', '{x}'), ('b', '{y}'), ('c', '{z}'), (NULL, '{q, r}'), (NULL, '{w}');
WITH m AS (SELECT nb_train_em('em_tiny', 'label', 'tokens', '{"lambda": 5e-324}') AS model)
SELECT model = (SELECT nb_train(label, tokens) FROM em_tiny WHERE label IS NOT NULL) AS labelled_model,
       model::text::nb_model = model AS reads_back
FROM m;

-- nbc.progress: a NOTICE per iteration when nbc.progress_interval seconds
-- have passed (0: every one; its DETAIL, the elapsed time, left out); off,
-- none
\set VERBOSITY terse
SET nbc.progress = on;
SET nbc.progress_interval = 0;
SELECT count(*) FROM nb_train_em_trace('em_docs', 'label', 'tokens', '{"iterations": 1}');
SET nbc.progress = off;
SELECT count(*) FROM nb_train_em_trace('em_docs', 'label', 'tokens', '{"iterations": 1}');
RESET nbc.progress;
RESET nbc.progress_interval;

-- bad input
CREATE TABLE em_unlabelled AS SELECT NULL::text AS label, tokens FROM em_docs;
SELECT nb_train_em('em_unlabelled', 'label', 'tokens');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"lambda": -0.5}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"lambda": 1.5}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"lambda": "NaN"}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"lambda": null}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"iterations": -1}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"iterations": 2.5}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"tolerance": -1}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"tolerance": "small"}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '[1]');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"alpha": -1}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"bogus": 1}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"kind": "complement"}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"kind": "bernoulli", "beta": [1, 0]}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"alpha": 0}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"estimator": "map", "alpha": 1}');
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"tokenizer": {}}');
SELECT nb_train_em('em_text', 'label', 'body', '{"tokenizer": {"bogus": true}}');
-- a tokenizer option beside EM's: the hint shows where it goes
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT nb_train_em('em_text', 'label', 'body', '{"ngram_range": [1, 2]}');
\set SHOW_CONTEXT errors
\set VERBOSITY terse
SELECT nb_train_em('em_docs', 'label', 'id');
SELECT nb_train_em('em_docs', 'nothing', 'tokens');
SELECT nb_train_em('em_docs', NULL, 'tokens');
-- nbc_em_iterate called directly: nbc_em_run's checks are not there
SELECT count(*) FROM nbc_em_iterate((SELECT model FROM em_trace WHERE iteration = 0), 'em_docs', 'label', 'tokens', 'text[]', 2, '{}', '{}', 2, 0, 1, 1, true, true, now());
SELECT count(*) FROM nbc_em_iterate(NULL, 'em_docs', 'label', 'tokens', 'text[]', 1, NULL, NULL, 2, 0, 1, 1, true, true, now());
SELECT count(*) FROM nbc_em_iterate((SELECT model FROM em_trace WHERE iteration = 0), 'em_docs', 'label', 'id', 'integer', 1, NULL, NULL, 2, 0, 1, 1, true, true, now());
SELECT count(*) FROM nbc_em_iterate((SELECT model FROM em_trace WHERE iteration = 0), 'em_docs', 'label', 'tokens', 'text[]', 1, NULL, NULL, 2, 0, 1, 0, true, true, now());
\set VERBOSITY default
-- a misspelled option of EM's own: the hint names EM's options before the model's (#42)
SELECT nb_train_em('em_docs', 'label', 'tokens', '{"lamda": 0.5}');
