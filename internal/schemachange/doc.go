// Package schemachange decides how to run a schema change on a Galera
// cluster so that clients notice as little as possible: TOI when MariaDB
// makes the change as a metadata change only, a rolling change (RSU, one
// node at a time, drained from every proxy) when rows replicate between
// the old and the new table in both directions, and a refusal that says
// why otherwise.
//
// Parse reads the statement (ALTER TABLE, CREATE INDEX, DROP INDEX) into
// clauses with the sqlclass tokenizer; Decide and RollUnsafe are pure and
// table-tested. Running the change (the probe on one node, the roll) is
// lifecycle's.
package schemachange
