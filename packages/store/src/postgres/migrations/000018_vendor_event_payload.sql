-- A Cog prediction's end reaches refvid only in its webhook (Cog has no GET of a prediction): the
-- webhook's body is kept with its vendor log entry, for whichever worker follows the run.
alter table vendor_events add column payload text;
