"""A synthetic database at many times the bundled data's size, for speed budgets at scale.

`build_synthetic_db(path, scale=100)` writes one dataset, `synthetic`, into a fresh DuckDB file
with the canonical schema, entirely in SQL (`range()` + `INSERT ... SELECT`), so 100x builds in
a few seconds. Everything is deterministic (values come from `hash()` of row numbers). At
scale s it holds:

* 100·s summaries (10,000 at 100x) by 6 generators, over 100·s/3 documents that all have text
  (about 2,000 characters each), split val/test, with a topic (50) and topic type (main/marginal);
* 10 sentences and 40 claims per summary (500,000 units at 100x);
* label sources and labels:
  - `gold` (kind gold): every sentence and claim (about 20% unfaithful, a few partial), and
    every summary (unfaithful if any sentence is); some sentences carry an explanation;
  - `judge/cot` (evaluator): a summary label with a written reasoning, agreeing with gold ~80%;
  - `judge/sentence` (evaluator): a label and a probability for every sentence;
  - `scorer` (evaluator): a summary score in [0, 1] with no label (a score source);
* tags: `error_type` on about 15% of sentences (7 TofuEval types), `difficulty` on unfaithful summaries;
* key points: 3 per (document, topic);
* alignments: TOP_K passages per sentence by the default ranker, with spans inside the document text.

The Explore and Compare benchmarks both use it.
"""

from __future__ import annotations

from pathlib import Path

from faithlens import store
from faithlens.build.alignment import TOP_K
from faithlens.build.rankers import DEFAULT
from faithlens.datasets.tofueval import ERROR_TYPES

DATASET = "synthetic"
GENERATORS = ("gen-a", "gen-b", "gen-c", "gen-d", "gen-e", "gen-f")
WORDS = (
    "harbour", "storm", "keeper", "lamp", "council", "budget", "river", "mayor", "letter", "ship",
    "garden", "winter", "doctor", "market", "bridge", "teacher", "village", "engine", "court", "festival",
)  # fmt: skip
SENTENCES_PER_SUMMARY = 10
CLAIMS_PER_SUMMARY = 40
SUMMARIES_PER_DOCUMENT = 3

