package pgtest

import (
	"context"
	"fmt"
)

// SharedDatabase creates a fresh, migrated database outside any one test,
// for fixtures shared by a whole test process (such as the Keeper that
// runnable examples talk to). drop removes it; the throwaway cluster, if
// one was started, stops in Main.
func SharedDatabase(ctx context.Context) (url string, drop func(), err error) {
	proc.once.Do(proc.init)
	if proc.err != nil {
		return "", nil, fmt.Errorf("pgtest: %w", proc.err)
	}
	name := "lorebase_shared_" + randomSuffix()
	if err := createDatabase(ctx, proc.adminURL, name, proc.template); err != nil {
		return "", nil, err
	}
	u, err := WithDatabase(proc.adminURL, name)
	if err != nil {
		return "", nil, err
	}
	return u, func() { _ = dropDatabase(context.WithoutCancel(ctx), proc.adminURL, name) }, nil
}
