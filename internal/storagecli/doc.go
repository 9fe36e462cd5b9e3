// Package storagecli implements the storage command: storage profiles of
// PostgreSQL settings and table storage parameters (plan and apply),
// prewarming a Domain's hot relations into shared buffers, and a report of
// sizes, cache hit ratios and bloat.
//
// A profile is a set of server settings (applied with ALTER SYSTEM and a
// configuration reload) and storage parameters of the large hash partitions
// mat_records_p*, mat_links_p* and mat_history_p* (applied with ALTER
// TABLE ... SET). The named profiles dev, 1m and 10m are the computed
// profile of the memory they assume (see Named); ForMemory computes one for
// any amount of memory. Plan compares a profile with what the server has and
// Apply brings the server in line; a second Apply changes nothing.
//
// Sizes are parsed as PostgreSQL parses memory settings: the units kB, MB,
// GB and TB are binary (1kB = 1024 bytes). The IEC spellings KiB, MiB, GiB
// and TiB mean the same, and a bare number is bytes.
//
// Everything runs on one connection as the owner of the tables (ALTER
// SYSTEM and CREATE EXTENSION pg_prewarm need a superuser or the
// corresponding grants).
package storagecli
