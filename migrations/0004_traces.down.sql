DROP TABLE IF EXISTS trace_steps;
