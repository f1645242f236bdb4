/**
 * Key of the transaction-level advisory lock that serializes schema changes between processes
 * (`tokenq` in ASCII): the migrations, and a chain's first partitions (chain-partitions.ts).
 * Advisory locks are per database, so stores in different schemas of one database merely take
 * turns.
 */
export const MIGRATION_LOCK_KEY = 0x746f6b656e71n;
