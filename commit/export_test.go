package commit

import "context"

// ReadAheadRun is a read-ahead seen from a test.
type ReadAheadRun struct{ r *readAhead }

// Conns is how many connections it runs on.
func (a ReadAheadRun) Conns() int { return a.r.conns }

// Wait waits for it and returns the rows its statements found and the
// statements that failed or were stopped.
func (a ReadAheadRun) Wait() (rows, failed int64) {
	a.r.wait()
	return a.r.rows.Load(), a.r.errs.Load()
}

// Stop stops it.
func (a ReadAheadRun) Stop() { a.r.stop() }

// StartReadAheadRecords starts the read-ahead of the Records of keys on a
// branch, as a commit of the Domain does (ok false: it did not start).
func StartReadAheadRecords(ctx context.Context, p *Pipeline, domainID, branchID int32, keys []string) (ReadAheadRun, bool) {
	r := startReadAhead(ctx, p, domainID, readAheadRecordsSQL(domainID, branchID), keys)
	return ReadAheadRun{r}, r != nil
}

// StartReadAheadObjects starts the read-ahead of the objects of hashes.
func StartReadAheadObjects(ctx context.Context, p *Pipeline, domainID int32, hashes [][]byte) (ReadAheadRun, bool) {
	r := startReadAhead(ctx, p, domainID, readAheadObjectsSQL(domainID), hashes)
	return ReadAheadRun{r}, r != nil
}

// ObserveReadAheads calls f with every read-ahead p starts.
func ObserveReadAheads(p *Pipeline, f func(ReadAheadRun)) {
	p.readAheadStarted = func(r *readAhead) { f(ReadAheadRun{r}) }
}

// ReadAheadMarker starts the text of every read-ahead statement.
const ReadAheadMarker = readAheadMarker
