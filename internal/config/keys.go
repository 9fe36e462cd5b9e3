package config

// Key is one configuration key: its dotted name (the YAML path; the
// environment variable is EnvName of it), its default as written in YAML,
// its check (nil: any value of its type) and the sentence
// docs/configuration.md gives it. Its type is the type of its field.
type Key struct {
	Name    string
	Default string
	Check   Check
	Doc     string
	field   func(*Config) any
}

// keys is the table of every key. Adding a key: a field in Config and one
// row here (then `go test ./internal/config -update-doc` rewrites the table
// in docs/configuration.md).
var keys = []Key{
	{"listen", "127.0.0.1:8080", hostPort, "host:port the HTTP server listens on.", func(c *Config) any { return &c.Listen }},
	{"database.url", "", nil, "the owner's PostgreSQL connection URL. Required by `serve`, `migrate`, `token`, `demo`; `run` starts a throwaway cluster when it is unset.", func(c *Config) any { return &c.Database.URL }},
	{"database.statement_timeout", "30s", positive, "PostgreSQL `statement_timeout` of every pooled connection. A statement stopped by it answers 503.", func(c *Config) any { return &c.Database.StatementTimeout }},
	{"database.max_conns", "0", between(0, 10000), "connection pool size; 0 is the driver's default (the larger of 4 and the number of CPUs).", func(c *Config) any { return &c.Database.MaxConns }},
	{"database.app_url", "", nil, "the request connections' URL: a login role that is a member of `lorebase_app` only, so SQL run on a request connection can never become the owner. `keeper migrate` creates the role it names, with its password, when absent. Empty: requests use the owner's connection and `SET ROLE` (a weaker boundary; Keeper warns at start).", func(c *Config) any { return &c.Database.AppURL }},
	{"database.owner_max_conns", "0", between(0, 10000), "size of the owner's pool, apart from the request pool: background jobs and token lookups. 0 is the driver's default.", func(c *Config) any { return &c.Database.OwnerMaxConns }},
	{"http.max_body_bytes", "33554432", atLeast(1024), "largest request body (32 MiB by default); a larger one is refused with 413 and nothing is written.", func(c *Config) any { return &c.HTTP.MaxBodyBytes }},
	{"http.read_timeout", "60s", positive, "time to read a whole request, body included.", func(c *Config) any { return &c.HTTP.ReadTimeout }},
	{"http.write_timeout", "120s", positive, "time from the end of the request headers to the end of the response (covers a large commit).", func(c *Config) any { return &c.HTTP.WriteTimeout }},
	{"http.shutdown_timeout", "20s", positive, "on SIGINT/SIGTERM, how long requests in flight may take to finish.", func(c *Config) any { return &c.HTTP.ShutdownTimeout }},
	{"http.request_timeout", "30s", positive, "every request's deadline: past it the request is stopped and answered 503.", func(c *Config) any { return &c.HTTP.RequestTimeout }},
	{"http.domain_concurrency", "32", positive, "most requests of one Domain in flight at once (per Keeper); more are answered 503 with `Retry-After` at once, never queued.", func(c *Config) any { return &c.HTTP.DomainConcurrency }},
	{"http.body_concurrency", "8", positive, "most request bodies read and decoded at once (per Keeper); more wait for a turn within the request's deadline, then 503.", func(c *Config) any { return &c.HTTP.BodyConcurrency }},
	{"http.rate_limit.requests_per_second", "0", between(0, 1000000), "average requests per second one token may make to one Keeper (limits are per instance: N Keepers allow N times as much); over it: 429 with `Retry-After` and a problem document. 0 turns the limit off.", func(c *Config) any { return &c.HTTP.RateLimit.RequestsPerSecond }},
	{"http.rate_limit.burst", "0", between(0, 1000000), "requests one token may make at once: the limit counts `burst` requests per window of `burst / requests_per_second` seconds (at least 1 s). Below `requests_per_second` it is raised to it.", func(c *Config) any { return &c.HTTP.RateLimit.Burst }},
	{"http.rate_limit.heavy_requests_per_second", "0", between(0, 1000000), "the tighter limit of searches, neighborhoods and merges, counted on top of the general one. 0 turns it off.", func(c *Config) any { return &c.HTTP.RateLimit.HeavyRequestsPerSecond }},
	{"http.rate_limit.heavy_burst", "0", between(0, 1000000), "the burst of the tighter limit.", func(c *Config) any { return &c.HTTP.RateLimit.HeavyBurst }},
	{"http.cache_max_bytes", "67108864", nonNegative, "bytes the in-memory response cache of reads may hold (64 MiB by default), keyed by Domain, the Revision read, the token's grants and the request. 0 keeps no answers; ETags and 304 still work.", func(c *Config) any { return &c.HTTP.CacheMaxBytes }},
	{"http.trace_queue", "10000", between(1, 10000000), "trace steps (requests sent with `X-Lorebase-Trace`) waiting to be written; when full, steps are dropped and counted in `lorebase_trace_steps_dropped_total`, never slowing a request.", func(c *Config) any { return &c.HTTP.TraceQueue }},
	{"store.reads.search_candidates", "1000", positive, "most full-text matches a search ranks from the GIN index (with a Kind, on a nested overlay or a copy still copying, at a past Revision, or every full match when a term is in fewer than 8 times this many Records, or the terms, were they independent, would meet in fewer than 32 times this many and do meet in at most 128 times as many); a several-word search on a branch head scores at most 32 times as many Records from its words' postings before it answers `truncated` (three one-word terms each in at least 8 times this many Records, expected to meet in at least 32 times as many, or, on a branch of at least 3,000 times this many Records, each in at least 150 times this many and expected to meet in at least 4 times as many, or each in at least 50 times this many, of at least two score plateaus, and expected to meet in at least twice as many, are ranked exactly from the triples of their postings' score plateaus instead, as two words are from their pairs, and, on a branch of at least 3,000 times this many Records, two terms whose common words (each term's most common, in at least 8 times this many Records, and as many more as leave the other words, a misspelled word's rarer corrections, fewer than 32 times this many in all) make at most four pairs, from the pairs of those words' plateaus and the GIN index's read of the other words' Records and of those holding two common words of one term), and its partial matches at most 8 times as many (or 10 times `search.partial.candidates`, the larger); two or more terms that, were they independent, would meet in fewer than 8 times this many Records are read together from the GIN index.", func(c *Config) any { return &c.Store.Reads.SearchCandidates }},
	{"search.partial.min_results", "5", positive, "when every-term matching finds fewer results than this, partial matching ranks Records holding some of the terms.", func(c *Config) any { return &c.Search.Partial.MinResults }},
	{"search.partial.candidates", "100", positive, "most partial matches ranked from the GIN index (with a Kind, on a nested overlay or a copy still copying, at a past Revision); on a branch head, the partial matches are ranked exactly tier by tier from the words' postings, scoring at most 10 times this many Records (or 8 times `store.reads.search_candidates`, the larger) before answering `truncated` (for three one-word terms the Records holding two of them come first from the pairs of the words' score plateaus, exactly, with no such budget, when two of the words some Record holds are expected, were they independent, to meet in at least 7 times `store.reads.search_candidates` Records, or the branch holds at least 3,000 times `store.reads.search_candidates` Records, or it keeps no Record counters; a word no Record holds is left out; on such a branch three terms of which some are a misspelled word ORed with its corrections take the same pairs of the terms' most common words, with the GIN index's read of the Records holding the other words, when those are in fewer than 32 times `store.reads.search_candidates` Records in all).", func(c *Config) any { return &c.Search.Partial.Candidates }},
	{"search.semantic.ef_search", "100", between(1, 1000), "with pgvector, the HNSW candidate list of a semantic search (`hnsw.ef_search`, set inside the read's transaction; raised to the search's limit when smaller). Larger finds more of the true nearest Records and costs more.", func(c *Config) any { return &c.Search.Semantic.EfSearch }},
	{"search.hybrid.rrf_k", "60", between(1, 1000), "the k of reciprocal rank fusion in `mode=hybrid`: a Record ranked r by one search adds weight/(k+r).", func(c *Config) any { return &c.Search.Hybrid.RRFK }},
	{"search.hybrid.text_weight", "1", between(0, 100), "weight of the full-text ranking in `mode=hybrid`, 0 to 100 (relative to `search.hybrid.semantic_weight`; 0 leaves it out; not both weights 0; a request may override it with `text_weight`).", func(c *Config) any { return &c.Search.Hybrid.TextWeight }},
	{"search.hybrid.semantic_weight", "1", between(0, 100), "weight of the semantic ranking in `mode=hybrid`, 0 to 100 (0 leaves it out; not both weights 0; a request may override it with `semantic_weight`).", func(c *Config) any { return &c.Search.Hybrid.SemanticWeight }},
	{"embeddings.url", "", nil, "the OpenAI-compatible embeddings endpoint (for example `https://host/v1/embeddings`) of the HTTP embedder. Empty: only the `hash` and `client` models are served.", func(c *Config) any { return &c.Embeddings.URL }},
	{"embeddings.model", "", nil, "the model the HTTP embedder asks for; a Kind declaring `\"model\": \"<this name>\"` is embedded by it. Required with `embeddings.url`.", func(c *Config) any { return &c.Embeddings.Model }},
	{"embeddings.api_key", "", nil, "bearer token sent to the embeddings endpoint. Prefer the variable to a file: keep secrets out of files.", func(c *Config) any { return &c.Embeddings.APIKey }},
	{"embeddings.batch_size", "64", between(1, 2048), "texts sent in one request to the embeddings endpoint.", func(c *Config) any { return &c.Embeddings.BatchSize }},
	{"embeddings.requests_per_second", "5", between(1, 10000), "most requests per second one Keeper sends to the embeddings endpoint (per process: jobs and query embedding each hold their own limit).", func(c *Config) any { return &c.Embeddings.RequestsPerSecond }},
	{"embeddings.max_retries", "4", between(0, 20), "retries of an embeddings request answered 429 or 5xx or not at all, after a doubling backoff from 250ms (or the server's `Retry-After`).", func(c *Config) any { return &c.Embeddings.MaxRetries }},
	{"read.history.default_limit", "20", positive, "page size of history and of the revision log when `limit` is absent. At most `read.page.max_limit`.", func(c *Config) any { return &c.Read.History.DefaultLimit }},
	{"read.page.default_limit", "50", positive, "page size of Record and branch lists when `limit` is absent. At most `read.page.max_limit`.", func(c *Config) any { return &c.Read.Page.DefaultLimit }},
	{"read.page.max_limit", "1000", positive, "largest `limit` accepted by any paged read; larger is 400.", func(c *Config) any { return &c.Read.Page.MaxLimit }},
	{"read.neighborhood.max_limit", "1000", positive, "largest `limit` of a neighborhood read.", func(c *Config) any { return &c.Read.Neighborhood.MaxLimit }},
	{"read.neighborhood.max_depth", "3", positive, "largest `depth` of a neighborhood read.", func(c *Config) any { return &c.Read.Neighborhood.MaxDepth }},
	{"read.at_max_changes", "100000", positive, "most changes made since a Revision that a read as of it (`at=`) may replay; past it the read is 422 (fork a branch at that Revision instead). Bounds the history one read scans.", func(c *Config) any { return &c.Read.AtMaxChanges }},
	{"write.copy_threshold_rows", "500", positive, "commit batches of more rows than this go through `COPY` into a staging table (a temporary table the connection keeps, emptied at the end of each transaction).", func(c *Config) any { return &c.Write.CopyThresholdRows }},
	{"write.max_changes", "50000", positive, "most changes in one commit.", func(c *Config) any { return &c.Write.MaxChanges }},
	{"write.idempotency_ttl", "24h", positive, "how long an `Idempotency-Key` is remembered (per token); after it the key is free again.", func(c *Config) any { return &c.Write.IdempotencyTTL }},
	{"jobs.batch_target", "200ms", positive, "how long a background batch (branch copy, delete) aims to hold a branch lock.", func(c *Config) any { return &c.Jobs.BatchTarget }},
	{"jobs.batch_contended", "50ms", positive, "the batch target once a commit had to wait for a batch. At most `jobs.batch_target`.", func(c *Config) any { return &c.Jobs.BatchContended }},
	{"jobs.stop_timeout", "30s", positive, "on SIGINT/SIGTERM, once the HTTP server has drained, how long running jobs may take to finish before they are cancelled (a cancelled job is retried by the next Keeper).", func(c *Config) any { return &c.Jobs.StopTimeout }},
	{"jobs.rescue_stuck_after", "2m", positive, "a running job not finished after this long is presumed dead (its Keeper was killed) and run again. Longer than any job batch.", func(c *Config) any { return &c.Jobs.RescueStuckAfter }},
	{"jobs.sweep_interval", "1m", positive, "how often (and at start) a branch left `copying` or `deleting` without a live job gets its job again, and expired idempotency keys are removed.", func(c *Config) any { return &c.Jobs.SweepInterval }},
	{"jobs.keep_warm_interval", "1m", nonNegative, "how often (and at start) the primary keys a commit writes a leaf of per change (the Records', the objects', the history's) are asked into shared buffers with `pg_prewarm`, within a quarter of `shared_buffers`, so that reads of other pages do not leave each change a page read. Needs the `pg_prewarm` extension (else it logs once and does nothing). `0s` never.", func(c *Config) any { return &c.Jobs.KeepWarmInterval }},
	{"jobs.workers", "2", between(1, 64), "background jobs run at once by one Keeper.", func(c *Config) any { return &c.Jobs.Workers }},
	{"quota.branches", "10000", positive, "most branches of one Domain; one more is 429 naming the quota.", func(c *Config) any { return &c.Quota.Branches }},
	{"quota.indexed_attributes", "64", positive, "most indexed or unique Attributes (each a per-Attribute index) in a branch's schema; a schema past it is 422 naming the quota.", func(c *Config) any { return &c.Quota.IndexedAttributes }},
	{"quota.copies_in_flight", "4", positive, "most copy branches of one Domain still copying; one more copy is 429 naming the quota.", func(c *Config) any { return &c.Quota.CopiesInFlight }},
	{"branches.overlay_index_threshold", "10000", positive, "own Records of one Kind past which an overlay gets per-Attribute indexes of its own (built by the `store.index` job queued in the commit that crossed it). Below it, an attribute query reads the overlay's own Records of the Kind through the Kind index and filters them. See docs/branches.md.", func(c *Config) any { return &c.Branches.OverlayIndexThreshold }},
	{"merge.job_threshold", "5000", nonNegative, "a Proposal merge whose write set (changed Records and Links) is larger than this runs as a `merge.proposal` job: the request answers 202 and the Proposal shows the job's progress; the merge commit still lands whole or not at all. `0` runs every merge in its request.", func(c *Config) any { return &c.Merge.JobThreshold }},
	{"auth.token_cache", "5s", nonNegative, "how long a resolved bearer token stays in memory (keyed by its hash; only existing tokens are cached). `0s` looks every request's token up.", func(c *Config) any { return &c.Auth.TokenCache }},
	{"admin_token", "", adminToken, "the bootstrap admin's bearer token: may do everything, and alone may create and list Domains. At least 16 characters, no spaces or control characters. Empty disables it (`keeper run` generates one). Prefer the variable to a file: keep secrets out of files.", func(c *Config) any { return &c.AdminToken }},
}

// relations are the checks between keys, run after every key's own.
var relations = []struct {
	key  string
	fail func(c *Config) string
}{
	{"read.page.default_limit", func(c *Config) string {
		return exceeds(c.Read.Page.DefaultLimit, c.Read.Page.MaxLimit, "read.page.max_limit")
	}},
	{"read.history.default_limit", func(c *Config) string {
		return exceeds(c.Read.History.DefaultLimit, c.Read.Page.MaxLimit, "read.page.max_limit")
	}},
	{"database.app_url", func(c *Config) string {
		if c.Database.AppURL != "" && c.Database.AppURL == c.Database.URL {
			return "must log in as the request role, not as the owner of database.url"
		}
		return ""
	}},
	{"jobs.batch_contended", func(c *Config) string {
		return exceeds(c.Jobs.BatchContended, c.Jobs.BatchTarget, "jobs.batch_target")
	}},
	{"search.hybrid.semantic_weight", func(c *Config) string {
		if c.Search.Hybrid.TextWeight == 0 && c.Search.Hybrid.SemanticWeight == 0 {
			return "search.hybrid.text_weight and search.hybrid.semantic_weight are both 0: at least one ranking must count"
		}
		return ""
	}},
}
