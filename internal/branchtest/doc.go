// Package branchtest holds the property test that overlay and copy
// branches are equivalent: the same commits applied to an overlay and to a
// copy of one base, with commits on the base in between, leave every read
// answering the same on both. It has no code besides its tests.
package branchtest
