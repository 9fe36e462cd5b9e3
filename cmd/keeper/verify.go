package main

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/lorebase/lorebase/commit"
)

// cmdVerify checks the hash chain of every Revision of a Domain. It prints
// what it checked and each branch's head hash, and fails naming the first
// bad Revision.
func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, config := flags("verify", stderr)
	domain := fs.String("domain", "", "the Domain to verify (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, d, err := openDomain(ctx, fs, config, domain, fs.Args())
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := commit.Verify(ctx, s, d.ID)
	if err != nil {
		return fmt.Errorf("verify domain %q: %w", d.Name, err)
	}
	if rep.Bad != nil {
		fmt.Fprintf(stdout, "checked %d revisions and %d objects of domain %q before the first bad one\n", rep.Revisions, rep.Objects, d.Name)
		return fmt.Errorf("revision %s (seq %d) of domain %q fails verification: %s", rep.Bad.ID, rep.Bad.Seq, d.Name, rep.Bad.Reason)
	}
	fmt.Fprintf(stdout, "ok: %d revisions and %d objects of domain %q verified\n", rep.Revisions, rep.Objects, d.Name)
	names := make([]string, 0, len(rep.Heads))
	for n := range rep.Heads {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(stdout, "head %s %s\n", n, rep.Heads[n])
	}
	return nil
}
