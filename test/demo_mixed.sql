-- nbc demo, part 2: mixed feature types from jsonb, and dense vectors.
--
-- Needs tables nbc_mixed_rows and fashion_mnist (test/data/load_mixed.py);
-- test/demo.sh loads them and runs this file after test/demo.sql.

\echo
\echo '=============================================================='
\echo ' 10. Mixed features: the German credit data (Weka credit-g)'
\echo '=============================================================='
\echo 'One jsonb object per row: strings are categorical features,'
\echo 'numbers Gaussian, JSON null or an absent key a missing value.'
SELECT label, jsonb_pretty(j) AS features
FROM nbc_mixed_rows WHERE ds = 'credit_g' ORDER BY id LIMIT 1;

\timing on
CREATE TABLE credit_model AS
SELECT nb_train(label, j) AS model, nb_train(label, j_miss) AS model_with_holes
FROM nbc_mixed_rows WHERE ds = 'credit_g' AND split = 'train';
\timing off
SELECT jsonb_pretty(nb_info(model) - 'bytes') AS info FROM credit_model;

\echo
\echo '--- held-out accuracy; the second model was trained and is scored'
\echo '--- with about 10% of the values deleted (available-case estimates)'
SELECT count(*) AS test_rows,
       round(avg((nb_predict(m.model, r.j) = r.label)::int), 4) AS accuracy,
       round(avg((nb_predict(m.model_with_holes, r.j_miss) = r.label)::int), 4) AS accuracy_with_holes,
       round(avg((r.label = 'good')::int), 4) AS majority_class
FROM nbc_mixed_rows r, credit_model m
WHERE r.ds = 'credit_g' AND r.split = 'test';

\echo
\echo '--- which features tell good from bad credit (mutual information;'
\echo '--- Gaussian features have none from counts: NULL, listed last)'
SELECT feature, round(mutual_info::numeric, 5) AS mutual_info
FROM nb_mutual_info((SELECT model FROM credit_model));

\echo
\echo '--- a new applicant: any subset of the features, an unseen category is fine'
SELECT nb_predict_proba(model, '{"checking_status": "no checking", "duration": 12,
                                 "credit_history": "critical/other existing credit",
                                 "purpose": "a category never seen", "age": 35}'::jsonb) AS proba
FROM credit_model;

\echo
\echo '=============================================================='
\echo ' 11. Dense Gaussian features: Fashion-MNIST as float8[784]'
\echo '=============================================================='
SELECT split, count(*) AS images, cardinality(min(pixels)) AS pixels FROM fashion_mnist GROUP BY split ORDER BY split;
\timing on
CREATE TABLE fashion_model AS
SELECT nb_train(label, pixels) AS model FROM fashion_mnist WHERE split = 'train';
SELECT round(avg((nb_predict(m.model, f.pixels) = f.label)::int), 4) AS test_accuracy
FROM fashion_mnist f, fashion_model m WHERE f.split = 'test';
\timing off
\echo '(scikit-learn GaussianNB reaches the same accuracy on this split: test/parity/mixed.py)'

\echo
\echo '--- per class: how often each true class is predicted right'
SELECT f.label, count(*) AS images,
       round(avg((nb_predict(m.model, f.pixels) = f.label)::int), 3) AS recall
FROM fashion_mnist f, fashion_model m WHERE f.split = 'test'
GROUP BY f.label ORDER BY recall DESC;
