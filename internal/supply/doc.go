// Package supply generates the supply Domain of the perf harness: Suppliers
// with unique VAT numbers, Parts made by them, Warehouses, purchase orders
// with foreign keys to Suppliers and Parts, and Risk flags keyed by ULID,
// joined by supplied_by and stocked_at Links.
//
// A dataset is a pure function of a Config (seed, scale, extra Links per
// Part): about 185 Records per scale unit, titles drawn from a vocabulary of
// 700 words with Zipf-like frequencies, sentence titles for purchase orders
// and Risk flags, and a few Suppliers far more common than the rest as
// makers. Every Record is generated from its own seeded PCG source, so the
// stream can start at any offset (an interrupted load resumes without
// generating what it already committed) and a Record's key can be computed
// without generating the dataset (the benchmark draws random keys that way).
//
// A Config may mark every title with a word (Marker), so that two Domains
// with the same keys can be told apart, and may describe a replicated
// dataset (Replicas): copies of the dataset of Scale/Replicas with keys
// renumbered (ReplicaKey), which is what the harness builds in SQL from a
// loaded base.
//
// The stream puts the Records of a Kind before the Records that refer to
// them and the Links after both of their ends, and is generated lazily:
// memory stays bounded at any scale.
package supply