_STATEMENTS = [
    """CREATE TEMP TABLE params AS SELECT ?::BIGINT AS n_summaries, ?::VARCHAR AS dataset,
       ?::VARCHAR[] AS generators, ?::VARCHAR[] AS error_types""",
    # A macro cannot take bound parameters; WORDS are constants of this module, not user data.
    "CREATE TEMP MACRO word(i) AS ({words})[1 + (hash(i) % {n_words})::BIGINT]".format(
        words="[" + ", ".join(f"'{w}'" for w in WORDS) + "]", n_words=len(WORDS)
    ),
    """INSERT INTO dataset (name, format, origin, source_files, description)
       SELECT dataset, 'synthetic', 'import', [], 'Synthetic data for speed budgets (bench/synthetic.py).' FROM params""",
    """INSERT INTO document (dataset, document_id, title, text, split)
       SELECT p.dataset, printf('doc-%06d', d), printf('Document %d', d),
              (SELECT string_agg(printf('The %s met the %s near the %s on day %d.', word(d * 1000 + k),
                                        word(d * 1000 + k + 7), word(d * 1000 + k + 13), k), ' ')
               FROM range(40) AS t(k)),
              CASE WHEN d % 3 = 0 THEN 'test' ELSE 'val' END
       FROM params p, range((p.n_summaries + 2) // 3) AS r(d)""",
    """CREATE TEMP TABLE s AS
       SELECT i, printf('syn-%06d', i) AS summary_id, printf('doc-%06d', i // 3) AS document_id,
              generators[1 + (i % len(generators))] AS model,
              CASE WHEN (i // 3) % 3 = 0 THEN 'test' ELSE 'val' END AS split,
              printf('Topic %02d', hash(i, 'topic') % 50) AS topic
       FROM params, range(n_summaries) AS r(i)""",
    """CREATE TEMP TABLE u AS
       SELECT s.summary_id, s.i, k AS position, 'sentence' AS kind,
              printf('%s#s%d', s.summary_id, k) AS unit_id,
              printf('The %s met the %s near the %s on day %d.', word((s.i // 3) * 1000 + k * 4),
                     word((s.i // 3) * 1000 + k * 4 + 7), word(s.i * 31 + k), k * 4) AS text,
              CASE WHEN hash(s.i, k, 'gold') % 100 < 20 THEN 'unfaithful'
                   WHEN hash(s.i, k, 'gold') % 100 < 23 THEN 'partial' ELSE 'faithful' END AS gold
       FROM s, range(10) AS r(k)
       UNION ALL
       SELECT s.summary_id, s.i, k, 'claim', printf('%s#c%d', s.summary_id, k),
              printf('Claim %d: the %s and the %s.', k, word(s.i * 53 + k), word(s.i * 59 + k)),
              CASE WHEN hash(s.i, k, 'claim') % 100 < 20 THEN 'unfaithful' ELSE 'faithful' END
       FROM s, range(40) AS r(k)""",
    """CREATE TEMP TABLE sl AS
       SELECT summary_id, CASE WHEN bool_or(gold = 'unfaithful') THEN 'unfaithful' ELSE 'faithful' END AS gold
       FROM u WHERE kind = 'sentence' GROUP BY summary_id""",
    """INSERT INTO summary (dataset, summary_id, document_id, model, split, topic, topic_type, text)
       SELECT p.dataset, s.summary_id, s.document_id, s.model, s.split, s.topic,
              CASE WHEN hash(s.topic) % 4 = 0 THEN 'marginal' ELSE 'main' END,
              (SELECT string_agg(u.text, ' ' ORDER BY u.position) FROM u
               WHERE u.summary_id = s.summary_id AND u.kind = 'sentence')
       FROM params p, s""",
    """INSERT INTO unit (dataset, unit_id, summary_id, kind, position, text)
       SELECT p.dataset, unit_id, summary_id, kind, position, text FROM params p, u""",
    """INSERT INTO label_source (dataset, source, kind, description, origin)
       SELECT p.dataset, source, kind, description, 'import' FROM params p, (VALUES
         ('gold', 'gold', 'Synthetic gold labels.'),
         ('judge/cot', 'evaluator', 'Synthetic summary judge with reasoning.'),
         ('judge/sentence', 'evaluator', 'Synthetic sentence judge with probabilities.'),
         ('scorer', 'evaluator', 'Synthetic summary score in [0, 1].')) AS t(source, kind, description)""",
    """INSERT INTO label (dataset, source, level, target_id, value, raw_value, explanation)
       SELECT p.dataset, 'gold', u.kind, u.unit_id, u.gold::verdict, u.gold,
              CASE WHEN u.gold = 'unfaithful' AND u.kind = 'sentence'
                   THEN printf('The source never says the %s was there.', word(u.i * 7 + u.position)) END
       FROM params p, u""",
    """INSERT INTO label (dataset, source, level, target_id, value, raw_value)
       SELECT p.dataset, 'gold', 'summary', sl.summary_id, sl.gold::verdict, sl.gold FROM params p, sl""",
    """INSERT INTO label (dataset, source, level, target_id, value, raw_value, explanation)
       SELECT p.dataset, 'judge/cot', 'summary', sl.summary_id, v::verdict, v,
              printf('Reasoning: the summary mentions the %s; the source %s.', word(hash(sl.summary_id)),
                     CASE WHEN v = 'faithful' THEN 'supports it' ELSE 'does not' END)
       FROM params p, sl, LATERAL (SELECT CASE WHEN hash(sl.summary_id, 'cot') % 100 < 80 THEN sl.gold
                                             WHEN sl.gold = 'faithful' THEN 'unfaithful' ELSE 'faithful' END AS v)""",
    """INSERT INTO label (dataset, source, level, target_id, value, raw_value, score)
       SELECT p.dataset, 'judge/sentence', 'sentence', u.unit_id,
              CASE WHEN prob >= 0.5 THEN 'faithful' ELSE 'unfaithful' END::verdict, NULL, prob
       FROM params p, u, LATERAL (SELECT (hash(u.unit_id, 'prob') % 1000) / 1000.0 * 0.6
                                         + CASE WHEN u.gold = 'faithful' THEN 0.4 ELSE 0.0 END AS prob)
       WHERE u.kind = 'sentence'""",
    """INSERT INTO label (dataset, source, level, target_id, score)
       SELECT p.dataset, 'scorer', 'summary', sl.summary_id,
              (hash(sl.summary_id, 'score') % 1000) / 1000.0 * 0.7 + CASE WHEN sl.gold = 'faithful' THEN 0.3 ELSE 0 END
       FROM params p, sl""",
    """INSERT INTO tag (dataset, level, target_id, kind, value, source)
       SELECT DISTINCT p.dataset, 'sentence', u.unit_id, 'error_type',
              error_types[1 + (hash(u.unit_id, t) % len(error_types))::BIGINT], 'gold'
       FROM params p, u, range(2) AS r(t)
       WHERE u.kind = 'sentence' AND u.gold = 'unfaithful' AND (t = 0 OR hash(u.unit_id) % 3 = 0)""",
    """INSERT INTO tag (dataset, level, target_id, kind, value, source)
       SELECT p.dataset, 'summary', summary_id, 'difficulty',
              CASE WHEN hash(summary_id, 'hard') % 3 = 0 THEN 'easy' ELSE 'hard' END, 'gold'
       FROM params p, sl WHERE gold = 'unfaithful'""",
    """INSERT INTO key_point (dataset, document_id, topic, position, text)
       SELECT p.dataset, d.document_id, d.topic, k, printf('%d. The %s matters for %s.', k + 1, word(k), d.topic)
       FROM params p, (SELECT DISTINCT document_id, topic FROM s) AS d, range(3) AS r(k)""",
    """INSERT INTO alignment_ranker (dataset, document_id, ranker, version, aligned_at)
       SELECT DISTINCT p.dataset, s.document_id, $ranker, 'synthetic', current_timestamp FROM params p, s""",
    """INSERT INTO alignment (dataset, unit_id, ranker, rank, start_char, end_char, score)
       SELECT p.dataset, u.unit_id, $ranker, r + 1, start_char, start_char + 40, 90 - 10 * r
       FROM params p, u, range($top_k) AS t(r),
            LATERAL (SELECT ((hash(u.unit_id, r) % 40) * 45)::INTEGER AS start_char)
       WHERE u.kind = 'sentence'""",
]


