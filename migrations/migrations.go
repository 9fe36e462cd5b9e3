// Package migrations embeds Lorebase's SQL, applied by store.Migrate in
// this order:
//
//   - NNNN_name.up.sql (and .down.sql): numbered migrations, applied with
//     golang-migrate. They hold tables, partitions, row-level security
//     policies, roles, grants, trigger attachments and function signature
//     changes (a function whose return type changes is dropped here first).
//     0001_baseline is the whole schema; later changes are new files.
//   - River's own migrations.
//   - functions/<name>.sql: one file per function holding every overload of
//     that name as CREATE OR REPLACE FUNCTION, in the form
//     pg_get_functiondef prints it (comments before it allowed). The files
//     are applied in one transaction under an advisory lock with
//     check_function_bodies off, so their order does not matter; a file
//     whose sha256 matches the one recorded in lorebase_functions is
//     skipped. Changing a function is editing its file.
//   - after/*.sql, in name order, in the same transaction, every time:
//     idempotent grants and policies on what the steps above create
//     (function grants, River's tables).
package migrations

import "embed"

// FS holds the numbered migrations, functions/*.sql and after/*.sql.
//
//go:embed *.sql functions/*.sql after/*.sql
var FS embed.FS
