// Package lberr holds the kinds of error Lorebase's lower layers (store,
// reads, commit, jobs) return: not found, invalid (with the fields at
// fault), unprocessable, conflict, too large, timeout, unavailable.
//
// Lower layers say what went wrong, never how to answer it: they return an
// *Error (a kind, a title and the Problems naming the fields) or wrap one
// of the kind sentinels (ErrNotFound, ErrConflict, ...), and KindOf also
// classifies driver and context errors (a unique violation is a conflict,
// a cancelled statement a timeout) by their pgerrcode constants. Only the
// HTTP layer (internal/keeper) turns a kind into a status and a problem
// type.
package lberr
