// Package config is Keeper's configuration: one table (keys.go) of every
// key with its type, default, check and documentation line. The YAML keys,
// the LOREBASE_* environment variables, validation, the defaults and the
// key table of docs/configuration.md all come from it.
//
// Adding a key is a field in Config and one row in the table; a key that
// other packages read (reads, commit, jobs) is handed to them by the
// caller, and their own defaults come from Default.
package config
