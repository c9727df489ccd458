"""The schema alembic's history gives a new SQLite store, as the statements SQLite kept of it.

A store made where none is gets these at once, with its revision, in one transaction: no alembic and no
SQLAlchemy to import, which were most of the first command's time in a new home. Generated from a store
migrated through ``migrations/`` from nothing; tests/integration/store/test_sqlite_head_schema.py fails,
and tells how to write this module anew, whenever the two differ. Older stores are migrated by alembic.
"""

REVISION = "0005"

STATEMENTS: tuple[str, ...] = (
    (
        'CREATE TABLE alembic_version (\n'
        '\tversion_num VARCHAR(32) NOT NULL, \n'
        '\tCONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)\n'
        ')'
    ),
    (
        'CREATE TABLE jobs (\n'
        '\tid INTEGER NOT NULL, \n'
        '\tname VARCHAR(255) NOT NULL, \n'
        '\tcreated_at VARCHAR(32) NOT NULL, \n'
        '\tCONSTRAINT pk_jobs PRIMARY KEY (id), \n'
        '\tCONSTRAINT uq_jobs_name UNIQUE (name)\n'
        ')'
    ),
    (
        'CREATE TABLE events (\n'
        '\tjob_id INTEGER NOT NULL, \n'
        '\tseq INTEGER NOT NULL, \n'
        '\tat VARCHAR(32) NOT NULL, \n'
        '\tkind VARCHAR(64) NOT NULL, \n'
        '\tdata TEXT NOT NULL, \n'
        '\tCONSTRAINT pk_events PRIMARY KEY (job_id, seq), \n'
        '\tCONSTRAINT fk_events_job_id_jobs FOREIGN KEY(job_id) REFERENCES jobs (id)\n'
        ')\n'
        ' WITHOUT ROWID\n'
        '\n'
    ),
    (
        'CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, '
        "'events are append-only'); END"
    ),
    (
        'CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, '
        "'events are append-only'); END"
    ),
    (
        'CREATE TABLE summaries (\n'
        '\tjob_id INTEGER NOT NULL, \n'
        '\tseq INTEGER NOT NULL, \n'
        '\tstate VARCHAR(32) NOT NULL, \n'
        '\tcluster VARCHAR(255) NOT NULL, \n'
        '\tadapter VARCHAR(64) NOT NULL, \n'
        '\toutcome VARCHAR(32), \n'
        '\toutcome_detail TEXT NOT NULL, \n'
        '\tsettled BOOLEAN NOT NULL, \n'
        '\tattempts INTEGER NOT NULL, \n'
        '\tobject_id VARCHAR(255), \n'
        '\trecorded_at VARCHAR(32) NOT NULL, \n'
        '\tupdated_at VARCHAR(32) NOT NULL, \n'
        '\tpruned_at VARCHAR(32), \n'
        '\toutstanding INTEGER NOT NULL, \n'
        '\tundelivered INTEGER NOT NULL, \n'
        '\tproblem TEXT, sweep VARCHAR(255), sweep_index INTEGER, \n'
        '\tCONSTRAINT pk_summaries PRIMARY KEY (job_id), \n'
        '\tCONSTRAINT fk_summaries_job_id_jobs FOREIGN KEY(job_id) REFERENCES jobs (id)\n'
        ')'
    ),
    'CREATE INDEX ix_summaries_settled ON summaries (settled)',
    'CREATE INDEX ix_summaries_pruned_at ON summaries (pruned_at)',
    (
        'CREATE TABLE snapshots (\n'
        '\tjob_id INTEGER NOT NULL, \n'
        '\tseq INTEGER NOT NULL, \n'
        '\tdata TEXT NOT NULL, \n'
        '\tCONSTRAINT pk_snapshots PRIMARY KEY (job_id), \n'
        '\tCONSTRAINT fk_snapshots_job_id_jobs FOREIGN KEY(job_id) REFERENCES jobs (id)\n'
        ')'
    ),
    'CREATE INDEX ix_summaries_sweep ON summaries (sweep)',
)
