-- Rate windows are counted on every authenticated request. Unlogged, a count commits without
-- waiting for the write-ahead log to reach the disk; after a crash of the database server the table
-- is empty, which gives each key a fresh window once.
alter table rate_windows set unlogged;
