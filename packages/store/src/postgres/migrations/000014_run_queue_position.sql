-- Where a processing run's job stands in its vendor's queue, as the vendor said (null otherwise).
alter table runs add column queue_position integer check (queue_position >= 0);