def build_synthetic_db(path: Path | str, scale: int = 100) -> Path:
    """Write the synthetic dataset (see the module docstring) into a new database at `path`."""
    path = Path(path)
    if scale < 1:
        raise ValueError(f"scale must be at least 1, got {scale}")
    path.unlink(missing_ok=True)
    conn = store.connect(path)
    try:
        with store.write(conn, "synthetic dataset") as cur:
            cur.execute(_STATEMENTS[0], [100 * scale, DATASET, list(GENERATORS), list(ERROR_TYPES)])
            for statement in _STATEMENTS[1:-2]:
                cur.execute(statement)
            cur.execute(_STATEMENTS[-2], {"ranker": DEFAULT})
            cur.execute(_STATEMENTS[-1], {"ranker": DEFAULT, "top_k": TOP_K})
        conn.execute("CHECKPOINT")
    finally:
        conn.close()
    return path


def bundled_and_synthetic(folder: Path | str) -> tuple[Path, Path]:
    """The bundled data ingested into `folder`/bundled.duckdb and the 100x synthetic database beside it."""
    from faithlens import config
    from faithlens.build import ingest

    bundled = Path(folder) / "bundled.duckdb"
    ingest.ingest(bundled, config.data_dir())
    return bundled, build_synthetic_db(Path(folder) / "synthetic.duckdb", scale=100)
