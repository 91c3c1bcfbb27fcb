"""The database layout: a log of every revision (history, watch) and the current state of each key."""

PAGE_CACHE_KIB = 8192
PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    # FULL: a commit is on disk before the write is acknowledged (durable against power loss too);
    # group commit amortizes the fsync over every write of a batch.
    "PRAGMA synchronous=FULL",
    "PRAGMA busy_timeout=5000",
    # Each connection's page cache (KiB): the server's own memory, in its RSS. 64 MiB for each of its three
    # connections grew the server by about 37 MiB per 10,000 ConfigMaps written; the operating system's file
    # cache still holds the database, so a page read again costs a copy, not a disk read (docs/memory.md).
    f"PRAGMA cache_size=-{PAGE_CACHE_KIB}",
)

TABLES = (
    """CREATE TABLE IF NOT EXISTS log (
        rev INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        create_rev INTEGER NOT NULL,
        prev_rev INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        value BLOB NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS log_key_rev ON log (key, rev)",
    """CREATE TABLE IF NOT EXISTS current (
        key TEXT PRIMARY KEY,
        rev INTEGER NOT NULL,
        create_rev INTEGER NOT NULL,
        value BLOB NOT NULL) WITHOUT ROWID""",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    # etcd leases, per key: a key whose lease expires is deleted (events carry --event-ttl).
    "CREATE TABLE IF NOT EXISTS leases (key TEXT PRIMARY KEY, expires REAL NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS leases_expires ON leases (expires)",
    "INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 1), ('compacted', 0)",
)

SELECT_CURRENT = "SELECT key, value, create_rev, rev FROM current WHERE key = ?"
SELECT_REVISION = "SELECT value FROM meta WHERE name = 'revision'"
SELECT_COMPACTED = "SELECT value FROM meta WHERE name = 'compacted'"
SET_REVISION = "UPDATE meta SET value = ? WHERE name = 'revision'"
SET_COMPACTED = "UPDATE meta SET value = ? WHERE name = 'compacted'"
INSERT_LOG = "INSERT INTO log (rev, key, create_rev, prev_rev, deleted, value) VALUES (?, ?, ?, ?, ?, ?)"
# create_rev too: a batch that deletes a key and creates it again writes only its final row.
UPSERT_CURRENT = ("INSERT INTO current (key, rev, create_rev, value) VALUES (?, ?, ?, ?) "
                  "ON CONFLICT (key) DO UPDATE SET rev = excluded.rev, create_rev = excluded.create_rev, "
                  "value = excluded.value")
DELETE_CURRENT = "DELETE FROM current WHERE key = ?"


def select_current_of(count: int) -> str:
    """The current rows of `count` keys (one query for a batch's keys)."""
    return f"SELECT key, value, create_rev, rev FROM current WHERE key IN ({', '.join('?' * count)})"

RANGE_CURRENT = ("SELECT key, value, create_rev, rev FROM current WHERE key >= ? AND key < ? "
                 "ORDER BY key LIMIT ?")
COUNT_CURRENT = "SELECT COUNT(*) FROM current WHERE key >= ? AND key < ?"
# The state of each key as of a past revision: its newest log row at or before it, unless a delete.
RANGE_AT_REVISION = """
    SELECT l.key, l.value, l.create_rev, l.rev FROM log l
    JOIN (SELECT key, MAX(rev) AS rev FROM log WHERE key >= ? AND key < ? AND rev <= ? GROUP BY key) m
      ON l.rev = m.rev
    WHERE l.deleted = 0 ORDER BY l.key LIMIT ?"""
COUNT_AT_REVISION = """
    SELECT COUNT(*) FROM log l
    JOIN (SELECT key, MAX(rev) AS rev FROM log WHERE key >= ? AND key < ? AND rev <= ? GROUP BY key) m
      ON l.rev = m.rev
    WHERE l.deleted = 0"""
HISTORY = """
    SELECT l.rev, l.key, l.create_rev, l.deleted, l.value, p.value FROM log l
    LEFT JOIN log p ON p.rev = l.prev_rev
    WHERE l.rev >= ? AND l.rev <= ? AND l.key >= ? AND l.key < ? ORDER BY l.rev LIMIT ?"""
# etcd keeps, as of the compacted revision (?3), only each live key's newest version; deleted here among the
# revisions in (?1, ?2], a batch of them.
COMPACT = """
    DELETE FROM log WHERE rev > ?1 AND rev <= ?2 AND (deleted = 1 OR EXISTS (
        SELECT 1 FROM log n WHERE n.key = log.key AND n.rev > log.rev AND n.rev <= ?3))"""

UPSERT_LEASE = ("INSERT INTO leases (key, expires) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET expires = excluded.expires")
DELETE_LEASE = "DELETE FROM leases WHERE key = ?"
EXPIRED_LEASES = ("SELECT l.key, c.rev FROM leases l JOIN current c ON c.key = l.key WHERE l.expires <= ? "
                  "ORDER BY l.expires LIMIT 1000")
