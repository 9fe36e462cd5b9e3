package perf

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// StartCPUProfile writes a CPU profile of the process to path until the
// returned function is called (--cpuprofile of the perf commands).
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start CPU profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// IsTerminal reports whether f is a terminal (a character device): the
// perf commands draw a progress bar there and write progress lines
// elsewhere.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
