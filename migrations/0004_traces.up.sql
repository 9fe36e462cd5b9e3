-- Agent traces: each request sent with X-Lorebase-Trace is one step of its
-- trace. Steps are written off the request path, in batches, by Keeper's
-- trace writer (owner connection, Domain named in every row) and read by
-- GET /v1/domains/{d}/traces/{id} as lorebase_app under row-level security.
CREATE TABLE trace_steps (
    domain_id   int NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    trace_id    text NOT NULL CHECK (length(trace_id) BETWEEN 1 AND 128),
    id          bigint GENERATED ALWAYS AS IDENTITY,
    at          timestamptz NOT NULL,
    method      text NOT NULL,
    route       text NOT NULL,
    path        text NOT NULL,
    branch      text,
    status      int NOT NULL,
    duration_us bigint NOT NULL,
    revision    text,
    token       text,
    PRIMARY KEY (domain_id, trace_id, id)
);

ALTER TABLE trace_steps ENABLE ROW LEVEL SECURITY;
CREATE POLICY domain_isolation ON trace_steps USING (domain_id = lb_domain()) WITH CHECK (domain_id = lb_domain());
GRANT SELECT ON trace_steps TO lorebase_app;
