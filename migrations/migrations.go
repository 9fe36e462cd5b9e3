// Package migrations embeds Lorebase's numbered SQL migrations: tables,
// partitions, row-level security policies, roles and the security-definer
// read functions. They are applied with golang-migrate by store.Migrate.
package migrations

import "embed"

// FS holds every NNNN_name.up.sql and NNNN_name.down.sql file.
//
//go:embed *.sql
var FS embed.FS
